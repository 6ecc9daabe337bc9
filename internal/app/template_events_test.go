package app_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/events"
)

const eventsCode = "cmd/ledger-events"

// The bus given as a parameter: none (the stack creates one), an existing bus's name,
// or its ARN; and the bus each is as the IAM grant names it.
var buses = []struct {
	param, grant string
}{
	{"", "!GetAtt LedgerEventBus.Arn"},
	{"ledger-prod", "!Sub arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:event-bus/${EventBus}"},
	{"arn:aws:events:eu-west-1:123456789012:event-bus/shared", "arn:aws:events:eu-west-1:123456789012:event-bus/shared"},
}

// streamEvent is the one DynamoDB stream event of a function.
func streamEvent(t *testing.T, fn Resource) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, ev := range get(fn.Properties, "Events").(map[string]any) {
		if get(ev, "Type") == "DynamoDB" {
			found = append(found, get(ev, "Properties").(map[string]any))
		}
	}
	if len(found) != 1 {
		t.Fatalf("the events function has %d DynamoDB events, want 1", len(found))
	}
	return found[0]
}

// The events function reads the ledger table's own stream, which carries both images,
// from its oldest record, and the mapping never loses a record quietly: it reports the
// first record not announced, bisects a batch that fails the invocation, retries a
// bounded number of times, and then sends the batch's coordinates to a queue of the
// stack that keeps them 14 days, encrypted.
func TestEventsFunctionReadsTheTablesStream(t *testing.T) {
	tpl := load(t)
	_, res := deployed(t, tpl, nil)
	_, consumerFn := function(t, res, consumerCode)
	table := tableOf(t, res, consumerFn)
	if got := get(res[table].Properties, "StreamSpecification", "StreamViewType"); got != "NEW_AND_OLD_IMAGES" {
		t.Errorf("%s StreamViewType = %v, want NEW_AND_OLD_IMAGES: an account's write is announced from its images before and after", table, got)
	}
	_, fn := function(t, res, eventsCode)
	ev := streamEvent(t, fn)
	if got := Symbol(ev["Stream"]); got != "!GetAtt "+table+".StreamArn" {
		t.Errorf("Stream = %s, want the ledger table's", got)
	}
	want := map[string]any{"StartingPosition": "TRIM_HORIZON", "BisectBatchOnFunctionError": true, "MaximumRecordAgeInSeconds": -1, "ParallelizationFactor": 1}
	for k, v := range want {
		if ev[k] != v {
			t.Errorf("%s = %v, want %v", k, ev[k], v)
		}
	}
	if got := Strings(ev["FunctionResponseTypes"]); !slices.Contains(got, "ReportBatchItemFailures") {
		t.Errorf("FunctionResponseTypes = %v, want ReportBatchItemFailures: without it Lambda ignores the first record not announced and moves on", got)
	}
	raw := streamEvent(t, tpl.Resources["EventsFunction"]) // as written: its knobs are Refs
	for _, knob := range []string{"BatchSize", "MaximumRetryAttempts"} {
		param, isParam := tpl.Parameters[target(raw[knob])]
		if !isParam || param.MinValue == nil || param.MaxValue == nil || *param.MinValue < 0 {
			t.Errorf("%s = %v, want a Ref to a bounded parameter (-1, retry forever, is no bound)", knob, Symbol(raw[knob]))
		}
	}
	queue := target(get(ev, "DestinationConfig", "OnFailure", "Destination"))
	q, ok := res[queue]
	if !ok || q.Type != "AWS::SQS::Queue" || Symbol(get(ev, "DestinationConfig", "OnFailure", "Destination")) != "!GetAtt "+queue+".Arn" {
		t.Fatalf("OnFailure destination = %v, want a queue of the stack", Symbol(get(ev, "DestinationConfig", "OnFailure", "Destination")))
	}
	if q.Properties["SqsManagedSseEnabled"] != true || number(t, "retention", q.Properties["MessageRetentionPeriod"]) != 1209600 {
		t.Errorf("%s: %v; want encrypted, kept 14 days", queue, q.Properties)
	}
}

// The events role may do exactly what the mapping and the code do: read this table's
// stream, put events on the one bus (whichever way it is given), send to the failure
// queue, and write its own logs. The code's calls come from the publisher's interface.
func TestEventsRoleGrantsExactlyWhatItCalls(t *testing.T) {
	tpl := load(t)
	var publish []string
	api := reflect.TypeFor[events.PutEventsAPI]()
	for i := range api.NumMethod() {
		switch name := api.Method(i).Name; name {
		case "PutEvents":
			publish = append(publish, "events:PutEvents")
		default:
			t.Fatalf("events.PutEventsAPI calls %s: name its IAM action here and grant it in template.yaml", name)
		}
	}
	for _, bus := range buses {
		e, res := deployed(t, tpl, map[string]any{"EventBus": bus.param})
		_, fn := function(t, res, eventsCode)
		ev := streamEvent(t, fn)
		table := target(ev["Stream"])
		queue := target(get(ev, "DestinationConfig", "OnFailure", "Destination"))
		want := grants(streamActions, "!GetAtt "+table+".StreamArn", "")
		want = append(want, grants([]string{"dynamodb:ListStreams"}, "!Sub ${"+table+".Arn}/stream/*", "")...)
		want = append(want, grants(publish, bus.grant, "")...)
		want = append(want, grants([]string{"sqs:SendMessage"}, "!GetAtt "+queue+".Arn", "")...)
		want = append(want, grants(logActions, "!GetAtt "+logGroup(t, res, fn)+".Arn", "")...)
		checkRole(t, e, fn, want)
		if created := slices.Contains(ofType(res, "AWS::Events::EventBus"), "LedgerEventBus"); created != (bus.param == "") {
			t.Errorf("EventBus=%q: the stack creates a bus: %v", bus.param, created)
		}
	}
}

