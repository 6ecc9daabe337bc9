package demo

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/sim"
)

// The watch fails the demo when a failed message is lost (neither parked nor
// dead-lettered), when a settled one is parked or answered otherwise when delivered
// again, and when a message is parked without a reason; a consumer doing its job passes.
func TestTheWatchFollowsEveryMessageToItsEnd(t *testing.T) {
	rec := func(id string, outcome ledger.Outcome, action consumer.Action, err error) consumer.Record {
		return consumer.Record{Msg: events.SQSMessage{MessageId: id}, Result: ledger.Result{Outcome: outcome, Err: err}, Action: action}
	}
	why := errors.New("why")
	healthy := []consumer.Record{
		rec("a", ledger.Applied, consumer.Delete, nil), rec("a", ledger.Duplicate, consumer.Delete, nil), // redelivered
		rec("a", ledger.Failed, consumer.Retry, &ledger.TransientError{Err: why}),                    // again, under contention
		rec("w", ledger.Failed, consumer.Retry, why), rec("w", ledger.Applied, consumer.Delete, nil), // waited for funds
		rec("c", ledger.ConflictingDuplicate, consumer.Parked, why), rec("c", ledger.ConflictingDuplicate, consumer.Parked, why),
		rec("m", ledger.Failed, consumer.Parked, why),
		rec("d", ledger.Failed, consumer.Retry, why), // out of receives: dead-lettered
	}
	for name, tc := range map[string]struct {
		records []consumer.Record
		says    string
	}{
		"a consumer doing its job":          {healthy, ""},
		"a failure deleted, not parked":     {append(slices.Clone(healthy), rec("x", ledger.Failed, consumer.Delete, why)), "message x failed, but is neither parked nor in the DLQ"},
		"a conflict deleted":                {append(slices.Clone(healthy), rec("y", ledger.ConflictingDuplicate, consumer.Delete, why)), "message y was refused as a conflicting duplicate, but is neither"},
		"a redelivery taken for a conflict": {append(slices.Clone(healthy), rec("a", ledger.ConflictingDuplicate, consumer.Parked, why)), "message a, settled applied, was answered conflicting_duplicate"},
		"a duplicate parked":                {append(slices.Clone(healthy), rec("p", ledger.Duplicate, consumer.Parked, why)), "message p ended duplicate, yet was parked"},
		"a park without a reason":           {append(slices.Clone(healthy), rec("n", ledger.Failed, consumer.Parked, nil)), "message n was parked without a reason"},
	} {
		w := newWatch()
		for _, r := range tc.records {
			w.observe(r)
		}
		wrong := strings.Join(w.check([]sim.Message{{ID: "d"}}), "\n")
		if (tc.says == "") != (wrong == "") || !strings.Contains(wrong, tc.says) {
			t.Errorf("%s: wrong = %q, want %q", name, wrong, tc.says)
		}
	}
}
