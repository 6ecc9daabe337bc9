package worker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/worker"
)

// fakeQueue is an SQS queue in memory: its attributes, messages each received once, and
// what the worker deleted and handed back (by receipt handle, with the visibility it
// gave). With refuse, SQS refuses every visibility change entry; while down is above
// zero, a receive fails and takes one from it.
type fakeQueue struct {
	mu       sync.Mutex
	attrs    map[string]string
	pending  []types.Message
	deleted  []string
	released map[string]int32
	refuse   bool
	down     int
	receives int
	slow     time.Duration // how long the first delete takes
}

func (q *fakeQueue) GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	return &sqs.GetQueueAttributesOutput{Attributes: q.attrs}, nil
}

func (q *fakeQueue) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.receives++
	if q.down > 0 {
		q.down--
		return nil, errors.New("connection refused")
	}
	n := min(int(in.MaxNumberOfMessages), len(q.pending))
	out := &sqs.ReceiveMessageOutput{Messages: q.pending[:n]}
	q.pending = q.pending[n:]
	return out, nil
}

func (q *fakeQueue) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	q.mu.Lock()
	slow := q.slow
	q.slow = 0
	q.mu.Unlock()
	time.Sleep(slow)
	q.mu.Lock()
	defer q.mu.Unlock()
	out := &sqs.DeleteMessageBatchOutput{}
	for _, e := range in.Entries {
		q.deleted = append(q.deleted, aws.ToString(e.ReceiptHandle))
		out.Successful = append(out.Successful, types.DeleteMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

func (q *fakeQueue) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := &sqs.ChangeMessageVisibilityBatchOutput{}
	for _, e := range in.Entries {
		if q.refuse {
			out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InvalidParameterValue"), Message: aws.String("over 12 hours"), SenderFault: true})
			continue
		}
		q.released[aws.ToString(e.ReceiptHandle)] = e.VisibilityTimeout
	}
	return out, nil
}

func newFakeQueue(visibility string, redrive bool, bodies ...string) *fakeQueue {
	q := &fakeQueue{attrs: map[string]string{"QueueArn": "arn:aws:sqs:eu-west-1:123456789012:movimientos", "VisibilityTimeout": visibility},
		released: map[string]int32{}}
	if redrive {
		q.attrs["RedrivePolicy"] = `{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:123456789012:movimientos-dlq","maxReceiveCount":"5"}`
	}
	for i, b := range bodies {
		id := "m" + string(rune('1'+i))
		q.pending = append(q.pending, types.Message{MessageId: aws.String(id), ReceiptHandle: aws.String("rh-" + id), Body: aws.String(b)})
	}
	return q
}

func workerHandler(t *testing.T, parker consumer.Parker) *consumer.Handler {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: env.Table(), InsufficientFunds: cuenta.Retry})
	if err != nil {
		t.Fatal(err)
	}
	return consumer.New(svc, consumer.Options{Logger: slog.New(slog.DiscardHandler), Parker: parker})
}

