package sim

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

func ids(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestReceiveTakesAtMostTenFromTheHead(t *testing.T) {
	q := NewQueue(QueueOptions{MaxReceive: 3})
	for i := range 12 {
		q.Send(Message{ID: string(rune('a' + i)), Body: "b"})
	}
	batch, open := q.Receive(50)
	if !open || len(batch) != 10 || batch[0].ID != "a" || batch[9].ID != "j" {
		t.Fatalf("Receive(50) = %v, %v: want a…j", ids(batch), open)
	}
	for _, m := range batch {
		if m.Receives != 1 || m.Event().Attributes["ApproximateReceiveCount"] != "1" {
			t.Errorf("%s: Receives = %d on its first receipt", m.ID, m.Receives)
		}
	}
}

func TestAMessageThatComesBackWaitsForItsVisibilityTimeout(t *testing.T) {
	clock := NewClock()
	q := NewQueue(QueueOptions{Clock: clock, Visibility: time.Minute, Step: time.Second, MaxReceive: 2})
	q.Send(Message{ID: "a"}, Message{ID: "b"})
	first, _ := q.Receive(1)
	q.Settle(first, map[string]bool{"a": true})
	if batch, _ := q.Receive(10); !slices.Equal(ids(batch), []string{"b"}) {
		t.Fatalf("right after a failed: received %v, want only b (a is invisible for a minute)", ids(batch))
	} else {
		q.Settle(batch, nil)
	}
	start := clock.Now()
	again, open := q.Receive(10) // nothing visible, nothing in flight: the clock jumps
	if !open || !slices.Equal(ids(again), []string{"a"}) || again[0].Receives != 2 {
		t.Fatalf("then: %+v, %v; want a on its second receipt", again, open)
	}
	if waited := clock.Now().Sub(start); waited < 50*time.Second {
		t.Errorf("a came back after %v of simulated time, want about a minute", waited)
	}
	q.Settle(again, map[string]bool{"a": true})
	if dead := q.Dead(); !slices.Equal(ids(dead), []string{"a"}) {
		t.Errorf("dead = %v, want a after 2 receives", ids(dead))
	}
	if batch, open := q.Receive(10); open || len(batch) != 0 {
		t.Errorf("Receive on a drained queue = %v, %v", ids(batch), open)
	}
}

func TestTheQueueStaysOpenWhileMessagesAreInFlight(t *testing.T) {
	q := NewQueue(QueueOptions{MaxReceive: 5})
	q.Send(Message{ID: "a"})
	first, _ := q.Receive(10)
	if batch, open := q.Receive(10); !open || len(batch) != 0 {
		t.Fatalf("with a in flight: Receive = %v, %v; want empty and open", ids(batch), open)
	}
	q.Settle(first, map[string]bool{"a": true}) // a crash: it comes back
	again, open := q.Receive(10)
	if !open || !slices.Equal(ids(again), []string{"a"}) || again[0].Receives != 2 {
		t.Fatalf("after the crash: Receive = %+v, %v", again, open)
	}
	q.Settle(again, nil)
	if _, open := q.Receive(10); open {
		t.Error("queue still open after its only message was deleted")
	}
}

func TestDrainEndsWhenEveryMessageIsSettled(t *testing.T) {
	q := NewQueue(QueueOptions{MaxReceive: 3})
	for i := range 25 {
		q.Send(Message{ID: string(rune('a' + i))})
	}
	var handled atomic.Int64
	err := q.Drain(context.Background(), 3, 10, func(_ context.Context, _ int, batch []events.SQSMessage) map[string]bool {
		handled.Add(int64(len(batch)))
		back := map[string]bool{}
		for _, m := range batch {
			if m.MessageId == "c" { // never succeeds: dies after 3 receives
				back[m.MessageId] = true
			}
		}
		return back
	})
	if err != nil {
		t.Fatal(err)
	}
	if handled.Load() != 27 || !slices.Equal(ids(q.Dead()), []string{"c"}) {
		t.Errorf("handled %d receipts, dead %v; want 25 + 2 retries of c, and c dead", handled.Load(), ids(q.Dead()))
	}
}

// Drain stops when ctx is done, even while every batch fails and comes straight back:
// an interrupted run ends at once, rather than after each message's last receive.
func TestDrainStopsWhenCancelledWhileBatchesComeBack(t *testing.T) {
	q := NewQueue(QueueOptions{MaxReceive: 1000})
	for i := range 25 {
		q.Send(Message{ID: string(rune('a' + i))})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var handled atomic.Int64
	err := q.Drain(ctx, 3, 10, func(_ context.Context, _ int, batch []events.SQSMessage) map[string]bool {
		handled.Add(int64(len(batch)))
		cancel()
		back := map[string]bool{}
		for _, m := range batch {
			back[m.MessageId] = true
		}
		return back
	})
	if !errors.Is(err, context.Canceled) || handled.Load() > 3*10 {
		t.Errorf("Drain = %v after %d receipts; want it cancelled within the batches in flight (at most 30)", err, handled.Load())
	}
}
