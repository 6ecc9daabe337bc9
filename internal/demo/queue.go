package demo

import (
	"sync"

	"github.com/ledger-dev/ledger/internal/workload"
)

// queue is an in-memory stand-in for an SQS standard queue, at least once: a received
// message is in flight until acknowledged; a message handed back goes to the tail (out
// of order), and after maxReceive receives it moves to the dead-letter list, as a
// redrive policy would.
type queue struct {
	mu         sync.Mutex
	pending    []*message
	inflight   int
	dead       []*message
	settled    int // deleted or dead: will not be delivered again
	maxReceive int
}

type message struct {
	workload.Delivery
	receives int
}

func newQueue(ds []workload.Delivery, maxReceive int) *queue {
	q := &queue{maxReceive: maxReceive}
	q.send(ds)
	return q
}

func (q *queue) send(ds []workload.Delivery) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, d := range ds {
		q.pending = append(q.pending, &message{Delivery: d})
	}
}

// receive takes up to n messages; ok is false once the queue is empty and nothing is
// in flight, i.e. there is nothing left to wait for.
func (q *queue) receive(n int) (batch []*message, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.pending))
	batch, q.pending = q.pending[:n:n], q.pending[n:]
	for _, m := range batch {
		m.receives++
	}
	q.inflight += len(batch)
	return batch, len(batch) > 0 || q.inflight > 0
}

// ack settles messages: the ones in back return to the tail (or die), the rest are
// deleted; redeliver are delivered again although they succeeded, as SQS does when a
// visibility timeout expires before the delete.
func (q *queue) ack(batch []*message, back, redeliver map[string]bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inflight -= len(batch)
	for _, m := range batch {
		switch {
		case back[m.MessageID] && m.receives >= q.maxReceive:
			q.dead = append(q.dead, m)
			q.settled++
		case back[m.MessageID], redeliver[m.MessageID]:
			q.pending = append(q.pending, m)
		default:
			q.settled++
		}
	}
}

// counts returns how many messages are settled and how many of those died.
func (q *queue) counts() (settled, dead int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.settled, len(q.dead)
}