// streamActions are what Lambda's DynamoDB event source mapping does with the
// function's execution role on the stream (as Lambda documents them, less ListStreams,
// which names the table's streams).
var streamActions = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}

// The events function starts with the bus it is given, under each way of giving it.
func TestEventsEnvironmentPassesItsConfig(t *testing.T) {
	tpl := load(t)
	for _, bus := range buses {
		_, res := deployed(t, tpl, map[string]any{"EventBus": bus.param})
		_, fn := function(t, res, eventsCode)
		env := map[string]string{}
		for name, v := range get(fn.Properties, "Environment", "Variables").(map[string]any) {
			s := Symbol(v)
			if s == "!Ref LedgerEventBus" {
				s = "ledger" // the stack's name, which names the bus it creates
			}
			env[name] = s
		}
		if len(env) != 1 {
			t.Errorf("EventBus=%q: the events function gets %v, want %s alone", bus.param, env, config.EnvEventBus)
		}
		cfg, err := config.EventsFromEnv(func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("EventBus=%q: %v", bus.param, err)
		} else if want := bus.param; want != "" && cfg.Bus != want {
			t.Errorf("EventBus=%q: the function publishes on %q", bus.param, cfg.Bus)
		}
	}
	for _, bad := range []string{"a b", "arn:aws:sqs:eu-west-1:123456789012:q", "arn:aws:events:eu-west-1:123456789012:rule/x"} {
		if _, err := tpl.Env(map[string]any{"EventBus": bad}); err == nil {
			t.Errorf("EventBus=%q is accepted", bad)
		}
	}
}

// The stream's backlog growing old has an alarm that fires within a quarter of the
// stream's 24 hours, whatever the parameter (TestAlarmsWatchTheFailures checks the
// events function's other alarms).
func TestEventsBacklogAlarmFiresInTime(t *testing.T) {
	tpl := load(t)
	const day = 24 * 3600 * 1000 // the stream's retention, in IteratorAge's milliseconds
	_, res := deployed(t, tpl, nil)
	id, _ := function(t, res, eventsCode)
	watched := false
	for _, a := range ofType(tpl.Resources, "AWS::CloudWatch::Alarm") {
		p := tpl.Resources[a].Properties // as written: its threshold may be a parameter
		if p["MetricName"] != "IteratorAge" || dimensions(p["Dimensions"]) != "FunctionName=!Ref "+id {
			continue
		}
		watched = true
		if worstCase(t, tpl, a+" Threshold", p["Threshold"]) > day/4 {
			t.Errorf("%s may wait for an age of %v ms: records leave the stream after a day, and someone must act before", a, worstCase(t, tpl, a, p["Threshold"]))
		}
	}
	if !watched {
		t.Errorf("no alarm on IteratorAge of FunctionName=!Ref %s", id)
	}
}

// Conditions may split and join parameters, as the events bus's does to tell an ARN
// from a name.
func TestEnvSplitsAndJoins(t *testing.T) {
	tpl, err := Parse([]byte(`
Parameters:
  Bus: {Type: String, Default: ""}
Conditions:
  IsArn: !Not [!Equals [!Join ["", !Split [":", !Ref Bus]], !Ref Bus]]
Resources:
  Q: {Type: AWS::SQS::Queue, Properties: {Tags: [{Key: k, Value: !Join ["-", [a, !Ref Bus, !GetAtt X.Arn]]}]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for bus, arn := range map[string]bool{"ledger": false, "arn:aws:events:eu-west-1:123456789012:event-bus/x": true, "": false} {
		e, err := tpl.Env(map[string]any{"Bus": bus})
		if err != nil {
			t.Fatal(err)
		}
		if e.Conditions["IsArn"] != arn {
			t.Errorf("Bus=%q: IsArn = %v", bus, e.Conditions["IsArn"])
		}
		res, err := e.Resources()
		if err != nil {
			t.Fatal(err)
		}
		if got := Symbol(get(res["Q"].Properties, "Tags").([]any)[0].(map[string]any)["Value"]); !strings.Contains(got, "Fn::Join") {
			t.Errorf("a join of a resource's attribute resolved to %s, want it left symbolic", got)
		}
	}
}
