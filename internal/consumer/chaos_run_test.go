package consumer_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Result is what a run sent and how each message ended, for Verify.
type Result struct {
	Scenario Scenario
	Workload sim.Workload
	Schedule sim.Schedule
	Fates    map[string]Fate // by message id
	Stats    Stats
}

// Fate is how a message ended: its last outcome as the handler logged it, and whether
// it was parked by the handler or moved to the DLQ by maxReceiveCount. Reason is why it
// ended there (the parked reason, or the last error logged for it).
type Fate struct {
	Outcome ledger.Outcome
	Parked  bool
	Dead    bool
	Reason  string
}

// invocationTimeout is a Lambda's timeout for the batches without a drawn deadline.
const invocationTimeout = 30 * time.Second

// Run generates the scenario's workload, delivers it through sim.Queue to sc.Consumers
// concurrent handlers writing to target through injected faults, until the queue is
// drained; then it sends the late conflicting replays and drains again. It returns an
// error only when it cannot run (a bad scenario, ctx expired before the queue drained):
// what the ledger did wrong is Verify's to find.
func Run(ctx context.Context, target Target, sc Scenario) (Result, error) {
	start := time.Now()
	sc = defaults(sc)
	w, err := sim.Generate(sim.Spec{Accounts: sc.Accounts, Movements: sc.Movements, Seed: sc.Seed, Prefix: sc.Prefix})
	if err != nil {
		return Result{}, err
	}
	sched := sim.Deliveries(w, sim.Mix{Duplicates: sc.Duplicates, Malformed: sc.Malformed, Conflicting: sc.Conflicting}, sc.Seed)

	ft := sim.NewTransport(nil)
	ft.SetChooser(chooser(sc.Rates, sc.Seed))
	r := &runner{
		sc:    sc,
		table: target.Table,
		db:    target.client(crashing{base: ft}),
		q:     sim.NewQueue(sc.MaxReceive),
		log:   newRecorder(),
		dlq:   &dlq{parked: map[string]consumer.Reason{}},
		sent:  len(sched.Deliveries) + len(sched.Late),
		stats: Stats{Runs: 1, Movements: len(w.Movements), Deliveries: len(sched.Deliveries) + len(sched.Late)},
	}
	r.logger = slog.New(r.log)
	for _, phase := range [][]sim.Delivery{sched.Deliveries, sched.Late} {
		r.q.Send(messages(phase)...)
		if err := r.drain(ctx); err != nil {
			return Result{}, err
		}
	}
	res := Result{Scenario: sc, Workload: w, Schedule: sched, Fates: r.fates(), Stats: r.stats}
	res.Stats.Faults, res.Stats.Calls = ft.Injected(), ft.TotalCalls()
	res.Stats.Elapsed = time.Since(start)
	return res, nil
}

func defaults(sc Scenario) Scenario {
	if sc.Consumers <= 0 {
		sc.Consumers = 1
	}
	if sc.BatchSize <= 0 || sc.BatchSize > sim.MaxBatch {
		sc.BatchSize = sim.MaxBatch
	}
	if sc.MaxReceive <= 0 {
		sc.MaxReceive = 100
	}
	return sc
}

func messages(ds []sim.Delivery) []sim.Message {
	out := make([]sim.Message, len(ds))
	for i, d := range ds {
		out[i] = sim.Message{ID: d.MessageID, Body: d.Body}
	}
	return out
}

// runner is one run's shared state; its consumers are goroutines of drain.
type runner struct {
	sc     Scenario
	table  string
	db     *dynamodb.Client
	q      *sim.Queue
	log    *recorder
	logger *slog.Logger
	dlq    *dlq
	sent   int

	mu    sync.Mutex
	stats Stats
}

