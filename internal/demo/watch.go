package demo

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/sim"
)

// watch follows every message through the consumer, beyond the outcome counts: where
// each one that failed ended, and what each delivery after it settled was answered.
// Its observe is a consumer.Observer, safe for concurrent use.
type watch struct {
	mu      sync.Mutex
	settled map[string]ledger.Outcome // by message id: its first outcome other than a failure
	failed  map[string]bool           // by message id: failed and never settled (so far)
	parked  map[string]bool
	wrong   []string
}

func newWatch() *watch {
	return &watch{settled: map[string]ledger.Outcome{}, failed: map[string]bool{}, parked: map[string]bool{}}
}

// redelivered is the outcome a delivery of a message already settled with an outcome
// must get: the ledger recognises what it recorded, and refuses again what it refused.
var redelivered = map[ledger.Outcome]ledger.Outcome{
	ledger.Applied:              ledger.Duplicate,
	ledger.Duplicate:            ledger.Duplicate,
	ledger.Rejected:             ledger.Duplicate,
	ledger.ConflictingDuplicate: ledger.ConflictingDuplicate,
}

func (w *watch) observe(r consumer.Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id, got := r.Msg.MessageId, r.Result.Outcome
	if r.Action == consumer.Parked {
		w.parked[id] = true
		if r.Result.Err == nil {
			w.wrong = append(w.wrong, fmt.Sprintf("message %s was parked without a reason", id))
		}
	}
	first, settled := w.settled[id]
	switch {
	case settled && r.Result.Retry():
		// A redelivery that failed transiently (contention, a deadline) comes back
		// again, and is judged then.
	case settled && got != redelivered[first]:
		w.wrong = append(w.wrong, fmt.Sprintf("message %s, settled %s, was answered %s when delivered again, not %s", id, first, got, redelivered[first]))
	case !settled && got == ledger.Failed:
		w.failed[id] = true
	case !settled:
		w.settled[id] = got
		delete(w.failed, id)
	}
}

// check says what went wrong: besides what observe saw, a message that failed or was
// refused as a conflicting duplicate and is neither parked nor on the queue's dead-letter
// list (dead) was lost, and one that applied or was recognised yet parked raises a
// false alarm.
func (w *watch) check(dead []sim.Message) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	wrong := slices.Clone(w.wrong)
	inDLQ := map[string]bool{}
	for _, m := range dead {
		inDLQ[m.ID] = true
	}
	ids := slices.Concat(slices.Collect(maps.Keys(w.failed)), slices.Collect(maps.Keys(w.settled))) // disjoint
	slices.Sort(ids)
	for _, id := range ids {
		outcome, settled := w.settled[id]
		lost := !w.parked[id] && !inDLQ[id]
		switch {
		case !settled && lost:
			wrong = append(wrong, fmt.Sprintf("message %s failed, but is neither parked nor in the DLQ", id))
		case outcome == ledger.ConflictingDuplicate && lost:
			wrong = append(wrong, fmt.Sprintf("message %s was refused as a conflicting duplicate, but is neither parked nor in the DLQ", id))
		case settled && outcome != ledger.ConflictingDuplicate && (w.parked[id] || inDLQ[id]):
			wrong = append(wrong, fmt.Sprintf("message %s ended %s, yet was parked or dead-lettered", id, outcome))
		}
	}
	return wrong
}
