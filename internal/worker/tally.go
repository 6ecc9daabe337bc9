package worker

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ledger-dev/ledger/internal/store"

	"github.com/ledger-dev/ledger/internal/consumer"
)

// Outcomes counts messages by what became of them. A message handled several times
// counts once, by its first outcome other than a failure (or as failed if it never got
// another). Parked counts the messages parked in the DLQ, whatever their outcome;
// ComingBack the failed ones whose last delivery was left to come back, which may yet
// succeed; Dropped the failed ones given up on after their last attempt (Tally.Drop).
type Outcomes struct {
	Applied              int `json:"applied"`
	Duplicate            int `json:"duplicate"`
	ConflictingDuplicate int `json:"conflicting_duplicate"`
	Rejected             int `json:"rejected"`
	Failed               int `json:"failed"`
	Parked               int `json:"-"`
	ComingBack           int `json:"-"`
	Dropped              int `json:"-"`
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
// (ledger up drops a line after its last attempt).
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

// Outcomes counts the messages observed by outcome.
func (t *Tally) Outcomes() Outcomes {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := Outcomes{Parked: len(t.parked)}
	for id, outcome := range t.outcome {
		o.add(outcome)
		if outcome == store.Failed && t.back[id] {
			o.ComingBack++
		}
		if outcome == store.Failed && t.dropped[id] {
			o.Dropped++
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

// String is the one-line summary the CLI prints when a consumer stops.
func (o Outcomes) String() string {
	var of []string
	if o.ComingBack > 0 {
		of = append(of, fmt.Sprintf("%d of them coming back", o.ComingBack))
	}
	if o.Dropped > 0 {
		of = append(of, fmt.Sprintf("%d dropped after their last attempt", o.Dropped))
	}
	failed := fmt.Sprintf("%d failed", o.Failed)
	if len(of) > 0 {
		failed += " (" + strings.Join(of, ", ") + ")"
	}
	return fmt.Sprintf("%d applied, %d duplicate, %d conflicting, %d rejected, %s, %d parked",
		o.Applied, o.Duplicate, o.ConflictingDuplicate, o.Rejected, failed, o.Parked)
}