// drain runs the consumers until the queue has nothing pending or in flight. Each
// batch settles at least one receipt and a message is received at most MaxReceive
// times, so sent×MaxReceive batches bound a consumer; waits for messages in flight are
// bounded by ctx.
func (r *runner) drain(ctx context.Context) error {
	errs := make([]error, r.sc.Consumers)
	var wg sync.WaitGroup
	for c := range r.sc.Consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[c] = r.consume(ctx, rand.New(rand.NewPCG(r.sc.Seed, uint64(c)+1)))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// locking is versioned.DefaultPolicy's attempts with its back-off compressed tenfold,
// as the SDK's is: the races are the same, the waits shorter.
var locking = versioned.Policy{MaxAttempts: versioned.DefaultPolicy.MaxAttempts, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}

// process is a consumer's Lambda instance: a handler and the service behind it, with
// its own account cache. A crash replaces it, cache and all.
func (r *runner) process() (*consumer.Handler, error) {
	svc, err := ledger.New(r.db, ledger.Config{Table: r.table, InsufficientFunds: r.sc.Policy, Locking: locking})
	if err != nil {
		return nil, err
	}
	// A small reserve lets the drawn deadlines of a few milliseconds cut batches
	// mid-way instead of refusing to start them.
	return consumer.New(svc, consumer.Options{Concurrency: 4, Reserve: 2 * time.Millisecond, Parker: r.dlq, Logger: r.logger}), nil
}

func (r *runner) consume(ctx context.Context, rng *rand.Rand) error {
	h, err := r.process()
	if err != nil {
		return err
	}
	for batches := 0; batches < r.sent*r.sc.MaxReceive; {
		batch, open := r.q.Receive(r.sc.BatchSize)
		if !open {
			return nil
		}
		if len(batch) == 0 { // others are in flight; their failures may come back
			if err := sleep(ctx, time.Millisecond); err != nil {
				return fmt.Errorf("chaos: %s: the queue did not drain: %w", r.sc.Prefix, err)
			}
			continue
		}
		batches++
		back, died := r.invoke(ctx, h, batch, rng)
		if died {
			if h, err = r.process(); err != nil {
				return err
			}
		}
		r.q.Settle(batch, back)
	}
	return fmt.Errorf("chaos: %s: a consumer received %d batches without draining the queue", r.sc.Prefix, r.sent*r.sc.MaxReceive)
}

// invoke hands one batch to the handler as Lambda would, with whatever the scenario
// draws for it, and returns the messages that come back and whether the invocation
// died.
func (r *runner) invoke(ctx context.Context, h *consumer.Handler, batch []sim.Message, rng *rand.Rand) (back map[string]bool, died bool) {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(batch))}
	for i, m := range batch {
		ev.Records[i] = events.SQSMessage{MessageId: m.ID, Body: m.Body, EventSource: "aws:sqs",
			Attributes: map[string]string{"ApproximateReceiveCount": fmt.Sprint(m.Receives)}}
	}
	timeout, deadline := invocationTimeout, hit(rng, r.sc.Rates.Deadline)
	if deadline {
		timeout = time.Duration(1+rng.IntN(30)) * time.Millisecond
	}
	bctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var crash *crashPoint
	if hit(rng, r.sc.Rates.CrashMid) {
		crash = &crashPoint{cancel: cancel}
		crash.left.Store(int32(1 + rng.IntN(8)))
		bctx = context.WithValue(bctx, crashKey{}, crash)
	}
	resp, err := h.Handle(bctx, ev)
	timedOut := deadline && errors.Is(bctx.Err(), context.DeadlineExceeded)

	var s Stats
	s.Batches, s.Handled = 1, len(batch)
	all := func() map[string]bool {
		m := make(map[string]bool, len(batch))
		for _, msg := range batch {
			m[msg.ID] = true
		}
		return m
	}
	switch {
	case crash != nil && crash.fired.Load():
		s.CrashesMid, back, died = 1, all(), true
	case timedOut:
		s.Timeouts, back, died = 1, all(), true
	case hit(rng, r.sc.Rates.CrashAfter):
		s.CrashesAfter, back, died = 1, all(), true
	case err != nil: // the invocation failed: SQS returns the whole batch
		back = all()
	default:
		back = make(map[string]bool, len(resp.BatchItemFailures))
		for _, f := range resp.BatchItemFailures {
			back[f.ItemIdentifier] = true
		}
		for _, msg := range batch {
			if !back[msg.ID] && hit(rng, r.sc.Rates.Redeliver) {
				back[msg.ID] = true
				s.Redelivered++
			}
		}
	}
	if deadline {
		s.Deadlines = 1
	}
	r.mu.Lock()
	r.stats.Add(s)
	r.mu.Unlock()
	return back, died
}

func hit(rng *rand.Rand, percent int) bool { return percent > 0 && rng.IntN(100) < percent }

// chooser draws the fault for each DynamoDB call from the rates, reproducibly from seed.
func chooser(r Rates, seed uint64) func(op string) sim.Fault {
	rng := rand.New(rand.NewPCG(seed, 0xfa0175))
	var mu sync.Mutex
	kinds := []struct {
		fault sim.Fault
		rate  int
	}{
		{sim.InternalError, r.InternalError},
		{sim.Throttling, r.Throttling},
		{sim.TransactionConflict, r.TransactionConflict},
		{sim.LostResponse, r.LostResponse},
	}
	return func(op string) sim.Fault {
		mu.Lock()
		defer mu.Unlock()
		n := rng.IntN(100)
		for _, k := range kinds {
			if k.fault == sim.TransactionConflict && op != "TransactWriteItems" {
				continue
			}
			if n < k.rate {
				return k.fault
			}
			n -= k.rate
		}
		return 0
	}
}

// fates says how every message sent ended.
func (r *runner) fates() map[string]Fate {
	out := make(map[string]Fate, r.sent)
	for id, line := range r.log.snapshot() {
		out[id] = Fate{Outcome: line.outcome, Reason: line.err}
	}
	r.dlq.mu.Lock()
	for id, reason := range r.dlq.parked {
		f := out[id]
		f.Parked, f.Outcome, f.Reason = true, reason.Outcome, reason.Error
		out[id] = f
	}
	r.stats.Parked = len(r.dlq.parked)
	r.dlq.mu.Unlock()
	dead := r.q.Dead()
	for _, m := range dead {
		f := out[m.ID]
		f.Dead = true
		out[m.ID] = f
	}
	r.stats.Dead = len(dead)
	return out
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
