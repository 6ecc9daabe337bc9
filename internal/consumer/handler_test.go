package consumer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// fixture is one test's handler on its own table, with its logs and metrics captured.
type fixture struct {
	env     *testenv.DynamoDB
	handler *consumer.Handler
	out     *testenv.Buffer
	parker  *memParker
}

// lines parses what the handler logged, one JSON document per line.
func lines(b *testenv.Buffer) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			panic(fmt.Sprintf("not a JSON line: %q: %v", line, err))
		}
		out = append(out, m)
	}
	return out
}

// memParker stands in for the DLQ: it records what the handler parks.
type memParker struct {
	mu     sync.Mutex
	parked map[string]consumer.Reason
}

func (p *memParker) Park(_ context.Context, msg events.SQSMessage, r consumer.Reason) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parked[msg.MessageId] = r
	return nil
}

func newFixture(t *testing.T, policy cuenta.FundsPolicy, park bool) *fixture {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: env.Table(), InsufficientFunds: policy})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{env: env, out: &testenv.Buffer{}}
	opts := consumer.Options{Logger: slog.New(slog.NewJSONHandler(f.out, nil)), Metrics: f.out}
	if park {
		f.parker = &memParker{parked: map[string]consumer.Reason{}}
		opts.Parker = f.parker
	}
	f.handler = consumer.New(svc, opts)
	return f
}

func loadEvent(t *testing.T, name string) events.SQSEvent {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func msg(id, body string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, Body: body, EventSource: "aws:sqs"}
}

func body(id, cta, tipo, importe string) string {
	return fmt.Sprintf(`{"id":%q,"cuenta":%q,"tipo":%q,"importe":%q,"moneda":"EUR"}`, id, cta, tipo, importe)
}

func (f *fixture) saldo(t *testing.T, cta string) string {
	t.Helper()
	out, err := f.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(f.env.Table()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CUENTA#" + cta}, "sk": &types.AttributeValueMemberS{Value: "CUENTA"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Item == nil {
		return "<none>"
	}
	return decimal.RequireFromString(out.Item["saldo"].(*types.AttributeValueMemberN).Value).String()
}

func failures(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	slices.Sort(ids)
	return ids
}

func TestCheckedInEventsAreApplied(t *testing.T) {
	cases := []struct {
		file   string
		saldos map[string]string
	}{
		{"sqs-raw.json", map[string]string{"ES9121000418450200051332": "1250", "US-ACME-01": "1999.99"}},
		{"sqs-sns.json", map[string]string{"ES7620770024003102575766": "50"}},
		{"sqs-eventbridge.json", map[string]string{"ES1000492352082414205416": "25.5", "JP-TOKYO-7": "5000"}},
		{"sqs-fifo.json", map[string]string{"ES9121000418450200051332": "100", "ES7620770024003102575766": "0.01"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			f := newFixture(t, cuenta.Retry, false)
			ev := loadEvent(t, tc.file)
			resp, err := f.handler.Handle(context.Background(), ev)
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("resp = %+v, %v; want every record done", resp, err)
			}
			for cta, want := range tc.saldos {
				if got := f.saldo(t, cta); got != want {
					t.Errorf("saldo %s = %s, want %s", cta, got, want)
				}
			}
			// Redelivering the whole batch changes nothing and fails nothing.
			if resp, err := f.handler.Handle(context.Background(), ev); err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("redelivery: %+v, %v", resp, err)
			}
			for cta, want := range tc.saldos {
				if got := f.saldo(t, cta); got != want {
					t.Errorf("after redelivery saldo %s = %s, want %s", cta, got, want)
				}
			}
		})
	}
}

