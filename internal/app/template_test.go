package app_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/migrations"
)

const (
	consumerCode = "cmd/ledger-consumer"
	apiCode      = "cmd/ledger-api"
)

// The consumer answers with the failed message ids (events.SQSEventResponse); without
// ReportBatchItemFailures Lambda ignores that answer and deletes the whole batch.
func TestConsumerReportsBatchItemFailures(t *testing.T) {
	tpl := load(t)
	_, fn := function(t, tpl.Resources, consumerCode)
	ev := sqsEvent(t, fn)
	if got := Strings(ev["FunctionResponseTypes"]); !slices.Contains(got, "ReportBatchItemFailures") {
		t.Errorf("FunctionResponseTypes = %v, want ReportBatchItemFailures", got)
	}
	for _, knob := range [][]string{{"BatchSize"}, {"ScalingConfig", "MaximumConcurrency"}} {
		v := get(ev, knob...)
		if _, isParam := tpl.Parameters[target(v)]; !isParam {
			t.Errorf("%s = %v, want a Ref to a parameter", strings.Join(knob, "."), Symbol(v))
		}
	}
	// The batching window is the parameter's on a standard queue; Lambda takes none from a FIFO queue.
	for kind, want := range map[string]any{"standard": 7, "fifo": nil} {
		_, res := deployed(t, tpl, map[string]any{"QueueType": kind, "MaximumBatchingWindowInSeconds": 7})
		_, fn := function(t, res, consumerCode)
		if got := sqsEvent(t, fn)["MaximumBatchingWindowInSeconds"]; got != want {
			t.Errorf("QueueType=%s: MaximumBatchingWindowInSeconds = %v, want %v", kind, got, want)
		}
	}
}

// Lambda's guidance: a source queue's visibility timeout of at least 6 × the function's
// timeout, plus the batching window, during which received messages are already
// invisible. Checked for the largest values the parameters allow.
func TestQueueVisibilityCoversTheConsumer(t *testing.T) {
	tpl := load(t)
	longest := tpl.Parameters["MaximumBatchingWindowInSeconds"].MaxValue
	if longest == nil {
		t.Fatal("MaximumBatchingWindowInSeconds has no MaxValue: the visibility timeout cannot cover it")
	}
	for _, kind := range []string{"standard", "fifo"} {
		_, res := deployed(t, tpl, map[string]any{"QueueType": kind, "MaximumBatchingWindowInSeconds": *longest})
		_, fn := function(t, res, consumerCode)
		ev := sqsEvent(t, fn)
		queue, ok := res[target(ev["Queue"])]
		if !ok || queue.Type != "AWS::SQS::Queue" {
			t.Fatalf("the SQS event's Queue %v is not a queue of the template", Symbol(ev["Queue"]))
		}
		timeout := worstCase(t, tpl, "consumer Timeout", fn.Properties["Timeout"])
		window := 0.0
		if w, ok := ev["MaximumBatchingWindowInSeconds"]; ok {
			window = number(t, "MaximumBatchingWindowInSeconds", w)
		}
		visibility := number(t, "VisibilityTimeout", queue.Properties["VisibilityTimeout"])
		if visibility < 6*timeout+window {
			t.Errorf("QueueType=%s: VisibilityTimeout %v < 6 × Timeout %v + batching window %v: a batch Lambda retries could come back while still being processed", kind, visibility, timeout, window)
		}
	}
}

// A message that keeps failing ends in the DLQ after MaxReceiveCount receives, and the
// consumer parks permanent failures in the same DLQ at once, where the alarm watches.
func TestQueueRedrivesToTheDeadLetterQueue(t *testing.T) {
	tpl := load(t)
	_, res := deployed(t, tpl, nil)
	_, fn := function(t, res, consumerCode)
	queueID := target(sqsEvent(t, fn)["Queue"])
	queue := res[queueID]
	dlqID := target(get(queue.Properties, "RedrivePolicy", "deadLetterTargetArn"))
	dlq, ok := res[dlqID]
	if !ok || dlq.Type != "AWS::SQS::Queue" || dlqID == queueID {
		t.Fatalf("RedrivePolicy.deadLetterTargetArn = %v, want another queue of the template", get(queue.Properties, "RedrivePolicy"))
	}
	if got := Symbol(get(queue.Properties, "RedrivePolicy", "deadLetterTargetArn")); got != "!GetAtt "+dlqID+".Arn" {
		t.Errorf("deadLetterTargetArn = %s, want the DLQ's Arn", got)
	}
	if raw := get(tpl.Resources[queueID].Properties, "RedrivePolicy", "maxReceiveCount"); Symbol(raw) != "!Ref MaxReceiveCount" {
		t.Errorf("maxReceiveCount = %v, want !Ref MaxReceiveCount", Symbol(raw))
	}
	if p := tpl.Parameters["MaxReceiveCount"]; number(t, "MaxReceiveCount", p.Default) != 5 || p.MinValue == nil || *p.MinValue < 5 {
		t.Errorf("MaxReceiveCount defaults to %v, at least %v; want 5 and at least 5: a batch returned whole spends a receive of each message", p.Default, p.MinValue)
	}
	watched := false
	for _, id := range ofType(tpl.Resources, "AWS::CloudWatch::Alarm") {
		p := tpl.Resources[id].Properties
		if p["MetricName"] != "ApproximateAgeOfOldestMessage" || dimensions(p["Dimensions"]) != "QueueName=!GetAtt "+queueID+".QueueName" {
			continue
		}
		watched = true
		if age, retention := worstCase(t, tpl, id+" Threshold", p["Threshold"]), number(t, "queue retention", queue.Properties["MessageRetentionPeriod"]); age > retention/2 {
			t.Errorf("%s may wait for an age of %v s, against a retention of %v s: a backlog could expire before its alarm, or just after", id, age, retention)
		}
	}
	if !watched {
		t.Errorf("no alarm watches the age of %s's oldest message", queueID)
	}
	if got := number(t, "DLQ MessageRetentionPeriod", dlq.Properties["MessageRetentionPeriod"]); got != 1209600 {
		t.Errorf("DLQ retention = %v s, want 14 days (1209600)", got)
	}
	if q, d := number(t, "queue retention", queue.Properties["MessageRetentionPeriod"]), number(t, "DLQ retention", dlq.Properties["MessageRetentionPeriod"]); q >= d {
		t.Errorf("queue retention %v ≥ DLQ retention %v: a redriven message keeps its enqueue time and could expire on arrival", q, d)
	}
	for id, q := range map[string]Resource{queueID: queue, dlqID: dlq} {
		if q.Properties["SqsManagedSseEnabled"] != true {
			t.Errorf("%s: SqsManagedSseEnabled = %v, want true", id, q.Properties["SqsManagedSseEnabled"])
		}
	}
	if got := Symbol(get(fn.Properties, "Environment", "Variables", config.EnvDLQ)); got != "!Ref "+dlqID {
		t.Errorf("%s = %s, want !Ref %s (the DLQ's URL)", config.EnvDLQ, got, dlqID)
	}
}

