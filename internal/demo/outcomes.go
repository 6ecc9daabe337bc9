package demo

import (
	"context"
	"log/slog"
	"sync"

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

// tally is a slog.Handler that reads the consumer's one line per record, so the demo
// counts exactly what the consumer reports.
type tally struct {
	mu      sync.Mutex
	last    map[string]ledger.Outcome
	handled int
}

func newTally() *tally { return &tally{last: map[string]ledger.Outcome{}} }

func (t *tally) Enabled(context.Context, slog.Level) bool { return true }
func (t *tally) WithAttrs([]slog.Attr) slog.Handler       { return t }
func (t *tally) WithGroup(string) slog.Handler            { return t }

func (t *tally) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "movement" {
		return nil
	}
	var id string
	var outcome ledger.Outcome
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "message_id":
			id = a.Value.String()
		case "outcome":
			outcome = ledger.Outcome(a.Value.String())
		}
		return true
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, seen := t.last[id]; !seen || prev == ledger.Failed {
		t.last[id] = outcome
	}
	t.handled++
	return nil
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