// mixedBatch is ten messages: 2 duplicates (m3 of m1 via a new message id, m7 of m6),
// 1 malformed (m5), 1 conflicting duplicate (m9 reuses m2's id with another amount) and
// 1 cargo the balance cannot cover (m8).
func mixedBatch() events.SQSEvent {
	return events.SQSEvent{Records: []events.SQSMessage{
		msg("m1", body("a1", "A", "abono", "100.00")),
		msg("m2", body("a2", "A", "abono", "50.00")),
		msg("m3", body("a1", "A", "abono", "100")),
		msg("m4", body("b1", "B", "abono", "10.00")),
		msg("m5", `{"id":"x","cuenta":"B","tipo":"abono","importe":"1e3","moneda":"EUR"}`),
		msg("m6", body("c1", "C", "abono", "5.00")),
		msg("m7", body("c1", "C", "abono", "5.00")),
		msg("m8", body("b2", "B", "cargo", "10.01")),
		msg("m9", body("a2", "A", "abono", "51.00")),
		msg("m10", body("c2", "C", "cargo", "5.00")),
	}}
}

func TestMixedBatchReportsExactlyWhatMustComeBack(t *testing.T) {
	cases := []struct {
		name   string
		policy cuenta.FundsPolicy
		park   bool
		back   []string
		parked []string
	}{
		{"retry, no parking", cuenta.Retry, false, []string{"m5", "m8", "m9"}, nil},
		{"retry, parking", cuenta.Retry, true, []string{"m8"}, []string{"m5", "m9"}},
		{"reject, parking", cuenta.Reject, true, nil, []string{"m5", "m9"}},
		{"reject, no parking", cuenta.Reject, false, []string{"m5", "m9"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.policy, tc.park)
			resp, err := f.handler.Handle(context.Background(), mixedBatch())
			if err != nil {
				t.Fatal(err)
			}
			if got := failures(resp); !slices.Equal(got, tc.back) {
				t.Errorf("come back = %v, want %v", got, tc.back)
			}
			if f.parker != nil {
				var parked []string
				for id := range f.parker.parked {
					parked = append(parked, id)
				}
				slices.Sort(parked)
				if !slices.Equal(parked, tc.parked) {
					t.Errorf("parked = %v, want %v", parked, tc.parked)
				}
				if r := f.parker.parked["m9"]; r.Outcome != store.ConflictingDuplicate || !strings.Contains(r.Error, "conflicting duplicate") {
					t.Errorf("m9 parked with %+v, want the conflicting duplicate's reason", r)
				}
			}
			for cta, want := range map[string]string{"A": "150", "B": "10", "C": "0"} {
				if got := f.saldo(t, cta); got != want {
					t.Errorf("saldo %s = %s, want %s", cta, got, want)
				}
			}
			byID := map[string]map[string]any{}
			for _, l := range lines(f.out) {
				if l["msg"] == "movement" {
					byID[l["message_id"].(string)] = l
				}
			}
			want := map[string]string{"m1": "applied", "m2": "applied", "m3": "duplicate", "m4": "applied", "m5": "failed",
				"m6": "applied", "m7": "duplicate", "m9": "conflicting_duplicate", "m10": "applied", "m8": "failed"}
			if tc.policy == cuenta.Reject {
				want["m8"] = "rejected"
			}
			for id, outcome := range want {
				if got := byID[id]["outcome"]; got != outcome {
					t.Errorf("%s logged outcome %v, want %s", id, got, outcome)
				}
			}
		})
	}
}

func TestLogLinesAndMetricsAreDocumentedJSON(t *testing.T) {
	f := newFixture(t, cuenta.Retry, true)
	if _, err := f.handler.Handle(context.Background(), mixedBatch()); err != nil {
		t.Fatal(err)
	}
	var records, emf int
	for _, l := range lines(f.out) {
		switch {
		case l["msg"] == "movement":
			records++
			for _, field := range []string{"time", "level", "message_id", "cuenta", "id", "outcome", "transactions", "duration_ms", "action"} {
				if _, ok := l[field]; !ok {
					t.Errorf("log line %v lacks %q", l, field)
				}
			}
			if l["outcome"] == "failed" && l["error"] == nil {
				t.Errorf("failed record logged without its reason: %v", l)
			}
		case l["_aws"] != nil:
			emf++
			meta := l["_aws"].(map[string]any)
			cw := meta["CloudWatchMetrics"].([]any)[0].(map[string]any)
			if cw["Namespace"] != consumer.Namespace || meta["Timestamp"] == nil {
				t.Errorf("EMF metadata = %v", meta)
			}
			for _, m := range cw["Metrics"].([]any) {
				name := m.(map[string]any)["Name"].(string)
				if _, ok := l[name].(float64); !ok {
					t.Errorf("metric %s declared but has no numeric value in %v", name, l)
				}
			}
			counts := map[string]float64{consumer.MetricApplied: 5, consumer.MetricDuplicate: 2, consumer.MetricConflictingDuplicate: 1, consumer.MetricFailed: 2, consumer.MetricFailedPermanent: 1}
			for name, want := range counts {
				if l[name] != want {
					t.Errorf("metric %s = %v, want %v", name, l[name], want)
				}
			}
		}
	}
	if records != 10 || emf != 1 {
		t.Errorf("%d record lines and %d EMF documents, want 10 and 1", records, emf)
	}
}

