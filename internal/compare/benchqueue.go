package compare

import (
	"slices"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
)

// benchFIFOARN is the event source of the benchmark's FIFO batches: a FIFO queue's ARN.
const benchFIFOARN = "arn:aws:sqs:eu-west-1:123456789012:bench.fifo"

// benchMsg is a message of the benchmark's queue: its place in the order sent, its
// FIFO message group ("" on a standard queue) and its receives.
type benchMsg struct {
	sim.Message
	seq   int
	group string
}

// event is m as Lambda hands it to the handler: from a FIFO queue with its group.
func (m *benchMsg) event() events.SQSMessage {
	ev := m.Event()
	if m.group != "" {
		ev.Attributes["MessageGroupId"] = m.group
		ev.EventSourceARN = benchFIFOARN
	}
	return ev
}

// benchQueue is the benchmark's queue on the scheduler's time, which settles a batch
// the moment its handler is done (no visibility delay: a message that fails comes
// straight back). A standard queue hands out the oldest messages, and takes failed ones
// back at its tail. A FIFO queue holds a message group while any of its messages is in
// flight, hands a group's messages out in the order they were sent, and fills a batch
// with as many of one group as it can, as SQS does, before it takes the next group's;
// failed messages go back to their place in their group. After maxReceive receives a
// message goes to the dead-letter list. The scheduler calls it under its lock.
type benchQueue struct {
	fifo       bool
	maxReceive int
	pending    []*benchMsg    // in the order they are handed out
	inFlight   map[string]int // FIFO: messages in flight by group
	flying     int
	dead       []*benchMsg
}

// newBenchQueue holds msgs in order; on a FIFO queue each in its movement's group (a
// body that is no movement in one of its own).
func newBenchQueue(msgs []sim.Message, fifo bool, maxReceive int) *benchQueue {
	q := &benchQueue{fifo: fifo, maxReceive: maxReceive, inFlight: map[string]int{}}
	for i, m := range msgs {
		bm := &benchMsg{Message: m, seq: i}
		if fifo {
			bm.group = "?" + strconv.Itoa(i)
			if mov, err := movimiento.Parse([]byte(m.Body)); err == nil {
				bm.group = mov.MessageGroup()
			}
		}
		q.pending = append(q.pending, bm)
	}
	return q
}

// take puts the next batch in flight: up to consumer.MaxBatch messages, none from a
// FIFO group in flight.
func (q *benchQueue) take() []*benchMsg {
	var batch []*benchMsg
	taken := map[string]bool{} // FIFO: the groups this batch takes from
	for _, m := range q.pending {
		if len(batch) == consumer.MaxBatch {
			break
		}
		if !q.fifo {
			batch = append(batch, m)
			continue
		}
		if q.inFlight[m.group] > 0 || taken[m.group] {
			continue
		}
		taken[m.group] = true
		for _, same := range q.pending {
			if same.group == m.group && len(batch) < consumer.MaxBatch {
				batch = append(batch, same)
			}
		}
	}
	q.pending = slices.DeleteFunc(q.pending, func(m *benchMsg) bool { return slices.Contains(batch, m) })
	for _, m := range batch {
		m.Receives++
		q.inFlight[m.group]++
	}
	q.flying += len(batch)
	return batch
}

// settle deletes the messages of batch that back does not name and takes the others
// back, or to the dead-letter list after maxReceive receives.
func (q *benchQueue) settle(batch []*benchMsg, back map[string]bool) {
	q.flying -= len(batch)
	for _, m := range batch {
		q.inFlight[m.group]--
		switch {
		case !back[m.ID]:
		case m.Receives >= q.maxReceive:
			q.dead = append(q.dead, m)
		case q.fifo: // back to its place among the others
			at, _ := slices.BinarySearchFunc(q.pending, m.seq, func(p *benchMsg, seq int) int { return p.seq - seq })
			q.pending = slices.Insert(q.pending, at, m)
		default:
			q.pending = append(q.pending, m)
		}
	}
}

// drained reports that nothing is left to hand out or in flight.
func (q *benchQueue) drained() bool { return len(q.pending) == 0 && q.flying == 0 }
