// Package demo runs `ledger demo`: a seeded workload delivered at least once, with
// faults, through the real consumer to the embedded DynamoDB, then audited and read
// back against the workload.
package demo

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/migrations"
)

// MaxConsumers bounds Options.Consumers: each is a goroutine polling the simulated
// queue, and beyond a few dozen they only wait on each other. MaxMovements bounds
// Options.Movements: the embedded store copies its table for every transaction, so a
// run's time grows with the square of its movements (1,000 take seconds, 5,000 about
// two minutes, 10,000 about ten).
const (
	MaxConsumers = 64
	MaxMovements = 10_000
)

// Options size the demo. Zero values pick the defaults in brackets.
type Options struct {
	Accounts  int    // [20]
	Movements int    // [1000]
	Seed      uint64 // [1]
	Consumers int    // concurrent batch handlers [4], at most MaxConsumers
	// Progress receives a progress bar (Terminal) or a line per tenth [nothing].
	Progress io.Writer
	Terminal bool
}

// Summary is what the demo did and found. Refused describes the movements built to be
// refused; Wrong says what the ledger recorded otherwise than the workload, if anything.
type Summary struct {
	Accounts   int
	Movements  int
	Deliveries int
	Handled    int // deliveries handled, counting every retry and redelivery
	Outcomes   consumer.Outcomes
	Kinds      sim.Kinds
	Refused    []string
	Freeze     Freeze
	Audit      store.AuditReport
	Balances   []Balance // every account, sorted
	Wrong      []string
	// ExactlyOnce: every movement meant to apply applied exactly once, every movement
	// refused by design refused, every balance as the workload says, the audit clean.
	ExactlyOnce bool
	Elapsed     time.Duration
}

const (
	// maxReceive is the simulated queue's maxReceiveCount: generous, because a cargo may
	// wait for credits from the back of the queue.
	maxReceive = 100
	// invocation is a batch's deadline, as a Lambda function's timeout.
	invocation = consumer.FunctionTimeout
	// visibility is the queue's visibility timeout, in simulated time: a message that
	// comes back waits, as on SQS, instead of spinning while its credit is in flight.
	visibility = consumer.SimulatedVisibility
	// redeliverOneIn: about one batch in this many has a finished message delivered
	// again, as SQS does when a visibility timeout expires before the delete.
	redeliverOneIn = 50
)

// The demo's workload: the shares of the movements drawn as transfers, reversals and
// holds; the rest are abonos and cargos.
const (
	transfers = 0.15
	reversals = 0.03
	holds     = 0.10
)

