package consumer_test

import (
	"context"
	"log/slog"
	"maps"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/ledger"
)

// recorder is a slog.Handler that keeps the last line the consumer logged for each
// message: what the handler last decided, and why.
type recorder struct {
	mu   sync.Mutex
	last map[string]logged
}

type logged struct {
	outcome ledger.Outcome
	err     string
}

func newRecorder() *recorder { return &recorder{last: map[string]logged{}} }

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != "movement" {
		return nil
	}
	var id string
	var l logged
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "message_id":
			id = a.Value.String()
		case "outcome":
			l.outcome = ledger.Outcome(a.Value.String())
		case "error":
			l.err = a.Value.String()
		}
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last[id] = l
	return nil
}

func (r *recorder) snapshot() map[string]logged {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.last)
}

// dlq stands in for the dead-letter queue the handler parks messages on. Like SQS's
// SendMessage it fails once the invocation's context is done: a dead process parks
// nothing.
type dlq struct {
	mu     sync.Mutex
	parked map[string]consumer.Reason
}

func (d *dlq) Park(ctx context.Context, msg events.SQSMessage, reason consumer.Reason) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.parked[msg.MessageId] = reason
	return nil
}
