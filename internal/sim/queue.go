// Queue is an in-memory stand-in for an SQS standard queue with a redrive
// policy: at least once and out of order. The demo, the reliability property tests and
// the soak drive the real consumer through it, so that each of them exercises the same
// delivery semantics without a network, and quickly.

package sim

import "sync"

// MaxBatch is SQS's limit of messages per receive.
const MaxBatch = 10

// Message is one message on the queue. Receives counts how often it has been received,
// the current receipt included (SQS's ApproximateReceiveCount).
type Message struct {
	ID       string
	Body     string
	Receives int
}

// Queue is the queue. A received message is in flight until its batch is settled:
// deleted, or back at the tail (out of order), or, once it has been received
// maxReceive times and comes back again, on the dead-letter list, as a redrive policy
// moves it. It is safe for concurrent use.
type Queue struct {
	mu         sync.Mutex
	pending    []Message
	inflight   int
	dead       []Message
	settled    int // deleted or dead: will not be delivered again
	maxReceive int
}

// NewQueue returns an empty queue whose messages die after maxReceive receives (at least 1).
func NewQueue(maxReceive int) *Queue {
	return &Queue{maxReceive: max(maxReceive, 1)}
}

// Send appends messages at the tail, never received yet.
func (q *Queue) Send(msgs ...Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		m.Receives = 0
		q.pending = append(q.pending, m)
	}
}

// Receive takes up to n messages (at most MaxBatch) from the head and puts them in
// flight. open is false once nothing is pending and nothing is in flight: there is
// nothing left to wait for. An empty batch with open true means others are in flight
// and may come back.
func (q *Queue) Receive(n int) (batch []Message, open bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, MaxBatch, len(q.pending))
	batch = make([]Message, n)
	copy(batch, q.pending)
	q.pending = q.pending[n:]
	for i := range batch {
		batch[i].Receives++
	}
	q.inflight += n
	return batch, n > 0 || q.inflight > 0
}

// Settle ends the receipt of batch, which Receive returned. The messages back names
// (by ID) come back — as after a reported failure, a crashed consumer, or a visibility
// timeout that expired before the delete —; the others are deleted.
func (q *Queue) Settle(batch []Message, back map[string]bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inflight -= len(batch)
	for _, m := range batch {
		switch {
		case !back[m.ID]:
			q.settled++
		case m.Receives >= q.maxReceive:
			q.dead = append(q.dead, m)
			q.settled++
		default:
			q.pending = append(q.pending, m)
		}
	}
}

// Counts returns how many messages are settled (deleted or dead) and how many died.
func (q *Queue) Counts() (settled, dead int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.settled, len(q.dead)
}

// Dead returns the messages on the dead-letter list, in the order they died.
func (q *Queue) Dead() []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]Message(nil), q.dead...)
}