// A movement rejected under the reject policy is logged with the rule it broke, as a
// failure is with its error; neither says an amount or a balance, nor the account
// outside its own field, which the log group masks.
func TestARejectionIsLoggedWithItsReason(t *testing.T) {
	f := newFixture(t, cuenta.Reject, true)
	batch := []events.SQSMessage{msg("m1", body("c1", "ES76LEAK", "cargo", "5.00")),
		msg("m2", `{"id":"c2","cuenta":"ES76LEAK","tipo":"cargo","importe":"12,50","moneda":"EUR"}`),
		msg("m3", `{"id":"c3","cuenta":"ES76LEAK","tipo":"abono","importe":"7.00","moneda":"USD"}`),
		msg("m4", `{"id":"c4","cuenta":"ES76LEAK","tipo":"reparto","importe":"50.00","moneda":"EUR","partes":[{"cuenta":"B","importe":"10.00"},{"cuenta":"C","importe":"20.00"}]}`)}
	if _, err := f.handler.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg("m0", body("a0", "ES76LEAK", "abono", "3.00"))}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.handler.Handle(context.Background(), events.SQSEvent{Records: batch}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]map[string]any{}
	for _, l := range lines(f.out) {
		if l["msg"] == "movement" {
			seen[l["message_id"].(string)] = l
		}
		for k, v := range l {
			if k == "cuenta" || k == slog.TimeKey { // the clock's time may read 03:15.00
				continue
			}
			if s, _ := v.(string); strings.Contains(s, "ES76LEAK") || strings.Contains(s, "3.00") || strings.Contains(s, "5.00") || strings.Contains(s, "12,50") || strings.Contains(s, "50.00") || strings.Contains(s, "30.00") {
				t.Errorf("log line %v says an account, amount or balance in %s", l, k)
			}
		}
	}
	if l := seen["m1"]; l["outcome"] != "rejected" || l["rule"] != string(cuenta.SaldoInsuficiente) {
		t.Errorf("log line %v, want outcome rejected with its rule", l)
	}
	for _, id := range []string{"m2", "m3", "m4"} {
		if e, _ := seen[id]["error"].(string); !strings.Contains(e, "importe") && !strings.Contains(e, "partes") && !strings.Contains(e, string(cuenta.MonedaDistinta)) {
			t.Errorf("log line %v, want the field or the rule named", seen[id])
		}
	}
}

