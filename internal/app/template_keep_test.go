package app_test

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// What only the stack holds outlives it: the queues (what producers sent and the ledger
// has not applied, and what it parked) and the log groups are kept when the stack is
// deleted or they are replaced, as the table is; only a failed first create deletes
// them, empty. The DLQ takes redrives from the movements queue alone.
func TestWhatOnlyTheStackHoldsIsKept(t *testing.T) {
	_, res := deployed(t, load(t), map[string]any{})
	for _, typ := range []string{"AWS::SQS::Queue", "AWS::Logs::LogGroup", "AWS::DynamoDB::Table"} {
		for _, id := range ofType(res, typ) {
			if r := res[id]; !strings.HasPrefix(r.DeletionPolicy, "Retain") || r.UpdateReplacePolicy != "Retain" {
				t.Errorf("%s %s: DeletionPolicy %q, UpdateReplacePolicy %q; want both Retain (or RetainExceptOnCreate)", typ, id, r.DeletionPolicy, r.UpdateReplacePolicy)
			}
		}
	}
	allow := mapping(res["DeadLetterQueue"].Properties["RedriveAllowPolicy"])
	sources := Strings(allow["sourceQueueArns"])
	name := get(res["MovementsQueue"].Properties, "QueueName")
	if allow["redrivePermission"] != "byQueue" || len(sources) != 1 || !strings.Contains(sources[0], ":ledger-movimientos-${Id}") ||
		!strings.Contains(Symbol(name), "ledger-movimientos-${Id}") {
		t.Errorf("the DLQ's RedriveAllowPolicy %v with the queue named %v; want the movements queue alone", allow, Symbol(name))
	}
}

// Account ids in the functions' and the API's logs are masked for readers without
// logs:Unmask: every log group has the same data-protection policy, whose identifiers
// match the account wherever the code logs one and nothing of an amount.
func TestLogsMaskTheAccounts(t *testing.T) {
	_, res := deployed(t, load(t), map[string]any{})
	groups := ofType(res, "AWS::Logs::LogGroup")
	first := res[groups[0]].Properties["DataProtectionPolicy"]
	for _, id := range groups {
		if p := res[id].Properties["DataProtectionPolicy"]; !reflect.DeepEqual(p, first) {
			t.Errorf("log group %s's data-protection policy differs from %s's", id, groups[0])
		}
	}
	// The characters CloudWatch Logs takes in a custom data identifier's pattern.
	allowedChars := regexp.MustCompile(`^[A-Za-z0-9_#=@/;, ^$?\[\]{}|\\*+.-]+$`)
	var masks []*regexp.Regexp
	for _, d := range asList(get(first, "Configuration", "CustomDataIdentifier")) {
		pattern := get(d, "Regex").(string)
		if !allowedChars.MatchString(pattern) || len(pattern) > 200 {
			t.Errorf("pattern %q: CloudWatch takes at most 200 of A-Z a-z 0-9 _ # = @ / ; , - space ^ $ ? [ ] { } | \\ * + .", pattern)
		}
		masks = append(masks, regexp.MustCompile(pattern))
	}
	masked := func(line string) string {
		for _, re := range masks {
			line = re.ReplaceAllString(line, "****")
		}
		return line
	}
	for _, line := range []string{
		`{"level":"WARN","msg":"movement","cuenta":"ES7620770024003102575766","id":"pago-1","error":"ledger: transient failure: rule saldo-insuficiente"}`,
		`{"level":"ERROR","msg":"record not announced","pk":"CUENTA#ES7620770024003102575766","sk":"MOV#pago-1"}`,
		`{"msg":"movement","error":"store: movement ES7620770024003102575766/pago-1 reported existing but not found"}`,
		`{"level":"ERROR","msg":"request failed","path":"/cuentas/ES7620770024003102575766/movimientos","err":"store: account ES7620770024003102575766: unreadable"}`,
		`{"requestId":"x","path":"/cuentas/ES7620770024003102575766","status":"200"}`,
		`time=… level=INFO msg=movement cuenta=ES7620770024003102575766 id=pago-1`,
	} {
		if got := masked(line); strings.Contains(got, "ES7620770024003102575766") || !strings.Contains(got, "pago-1") && strings.Contains(line, "pago-1") {
			t.Errorf("masked %s\n  as %s: want the account hidden, the movement's id kept", line, got)
		}
	}
	statements := asList(get(first, "Statement"))
	if len(statements) != 2 || get(statements[0], "Operation", "Audit") == nil || get(statements[1], "Operation", "Deidentify", "MaskConfig") == nil ||
		!reflect.DeepEqual(get(statements[0], "DataIdentifier"), get(statements[1], "DataIdentifier")) {
		t.Errorf("statements %v, want an audit and a mask of the same identifiers", statements)
	}
}

// KmsKeyArn encrypts the queues, the topics and the log groups with the customer's key,
// and gives the roles that read or write those queues its use; without it, the queues
// are SQS-managed and the topic AWS-managed. Tracing=Active traces every function and
// lets it write traces.
func TestTheCustomersKeyAndTracing(t *testing.T) {
	const key = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	e, res := deployed(t, load(t), map[string]any{"KmsKeyArn": key, "CreateTopic": "true", "AlarmEmail": "oncall@example.com", "Tracing": "Active"})
	for typ, prop := range map[string]string{"AWS::SQS::Queue": "KmsMasterKeyId", "AWS::SNS::Topic": "KmsMasterKeyId", "AWS::Logs::LogGroup": "KmsKeyId"} {
		for _, id := range ofType(res, typ) {
			if p := res[id].Properties; p[prop] != key || p["SqsManagedSseEnabled"] != nil {
				t.Errorf("%s %s: %s %v, SqsManagedSseEnabled %v; want the key alone", typ, id, prop, p[prop], p["SqsManagedSseEnabled"])
			}
		}
	}
	for _, role := range []string{"ConsumerRole", "EventsRole"} {
		grants, err := e.Grants(role)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(grants, func(g Grant) bool { return g.Action == "kms:GenerateDataKey" && g.Resource == key }) {
			t.Errorf("%s: %v, want kms:GenerateDataKey on the key", role, grants)
		}
	}
	for _, fn := range []string{"ConsumerFunction", "ApiFunction", "EventsFunction"} {
		if got := res[fn].Properties["Tracing"]; got != "Active" {
			t.Errorf("%s Tracing %v, want Active", fn, got)
		}
	}
	_, res = deployed(t, load(t), map[string]any{"CreateTopic": "true"})
	for _, id := range ofType(res, "AWS::SQS::Queue") {
		if p := res[id].Properties; p["SqsManagedSseEnabled"] != true || p["KmsMasterKeyId"] != nil {
			t.Errorf("queue %s without KmsKeyArn: %v", id, p)
		}
	}
}