// The deployed table is the one `ledger migrate` creates locally: same keys, same
// attribute types, same index, same TTL. It is the only table, and the one the
// consumer is given: the stack deploys the ledger alone.
func TestTablesMatchTheMigrations(t *testing.T) {
	tpl := load(t)
	_, res := deployed(t, tpl, nil)
	_, fn := function(t, res, consumerCode)
	ledgerTable := tableOf(t, res, fn)
	if got := ofType(res, "AWS::DynamoDB::Table"); !slices.Equal(got, []string{ledgerTable}) {
		t.Errorf("tables = %v, want the one the consumer is given: %s", got, ledgerTable)
	}
	checkTable(t, ledgerTable, res[ledgerTable], config.DefaultTable)
	if got := Symbol(tpl.Resources[ledgerTable].Properties["TableName"]); got != "!Ref TableName" {
		t.Errorf("%s: TableName = %s, want the TableName parameter", ledgerTable, got)
	}
	if d := tpl.Parameters["TableName"].Default; d != config.DefaultTable {
		t.Errorf("TableName defaults to %v, want %q like the CLI", d, config.DefaultTable)
	}
}

// checkTable compares the table id with the last migration of the logical table
// (config.DefaultTable), and holds it to what a table of
// records needs: point-in-time recovery, encryption, retained (deletion protection:
// TestTablesAreDeletionProtected).
func checkTable(t *testing.T, id string, table Resource, logical string) {
	t.Helper()
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	var want *migrations.Migration
	for i := range all {
		if all[i].Table == logical {
			want = &all[i] // each migration states the whole table; the last one wins
		}
	}
	if want == nil {
		t.Fatalf("no migration for table %q", logical)
	}
	p := table.Properties

	attrs := map[string]string{}
	for _, a := range asList(p["AttributeDefinitions"]) {
		attrs[fmt.Sprint(get(a, "AttributeName"))] = fmt.Sprint(get(a, "AttributeType"))
	}
	if !maps.Equal(attrs, want.Attributes) {
		t.Errorf("%s: AttributeDefinitions = %v, want %v (%s)", id, attrs, want.Attributes, want.Name)
	}
	if got := keyOf(p["KeySchema"]); got != want.Key {
		t.Errorf("%s: KeySchema = %+v, want %+v", id, got, want.Key)
	}
	indexes := map[string]migrations.Index{}
	for _, ix := range asList(p["GlobalSecondaryIndexes"]) {
		name := fmt.Sprint(get(ix, "IndexName"))
		indexes[name] = migrations.Index{Name: name, Key: keyOf(get(ix, "KeySchema")), Projection: fmt.Sprint(get(ix, "Projection", "ProjectionType"))}
	}
	wantIndexes := map[string]migrations.Index{}
	for _, ix := range want.Indexes {
		wantIndexes[ix.Name] = ix
	}
	if !maps.Equal(indexes, wantIndexes) {
		t.Errorf("%s: GlobalSecondaryIndexes = %+v, want %+v", id, indexes, wantIndexes)
	}
	if p["BillingMode"] != want.Billing {
		t.Errorf("%s: BillingMode = %v, want %s", id, p["BillingMode"], want.Billing)
	}
	ttl := p["TimeToLiveSpecification"]
	switch {
	case want.TTL == "" && ttl != nil:
		t.Errorf("%s: TimeToLiveSpecification = %v, want none (%s)", id, ttl, want.Name)
	case want.TTL != "" && (get(ttl, "AttributeName") != want.TTL || get(ttl, "Enabled") != true):
		t.Errorf("%s: TimeToLiveSpecification = %v, want %s enabled (%s)", id, ttl, want.TTL, want.Name)
	}

	for what, got := range map[string]any{
		"PointInTimeRecoveryEnabled": get(p, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled"),
		"SSEEnabled":                 get(p, "SSESpecification", "SSEEnabled"),
	} {
		if got != true {
			t.Errorf("%s: %s = %v, want true", id, what, got)
		}
	}
	// Retained by every stack operation but a rolled-back create, whose new, empty table
	// would otherwise block every retry by its name; replaced never.
	if table.DeletionPolicy != "RetainExceptOnCreate" || table.UpdateReplacePolicy != "Retain" {
		t.Errorf("%s: DeletionPolicy %q, UpdateReplacePolicy %q: want RetainExceptOnCreate and Retain", id, table.DeletionPolicy, table.UpdateReplacePolicy)
	}
}

// Deletion protection is on unless TableDeletionProtection turns it off, which a
// stack's first deploy does so that a failed create can delete its table (DynamoDB
// refuses to delete a protected one, even for a rollback).
func TestTablesAreDeletionProtected(t *testing.T) {
	tpl := load(t)
	if d := tpl.Parameters["TableDeletionProtection"].Default; d != "true" {
		t.Errorf("TableDeletionProtection defaults to %v, want \"true\"", d)
	}
	for _, protect := range []string{"true", "false"} {
		_, res := deployed(t, tpl, map[string]any{"TableDeletionProtection": protect})
		tables := ofType(res, "AWS::DynamoDB::Table")
		if len(tables) != 1 {
			t.Fatalf("tables = %v, want the ledger's", tables)
		}
		for _, id := range tables {
			if got := res[id].Properties["DeletionProtectionEnabled"]; got != (protect == "true") {
				t.Errorf("TableDeletionProtection=%s: %s DeletionProtectionEnabled = %v", protect, id, got)
			}
		}
	}
}

// tableOf is the logical id of the table a function is given (LEDGER_TABLE), which
// must be a table of the template.
func tableOf(t *testing.T, res map[string]Resource, fn Resource) string {
	t.Helper()
	v := get(fn.Properties, "Environment", "Variables", config.EnvTable)
	id := target(v)
	if r, ok := res[id]; v == nil || !ok || r.Type != "AWS::DynamoDB::Table" || Symbol(v) != "!Ref "+id {
		t.Fatalf("%v: %s = %s, want !Ref to a table of the template (its name)", fn.Properties["CodeUri"], config.EnvTable, Symbol(v))
	}
	return id
}

func keyOf(schema any) migrations.Key {
	var k migrations.Key
	for _, e := range asList(schema) {
		switch get(e, "KeyType") {
		case "HASH":
			k.Partition = fmt.Sprint(get(e, "AttributeName"))
		case "RANGE":
			k.Sort = fmt.Sprint(get(e, "AttributeName"))
		}
	}
	return k
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// Each role may do exactly what its function's code calls, on exactly the resources it
// calls it on, and on a table only for the kind of partition key the code names
// (dynamodb:LeadingKeys): no "*", no action to spare, nothing missing (AccessDenied in
// production). The calls and keys are found by running the code (ledgerCalls,
// transactionTableActions).
func TestRolesGrantExactlyWhatTheCodeCalls(t *testing.T) {
	tpl := load(t)
	runTable, consumerCalls, apiCalls := ledgerCalls(t)
	for _, c := range slices.Concat(consumerCalls, apiCalls) {
		if c.Table != runTable {
			t.Fatalf("%s on table %q: the code reached a table it was not given", c.Action, c.Table)
		}
	}
	txnActions := transactionTableActions(t)
	var txnKeys []string
	for _, c := range consumerCalls {
		if !slices.Contains(txnActions, c.Action) || c.Index != "" {
			t.Fatalf("the transaction strategy called %s on %q index %q, which its IAM actions %v do not cover", c.Action, c.Table, c.Index, txnActions)
		}
		txnKeys = append(txnKeys, c.Key)
	}
	e, res := deployed(t, tpl, nil)
	_, consumerFn := function(t, res, consumerCode)
	table := tableOf(t, res, consumerFn)
	queue := target(sqsEvent(t, consumerFn)["Queue"])
	dlq := target(get(res[queue].Properties, "RedrivePolicy", "deadLetterTargetArn"))
	consumerWant := grants(txnActions, "!GetAtt "+table+".Arn", keyPatterns(t, txnKeys))
	consumerWant = append(consumerWant, grants(eventSourceActions, "!GetAtt "+queue+".Arn", "")...)
	consumerWant = append(consumerWant, grants(parkActions(t), "!GetAtt "+dlq+".Arn", "")...)
	consumerWant = append(consumerWant, grants(logActions, "!GetAtt "+logGroup(t, res, consumerFn)+".Arn", "")...)
	checkRole(t, e, consumerFn, consumerWant)

	_, apiFn := function(t, res, apiCode)
	if apiTable := tableOf(t, res, apiFn); apiTable != table {
		t.Errorf("the API reads %s, want the consumer's ledger table %s", apiTable, table)
	}
	checkRole(t, e, apiFn, apiGrants(t, res, apiFn, table, apiCalls))
	for _, id := range ofType(res, "AWS::Serverless::Function") {
		if _, ok := res[id].Properties["Policies"]; ok {
			t.Errorf("%s has SAM Policies: grant through its explicit role instead", id)
		}
	}
}

// apiGrants are the API's reads as the handler made them, on the table or on the
// statement's index, and its logs.
func apiGrants(t *testing.T, res map[string]Resource, apiFn Resource, table string, apiCalls []keyedCall) []Grant {
	t.Helper()
	keys := map[Grant][]string{}
	for _, c := range apiCalls {
		g := Grant{Action: c.Action, Resource: "!GetAtt " + table + ".Arn"}
		if c.Index != "" {
			if !slices.Contains(ledgerIndexes(t), c.Index) {
				t.Fatalf("the API queried index %q, which the migrations do not define (%v)", c.Index, ledgerIndexes(t))
			}
			g.Resource = "!Sub ${" + table + ".Arn}/index/" + c.Index
		}
		keys[g] = append(keys[g], c.Key)
	}
	var apiWant []Grant
	for g, k := range keys {
		g.LeadingKeys = keyPatterns(t, k)
		apiWant = append(apiWant, g)
	}
	return append(apiWant, grants(logActions, "!GetAtt "+logGroup(t, res, apiFn)+".Arn", "")...)
}

// checkRole compares the grants of fn's role with want, as sets.
func checkRole(t *testing.T, e *Env, fn Resource, want []Grant) {
	t.Helper()
	role := target(fn.Properties["Role"])
	if role == "" {
		t.Fatalf("function %v has no explicit Role: SAM would generate one with AWS managed policies on \"*\"", fn.Properties["CodeUri"])
	}
	got, err := e.Grants(role)
	if err != nil {
		t.Fatal(err)
	}
	gotSet, wantSet := map[Grant]bool{}, map[Grant]bool{}
	for _, g := range got {
		gotSet[g] = true
	}
	for _, g := range want {
		wantSet[g] = true
	}
	for g := range gotSet {
		if !wantSet[g] {
			t.Errorf("%s grants %s, which %v does not call", role, g, fn.Properties["CodeUri"])
		}
	}
	for g := range wantSet {
		if !gotSet[g] {
			t.Errorf("%s lacks %s, which %v calls", role, g, fn.Properties["CodeUri"])
		}
	}
}

// grants are actions on resource, conditioned on the leading-key patterns keys ("" for
// none).
func grants(actions []string, resource, keys string) []Grant {
	out := make([]Grant, len(actions))
	for i, a := range actions {
		out[i] = Grant{Action: a, Resource: resource, LeadingKeys: keys}
	}
	return out
}

// ledgerIndexes are the indexes of the ledger table, per its last migration.
func ledgerIndexes(t *testing.T) []string {
	t.Helper()
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range all {
		if m.Table == config.DefaultTable {
			names = names[:0] // each migration states the whole table; the last one wins
			for _, ix := range m.Indexes {
				names = append(names, ix.Name)
			}
		}
	}
	return names
}

// logGroup is the log group a function writes to; it must be one of the template's,
// kept LogRetentionInDays (30 by default).
func logGroup(t *testing.T, res map[string]Resource, fn Resource) string {
	t.Helper()
	id := target(get(fn.Properties, "LoggingConfig", "LogGroup"))
	g, ok := res[id]
	if !ok || g.Type != "AWS::Logs::LogGroup" {
		t.Fatalf("%v: LoggingConfig.LogGroup %v is not a log group of the template (Lambda would create one kept forever)", fn.Properties["CodeUri"], Symbol(get(fn.Properties, "LoggingConfig", "LogGroup")))
	}
	if d := number(t, "RetentionInDays", g.Properties["RetentionInDays"]); d != 30 {
		t.Errorf("%s keeps logs %v days by default, want 30", id, d)
	}
	return id
}

// Every function is built by `sam build` through the Makefile at the module root, as a
// bootstrap for provided.al2023 on arm64: a missing target fails `sam build`, a wrong
// architecture fails every invocation.
func TestFunctionsBuildThroughTheMakefile(t *testing.T) {
	tpl := load(t)
	raw, err := os.ReadFile(filepath.Join(moduleRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	makefile := string(raw)
	recipe := lambdaRecipe(t, makefile)
	for _, flag := range []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64", "-tags lambda.norpc", "-trimpath", `-ldflags "-s -w"`} {
		if !strings.Contains(recipe, flag) {
			t.Errorf("the Makefile's lambda recipe lacks %s: %s", flag, recipe)
		}
	}
	fns := ofType(tpl.Resources, "AWS::Serverless::Function")
	if len(fns) != 3 {
		t.Errorf("functions = %v, want the consumer, the API and the events function", fns)
	}
	for _, id := range fns {
		fn := tpl.Resources[id]
		p := fn.Properties
		if p["Runtime"] != "provided.al2023" || p["Handler"] != "bootstrap" || !reflect.DeepEqual(p["Architectures"], []any{"arm64"}) {
			t.Errorf("%s: Runtime %v, Handler %v, Architectures %v: want provided.al2023, bootstrap, [arm64]", id, p["Runtime"], p["Handler"], p["Architectures"])
		}
		if fn.Metadata["BuildMethod"] != "makefile" || fn.Metadata["ContextPath"] != "." || fn.Metadata["ProjectRootDirectory"] != "." {
			t.Errorf("%s: Metadata %v, want BuildMethod makefile with ContextPath and ProjectRootDirectory at the module root", id, fn.Metadata)
		}
		code, _ := p["CodeUri"].(string)
		cmd := strings.TrimPrefix(code, "cmd/")
		if cmd == code || strings.Contains(cmd, "/") {
			t.Errorf("%s: CodeUri %q, want cmd/<command>", id, code)
			continue
		}
		target := "build-" + id
		body, ok := makeTarget(makefile, target)
		if !ok {
			t.Errorf("the Makefile has no %s target: sam build would fail", target)
			continue
		}
		if !strings.Contains(body, "$(call lambda,"+cmd+",$(ARTIFACTS_DIR))") {
			t.Errorf("%s does not build %s into $(ARTIFACTS_DIR) with the lambda recipe:\n%s", target, code, body)
		}
	}
}

// lambdaRecipe is the Makefile's `lambda = …` definition.
func lambdaRecipe(t *testing.T, makefile string) string {
	t.Helper()
	for line := range strings.Lines(makefile) {
		if strings.HasPrefix(line, "lambda = ") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatal("the Makefile defines no lambda recipe")
	return ""
}

// makeTarget returns the recipe lines of a Makefile target.
func makeTarget(makefile, name string) (string, bool) {
	var body strings.Builder
	in, found := false, false
	for line := range strings.Lines(makefile) {
		switch {
		case strings.HasPrefix(line, name+":"):
			in, found = true, true
		case in && strings.HasPrefix(line, "\t"):
			body.WriteString(line)
		default:
			in = false
		}
	}
	return body.String(), found
}

// The API answers only SigV4-signed requests: its three routes, every method, and
// $default for every other path, all reaching the function (it answers 404 and 405).
func TestApiRoutesRequireIAM(t *testing.T) {
	tpl := load(t)
	_, res := deployed(t, tpl, nil)
	apis := ofType(res, "AWS::Serverless::HttpApi")
	if len(apis) != 1 {
		t.Fatalf("HTTP APIs = %v, want one", apis)
	}
	api := res[apis[0]]
	if get(api.Properties, "Auth", "DefaultAuthorizer") != "AWS_IAM" || get(api.Properties, "Auth", "EnableIamAuthorizer") != true {
		t.Errorf("%s Auth = %v, want EnableIamAuthorizer and DefaultAuthorizer AWS_IAM", apis[0], api.Properties["Auth"])
	}
	_, fn := function(t, res, apiCode)
	var routes []string
	for name, ev := range get(fn.Properties, "Events").(map[string]any) {
		if get(ev, "Type") != "HttpApi" {
			t.Errorf("event %s has type %v, want HttpApi", name, get(ev, "Type"))
			continue
		}
		p := get(ev, "Properties")
		route := fmt.Sprintf("%v %v", get(p, "Method"), get(p, "Path"))
		if get(p, "Method") == nil && get(p, "Path") == nil {
			route = "$default" // SAM's catch-all route
		}
		routes = append(routes, route)
		if target(get(p, "ApiId")) != apis[0] {
			t.Errorf("event %s is on ApiId %v, want !Ref %s (else SAM makes an implicit API without IAM)", name, Symbol(get(p, "ApiId")), apis[0])
		}
		if a := get(p, "Auth"); a != nil {
			t.Errorf("event %s overrides Auth with %v", name, a)
		}
		if v := get(p, "PayloadFormatVersion"); v != nil && v != "2.0" {
			t.Errorf("event %s: PayloadFormatVersion %v, want 2.0", name, v)
		}
	}
	slices.Sort(routes)
	want := []string{"$default", "ANY /cuentas/{cuenta}", "ANY /cuentas/{cuenta}/movimientos", "ANY /cuentas/{cuenta}/movimientos/{id}"}
	if !slices.Equal(routes, want) {
		t.Errorf("routes = %q, want %q", routes, want)
	}
	_, consumerFn := function(t, res, consumerCode)
	ledgerTable := tableOf(t, res, consumerFn)
	if got := Symbol(get(fn.Properties, "Environment", "Variables", config.EnvTable)); got != "!Ref "+ledgerTable {
		t.Errorf("API %s = %s, want the consumer's ledger table %s", config.EnvTable, got, ledgerTable)
	}
}

// With CreateTopic, the topic feeds the queue, and what the queue refuses goes to the
// DLQ: SNS drops an undeliverable message otherwise (TestOnlyProducersMoveMoney holds
// the policies that let it). Without CreateTopic, none of that exists.
func TestTopicFeedsTheQueue(t *testing.T) {
	tpl := load(t)
	for _, c := range []struct{ raw, kind string }{{"true", "standard"}, {"false", "standard"}, {"true", "fifo"}, {"false", "fifo"}} {
		raw := c.raw
		e, res := deployed(t, tpl, map[string]any{"CreateTopic": "true", "RawMessageDelivery": raw, "QueueType": c.kind})
		_, fn := function(t, res, consumerCode)
		queue := target(sqsEvent(t, fn)["Queue"])
		topics := ofType(res, "AWS::SNS::Topic")
		subs := ofType(res, "AWS::SNS::Subscription")
		if len(topics) != 1 || len(subs) != 1 {
			t.Fatalf("CreateTopic=true: topics %v, subscriptions %v; want one each", topics, subs)
		}
		topic, sub := topics[0], res[subs[0]].Properties
		if target(sub["TopicArn"]) != topic || sub["Protocol"] != "sqs" || Symbol(sub["Endpoint"]) != "!GetAtt "+queue+".Arn" {
			t.Errorf("subscription = %v, want the topic delivering to %s", sub, queue)
		}
		if sub["RawMessageDelivery"] != raw {
			t.Errorf("RawMessageDelivery = %v, want the parameter's %s", sub["RawMessageDelivery"], raw)
		}
		dlq := target(get(res[queue].Properties, "RedrivePolicy", "deadLetterTargetArn"))
		if got := Symbol(get(sub, "RedrivePolicy", "deadLetterTargetArn")); got != "!GetAtt "+dlq+".Arn" {
			t.Errorf("subscription's deadLetterTargetArn = %s, want the queue's DLQ %s", got, dlq)
		}
		out, err := e.Outputs()
		if err != nil {
			t.Fatal(err)
		}
		if target(out["MovementsTopicArn"]) != topic {
			t.Errorf("MovementsTopicArn output = %v, want !Ref %s", out["MovementsTopicArn"], topic)
		}
	}

	e, res := deployed(t, tpl, map[string]any{"CreateTopic": "false"})
	for _, typ := range []string{"AWS::SNS::Topic", "AWS::SNS::Subscription", "AWS::SNS::TopicPolicy"} {
		if ids := ofType(res, typ); len(ids) > 0 {
			t.Errorf("CreateTopic=false still creates %s %v", typ, ids)
		}
	}
	out, err := e.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out["MovementsTopicArn"]; ok {
		t.Error("CreateTopic=false still outputs MovementsTopicArn")
	}
}

// The failures someone must hear about each have an alarm, and every alarm notifies
// someone: AlarmTopicArn when one is given, else a topic the stack makes with AlarmEmail
// subscribed. The API's 5xx count is watched on its stage, not only the function's
// Errors: the handler answers a failed read with a 500 and returns normally. The events
// function's failure queue and whole failed invocations are watched too. The
// table's throttling and system errors are watched for every operation the functions
// call, its indexes' throttling too.
func TestAlarmsWatchTheFailures(t *testing.T) {
	tpl := load(t)
	const ops, email = "arn:aws:sns:eu-west-1:123456789012:ops", "oncall@example.com"
	for _, to := range []struct{ topic, email, want string }{{"", "", ""}, {"", email, "!Ref AlarmTopic"}, {ops, email, ops}} {
		_, res := deployed(t, tpl, map[string]any{"AlarmTopicArn": to.topic, "AlarmEmail": to.email, "QueueAgeAlarmSeconds": 900,
			"CreateTopic": "true", "EventSources": "shop.orders"})
		if to.want == "!Ref AlarmTopic" {
			subs := asList(get(res["AlarmTopic"].Properties, "Subscription"))
			if len(subs) != 1 || get(subs[0], "Protocol") != "email" || get(subs[0], "Endpoint") != email {
				t.Errorf("AlarmEmail %s: alarm topic subscriptions %v, want the address", email, subs)
			}
		} else if _, ok := res["AlarmTopic"]; ok {
			t.Errorf("AlarmTopicArn %q, AlarmEmail %q: the stack makes an alarm topic", to.topic, to.email)
		}
		alarms := watched(t, res, to.want)
		for w, threshold := range expectedAlarms(t, res) {
			p, ok := alarms[w]
			if !ok {
				t.Errorf("no alarm on %s %s of %s", w.namespace, w.metric, w.dimensions)
				continue
			}
			if got := number(t, "Threshold", p["Threshold"]); got != threshold || p["ComparisonOperator"] != "GreaterThanThreshold" {
				t.Errorf("alarm on %s of %s: %v %v, want GreaterThanThreshold %v", w.metric, w.dimensions, p["ComparisonOperator"], got, threshold)
			}
		}
	}
}

// watch is one metric an alarm watches, alone or in its math.
type watch struct{ namespace, metric, dimensions string }

// watched is every metric the alarms of res watch, each with its alarm's properties;
// t fails for an alarm whose actions are not [want] (none when want is "") or that
// treats missing data oddly.
func watched(t *testing.T, res map[string]Resource, want string) map[watch]map[string]any {
	t.Helper()
	wantActions := []string(nil)
	if want != "" {
		wantActions = []string{want}
	}
	alarms := map[watch]map[string]any{}
	for _, id := range ofType(res, "AWS::CloudWatch::Alarm") {
		p := res[id].Properties
		alarms[watch{fmt.Sprint(p["Namespace"]), fmt.Sprint(p["MetricName"]), dimensions(p["Dimensions"])}] = p
		for _, m := range asList(p["Metrics"]) {
			if stat := get(m, "MetricStat", "Metric"); stat != nil {
				alarms[watch{fmt.Sprint(get(stat, "Namespace")), fmt.Sprint(get(stat, "MetricName")), dimensions(get(stat, "Dimensions"))}] = p
			}
		}
		if m := p["TreatMissingData"]; !slices.Contains([]any{"notBreaching", "breaching", "ignore", "missing"}, m) {
			t.Errorf("%s: TreatMissingData %v", id, m)
		}
		for _, actions := range []string{"AlarmActions", "OKActions"} {
			if got := Strings(p[actions]); !slices.Equal(got, wantActions) {
				t.Errorf("%s %s = %v, want %v", id, actions, got, wantActions)
			}
		}
	}
	return alarms
}

// expectedAlarms is every metric of res that must have an alarm, with its threshold.
func expectedAlarms(t *testing.T, res map[string]Resource) map[watch]float64 {
	t.Helper()
	consumerID, fn := function(t, res, consumerCode)
	apiID, _ := function(t, res, apiCode)
	eventsID, eventsFn := function(t, res, eventsCode)
	queue := target(sqsEvent(t, fn)["Queue"])
	eventsFailures := target(get(streamEvent(t, eventsFn), "DestinationConfig", "OnFailure", "Destination"))
	dlq := target(get(res[queue].Properties, "RedrivePolicy", "deadLetterTargetArn"))
	httpAPIs := ofType(res, "AWS::Serverless::HttpApi")
	if len(httpAPIs) != 1 {
		t.Fatalf("HTTP APIs = %v, want one", httpAPIs)
	}
	stage := "$default" // SAM's stage when the API names none
	if name, ok := res[httpAPIs[0]].Properties["StageName"]; ok {
		stage = fmt.Sprint(name)
	}
	want := map[watch]float64{
		{"AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName=!GetAtt " + dlq + ".QueueName"}: 0,
		// Fires again for a message left 3 days, at least 4 before the DLQ's 14-day
		// retention, counted from its first send, deletes it.
		{"AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName=!GetAtt " + dlq + ".QueueName"}:     3 * 24 * 3600,
		{"AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName=!GetAtt " + queue + ".QueueName"}:   900,
		{"AWS/Lambda", "Errors", "FunctionName=!Ref " + consumerID}:                                 0,
		{"AWS/Lambda", "Throttles", "FunctionName=!Ref " + consumerID}:                              0,
		{"AWS/Lambda", "Errors", "FunctionName=!Ref " + apiID}:                                      0,
		{"AWS/ApiGateway", "5xx", "ApiId=!Ref " + httpAPIs[0] + " Stage=" + stage}:                  0,
		{"Ledger", "FailedPermanent", "Function=!Ref " + consumerID + " Strategy=transaction"}:      0,
		{"Ledger", "ConflictingDuplicate", "Function=!Ref " + consumerID + " Strategy=transaction"}: 0,
		{"AWS/SNS", "NumberOfNotificationsFailed", "TopicName=!GetAtt MovementsTopic.TopicName"}:    0,
		{"AWS/Events", "FailedInvocations", "RuleName=!Sub ${AWS::StackName}-movements"}:            0,
		// A stream batch given up, and the events function failing whole invocations.
		{"AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName=!GetAtt " + eventsFailures + ".QueueName"}: 0,
		{"AWS/Lambda", "Errors", "FunctionName=!Ref " + eventsID}:                                               0,
	}
	for _, op := range []string{"TransactWriteItems", "GetItem", "Query"} {
		for _, m := range []string{"ThrottledRequests", "SystemErrors"} {
			want[watch{"AWS/DynamoDB", m, "Operation=" + op + " TableName=!Ref LedgerTable"}] = 0
		}
	}
	for _, ix := range []string{"por_seq", "por_aplicado"} {
		for _, m := range []string{"ReadThrottleEvents", "WriteThrottleEvents"} {
			want[watch{"AWS/DynamoDB", m, "GlobalSecondaryIndexName=" + ix + " TableName=!Ref LedgerTable"}] = 0
		}
	}
	return want
}

func dimensions(v any) string {
	var pairs []string
	for _, d := range asList(v) {
		pairs = append(pairs, fmt.Sprintf("%v=%s", get(d, "Name"), Symbol(get(d, "Value"))))
	}
	slices.Sort(pairs)
	return strings.Join(pairs, " ")
}

// The consumer starts with the environment the stack gives it, under every value of
// the parameters it reads: a typo here would fail every invocation at init.
func TestConsumerEnvironmentPassesItsConfig(t *testing.T) {
	tpl := load(t)
	policies := Strings(tpl.Parameters["InsufficientFunds"].AllowedValues)
	if want := []string{string(cuenta.Retry), string(cuenta.Reject)}; !slices.Equal(policies, want) {
		t.Errorf("InsufficientFunds allows %v, want %v", policies, want)
	}
	const dlqURL = "https://sqs.eu-west-1.amazonaws.com/123456789012/ledger-dlq"
	for _, policy := range policies {
		_, res := deployed(t, tpl, map[string]any{"InsufficientFunds": policy, "TableName": "ledger-prod"})
		_, fn := function(t, res, consumerCode)
		table := tableOf(t, res, fn)
		queue := target(sqsEvent(t, fn)["Queue"])
		dlq := target(get(res[queue].Properties, "RedrivePolicy", "deadLetterTargetArn"))
		deployedAs := map[string]string{"!Ref " + table: "ledger-prod", "!Ref " + dlq: dlqURL}
		env := map[string]string{}
		for name, v := range get(fn.Properties, "Environment", "Variables").(map[string]any) {
			s := Symbol(v)
			if real, ok := deployedAs[s]; ok {
				s = real
			}
			env[name] = s
		}
		for name := range env {
			if !slices.Contains([]string{config.EnvTable, config.EnvInsufficientFunds, config.EnvDLQ, config.EnvConcurrency}, name) {
				t.Errorf("the consumer gets %s, which it does not read", name)
			}
		}
		cfg, err := config.FromEnv(func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("InsufficientFunds=%s: %v", policy, err)
		}
		if cfg.Table != "ledger-prod" || string(cfg.InsufficientFunds) != policy || cfg.DLQ != dlqURL {
			t.Errorf("InsufficientFunds=%s: the consumer runs with %+v", policy, cfg)
		}
	}
}

// The outputs name what a user needs after `sam deploy`: where to send (the queue's URL,
// and its ARN for producers' policies and redrives), where parked movements wait (the
// DLQ's URL, and its ARN for a redrive), the API (its URL, and its id for callers'
// execute-api:Invoke policies) and the tables.
func TestOutputsNameWhatUsersNeed(t *testing.T) {
	tpl := load(t)
	e, res := deployed(t, tpl, nil)
	out, err := e.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	_, fn := function(t, res, consumerCode)
	queue := target(sqsEvent(t, fn)["Queue"])
	dlq := target(get(res[queue].Properties, "RedrivePolicy", "deadLetterTargetArn"))
	api := ofType(res, "AWS::Serverless::HttpApi")[0]
	table := tableOf(t, res, fn)
	want := map[string]string{
		"MovementsQueueUrl":  "!Ref " + queue,
		"MovementsQueueArn":  "!GetAtt " + queue + ".Arn",
		"DeadLetterQueueUrl": "!Ref " + dlq,
		"DeadLetterQueueArn": "!GetAtt " + dlq + ".Arn",
		"ApiId":              "!Ref " + api,
		"TableName":          "!Ref " + table,
	}
	for name, want := range want {
		if got := Symbol(out[name]); got != want {
			t.Errorf("output %s = %s, want %s", name, got, want)
		}
	}
	if got := Symbol(out["ApiUrl"]); !strings.HasPrefix(got, "!Sub https://${"+api+"}.execute-api.") {
		t.Errorf("output ApiUrl = %s, want the HTTP API's URL", got)
	}
}

// The consumer's concurrency is reserved by default, exactly the event source's
// MaximumConcurrency (less would throttle its own batches, more would sit idle), so an
// API burst or any other function cannot leave it throttled; "unreserved" opts out.
// The API is bounded by its stage's throttling, with an optional cap of its own.
func TestConcurrencyKeepsTheConsumerRunning(t *testing.T) {
	tpl := load(t)
	for name, want := range map[string]string{"ConsumerConcurrency": "reserved", "ApiReservedConcurrency": "unreserved"} {
		if d := tpl.Parameters[name].Default; d != want {
			t.Errorf("%s defaults to %v, want %s", name, d, want)
		}
	}
	for _, maxConc := range []int{2, 10, 250} {
		_, res := deployed(t, tpl, map[string]any{"MaximumConcurrency": maxConc})
		_, fn := function(t, res, consumerCode)
		esm := number(t, "MaximumConcurrency", get(sqsEvent(t, fn), "ScalingConfig", "MaximumConcurrency"))
		if got, ok := fn.Properties["ReservedConcurrentExecutions"]; !ok || number(t, "ReservedConcurrentExecutions", got) != esm {
			t.Errorf("MaximumConcurrency=%d: the consumer reserves %v, want the event source's %v", maxConc, got, esm)
		}
	}
	_, res := deployed(t, tpl, map[string]any{"ConsumerConcurrency": "unreserved"})
	if _, fn := function(t, res, consumerCode); fn.Properties["ReservedConcurrentExecutions"] != nil {
		t.Errorf("ConsumerConcurrency=unreserved: the consumer reserves %v", fn.Properties["ReservedConcurrentExecutions"])
	}

	for value, want := range map[string]any{"unreserved": nil, "40": "40"} {
		_, res := deployed(t, tpl, map[string]any{"ApiReservedConcurrency": value})
		if _, fn := function(t, res, apiCode); fn.Properties["ReservedConcurrentExecutions"] != want {
			t.Errorf("ApiReservedConcurrency=%s: the API reserves %v, want %v", value, fn.Properties["ReservedConcurrentExecutions"], want)
		}
	}
	for _, bad := range []string{"0", "-1", "", "10000", "unreserved5"} {
		if _, err := tpl.Env(map[string]any{"ApiReservedConcurrency": bad}); err == nil {
			t.Errorf("ApiReservedConcurrency=%q is accepted: 0 would stop the API, and anything but a count or unreserved fails the deploy", bad)
		}
	}

	// Throttling on every route of the stage, from parameters with positive defaults.
	apis := ofType(tpl.Resources, "AWS::Serverless::HttpApi")
	if len(apis) != 1 {
		t.Fatalf("HTTP APIs = %v, want one", apis)
	}
	settings := get(tpl.Resources[apis[0]].Properties, "DefaultRouteSettings")
	for _, knob := range []string{"ThrottlingRateLimit", "ThrottlingBurstLimit"} {
		param, ok := tpl.Parameters[target(get(settings, knob))]
		if !ok {
			t.Errorf("%s DefaultRouteSettings.%s = %v, want a Ref to a parameter", apis[0], knob, Symbol(get(settings, knob)))
			continue
		}
		if d := number(t, knob, param.Default); d < 1 || param.MinValue == nil || *param.MinValue < 1 {
			t.Errorf("%s: default %v, MinValue %v; want at least 1 (0 would refuse every request)", knob, d, param.MinValue)
		}
	}
}

// The deploy guide explains every parameter, reads every output and names every alarm,
// so that a change to the stack without one to the guide fails here.
func TestDeployGuideCoversTheStack(t *testing.T) {
	tpl := load(t)
	raw, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	guide := string(raw)
	for _, name := range slices.Sorted(maps.Keys(tpl.Parameters)) {
		if !strings.Contains(guide, "`"+name+"`") {
			t.Errorf("docs/deploy.md does not explain parameter %s", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(tpl.Outputs)) {
		if !strings.Contains(guide, name) {
			t.Errorf("docs/deploy.md does not read output %s", name)
		}
	}
	for _, id := range ofType(tpl.Resources, "AWS::CloudWatch::Alarm") {
		name := Symbol(tpl.Resources[id].Properties["AlarmName"])
		_, suffix, ok := strings.Cut(name, "${AWS::StackName}")
		if !ok || !strings.Contains(guide, "`<stack>"+suffix+"`") {
			t.Errorf("docs/deploy.md does not describe alarm %s (%s)", id, name)
		}
	}
}