func TestInvalidMessagesAreRejectedWithTheirReasonAndWriteNothing(t *testing.T) {
	bodies := map[string]string{
		"not JSON":               `pago de 50 euros`,
		"empty":                  ``,
		"array":                  `[{"id":"a"}]`,
		"missing id":             `{"cuenta":"A","tipo":"abono","importe":"1","moneda":"EUR"}`,
		"missing cuenta":         `{"id":"a","tipo":"abono","importe":"1","moneda":"EUR"}`,
		"missing tipo":           `{"id":"a","cuenta":"A","importe":"1","moneda":"EUR"}`,
		"missing importe":        `{"id":"a","cuenta":"A","tipo":"abono","moneda":"EUR"}`,
		"missing moneda":         `{"id":"a","cuenta":"A","tipo":"abono","importe":"1"}`,
		"wrong tipo":             body("a", "A", "transferencia", "1"),
		"importe 0":              body("a", "A", "abono", "0"),
		"importe -5":             body("a", "A", "abono", "-5"),
		"three decimals in EUR":  body("a", "A", "abono", "1.234"),
		"exponent":               body("a", "A", "abono", "1e3"),
		"NaN":                    body("a", "A", "abono", "NaN"),
		"number as float":        `{"id":"a","cuenta":"A","tipo":"abono","importe":1e3,"moneda":"EUR"}`,
		"id with #":              body("a#b", "A", "abono", "1"),
		"cuenta with #":          body("a", "A#CUENTA", "abono", "1"),
		"unknown currency":       `{"id":"a","cuenta":"A","tipo":"abono","importe":"1","moneda":"EURO"}`,
		"overlong concepto":      `{"id":"a","cuenta":"A","tipo":"abono","importe":"1","moneda":"EUR","concepto":"` + strings.Repeat("x", 257) + `"}`,
		"bad fecha":              `{"id":"a","cuenta":"A","tipo":"abono","importe":"1","moneda":"EUR","fecha":"ayer"}`,
		"SNS with a bad message": `{"Type":"Notification","MessageId":"n","Message":"{\"id\":\"a\",\"cuenta\":\"A\",\"tipo\":\"abono\",\"importe\":\"0\",\"moneda\":\"EUR\"}"}`,
		"SNS confirmation":       `{"Type":"SubscriptionConfirmation","Message":"You have chosen to subscribe"}`,
		"duplicate key":          `{"id":"a","cuenta":"A","tipo":"abono","importe":"1","importe":"1000","moneda":"EUR"}`,
	}
	f := newFixture(t, cuenta.Retry, true)
	var ev events.SQSEvent
	for name, b := range bodies {
		ev.Records = append(ev.Records, msg(name, b))
	}
	resp, err := f.handler.Handle(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("resp = %+v, %v; want every invalid message parked, none retried", resp, err)
	}
	if len(f.parker.parked) != len(bodies) {
		t.Errorf("%d parked, want %d", len(f.parker.parked), len(bodies))
	}
	for name, r := range f.parker.parked {
		if r.Outcome != store.Failed || !strings.HasPrefix(r.Error, "ledger: permanent failure: movimiento: ") {
			t.Errorf("%s parked with %+v, want a movimiento error", name, r)
		}
	}
	for _, l := range lines(f.out) {
		if l["msg"] == "movement" && (l["level"] != "ERROR" || l["action"] != string(consumer.Parked)) {
			t.Errorf("invalid message logged as %v", l)
		}
	}
	scan, err := f.env.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(f.env.Table())})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range scan.Items {
		if pk := it["pk"].(*types.AttributeValueMemberS).Value; !strings.HasPrefix(pk, "MIGRACION#") {
			t.Errorf("an invalid message wrote %s", pk)
		}
	}
}

func TestRecordsNotStartedBeforeTheDeadlineComeBack(t *testing.T) {
	f := newFixture(t, cuenta.Retry, false)
	// Under the 1 s reserve, but over the half of it the work keeps back: a record
	// started would still have time to write.
	ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
	defer cancel()
	resp, err := f.handler.Handle(ctx, mixedBatch())
	// The nine movements were not started; m5, malformed, could not be parked here.
	if err != nil || len(resp.BatchItemFailures) != 10 {
		t.Fatalf("resp = %+v, err = %v; want all ten back and no invocation error", resp, err)
	}
	if f.saldo(t, "A") != "<none>" {
		t.Error("work was done although the deadline was too near")
	}
}

func TestUnreachableTableFailsTheInvocation(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: "no-such-table"})
	if err != nil {
		t.Fatal(err)
	}
	h := consumer.New(svc, consumer.Options{Logger: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil))})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("m1", body("a1", "A", "abono", "1")), msg("m2", body("b1", "B", "abono", "1")),
	}})
	if !errors.Is(err, consumer.ErrNothingProcessed) || len(resp.BatchItemFailures) != 2 {
		t.Fatalf("resp = %+v, err = %v; want ErrNothingProcessed", resp, err)
	}
}

