package demo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
)

// watch follows every message through the consumer, beyond the outcome counts: where
// each one that failed ended, and what each delivery after it settled was answered.
// Its observe is a consumer.Observer and it is the consumer's Parker; it is safe for
// concurrent use.
type watch struct {
	mu      sync.Mutex
	settled map[string]store.Outcome // by message id: its first outcome other than a failure
	failed  map[string]bool          // by message id: failed and never settled (so far)
	late    map[string]bool          // by message id: settled after a failed delivery
	applies map[string][]string      // by movement (key): the messages that settled applied
	parked  map[string]bool          // by message id: it reached the parker
	claimed map[string]bool          // by message id: the consumer reported it parked
	wrong   []string
}

func newWatch() *watch {
	return &watch{settled: map[string]store.Outcome{}, failed: map[string]bool{}, late: map[string]bool{},
		applies: map[string][]string{}, parked: map[string]bool{}, claimed: map[string]bool{}}
}

// redelivered is the outcome a delivery of a message already settled with an outcome
// must get: the ledger recognises what it recorded, and refuses again what it refused.
var redelivered = map[store.Outcome]store.Outcome{
	store.Applied:              store.Duplicate,
	store.Duplicate:            store.Duplicate,
	store.Rejected:             store.Duplicate,
	store.ConflictingDuplicate: store.ConflictingDuplicate,
}

func (w *watch) observe(r consumer.Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id, got := r.Msg.MessageId, r.Result.Outcome
	if r.Action == consumer.Parked {
		w.claimed[id] = true
	}
	first, settled := w.settled[id]
	switch {
	case settled && r.Result.Retry():
		// A redelivery that failed transiently (contention, a deadline) comes back
		// again, and is judged then.
	case settled && got != redelivered[first]:
		w.wrong = append(w.wrong, fmt.Sprintf("message %s, settled %s, was answered %s when delivered again, not %s", id, first, got, redelivered[first]))
	case !settled && got == store.Failed:
		w.failed[id] = true
	case !settled:
		w.settled[id] = got
		if w.failed[id] {
			w.late[id] = true
			delete(w.failed, id)
		}
		if got == store.Applied {
			k := key(r.Mov.Cuenta, r.Mov.ID)
			w.applies[k] = append(w.applies[k], id)
		}
	}
}

// Park records msg as parked; it is the demo's consumer.Parker, so what counts as
// parked is what reached the parker, not what the consumer reports.
func (w *watch) Park(_ context.Context, msg events.SQSMessage, reason consumer.Reason) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parked[msg.MessageId] = true
	if reason.Error == "" {
		w.wrong = append(w.wrong, fmt.Sprintf("message %s was parked without a reason", msg.MessageId))
	}
	return nil
}

// origin judges what a movement's messages were answered against its record, which
// names the message that applied it (origen): that message was answered applied or,
// its answer lost after the commit, failed and was answered duplicate when it came
// back; no other message was answered applied. It returns what is wrong, or "".
func (w *watch) origin(m movimiento.Movimiento, origen string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	applied, what := w.applies[key(m.Cuenta, m.ID)], fmt.Sprintf("%s %s of %s", m.Tipo, m.ID, m.Cuenta)
	switch {
	case len(applied) > 1:
		return fmt.Sprintf("%s was answered applied to %d messages: %s", what, len(applied), strings.Join(applied, ", "))
	case len(applied) == 1 && applied[0] != origen:
		return fmt.Sprintf("%s was answered applied to message %s, but applied from message %s", what, applied[0], origen)
	case len(applied) == 0 && (w.settled[origen] != store.Duplicate || !w.late[origen]):
		return fmt.Sprintf("%s was applied from message %s, which was answered %q, without a failed delivery before", what, origen, w.settled[origen])
	}
	return ""
}

// check says what went wrong: besides what observe saw, a message that failed or was
// refused as a conflicting duplicate and is neither parked nor on the queue's dead-letter
// list (dead) was lost, and one that applied or was recognised yet parked raises a
// false alarm.
func (w *watch) check(dead []sim.Message) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	wrong := slices.Clone(w.wrong)
	for _, id := range slices.Sorted(maps.Keys(w.parked)) {
		if !w.claimed[id] {
			wrong = append(wrong, fmt.Sprintf("message %s was parked, but the consumer did not report it so", id))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(w.claimed)) {
		if !w.parked[id] {
			wrong = append(wrong, fmt.Sprintf("message %s was reported parked, but never reached the parker", id))
		}
	}
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
		case outcome == store.ConflictingDuplicate && lost:
			wrong = append(wrong, fmt.Sprintf("message %s was refused as a conflicting duplicate, but is neither parked nor in the DLQ", id))
		case settled && outcome != store.ConflictingDuplicate && (w.parked[id] || inDLQ[id]):
			wrong = append(wrong, fmt.Sprintf("message %s ended %s, yet was parked or dead-lettered", id, outcome))
		}
	}
	return wrong
}
