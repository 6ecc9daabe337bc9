package compare

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
)

// benchRow is one row pair of the benchmark: a case, its consumers, its kind of queue.
type benchRow struct {
	name      string
	consumers int
	fifo      bool
}

// The benchmark's rows (docs/compare.md): each case with one consumer and ten on a
// standard queue, and the ten again on a FIFO queue, where a message group is an
// account and one batch of it is in flight at a time.
var benchRows = []benchRow{
	{"unbatched", 1, false}, {"unbatched", 10, false}, {"unbatched", 10, true},
	{"hot-account", 1, false}, {"hot-account", 10, false}, {"hot-account", 10, true},
	{"transfers", 10, false}, {"transfers", 10, true},
}

// The kinds of queue, as the report names them.
const (
	standardQueue = "standard"
	fifoQueue     = "fifo"
)

func queueKind(fifo bool) string {
	if fifo {
		return fifoQueue
	}
	return standardQueue
}

// transferShare is the share of transfers in the transfers case's workload, on the
// unbatched case's accounts.
const transferShare = 0.3

// MinBenchMovements is the fewest movements a benchmark run takes: its warm-up, at
// least one batch of consumer.MaxBatch, and one movement to measure.
const MinBenchMovements = consumer.MaxBatch + 1

func runBench(ctx context.Context, opts Options) ([]BenchResult, error) {
	if opts.BenchMovements < MinBenchMovements {
		return nil, fmt.Errorf("compare: a benchmark run takes at least %d movements, not %d", MinBenchMovements, opts.BenchMovements)
	}
	var out []BenchResult
	for _, row := range benchRows {
		for _, strategy := range Strategies {
			r, err := benchOne(ctx, opts, row, strategy)
			if err != nil {
				return out, fmt.Errorf("compare: bench %s/%d/%s/%s: %w", row.name, row.consumers, queueKind(row.fifo), strategy, err)
			}
			opts.Progress("bench %-12s %2d consumers %-8s %-15s %8.1f movements/s\n", row.name, row.consumers, queueKind(row.fifo), strategy, r.ThroughputPerS)
			out = append(out, r)
		}
	}
	return out, nil
}

// benchWorkload is a case's workload and how many of its deliveries (spread) warm the
// consumers up: each account's first movement, as in a consumer running a while, or a
// hot account's first batch.
func benchWorkload(name string, movements int, seed uint64) (sim.Spec, int) {
	// Unbatched: at most 100 accounts, so ten consumers' batches of ten rarely share one.
	spec := sim.Spec{Accounts: max(consumer.MaxBatch, min(100, movements/4)), Movements: movements, Seed: seed}
	switch name {
	case "hot-account":
		spec.Accounts = 1
		return spec, consumer.MaxBatch
	case "transfers":
		spec.Transfers = transferShare
	}
	return spec, spec.Accounts
}

func benchOne(ctx context.Context, opts Options, row benchRow, strategy Strategy) (BenchResult, error) {
	spec, warm := benchWorkload(row.name, opts.BenchMovements, opts.Seed)
	w, err := sim.Generate(spec)
	if err != nil {
		return BenchResult{}, err
	}
	deliveries := spread(w) // hot-account: in order
	s, err := openStore(ctx, opts.Endpoint)
	if err != nil {
		return BenchResult{}, err
	}
	defer s.close()
	sc := scenario{consumers: row.consumers, concurrency: consumer.DefaultConcurrency, simulated: true}
	r, err := newRig(s, strategy, sc, &crashPlan{}, opts.RTT, sim.QueueOptions{})
	if err != nil {
		return BenchResult{}, err
	}
	cost := opts.RTT + opts.ServiceTime
	if _, err := r.simulate(ctx, deliveries[:warm], row.fifo, cost, opts.Seed); err != nil {
		return BenchResult{}, err
	}
	before := r.meter.usage()
	r.faults.ResetCounts()
	m, err := r.simulate(ctx, deliveries[warm:], row.fifo, cost, opts.Seed)
	if err != nil {
		return BenchResult{}, err
	}
	u := r.meter.usage()
	n, calls := float64(len(deliveries)-warm), r.faults.TotalCalls()
	return BenchResult{
		Case: row.name, Strategy: strategy, Consumers: row.consumers, Queue: queueKind(row.fifo), Movements: len(deliveries) - warm,
		CallsPerMovement: float64(calls) / n,
		WCUPerMovement:   (u.wcu - before.wcu) / n,
		RetriedShare:     float64(m.retried) / n,
		Transfers:        m.transfers, TransfersRetried: m.transfersRetried,
		ThroughputPerS: n / m.took.Seconds(),
		StoreMsPerCall: ms(u.busy-before.busy) / float64(max(calls, 1)),
	}, nil
}

