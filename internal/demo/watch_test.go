package demo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
)

// The watch fails the demo when a failed message is lost (neither parked nor
// dead-lettered), when a settled one is parked or answered otherwise when delivered
// again, when a message is parked without a reason, and when what reached the parker
// is not what the consumer reported parked; a consumer doing its job passes.
func TestTheWatchFollowsEveryMessageToItsEnd(t *testing.T) {
	rec := func(id string, outcome store.Outcome, action consumer.Action, err error) consumer.Record {
		return consumer.Record{Msg: events.SQSMessage{MessageId: id}, Result: store.Result{Outcome: outcome, Err: err}, Action: action}
	}
	why := errors.New("why")
	healthy := []consumer.Record{
		rec("a", store.Applied, consumer.Delete, nil), rec("a", store.Duplicate, consumer.Delete, nil), // redelivered
		rec("a", store.Failed, consumer.Retry, store.Transient(why)),                               // again, under contention
		rec("w", store.Failed, consumer.Retry, why), rec("w", store.Applied, consumer.Delete, nil), // waited for funds
		rec("c", store.ConflictingDuplicate, consumer.Parked, why), rec("c", store.ConflictingDuplicate, consumer.Parked, why),
		rec("m", store.Failed, consumer.Parked, why),
		rec("d", store.Failed, consumer.Retry, why), // out of receives: dead-lettered
	}
	for name, tc := range map[string]struct {
		records      []consumer.Record
		parkedUnsaid string // a message parked that the consumer reports otherwise
		says         string
	}{
		"a consumer doing its job":          {records: healthy},
		"a failure deleted, not parked":     {records: append(slices.Clone(healthy), rec("x", store.Failed, consumer.Delete, why)), says: "message x failed, but is neither parked nor in the DLQ"},
		"a conflict deleted":                {records: append(slices.Clone(healthy), rec("y", store.ConflictingDuplicate, consumer.Delete, why)), says: "message y was refused as a conflicting duplicate, but is neither"},
		"a redelivery taken for a conflict": {records: append(slices.Clone(healthy), rec("a", store.ConflictingDuplicate, consumer.Parked, why)), says: "message a, settled applied, was answered conflicting_duplicate"},
		"a duplicate parked":                {records: append(slices.Clone(healthy), rec("p", store.Duplicate, consumer.Parked, why)), says: "message p ended duplicate, yet was parked"},
		"a park without a reason":           {records: append(slices.Clone(healthy), rec("n", store.Failed, consumer.Parked, nil)), says: "message n was parked without a reason"},
		"a park that never happened":        {records: append(slices.Clone(healthy), rec("u", store.Failed, consumer.Parked, why)), says: "message u was reported parked, but never reached the parker"},
		"a park not reported":               {records: healthy, parkedUnsaid: "s", says: "message s was parked, but the consumer did not report it so"},
	} {
		w := newWatch()
		for _, r := range tc.records {
			if r.Action == consumer.Parked && r.Msg.MessageId != "u" { // as the consumer does, but for u
				reason := consumer.Reason{Outcome: r.Result.Outcome}
				if r.Result.Err != nil {
					reason.Error = r.Result.Err.Error()
				}
				_ = w.Park(context.Background(), r.Msg, reason)
			}
			w.observe(r)
		}
		if tc.parkedUnsaid != "" {
			_ = w.Park(context.Background(), events.SQSMessage{MessageId: tc.parkedUnsaid}, consumer.Reason{Outcome: store.Failed, Error: "why"})
		}
		wrong := strings.Join(w.check([]sim.Message{{ID: "d"}}), "\n")
		if (tc.says == "") != (wrong == "") || !strings.Contains(wrong, tc.says) {
			t.Errorf("%s: wrong = %q, want %q", name, wrong, tc.says)
		}
	}
}

// A movement must be answered as its record says it was applied: applied to the message
// the record names or, that answer lost after the commit, duplicate when the message
// came back after a failed delivery. A first delivery answered duplicate, an application
// answered to another message, or two answered applied, is wrong.
func TestTheWatchJudgesAnswersAgainstTheRecord(t *testing.T) {
	mov := movimiento.Movimiento{ID: "t1", Cuenta: "A", Tipo: movimiento.Traspaso}
	rec := func(id string, outcome store.Outcome) consumer.Record {
		r := consumer.Record{Msg: events.SQSMessage{MessageId: id}, Mov: mov, Result: store.Result{Outcome: outcome}, Action: consumer.Delete}
		if outcome == store.Failed {
			r.Result.Err, r.Action = store.Transient(errors.New("deadline")), consumer.Retry
		}
		return r
	}
	for name, tc := range map[string]struct {
		records []consumer.Record
		says    string
	}{
		"applied, then a duplicate message":  {[]consumer.Record{rec("m1", store.Applied), rec("m2", store.Duplicate)}, ""},
		"its answer lost after the commit":   {[]consumer.Record{rec("m1", store.Failed), rec("m2", store.Duplicate), rec("m1", store.Duplicate)}, ""},
		"its first delivery called a repeat": {[]consumer.Record{rec("m1", store.Duplicate)}, `applied from message m1, which was answered "duplicate", without a failed delivery before`},
		"answered applied to another":        {[]consumer.Record{rec("m2", store.Applied), rec("m1", store.Duplicate)}, "answered applied to message m2, but applied from message m1"},
		"answered applied twice":             {[]consumer.Record{rec("m1", store.Applied), rec("m2", store.Applied)}, "answered applied to 2 messages: m1, m2"},
	} {
		w := newWatch()
		for _, r := range tc.records {
			w.observe(r)
		}
		if says := w.origin(mov, "m1"); (tc.says == "") != (says == "") || !strings.Contains(says, tc.says) {
			t.Errorf("%s: %q, want %q", name, says, tc.says)
		}
	}
}
