package worker

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ledger-dev/ledger/internal/store"

	"github.com/ledger-dev/ledger/internal/consumer"
)

// Outcomes counts messages by what became of them, each once. A message handled several
// times counts by its first outcome other than a failure (or as failed if it never got
// another). The conflicting duplicates and the failures are also counted by their fate,
// so that a summary says what became of each without counting it twice.
type Outcomes struct {
	Applied              int   `json:"applied"`
	Duplicate            int   `json:"duplicate"`
	ConflictingDuplicate int   `json:"conflicting_duplicate"`
	Rejected             int   `json:"rejected"`
	Failed               int   `json:"failed"`
	ConflictingFates     Fates `json:"-"`
	FailedFates          Fates `json:"-"`
}

// Fates counts messages that did not succeed by where their last delivery left them:
// parked in the DLQ; left to come back, where they may yet succeed; or dropped, given up
// on after their last delivery (Tally.Drop).
type Fates struct {
	Parked, ComingBack, Dropped int
}

// Tally counts what a handler decided, message by message; its Observe is an Observer.
// It is safe for concurrent use.
type Tally struct {
	mu      sync.Mutex
	outcome map[string]store.Outcome // by message id
	parked  map[string]bool
	back    map[string]bool // its last delivery failed and was left to come back
	dropped map[string]bool // it will not come back: given up on
	handled int
}

// Observe counts one record.
func (t *Tally) Observe(r consumer.Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	id := r.Msg.MessageId
	if prev, seen := t.outcome[id]; !seen || prev == store.Failed {
		t.outcome[id] = r.Result.Outcome
	}
	if r.Action == consumer.Parked {
		t.parked[id] = true
	}
	t.back[id] = r.Action == consumer.Retry || r.Action == consumer.RetryToDLQ
	t.handled++
}

// Drop notes that a message left to come back never will: its deliverer gave up on it
// (ledger up drops a line after its last delivery).
func (t *Tally) Drop(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	t.back[id], t.dropped[id] = false, true
}

func (t *Tally) init() {
	if t.outcome == nil {
		t.outcome, t.parked, t.back, t.dropped = map[string]store.Outcome{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
}

// Handled counts the records observed, every redelivery included.
func (t *Tally) Handled() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handled
}

// Outcomes counts the messages observed by outcome, and those that did not succeed by
// fate.
func (t *Tally) Outcomes() Outcomes {
	t.mu.Lock()
	defer t.mu.Unlock()
	var o Outcomes
	for id, outcome := range t.outcome {
		o.add(outcome)
		fates := &o.FailedFates
		switch outcome {
		case store.Failed:
		case store.ConflictingDuplicate:
			fates = &o.ConflictingFates
		default:
			continue
		}
		switch {
		case t.dropped[id]:
			fates.Dropped++
		case t.parked[id]:
			fates.Parked++
		case t.back[id]:
			fates.ComingBack++
		}
	}
	return o
}

// add counts one outcome; every kind of failure counts as Failed.
func (o *Outcomes) add(outcome store.Outcome) {
	switch outcome {
	case store.Applied:
		o.Applied++
	case store.Duplicate:
		o.Duplicate++
	case store.ConflictingDuplicate:
		o.ConflictingDuplicate++
	case store.Rejected:
		o.Rejected++
	default:
		o.Failed++
	}
}

// String is the one-line summary the CLI prints when a consumer stops: each message
// counted once, by its outcome, with the fate of those that did not succeed in brackets
// ("2 failed (1 parked, 1 dropped after its last delivery)").
func (o Outcomes) String() string {
	return fmt.Sprintf("%d applied, %d duplicate, %d conflicting%s, %d rejected, %d failed%s",
		o.Applied, o.Duplicate, o.ConflictingDuplicate, o.ConflictingFates, o.Rejected, o.Failed, o.FailedFates)
}

// String is f in brackets, its nonzero counts only; empty when all are zero.
func (f Fates) String() string {
	var of []string
	if f.Parked > 0 {
		of = append(of, fmt.Sprintf("%d parked", f.Parked))
	}
	if f.ComingBack > 0 {
		of = append(of, fmt.Sprintf("%d coming back", f.ComingBack))
	}
	switch {
	case f.Dropped == 1:
		of = append(of, "1 dropped after its last delivery")
	case f.Dropped > 1:
		of = append(of, fmt.Sprintf("%d dropped after their last delivery", f.Dropped))
	}
	if len(of) == 0 {
		return ""
	}
	return " (" + strings.Join(of, ", ") + ")"
}
