package sim

import (
	"slices"
	"testing"
)

func ids(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestReceiveTakesAtMostTenFromTheHead(t *testing.T) {
	q := NewQueue(3)
	for i := range 12 {
		q.Send(Message{ID: string(rune('a' + i)), Body: "b"})
	}
	batch, open := q.Receive(50)
	if !open || len(batch) != MaxBatch || batch[0].ID != "a" || batch[9].ID != "j" {
		t.Fatalf("Receive(50) = %v, %v: want a…j", ids(batch), open)
	}
	for _, m := range batch {
		if m.Receives != 1 {
			t.Errorf("%s: Receives = %d on its first receipt", m.ID, m.Receives)
		}
	}
}

func TestFailedMessagesComeBackAtTheTailAndDieAfterMaxReceive(t *testing.T) {
	q := NewQueue(2)
	q.Send(Message{ID: "a"}, Message{ID: "b"})
	batch, _ := q.Receive(1)
	q.Settle(batch, map[string]bool{"a": true})
	batch, _ = q.Receive(10)
	if got := ids(batch); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("after a failure of a: received %v, want [b a] (a at the tail)", got)
	}
	if batch[1].Receives != 2 {
		t.Errorf("a: Receives = %d, want 2", batch[1].Receives)
	}
	q.Settle(batch, map[string]bool{"a": true})
	settled, dead := q.Counts()
	if settled != 2 || dead != 1 || !slices.Equal(ids(q.Dead()), []string{"a"}) {
		t.Errorf("settled %d, dead %v: want b deleted and a dead after 2 receives", settled, ids(q.Dead()))
	}
	if batch, open := q.Receive(10); open || len(batch) != 0 {
		t.Errorf("Receive on a drained queue = %v, %v", ids(batch), open)
	}
}

func TestTheQueueStaysOpenWhileMessagesAreInFlight(t *testing.T) {
	q := NewQueue(5)
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
