package consumer_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/store"
)

// fifoMsg is a record of a FIFO queue's batch, in message group grupo ("" leaves the
// attribute out).
func fifoMsg(id, grupo, body string) events.SQSMessage {
	m := msg(id, body)
	m.EventSourceARN = "arn:aws:sqs:eu-west-1:123456789012:movimientos.fifo"
	m.Attributes = map[string]string{"ApproximateReceiveCount": "1"}
	if grupo != "" {
		m.Attributes["MessageGroupId"] = grupo
	}
	return m
}

// fifoBatch is six messages in three message groups: A's debit f3 fails for funds, B's
// first body f2 is malformed; f4 and f6 follow a failure of their group.
func fifoBatch(group func(string) string) events.SQSEvent {
	return events.SQSEvent{Records: []events.SQSMessage{
		fifoMsg("f1", group("A"), body("a1", "A", "abono", "10.00")),
		fifoMsg("f2", group("B"), `{"id":"b0","cuenta":"B","tipo":"abono","importe":"1e3","moneda":"EUR"}`),
		fifoMsg("f3", group("A"), body("a2", "A", "cargo", "50.00")),
		fifoMsg("f4", group("B"), body("b1", "B", "abono", "5.00")),
		fifoMsg("f5", group("C"), body("c1", "C", "abono", "1.00")),
		fifoMsg("f6", group("A"), body("a3", "A", "abono", "100.00")),
	}}
}

// A batch from a FIFO queue is handled in order per message group: after a group's
// first failure (a debit refused, a malformed body), its later messages come back
// untried, and the other groups go on.
func TestAFIFOBatchStopsEachGroupAtItsFirstFailure(t *testing.T) {
	standard := fifoBatch(func(string) string { return "" })
	for i := range standard.Records {
		standard.Records[i].EventSourceARN = "arn:aws:sqs:eu-west-1:123456789012:movimientos"
	}
	cases := []struct {
		name     string
		ev       events.SQSEvent
		back     []string
		untried  []string
		saldos   map[string]string
		parkedF2 bool
	}{
		{"a group per account", fifoBatch(func(g string) string { return g }), []string{"f3", "f4", "f6"}, []string{"f4", "f6"},
			map[string]string{"A": "10", "B": "<none>", "C": "1"}, true},
		{"one group for the whole batch", fifoBatch(func(string) string { return "all" }), []string{"f3", "f4", "f5", "f6"}, []string{"f3", "f4", "f5", "f6"},
			map[string]string{"A": "10", "B": "<none>", "C": "<none>"}, true},
		{"a FIFO queue without MessageGroupId: one group", fifoBatch(func(string) string { return "" }), []string{"f3", "f4", "f5", "f6"}, []string{"f3", "f4", "f5", "f6"},
			map[string]string{"A": "10", "B": "<none>", "C": "<none>"}, true},
		{"a standard queue: no order to keep", standard, []string{"f3"}, nil,
			map[string]string{"A": "110", "B": "5", "C": "1"}, true},
		{"one group over two accounts, stopped by a debit", events.SQSEvent{Records: []events.SQSMessage{
			fifoMsg("f1", "all", body("a1", "A", "abono", "10.00")),
			fifoMsg("f2", "B", `{"id":"b0"}`),
			fifoMsg("f3", "all", body("a2", "A", "cargo", "50.00")),
			fifoMsg("f5", "all", body("c1", "C", "abono", "1.00")),
		}}, []string{"f3", "f5"}, []string{"f5"}, map[string]string{"A": "10", "C": "<none>"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, cuenta.Retry, true)
			resp, err := f.handler.Handle(context.Background(), tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if got := failures(resp); !slices.Equal(got, tc.back) {
				t.Errorf("come back = %v, want %v", got, tc.back)
			}
			if _, parked := f.parker.parked["f2"]; parked != tc.parkedF2 || len(f.parker.parked) != 1 {
				t.Errorf("parked %v, want f2 only", f.parker.parked)
			}
			for cta, want := range tc.saldos {
				if got := f.saldo(t, cta); got != want {
					t.Errorf("saldo %s = %s, want %s", cta, got, want)
				}
			}
			var untried []string
			for _, l := range lines(f.out) {
				if e, _ := l["error"].(string); l["msg"] == "movement" && strings.Contains(e, store.ErrNotAttempted.Error()) {
					untried = append(untried, l["message_id"].(string))
				}
			}
			slices.Sort(untried)
			if !slices.Equal(untried, tc.untried) {
				t.Errorf("logged as not attempted: %v, want %v", untried, tc.untried)
			}
		})
	}
}
