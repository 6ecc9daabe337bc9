package demo

import (
	"sync"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/ledger"
)

// Outcomes counts deliveries by outcome. A delivery handled several times counts once:
// by its first outcome other than a failure (failures that came back and then
// succeeded, or a redelivery of an applied message that found itself a duplicate), or
// as failed if it never got another.
type Outcomes struct {
	Applied              int `json:"applied"`
	Duplicate            int `json:"duplicate"`
	ConflictingDuplicate int `json:"conflicting_duplicate"`
	Rejected             int `json:"rejected"`
	Failed               int `json:"failed"`
}

// tally observes the consumer's records, so the demo counts exactly what the consumer
// decided.
type tally struct {
	mu      sync.Mutex
	last    map[string]ledger.Outcome // by message id
	handled int
}

func newTally() *tally { return &tally{last: map[string]ledger.Outcome{}} }

// observe is the consumer's Observer.
func (t *tally) observe(r consumer.Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, seen := t.last[r.Msg.MessageId]; !seen || prev == ledger.Failed {
		t.last[r.Msg.MessageId] = r.Result.Outcome
	}
	t.handled++
}

func (t *tally) outcomes() Outcomes {
	t.mu.Lock()
	defer t.mu.Unlock()
	var o Outcomes
	for _, outcome := range t.last {
		switch outcome {
		case ledger.Applied:
			o.Applied++
		case ledger.Duplicate:
			o.Duplicate++
		case ledger.ConflictingDuplicate:
			o.ConflictingDuplicate++
		case ledger.Rejected:
			o.Rejected++
		default:
			o.Failed++
		}
	}
	return o
}

func (t *tally) deliveriesHandled() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handled
}
