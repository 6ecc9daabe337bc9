package worker_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/worker"
)

// On a FIFO queue the worker hands the handler each message's group and the queue's
// ARN, so a group stops at its first failure: the failed message and those behind it
// in its group come back, in order; other groups are deleted as done.
func TestTheWorkerKeepsAFIFOGroupInOrder(t *testing.T) {
	q := newFakeQueue("30", true,
		body("c1", "A", "cargo", "1.00"), // A has nothing: comes back
		body("a1", "A", "abono", "5.00"), // behind it: comes back untried
		body("b1", "B", "abono", "5.00"))
	q.attrs["QueueArn"] += ".fifo"
	for i, group := range []string{"A", "A", "B"} {
		q.pending[i].Attributes = map[string]string{"MessageGroupId": group}
	}
	w, err := worker.New(q, workerHandler(t, nil), worker.Options{QueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos.fifo",
		Pollers: 1, WaitTime: time.Second, RetryDelay: 3 * time.Second, Drain: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.deleted, []string{"rh-m3"}) || len(q.released) != 2 || q.released["rh-m1"] != 3 || q.released["rh-m2"] != 3 {
		t.Errorf("deleted %v, handed back %v; want B's message deleted, both of A's handed back", q.deleted, q.released)
	}
}