// simulation is what one simulated run measured: its simulated time from the first
// receive to the last settle, and the deliveries one or more of whose writes another
// writer's got in the way of (more than one transaction), transfers apart.
type simulation struct {
	took                                 time.Duration
	retried, transfers, transfersRetried int
}

// benchStallCheck is how often, in wall time, a simulation checks that its processes
// still take turns.
const benchStallCheck = 30 * time.Second

// simulate runs msgs through the rig's consumers on a scheduler of their own, each
// batch one invocation of the handler, each call costing cost of simulated time, the
// back-offs drawn from seed.
func (r *rig) simulate(ctx context.Context, msgs []sim.Message, fifo bool, cost time.Duration, seed uint64) (simulation, error) {
	q := newBenchQueue(msgs, fifo, max(len(msgs), 1))
	s := newScheduler(q, cost, seed)
	var mu sync.Mutex
	var out simulation
	opts := r.handler
	opts.Observer = func(rec consumer.Record) {
		mu.Lock()
		defer mu.Unlock()
		transfer := rec.Mov.Tipo == movimiento.Traspaso && rec.Result.Outcome == store.Applied
		retried := rec.Result.Attempts > 1
		out.retried += btoi(retried)
		out.transfers += btoi(transfer)
		out.transfersRetried += btoi(transfer && retried)
	}
	procs := s.consumers(len(r.instances))
	var g errgroup.Group
	for c, p := range procs {
		h := consumer.New(r.instances[c], opts)
		g.Go(func() error { return consume(ctx, p, h) })
	}
	stop := watchStall(s)
	err := g.Wait()
	stop()
	for _, p := range procs {
		out.took = max(out.took, p.now)
	}
	if err == nil && len(q.dead) > 0 {
		err = fmt.Errorf("%d message(s) ended in the dead-letter queue", len(q.dead))
	}
	return out, err
}

// watchStall aborts s if its processes take no turn for benchStallCheck; the returned
// func stops watching.
func watchStall(s *scheduler) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(benchStallCheck)
		defer t.Stop()
		last := -1
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.mu.Lock()
				steps := s.steps
				s.mu.Unlock()
				if steps == last {
					s.stop(errStalled)
					return
				}
				last = steps
			}
		}
	}()
	return func() { close(done) }
}

// consume is one simulated consumer: it takes batches until the queue is drained, each
// handled by h as one invocation whose groups run as processes of their own.
func consume(ctx context.Context, p *proc, h *consumer.Handler) error {
	for {
		batch, ok, err := p.receive()
		if err != nil || !ok {
			return err
		}
		evs, order := make([]events.SQSMessage, len(batch)), map[string]int{}
		for i, m := range batch {
			evs[i], order[m.ID] = m.event(), i
		}
		_, es, _ := h.Deliveries(ctx, evs) // read as the handler reads them, to count its groups
		if n := len(consumer.Groups(es)); n > 0 {
			p.fork(n, consumer.DefaultConcurrency, order)
		}
		if err := p.settle(batch, h.Settle(withProc(ctx, p), evs)); err != nil {
			return err
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// spread deals w's deliveries round-robin over the accounts, a batch one per account.
func spread(w sim.Workload) []sim.Message {
	byAccount := map[string][]sim.Message{}
	var names []string
	for i, m := range w.Movements {
		if _, ok := byAccount[m.Cuenta]; !ok {
			names = append(names, m.Cuenta)
		}
		byAccount[m.Cuenta] = append(byAccount[m.Cuenta], direct(i, m))
	}
	var out []sim.Message
	for len(out) < len(w.Movements) { // every round takes at least one movement
		for _, c := range names {
			if q := byAccount[c]; len(q) > 0 {
				out = append(out, q[0])
				byAccount[c] = q[1:]
			}
		}
	}
	return out
}
