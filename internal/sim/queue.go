package sim

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/consumer"
)

// Message is one message on the queue. Several may carry the same movement (a producer
// retry, an SNS fan-out), each under its own ID. Receives counts its receipts, the
// current one included (SQS's ApproximateReceiveCount).
type Message struct {
	ID       string
	Body     string
	Receives int

	visibleAt time.Time // when it can be received (again)
}

// Event is m as Lambda hands it to a handler.
func (m Message) Event() events.SQSMessage {
	return events.SQSMessage{MessageId: m.ID, Body: m.Body, EventSource: "aws:sqs",
		Attributes: map[string]string{"ApproximateReceiveCount": strconv.Itoa(m.Receives)}}
}

// QueueOptions shape a Queue. Zero values pick the defaults in brackets.
type QueueOptions struct {
	Clock      *Clock        // the queue's time [a new Clock]
	Visibility time.Duration // how long a received message stays invisible unless deleted [0]
	Step       time.Duration // how far each receive moves the clock: the time between batches [0]
	MaxReceive int           // the redrive policy's maxReceiveCount [DefaultMaxReceive]
}

// Queue is an in-memory SQS standard queue with a redrive policy, on simulated time: at
// least once and out of order, without a network. A received message is invisible
// until it is deleted, or comes back when its visibility timeout passes, or after
// MaxReceive receives goes to the dead-letter list. It is safe for concurrent use.
type Queue struct {
	opts     QueueOptions
	mu       sync.Mutex
	pending  []Message // by when each is visible, in (re-)enqueue order among those visible at once: roughly FIFO
	inflight int
	sent     int // every message sent is pending, in flight, or settled (deleted or dead)
	dead     []Message
}

// DefaultMaxReceive is the simulated redrive policy's maxReceiveCount: a message
// received this many times goes to the DLQ.
const DefaultMaxReceive = 10

// NewQueue returns an empty queue.
func NewQueue(opts QueueOptions) *Queue {
	if opts.Clock == nil {
		opts.Clock = NewClock()
	}
	if opts.MaxReceive <= 0 {
		opts.MaxReceive = DefaultMaxReceive
	}
	return &Queue{opts: opts}
}

// Send appends messages, visible now and never received.
func (q *Queue) Send(msgs ...Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Clock.Now()
	for _, m := range msgs {
		q.sent++
		m.Receives, m.visibleAt = 0, now
		q.enqueue(m)
	}
}

// enqueue puts m among the pending after every message visible no later than it, so
// that they stay ordered by when each is visible, and in enqueue order among equals.
func (q *Queue) enqueue(m Message) {
	i := len(q.pending)
	if i > 0 && q.pending[i-1].visibleAt.After(m.visibleAt) { // not at the tail, as it mostly is
		i, _ = slices.BinarySearchFunc(q.pending, m.visibleAt, func(p Message, at time.Time) int {
			if p.visibleAt.After(at) {
				return 1
			}
			return -1 // equal ones stay before m
		})
	}
	q.pending = slices.Insert(q.pending, i, m)
}

// Receive takes up to n visible messages (at most consumer.MaxBatch), oldest first, and
// puts them in flight. When none is visible and none is in flight, the clock moves to
// the first that will be. open is false once nothing is pending or in flight; an empty
// batch with open true means others are in flight and may come back.
func (q *Queue) Receive(n int) (batch []Message, open bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	clock := q.opts.Clock
	if len(q.pending) == 0 {
		return nil, q.inflight > 0
	}
	if first := q.pending[0].visibleAt; first.After(clock.Now()) {
		if q.inflight > 0 {
			return nil, true
		}
		clock.AdvanceTo(first)
	}
	clock.Advance(q.opts.Step)
	for len(batch) < min(n, consumer.MaxBatch) && len(q.pending) > 0 {
		m := q.pending[0]
		if m.visibleAt.After(clock.Now()) {
			break
		}
		m.Receives++
		m.visibleAt = clock.Now().Add(q.opts.Visibility)
		batch, q.pending = append(batch, m), q.pending[1:]
	}
	q.inflight += len(batch)
	return batch, true
}

// Settle ends the receipt of batch, which Receive returned. The messages back names (by
// ID) come back when their visibility timeout passes, or go to the dead-letter list
// after MaxReceive receives; the others are deleted.
func (q *Queue) Settle(batch []Message, back map[string]bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inflight -= len(batch)
	for _, m := range batch {
		switch {
		case !back[m.ID]: // deleted
		case m.Receives >= q.opts.MaxReceive:
			q.dead = append(q.dead, m)
		default: // back at the tail of those visible at the same time
			q.enqueue(m)
		}
	}
}

// Settled counts the messages that will not be delivered again: deleted or dead.
func (q *Queue) Settled() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sent - len(q.pending) - q.inflight
}

// Dead returns the messages on the dead-letter list, in the order they died.
func (q *Queue) Dead() []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.dead)
}

// Handle is what consumer number consumer does with one batch, as Lambda hands it
// over. It returns the ids of the messages that must come back.
type Handle func(ctx context.Context, consumer int, batch []events.SQSMessage) (back map[string]bool)

// inFlightPause is how long an idle consumer waits before it looks for failures of
// messages in flight again: long enough not to spin, short beside any handler.
const inFlightPause = time.Millisecond

// Drain runs consumers concurrent loops that hand batches of up to batchSize to handle,
// until nothing is pending or in flight. Each batch settles at least one receipt and a
// message is received at most MaxReceive times, so a consumer that receives more batches
// than messages sent × MaxReceive has found a bug and stops with an error; waits for
// messages in flight are bounded by ctx.
func (q *Queue) Drain(ctx context.Context, consumers, batchSize int, handle Handle) error {
	var g errgroup.Group
	for c := range consumers {
		g.Go(func() error {
			for batches := 0; ; {
				if ctx.Err() != nil { // failures come straight back while ctx is done: stop
					return fmt.Errorf("sim: the queue did not drain: %w", ctx.Err())
				}
				q.mu.Lock()
				bound := q.sent * q.opts.MaxReceive
				q.mu.Unlock()
				if batches > bound {
					return fmt.Errorf("sim: a consumer received %d batches without draining the queue", batches)
				}
				batch, open := q.Receive(batchSize)
				if !open {
					return nil
				}
				if len(batch) == 0 { // others are in flight; their failures may come back
					select {
					case <-ctx.Done():
					case <-time.After(inFlightPause):
					}
					continue
				}
				batches++
				evs := make([]events.SQSMessage, len(batch))
				for i, m := range batch {
					evs[i] = m.Event()
				}
				q.Settle(batch, handle(ctx, c, evs))
			}
		})
	}
	return g.Wait()
}