// The worker refuses, before it receives anything, a queue it would lose a message on
// (no time to apply) or loop on one forever: without a redrive policy a message that
// keeps failing has nowhere to go, a DLQ given for permanent failures or not.
func TestTheWorkerRefusesQueuesItCannotConsumeSafely(t *testing.T) {
	for _, tc := range []struct {
		name       string
		visibility string
		redrive    bool
		parker     consumer.Parker
		refused    string
	}{
		{"a visibility timeout too short", "1", true, nil, "visibility timeout is 1s"},
		{"no redrive policy and no DLQ", "30", false, nil, "no redrive policy"},
		{"no redrive policy but a DLQ for what can never succeed", "30", false, consumer.LogParker{Logger: slog.New(slog.DiscardHandler)}, "no redrive policy"},
		{"a redrive policy", "30", true, nil, ""},
	} {
		q := newFakeQueue(tc.visibility, tc.redrive)
		w, err := worker.New(q, workerHandler(t, tc.parker), worker.Options{QueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos"})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Check(context.Background())
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refused != "" && (!errors.Is(err, worker.ErrUnsafeQueue) || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s: %v, want refused: %s", tc.name, err, tc.refused)
		}
	}
}

// The worker deletes what is done and hands back, after its retry delay, what must
// come back; a hand-back SQS refuses is logged, not lost silently.
func TestTheWorkerDeletesWhatIsDoneAndHandsBackTheRest(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		q := newFakeQueue("30", true, body("a1", "A", "abono", "5.00"), body("c1", "B", "cargo", "1.00"), `not a movement`)
		q.refuse = refuse
		logs := &testenv.Buffer{}
		w, err := worker.New(q, workerHandler(t, nil), worker.Options{QueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos",
			WaitTime: time.Second, RetryDelay: 7 * time.Second, Drain: true, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(q.deleted) != 1 || q.deleted[0] != "rh-m1" {
			t.Errorf("refuse %v: deleted %v, want the applied abono's alone", refuse, q.deleted)
		}
		switch {
		case !refuse && (len(q.released) != 2 || q.released["rh-m2"] != 7 || q.released["rh-m3"] != 7):
			t.Errorf("handed back %v, want the waiting cargo and the unparked body after 7 s", q.released)
		case refuse && strings.Count(logs.String(), "could not shorten the visibility timeout of one message") != 2:
			t.Errorf("refused hand-backs not logged: %s", logs)
		}
	}
}

// A drain rides out a few failed receives, but gives up, failing and naming the queue,
// when they keep failing: a run meant to end does not retry a lost endpoint forever.
func TestADrainGivesUpOnAQueueItCannotReceiveFrom(t *testing.T) {
	for _, tc := range []struct {
		down    int
		fails   bool
		applied int
	}{
		{worker.MaxDrainReceiveFailures - 1, false, 1},
		{worker.MaxDrainReceiveFailures, true, 0},
	} {
		q := newFakeQueue("30", true, body("a1", "A", "abono", "5.00"))
		q.down = tc.down
		w, err := worker.New(q, workerHandler(t, nil), worker.Options{QueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos",
			Pollers: 1, WaitTime: time.Second, RetryDelay: time.Millisecond, Drain: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Run(context.Background())
		if failed := err != nil && strings.Contains(err.Error(), "movimientos failed 5 times in a row: connection refused"); failed != tc.fails || len(q.deleted) != tc.applied {
			t.Errorf("%d receives failing: Run = %v after %d receives, %d deleted; want failed %v, %d deleted", tc.down, err, q.receives, len(q.deleted), tc.fails, tc.applied)
		}
	}
}

// A worker that handled a backlog says once that the queue answered empty, and only
// when no poller still has a batch, so an operator knows when to look; a queue that
// stays empty says nothing more.
func TestTheWorkerSaysOnceWhenItCaughtUp(t *testing.T) {
	var bodies []string
	for i := range 20 {
		bodies = append(bodies, body(fmt.Sprintf("a%d", i), fmt.Sprintf("A%d", i), "abono", "5.00"))
	}
	q := newFakeQueue("30", true, bodies...)
	q.slow = 300 * time.Millisecond // one poller is still acknowledging when the others find the queue empty
	var mu sync.Mutex
	var deletedWhenSaid []int
	said := onLog(func(r slog.Record) {
		if strings.Contains(r.Message, "the queue answered empty") {
			q.mu.Lock()
			defer q.mu.Unlock()
			mu.Lock()
			defer mu.Unlock()
			deletedWhenSaid = append(deletedWhenSaid, len(q.deleted))
		}
	})
	w, err := worker.New(q, workerHandler(t, nil), worker.Options{QueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos",
		Pollers: 4, WaitTime: time.Second, Logger: slog.New(said)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	saidOnce := func() bool { mu.Lock(); defer mu.Unlock(); return len(deletedWhenSaid) > 0 }
	for deadline := time.Now().Add(10 * time.Second); !saidOnce() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // many more empty receives
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(deletedWhenSaid) != 1 || deletedWhenSaid[0] != 20 {
		t.Errorf("said it caught up with %v messages deleted, want once, with all 20", deletedWhenSaid)
	}
}

// onLog is a slog.Handler that calls f with every record.
type onLog func(slog.Record)

func (f onLog) Enabled(context.Context, slog.Level) bool      { return true }
func (f onLog) Handle(_ context.Context, r slog.Record) error { f(r); return nil }
func (f onLog) WithAttrs([]slog.Attr) slog.Handler            { return f }
func (f onLog) WithGroup(string) slog.Handler                 { return f }

// body is a movement message of importe EUR.
func body(id, cta, tipo, importe string) string {
	return fmt.Sprintf(`{"id":%q,"cuenta":%q,"tipo":%q,"importe":%q,"moneda":"EUR"}`, id, cta, tipo, importe)
}
