package consumer_test

import (
	"context"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/consumer"
)

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