// A batch whose every record must come back for a reason of its own — a debit the
// account refuses, a reversal before its original — is not a failed invocation: the
// service is up, and the function's Errors alarm must not say otherwise.
func TestRecordsWaitingForTheirAccountDoNotFailTheInvocation(t *testing.T) {
	for name, batch := range map[string][]events.SQSMessage{ // one reason per batch: either alone must do
		"debits refused": {msg("m1", body("c1", "A", "cargo", "5")), msg("m2", body("c2", "B", "cargo", "7"))},
		"reversals early": {msg("m1", `{"id":"an-1","cuenta":"A","tipo":"anulacion","anula":"todavia-no"}`),
			msg("m2", `{"id":"an-2","cuenta":"B","tipo":"anulacion","anula":"tampoco"}`)},
	} {
		f := newFixture(t, cuenta.Retry, false)
		resp, err := f.handler.Handle(context.Background(), events.SQSEvent{Records: batch})
		if err != nil || len(resp.BatchItemFailures) != 2 {
			t.Errorf("%s: resp = %+v, err = %v; want both back and no invocation error", name, resp, err)
		}
	}
}

// A capture of a hold that a writer with a later clock let lapse comes back (its
// redelivery is refused as expired): that says nothing of the service's health either.
func TestACaptureOfALapsedHoldDoesNotFailTheInvocation(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	early, late := sim.NewClock(), sim.NewClock()
	expira := early.Now().Add(time.Hour)
	ledgerAt := func(c *sim.Clock) *store.Ledger {
		svc, err := store.New(env.Client, store.Config{Table: env.Table(), Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	behind := consumer.New(ledgerAt(early), consumer.Options{Logger: slog.New(slog.DiscardHandler)})
	setup := events.SQSEvent{Records: []events.SQSMessage{msg("m1", body("a", "H", "abono", "100")),
		msg("m2", fmt.Sprintf(`{"id":"aut","cuenta":"H","tipo":"retencion","importe":"80","moneda":"EUR","expira":%q}`, expira.Format(time.RFC3339)))}}
	if resp, err := behind.Handle(context.Background(), setup); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("setup: %+v, %v", resp, err)
	}
	early.AdvanceTo(expira.Add(-time.Minute))
	late.AdvanceTo(expira.Add(time.Second))
	if r, err := testenv.One(ledgerAt(late).Apply(context.Background(), []store.Entrega{{Mov: mustParse(t, body("b", "H", "cargo", "90"))}})); err != nil {
		t.Fatalf("a cargo of the funds the lapsed hold freed = %+v, %v", r, err)
	}
	resp, err := behind.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg("m3", `{"id":"cap","cuenta":"H","tipo":"captura","retencion":"aut"}`)}})
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Errorf("resp = %+v, err = %v; want the capture back and no invocation error", resp, err)
	}
}

// hangingParker is a DLQ that never answers: each park lasts until its caller gives
// up, and notes when that was to be.
type hangingParker struct {
	mu        sync.Mutex
	deadlines []time.Time
}

func (p *hangingParker) Park(ctx context.Context, _ events.SQSMessage, _ consumer.Reason) error {
	deadline, _ := ctx.Deadline()
	p.mu.Lock()
	p.deadlines = append(p.deadlines, deadline)
	p.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

// Parking gives up before the invocation's deadline: a DLQ that does not answer leaves
// its messages to come back, rather than time the invocation out (which would bring
// back the whole batch, parked records too).
func TestParkingGivesUpBeforeTheDeadline(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: env.Table()})
	if err != nil {
		t.Fatal(err)
	}
	p := &hangingParker{}
	h := consumer.New(svc, consumer.Options{Logger: slog.New(slog.DiscardHandler), Parker: p, Reserve: 400 * time.Millisecond})
	deadline := time.Now().Add(2 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		msg("m1", `not a movement`), msg("m2", body("a1", "A", "abono", "1.00")), msg("m3", `{}`), msg("m4", `[`)}})
	var back []string
	for _, f := range resp.BatchItemFailures {
		back = append(back, f.ItemIdentifier)
	}
	if err != nil || !slices.Equal(back, []string{"m1", "m3", "m4"}) {
		t.Fatalf("back = %v, err = %v; want the three unparked messages", back, err)
	}
	if len(p.deadlines) != 3 {
		t.Fatalf("%d parks tried, want 3", len(p.deadlines))
	}
	for _, d := range p.deadlines {
		if !d.Before(deadline) {
			t.Errorf("a park may run until %v, the invocation's deadline", d)
		}
	}
}

