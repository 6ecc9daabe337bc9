package compare

import (
	"context"
	"fmt"
	"time"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/sim"
)

// The benchmark's cases (docs/compare.md). Its wall-time figures compare within one run only.
var (
	benchCases     = []string{"unbatched", "hot-account"}
	benchConsumers = []int{1, 10}
)

// MinBenchMovements is the fewest movements a benchmark run takes: its warm-up, at
// least one batch of consumer.MaxBatch, and one movement to measure.
const MinBenchMovements = consumer.MaxBatch + 1

func runBench(ctx context.Context, opts Options) ([]BenchResult, error) {
	if opts.BenchMovements < MinBenchMovements {
		return nil, fmt.Errorf("compare: a benchmark run takes at least %d movements, not %d", MinBenchMovements, opts.BenchMovements)
	}
	var out []BenchResult
	for _, c := range benchCases {
		for _, consumers := range benchConsumers {
			for _, strategy := range Strategies {
				r, err := benchOne(ctx, opts, c, consumers, strategy)
				if err != nil {
					return out, fmt.Errorf("compare: bench %s/%d/%s: %w", c, consumers, strategy, err)
				}
				opts.Progress("bench %-12s %2d consumers %-15s %8.1f movements/s\n", c, consumers, strategy, r.ThroughputPerS)
				out = append(out, r)
			}
		}
	}
	return out, nil
}

func benchOne(ctx context.Context, opts Options, name string, consumers int, strategy Strategy) (BenchResult, error) {
	// Unbatched: at most 100 accounts, so ten consumers' batches of ten never share one.
	spec := sim.Spec{Accounts: max(consumer.MaxBatch, min(100, opts.BenchMovements/4)), Movements: opts.BenchMovements, Seed: opts.Seed}
	warm := spec.Accounts // unbatched: each account's first movement, as in a consumer running a while
	if name == "hot-account" {
		spec.Accounts, warm = 1, consumer.MaxBatch
	}
	w, err := sim.Generate(spec)
	if err != nil {
		return BenchResult{}, err
	}
	deliveries := spread(w) // hot-account: in order
	var s *backend
	if opts.Endpoint == "" {
		s, err = openShardedStore(ctx)
	} else {
		s, err = openStore(ctx, opts.Endpoint)
	}
	if err != nil {
		return BenchResult{}, err
	}
	defer s.close()
	// No visibility delay: a cargo that arrived before its credit comes straight back.
	r, err := newRig(s, strategy, scenario{consumers: consumers, concurrency: consumer.DefaultConcurrency}, &crashPlan{}, opts.RTT,
		sim.QueueOptions{MaxReceive: len(w.Movements)})
	if err != nil {
		return BenchResult{}, err
	}
	if err := r.drive(ctx, deliveries[:warm], nil); err != nil {
		return BenchResult{}, err
	}
	before := r.meter.usage()
	r.faults.ResetCounts()
	t0 := time.Now()
	if err := r.drive(ctx, deliveries[warm:], nil); err != nil {
		return BenchResult{}, err
	}
	elapsed := time.Since(t0)
	u := r.meter.usage()
	n, calls := float64(len(deliveries)-warm), r.faults.TotalCalls()
	return BenchResult{
		Case: name, Strategy: strategy, Consumers: consumers, Movements: len(deliveries) - warm,
		CallsPerMovement: float64(calls) / n,
		WCUPerMovement:   (u.wcu - before.wcu) / n,
		ThroughputPerS:   n / elapsed.Seconds(),
		StoreMsPerCall:   ms(u.busy-before.busy) / float64(max(calls, 1)),
	}, nil
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