// Run runs the demo on a fresh embedded store, on one simulated clock. The movements
// before the workload's tail are delivered first; then the clock passes the lapsing
// holds' expiry, the operator freezes the account with the most debits in the tail for
// frozenFor (10 simulated minutes) while the tail is delivered, and last come the
// conflicting replays and the movements refused by design.
func Run(ctx context.Context, opts Options) (Summary, error) {
	opts = defaults(opts)
	start := time.Now()
	clock := sim.NewClock()
	w, err := sim.Generate(sim.Spec{Accounts: opts.Accounts, Movements: opts.Movements, Seed: opts.Seed,
		Transfers: transfers, Reversals: reversals, Holds: holds, Now: clock.Now()})
	if err != nil {
		return Summary{}, err
	}
	schedule := sim.Deliveries(w, sim.Mix{Duplicates: 0.25, Conflicting: 0.005, Malformed: 0.005}, opts.Seed)

	db, err := sim.StartDynamoDB()
	if err != nil {
		return Summary{}, err
	}
	defer db.Close()
	awsCfg, err := awsconf.Load(ctx, db.URL)
	if err != nil {
		return Summary{}, err
	}
	client := awsconf.DynamoDB(awsCfg, db.URL)
	const table = migrations.Ledger
	if _, err := migrate.Run(ctx, client, migrate.Options{Tables: map[string]string{migrations.Ledger: table}, Poll: 10 * time.Millisecond}); err != nil {
		return Summary{}, err
	}
	svc, err := store.New(client, store.Config{Table: table, InsufficientFunds: ledger.Retry, Now: clock.Now})
	if err != nil {
		return Summary{}, err
	}
	counts, watched := &consumer.Tally{}, newWatch()
	op := &freezer{ledger: svc, clock: clock, waited: map[string]bool{}}
	discard := slog.New(slog.DiscardHandler)
	handler := consumer.New(svc, consumer.Options{Logger: discard, Parker: watched,
		Observer: func(r consumer.Record) { counts.Observe(r); watched.observe(r); op.observe(r) }})

	total := len(schedule.Deliveries) + len(schedule.Tail) + len(schedule.Late)
	bar := &progress{w: opts.Progress, terminal: opts.Terminal, total: max(total, 1)}
	q := sim.NewQueue(sim.QueueOptions{Clock: clock, Visibility: visibility, Step: time.Second, MaxReceive: maxReceive})
	rngs := make([]*rand.Rand, opts.Consumers)
	for c := range rngs {
		rngs[c] = rand.New(rand.NewPCG(opts.Seed, uint64(c)))
	}
	handle := func(ctx context.Context, c int, batch []events.SQSMessage) map[string]bool {
		op.thaw(ctx)
		ctx, cancel := context.WithTimeout(ctx, invocation)
		defer cancel()
		back := handler.Settle(ctx, batch)
		if rngs[c].IntN(redeliverOneIn) == 0 {
			back[batch[rngs[c].IntN(len(batch))].MessageId] = true
		}
		bar.set(q.Settled()) // the batches settled before this one
		return back
	}
	drain := func(phase []sim.Message) error {
		q.Send(phase...)
		if err := q.Drain(ctx, opts.Consumers, consumer.MaxBatch, handle); err != nil {
			return err
		}
		bar.set(q.Settled())
		return nil
	}
	if err := drain(schedule.Deliveries); err != nil {
		return Summary{}, err
	}
	early, err := checkHeld(ctx, client, table, clock.Now())
	if err != nil {
		return Summary{}, err
	}
	clock.AdvanceTo(w.Lapse)
	if c := debtor(w); c != "" {
		clock.Advance(time.Second) // what came before is stamped before the freeze
		if err := op.freeze(ctx, c); err != nil {
			return Summary{}, err
		}
	}
	if err := drain(schedule.Tail); err != nil {
		return Summary{}, err
	}
	frozen, err := op.end(ctx)
	if err != nil {
		return Summary{}, err
	}
	if err := drain(schedule.Late); err != nil {
		return Summary{}, err
	}
	bar.finish()

	report, err := store.Audit(ctx, client, table, store.AuditOptions{Now: clock.Now})
	if err != nil {
		return Summary{}, err
	}
	reader := store.NewReader(client, table)
	balances, wrong, err := check(ctx, reader, w, clock.Now(), watched)
	if err != nil {
		return Summary{}, err
	}
	held, err := checkFreeze(ctx, reader, w, frozen)
	if err != nil {
		return Summary{}, err
	}
	outcomes := counts.Outcomes()
	wrong = slices.Concat(wrong, early, held, checkOutcomes(outcomes, w, schedule), watched.check(q.Dead()))
	s := Summary{
		Accounts: opts.Accounts, Movements: opts.Movements, Deliveries: total, Handled: counts.Handled(), Outcomes: outcomes,
		Kinds: w.Kinds(), Refused: describe(w.Refused), Freeze: frozen, Audit: report, Balances: balances, Wrong: wrong,
	}
	s.ExactlyOnce = len(wrong) == 0 && report.OK && report.Movements == s.Kinds.Posted()
	s.Elapsed = time.Since(start)
	return s, nil
}

// describe says in a few words what each movement refused by design is.
func describe(refused []movimiento.Movimiento) []string {
	var out []string
	for _, m := range refused {
		switch m.Tipo {
		case movimiento.Anulacion:
			out = append(out, "a second reversal of "+m.Anula)
		case movimiento.Traspaso:
			out = append(out, "a transfer of "+m.ImporteTexto()+", beyond any balance of "+m.Cuenta)
		case movimiento.Captura:
			out = append(out, "a capture of the lapsed hold "+m.Retencion)
		default:
			out = append(out, string(m.Tipo)+" "+m.ID)
		}
	}
	return out
}

func defaults(o Options) Options {
	if o.Accounts <= 0 {
		o.Accounts = 20
	}
	if o.Movements <= 0 {
		o.Movements = 1000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Consumers <= 0 {
		o.Consumers = 4
	}
	o.Consumers = min(o.Consumers, MaxConsumers)
	return o
}