// hangingApplier is a table that never answers: Apply waits for its context, noting
// the deadline it was given.
type hangingApplier struct {
	mu        sync.Mutex
	deadlines []time.Time
}

func (a *hangingApplier) Apply(ctx context.Context, es []store.Entrega) []store.Result {
	deadline, _ := ctx.Deadline()
	a.mu.Lock()
	a.deadlines = append(a.deadlines, deadline)
	a.mu.Unlock()
	<-ctx.Done()
	out := make([]store.Result, len(es))
	for i := range out {
		out[i] = store.Result{Outcome: store.Failed, Err: store.Transient(ctx.Err())}
	}
	return out
}

// Work in flight is cut off half the reserve before the invocation's deadline, so its
// records come back instead of dying with the invocation's timeout.
func TestApplyingGivesUpBeforeTheDeadline(t *testing.T) {
	a := &hangingApplier{}
	reserve := 400 * time.Millisecond
	h := consumer.New(a, consumer.Options{Logger: slog.New(slog.DiscardHandler), Reserve: reserve})
	deadline := time.Now().Add(2 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	resp, _ := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg("m1", body("a1", "A", "abono", "1.00"))}})
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Errorf("failures = %v, want m1 back", resp.BatchItemFailures)
	}
	if len(a.deadlines) != 1 || a.deadlines[0].After(deadline.Add(-reserve/2)) {
		t.Errorf("applying ran with deadlines %v, want one at least %v before %v", a.deadlines, reserve/2, deadline)
	}
}

// failingParker is a DLQ that cannot be reached.
type failingParker struct{}

func (failingParker) Park(context.Context, events.SQSMessage, consumer.Reason) error {
	return errors.New("dlq: connection refused")
}

// A permanent failure that cannot be parked is not deleted: it comes back (until the
// queue's redrive moves it), and the failed park is logged.
func TestAMessageThatCannotBeParkedComesBack(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: env.Table()})
	if err != nil {
		t.Fatal(err)
	}
	out := &testenv.Buffer{}
	h := consumer.New(svc, consumer.Options{Logger: slog.New(slog.NewJSONHandler(out, nil)), Parker: failingParker{}})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg("m1", `not a movement`), msg("m2", body("a1", "A", "abono", "1.00"))}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Fatalf("resp = %+v, err = %v; want m1 back", resp, err)
	}
	if log := out.String(); !strings.Contains(log, "park failed; the message will come back") || !strings.Contains(log, `"action":"retry-to-dlq"`) {
		t.Errorf("log = %s, want the failed park and retry-to-dlq", log)
	}
}

func TestManyAccountsConcurrently(t *testing.T) {
	f := newFixture(t, cuenta.Retry, false)
	var ev events.SQSEvent
	for i := range 40 {
		ev.Records = append(ev.Records, msg(fmt.Sprintf("m%d", i), body(fmt.Sprintf("a%d", i), fmt.Sprintf("C%d", i%13), "abono", "1.00")))
	}
	resp, err := f.handler.Handle(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("resp = %+v, %v", resp, err)
	}
	if got := f.saldo(t, "C0"); got != "4" { // 0, 13, 26, 39
		t.Errorf("saldo C0 = %s, want 4", got)
	}
}

// panicking is a table, or a DLQ, with a bug: it panics on the movement id boom.
type panicking struct{ consumer.Applier }

func (p panicking) Apply(ctx context.Context, es []store.Entrega) []store.Result {
	for _, e := range es {
		if e.Mov.ID == "boom" {
			panic("boom")
		}
	}
	return p.Applier.Apply(ctx, es)
}

func (panicking) Park(context.Context, events.SQSMessage, consumer.Reason) error { panic("boom") }

