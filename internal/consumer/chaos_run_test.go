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
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
)

// Result is what a run sent and how each message ended, for Verify. Now is the run's
// simulated time when it ended, which holds expire by.
type Result struct {
	Scenario Scenario
	Workload sim.Workload
	Schedule sim.Schedule
	Fates    map[string]Fate // by message id
	Stats    Stats
	Now      time.Time
}

// Fate is how a message ended: its last outcome as the handler logged it, and whether
// it was parked by the handler or moved to the DLQ by maxReceiveCount. Reason is why it
// ended there (the parked reason, or the last error logged for it).
type Fate struct {
	Outcome store.Outcome
	Parked  bool
	Dead    bool
	Reason  string
}

// invocationTimeout is a Lambda's timeout for the batches without a drawn deadline.
const invocationTimeout = 30 * time.Second

// Run generates the scenario's workload, delivers it through sim.Queue to sc.Consumers
// concurrent handlers writing to target through injected faults, until the queue is
// drained; then it moves the simulated clock (the ledger's too) past the workload's
// lapse and sends its tail, and last the late conflicting replays and the movements
// refused by design, draining each time. It returns an error only when it cannot run
// (a bad scenario, ctx expired before the queue drained): what the ledger did wrong is
// Verify's to find.
func Run(ctx context.Context, target Target, sc Scenario) (Result, error) {
	start := time.Now()
	sc = defaults(sc)
	w, err := sim.Generate(sim.Spec{Accounts: sc.Accounts, Movements: sc.Movements, Seed: sc.Seed, Prefix: sc.Prefix,
		Transfers: sc.Transfers, Repartos: sc.Repartos, Reversals: sc.Reversals, Refunds: sc.Refunds, Holds: sc.Holds})
	if err != nil {
		return Result{}, err
	}
	if !sc.Refusals {
		w.Refused = nil
	}
	sched := sim.Deliveries(w, sim.Mix{Duplicates: sc.Duplicates, Malformed: sc.Malformed, Conflicting: sc.Conflicting}, sc.Seed)

	ft := sim.NewTransport(nil)
	ft.SetChooser(chooser(sc.Rates, sc.Seed))
	r := &runner{
		sc:    sc,
		table: target.Table,
		db:    target.client(crashing{base: ft}),
		clock: sim.NewClock(),
		last:  map[string]consumer.Record{},
		dlq:   &dlq{parked: map[string]consumer.Reason{}},
		stats: Stats{Runs: 1, Movements: len(w.Movements), Kinds: w.Kinds(), Refused: len(w.Refused),
			Deliveries: len(sched.Deliveries) + len(sched.Tail) + len(sched.Late)},
	}
	r.q = sim.NewQueue(sim.QueueOptions{Clock: r.clock, MaxReceive: sc.MaxReceive})
	r.handlers = make([]*consumer.Handler, sc.Consumers)
	r.rngs = make([]*rand.Rand, sc.Consumers)
	for c := range sc.Consumers {
		if r.handlers[c], err = r.process(); err != nil {
			return Result{}, err
		}
		r.rngs[c] = rand.New(rand.NewPCG(sc.Seed, uint64(c)+1))
	}
	for i, phase := range [][]sim.Message{sched.Deliveries, sched.Tail, sched.Late} {
		if i == 1 {
			r.clock.AdvanceTo(w.Lapse)
		}
		r.q.Send(phase...)
		if err := r.q.Drain(ctx, sc.Consumers, sc.BatchSize, r.invoke); err != nil {
			return Result{}, fmt.Errorf("chaos: %s: %w", sc.Prefix, err)
		}
	}
	res := Result{Scenario: sc, Workload: w, Schedule: sched, Fates: r.fates(), Stats: r.stats, Now: r.clock.Now()}
	res.Stats.Faults, res.Stats.Calls = ft.Injected(), ft.TotalCalls()
	res.Stats.Elapsed = time.Since(start)
	return res, nil
}

func defaults(sc Scenario) Scenario {
	if sc.Consumers <= 0 {
		sc.Consumers = 1
	}
	if sc.BatchSize <= 0 || sc.BatchSize > consumer.MaxBatch {
		sc.BatchSize = consumer.MaxBatch
	}
	if sc.MaxReceive <= 0 {
		sc.MaxReceive = 100
	}
	return sc
}

// runner is one run's shared state. Consumer c is a Lambda instance: handlers[c], with
// its own account cache, replaced by a fresh one when it dies, and its own random
// choices, rngs[c].
type runner struct {
	sc       Scenario
	table    string
	db       *dynamodb.Client
	clock    *sim.Clock // the queue's and the ledger's
	q        *sim.Queue
	dlq      *dlq
	handlers []*consumer.Handler
	rngs     []*rand.Rand

	mu    sync.Mutex
	last  map[string]consumer.Record // by message id: what the handler last decided
	stats Stats
}

// budget is store.DefaultBudget with its back-off compressed tenfold,
// as the SDK's is: the races are the same, the waits shorter.
var budget = store.Budget{Retries: store.DefaultBudget.Retries, Time: store.DefaultBudget.Time, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}

// process is a new Lambda instance: a handler and the ledger behind it, with its own
// account cache.
func (r *runner) process() (*consumer.Handler, error) {
	svc, err := store.New(r.db, store.Config{Table: r.table, InsufficientFunds: r.sc.Policy, Budget: budget, Now: r.clock.Now})
	if err != nil {
		return nil, err
	}
	// A small reserve lets the drawn deadlines of a few milliseconds cut batches
	// mid-way instead of refusing to start them.
	return consumer.New(svc, consumer.Options{Concurrency: 4, Reserve: 2 * time.Millisecond, Parker: r.dlq,
		Logger: slog.New(slog.DiscardHandler), Observer: r.observe}), nil
}

// observe keeps what the handler last decided for each message.
func (r *runner) observe(rec consumer.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last[rec.Msg.MessageId] = rec
}

// invoke hands one batch to consumer c as Lambda would, with whatever the scenario
// draws for it, and returns the messages that come back. A consumer whose invocation
// died is replaced.
func (r *runner) invoke(ctx context.Context, c int, batch []events.SQSMessage) map[string]bool {
	rng := r.rngs[c]
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
	back := r.handlers[c].Settle(bctx, batch)
	timedOut := deadline && errors.Is(bctx.Err(), context.DeadlineExceeded)

	var s Stats
	s.Batches, s.Handled = 1, len(batch)
	died := true
	switch {
	case crash != nil && crash.fired.Load():
		s.CrashesMid = 1
	case timedOut:
		s.Timeouts = 1
	case hit(rng, r.sc.Rates.CrashAfter):
		s.CrashesAfter = 1
	default:
		died = false
		for _, msg := range batch {
			if !back[msg.MessageId] && hit(rng, r.sc.Rates.Redeliver) {
				back[msg.MessageId] = true
				s.Redelivered++
			}
		}
	}
	if died { // its response is lost: every message comes back
		for _, msg := range batch {
			back[msg.MessageId] = true
		}
		if h, err := r.process(); err == nil {
			r.handlers[c] = h
		}
	}
	if deadline {
		s.Deadlines = 1
	}
	r.mu.Lock()
	r.stats.Add(s)
	r.mu.Unlock()
	return back
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
	r.mu.Lock()
	out := make(map[string]Fate, len(r.last))
	for id, rec := range r.last {
		f := Fate{Outcome: rec.Result.Outcome}
		if rec.Result.Err != nil {
			f.Reason = rec.Result.Err.Error()
		}
		out[id] = f
	}
	r.mu.Unlock()
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
