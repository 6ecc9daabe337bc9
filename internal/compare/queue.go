package compare

import (
	"slices"
	"sync"
	"time"
)

// delivery is one message put on the queue: its id and body.
type delivery struct {
	id   string
	body string
}

// message is a delivery in the queue, with SQS's bookkeeping.
type message struct {
	delivery
	seq       int // enqueue order: a standard queue is roughly first in, first out
	visibleAt time.Time
	receives  int
}

// queue is a simulated SQS standard queue on the simulated clock: a received message
// is invisible until acknowledged or until its visibility timeout passes; one that is
// not deleted (reported failed, or its batch died) becomes visible again a visibility
// timeout after it was received, as with a Lambda event source mapping; after
// maxReceive receives it goes to the dead-letter queue. Each receive moves the clock
// forward by step (batches a second apart), first to the next visible message when
// none is visible and none is in flight.
type queue struct {
	mu         sync.Mutex
	clock      *clock
	pending    []*message
	inflight   int
	next       int
	visibility time.Duration
	step       time.Duration
	maxReceive int
	dead       []*message
}

func newQueue(c *clock, visibility, step time.Duration, maxReceive int) *queue {
	return &queue{clock: c, visibility: visibility, step: step, maxReceive: maxReceive}
}

// send enqueues deliveries, visible now.
func (q *queue) send(ds []delivery) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for _, d := range ds {
		q.next++
		q.pending = append(q.pending, &message{delivery: d, seq: q.next, visibleAt: now})
	}
}

// receive takes up to n visible messages. ok is false once nothing is pending and
// nothing is in flight.
func (q *queue) receive(n int) (batch []*message, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		return nil, q.inflight > 0
	}
	if !q.anyVisible(q.clock.Now()) {
		if q.inflight > 0 {
			return nil, true // what is in flight may come back sooner
		}
		first := slices.MinFunc(q.pending, func(a, b *message) int { return a.visibleAt.Compare(b.visibleAt) })
		q.clock.advanceTo(first.visibleAt)
	}
	q.clock.advance(q.step)
	now := q.clock.Now()
	slices.SortStableFunc(q.pending, func(a, b *message) int {
		if c := a.visibleAt.Compare(b.visibleAt); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	keep := q.pending[:0]
	for _, m := range q.pending {
		if len(batch) < n && !m.visibleAt.After(now) {
			m.receives++
			m.visibleAt = now.Add(q.visibility) // in flight until acknowledged
			batch = append(batch, m)
			continue
		}
		keep = append(keep, m)
	}
	q.pending = keep
	q.inflight += len(batch)
	return batch, true
}

func (q *queue) anyVisible(now time.Time) bool {
	return slices.ContainsFunc(q.pending, func(m *message) bool { return !m.visibleAt.After(now) })
}

// settle ends a batch: messages in back stay and reappear when their visibility
// timeout passes (or die after maxReceive receives); the rest are deleted. again are
// deleted messages SQS delivers once more anyway (a visibility timeout that expired
// before the delete), under the same message id.
func (q *queue) settle(batch []*message, back func(id string) bool, again map[string]bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inflight -= len(batch)
	for _, m := range batch {
		switch {
		case back(m.id) && m.receives >= q.maxReceive:
			q.dead = append(q.dead, m)
		case back(m.id), again[m.id]:
			q.pending = append(q.pending, m)
		}
	}
}

// deadLetters returns the ids of the messages that went to the dead-letter queue.
func (q *queue) deadLetters() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids := make([]string, len(q.dead))
	for i, m := range q.dead {
		ids[i] = m.id
	}
	return ids
}