// A panic while applying one group, or while parking one message, brings back only its
// own messages, logged: the rest of the batch is applied and acknowledged, and the
// process lives on.
func TestAPanicBringsBackOnlyItsOwnMessages(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: env.Table()})
	if err != nil {
		t.Fatal(err)
	}
	out := &testenv.Buffer{}
	h := consumer.New(panicking{svc}, consumer.Options{Logger: slog.New(slog.NewJSONHandler(out, nil)), Parker: panicking{}})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("m1", body("a1", "A", "abono", "1.00")), msg("m2", body("boom", "B", "abono", "1.00")), msg("m3", `not a movement`)}})
	if err != nil || !slices.Equal(failures(resp), []string{"m2", "m3"}) {
		t.Fatalf("back = %v, err = %v; want m2 (its apply panicked) and m3 (its park panicked)", failures(resp), err)
	}
	f := &fixture{env: env}
	if s := f.saldo(t, "A"); s != "1" {
		t.Errorf("saldo of A = %s, want 1: the group that did not panic is applied", s)
	}
	if n := strings.Count(out.String(), "recovered a panic"); n != 2 {
		t.Errorf("log names %d recovered panics, want 2:\n%s", n, out.String())
	}
}

// Two stacks in one account and region write the same metrics: the function's name, as a
// second dimension set, keeps each stack's apart. Every dimension named has its value.
func TestMetricsNameTheFunctionWhenGivenOne(t *testing.T) {
	for _, fn := range []string{"", "prod-ConsumerFunction-1A2B"} {
		var out bytes.Buffer
		h := consumer.New(nil, consumer.Options{Logger: slog.New(slog.DiscardHandler), Metrics: &out, Function: fn})
		if _, err := h.Handle(context.Background(), events.SQSEvent{}); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			AWS struct {
				CloudWatchMetrics []struct{ Dimensions [][]string }
			} `json:"_aws"`
		}
		var values map[string]any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil || json.Unmarshal(out.Bytes(), &values) != nil {
			t.Fatalf("EMF document %q: %v", out.String(), err)
		}
		want := [][]string{{"Strategy"}}
		if fn != "" {
			want = append(want, []string{"Strategy", "Function"})
		}
		got := doc.AWS.CloudWatchMetrics[0].Dimensions
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("function %q: dimensions %v, want %v", fn, got, want)
		}
		for _, set := range got {
			for _, name := range set {
				if v, _ := values[name].(string); v == "" {
					t.Errorf("dimension %s has no value in %s", name, out.String())
				}
			}
		}
		if fn != "" && values["Function"] != fn {
			t.Errorf("Function = %v, want %s", values["Function"], fn)
		}
	}
}

// countingParker counts its parks by message id.
type countingParker struct {
	mu    sync.Mutex
	parks map[string]int
}

func (p *countingParker) Park(_ context.Context, msg events.SQSMessage, _ consumer.Reason) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parks[msg.MessageId]++
	return nil
}

// SQS may deliver one message twice in a batch. A permanent failure is parked once, not
// twice into the DLQ; a message that must come back is named once; an applicable one is
// applied once and its copy answered as a duplicate.
func TestAMessageDeliveredTwiceInABatchIsHandledOnce(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: env.Table(), InsufficientFunds: cuenta.Retry})
	if err != nil {
		t.Fatal(err)
	}
	p := &countingParker{parks: map[string]int{}}
	var outcomes []store.Outcome
	h := consumer.New(svc, consumer.Options{Logger: slog.New(slog.DiscardHandler), Parker: p,
		Observer: func(r consumer.Record) { outcomes = append(outcomes, r.Result.Outcome) }})
	bad, broke, ok := msg("m-bad", `not a movement`), msg("m-broke", body("c1", "A", "cargo", "5.00")), msg("m-ok", body("a1", "B", "abono", "1.00"))
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{bad, broke, ok, bad, broke, ok}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(failures(resp), []string{"m-broke"}) {
		t.Errorf("back = %v, want m-broke once (a debit waiting for funds)", failures(resp))
	}
	if !maps.Equal(p.parks, map[string]int{"m-bad": 1}) {
		t.Errorf("parks = %v, want m-bad parked once", p.parks)
	}
	if outcomes[2] != store.Applied || outcomes[5] != store.Duplicate {
		t.Errorf("outcomes = %v, want m-ok applied, then its copy a duplicate", outcomes)
	}
}
