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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/worker"
	"github.com/ledger-dev/ledger/migrations"
)

// MaxConsumers bounds Options.Consumers: each is a goroutine polling the simulated
// queue, and beyond a few dozen they only wait on each other. MaxMovements bounds
// Options.Movements: a run holds its workload, the embedded table and the audit's copy
// of it in memory, and its time grows about in proportion to its movements (4,000 take
// about 15 s on two cores).
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
	Seed       uint64
	Accounts   int
	Movements  int
	Deliveries int // the messages sent
	Handled    int // deliveries handled, counting every retry and redelivery
	Outcomes   worker.Outcomes
	Kinds      sim.Kinds
	Refused    []string
	Freeze     Freeze
	Audit      audit.Report
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

// The demo's workload: the shares of the movements drawn as transfers, repartos,
// whole reversals, refunds in parts and holds; the rest are abonos and cargos.
const (
	transfers = 0.15
	repartos  = 0.05
	reversals = 0.04
	refunds   = 0.04
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
	r, err := newRun(ctx, opts)
	if err != nil {
		return Summary{}, err
	}
	defer r.db.Close()
	early, frozen, err := r.deliver(ctx)
	if err != nil {
		return Summary{}, err
	}
	s, err := r.verdict(ctx, early, frozen)
	s.Elapsed = time.Since(start)
	return s, err
}

// run is one demo: its workload and schedule, its embedded store, the consumer, and
// what watches the consumer's answers.
type run struct {
	opts     Options
	clock    *sim.Clock
	w        sim.Workload
	schedule sim.Schedule
	sent     int // the messages the schedule sends
	db       *sim.DynamoDB
	client   *dynamodb.Client
	handler  *consumer.Handler
	counts   *worker.Tally
	watched  *watch
	op       *freezer
	bar      *progress
	q        *sim.Queue
	rngs     []*rand.Rand // one per consumer: which batch loses a delivery
}

// table is the demo's ledger table on its own embedded store.
const table = migrations.Ledger

// newRun generates the workload and its schedule, starts the embedded store with the
// ledger's table, and wires the consumer with its watchers.
func newRun(ctx context.Context, opts Options) (*run, error) {
	r := &run{opts: opts, clock: sim.NewClock(), counts: &worker.Tally{}, watched: newWatch()}
	var err error
	if r.w, err = sim.Generate(sim.Spec{Accounts: opts.Accounts, Movements: opts.Movements, Seed: opts.Seed,
		Transfers: transfers, Repartos: repartos, Reversals: reversals, Refunds: refunds, Holds: holds, Now: r.clock.Now()}); err != nil {
		return nil, err
	}
	r.schedule = sim.Deliveries(r.w, sim.Mix{Duplicates: 0.25, Conflicting: 0.005, Malformed: 0.005}, opts.Seed)
	if r.db, err = sim.StartDynamoDB(); err != nil {
		return nil, err
	}
	svc, err := r.openLedger(ctx)
	if err != nil {
		r.db.Close()
		return nil, err
	}
	r.op = &freezer{ledger: svc, clock: r.clock, waited: map[string]bool{}}
	r.handler = consumer.New(svc, consumer.Options{Logger: slog.New(slog.DiscardHandler), Parker: r.watched,
		Observer: func(rec consumer.Record) { r.counts.Observe(rec); r.watched.observe(rec); r.op.observe(rec) }})
	r.sent = len(r.schedule.Deliveries) + len(r.schedule.Tail) + len(r.schedule.Late)
	r.bar = &progress{w: opts.Progress, terminal: opts.Terminal, total: max(r.sent, 1)}
	r.q = sim.NewQueue(sim.QueueOptions{Clock: r.clock, Visibility: visibility, Step: time.Second, MaxReceive: maxReceive})
	r.rngs = make([]*rand.Rand, opts.Consumers)
	for c := range r.rngs {
		r.rngs[c] = rand.New(rand.NewPCG(opts.Seed, uint64(c)))
	}
	return r, nil
}

// openLedger migrates the embedded store's table and opens the ledger on it.
func (r *run) openLedger(ctx context.Context) (*store.Ledger, error) {
	awsCfg, err := awsconf.Load(ctx, r.db.URL)
	if err != nil {
		return nil, err
	}
	r.client = awsconf.DynamoDB(awsCfg, r.db.URL)
	if _, err := migrate.Run(ctx, r.client, migrate.Options{Tables: map[string]string{migrations.Ledger: table}, Poll: 10 * time.Millisecond}); err != nil {
		return nil, err
	}
	return store.New(r.client, store.Config{Table: table, InsufficientFunds: cuenta.Retry, Now: r.clock.Now})
}

// deliver runs the schedule's three phases: the deliveries, then (the holds left to
// lapse checked while held, and an account frozen) the tail, then the late ones.
func (r *run) deliver(ctx context.Context) (early []string, frozen Freeze, err error) {
	if err := r.drain(ctx, r.schedule.Deliveries); err != nil {
		return nil, frozen, err
	}
	if early, err = checkHeld(ctx, r.client, table, r.clock.Now()); err != nil {
		return nil, frozen, err
	}
	r.clock.AdvanceTo(r.w.Lapse)
	if c := debtor(r.w); c != "" {
		r.clock.Advance(time.Second) // what came before is stamped before the freeze
		if err := r.op.freeze(ctx, c); err != nil {
			return nil, frozen, err
		}
	}
	if err := r.drain(ctx, r.schedule.Tail); err != nil {
		return nil, frozen, err
	}
	if frozen, err = r.op.end(ctx); err != nil {
		return nil, frozen, err
	}
	if err := r.drain(ctx, r.schedule.Late); err != nil {
		return nil, frozen, err
	}
	r.bar.finish()
	return early, frozen, nil
}

// drain sends one phase's messages and lets the consumers take them all.
func (r *run) drain(ctx context.Context, phase []sim.Message) error {
	r.q.Send(phase...)
	if err := r.q.Drain(ctx, r.opts.Consumers, consumer.MaxBatch, r.handle); err != nil {
		return err
	}
	r.bar.set(r.q.Settled())
	return nil
}

// handle is consumer c's invocation on one batch, as Lambda gives it: a thaw may come
// first, and now and then one delivery's answer is lost, so its message comes back.
func (r *run) handle(ctx context.Context, c int, batch []events.SQSMessage) map[string]bool {
	r.op.thaw(ctx)
	ctx, cancel := context.WithTimeout(ctx, invocation)
	defer cancel()
	back := r.handler.Settle(ctx, batch)
	if r.rngs[c].IntN(redeliverOneIn) == 0 {
		back[batch[r.rngs[c].IntN(len(batch))].MessageId] = true
	}
	r.bar.set(r.q.Settled()) // the batches settled before this one
	return back
}

// verdict audits the table, reads back every movement and balance, and sums up.
func (r *run) verdict(ctx context.Context, early []string, frozen Freeze) (Summary, error) {
	report, err := audit.Run(ctx, r.client, table, audit.Options{Now: r.clock.Now})
	if err != nil {
		return Summary{}, err
	}
	reader := store.NewReader(r.client, table)
	balances, wrong, err := check(ctx, reader, r.w, r.clock.Now(), r.watched)
	if err != nil {
		return Summary{}, err
	}
	held, err := checkFreeze(ctx, reader, r.w, frozen)
	if err != nil {
		return Summary{}, err
	}
	outcomes := r.counts.Outcomes()
	wrong = slices.Concat(wrong, early, held, checkOutcomes(outcomes, r.w, r.schedule), r.watched.check(r.q.Dead()))
	s := Summary{
		Seed: r.opts.Seed, Accounts: r.opts.Accounts, Movements: r.opts.Movements, Deliveries: r.sent, Handled: r.counts.Handled(), Outcomes: outcomes,
		Kinds: r.w.Kinds(), Refused: describe(r.w), Freeze: frozen, Audit: report, Balances: balances, Wrong: wrong,
	}
	s.ExactlyOnce = len(wrong) == 0 && report.OK && report.Movements == s.Kinds.Posted()
	return s, nil
}

// describe says in a few words what each movement refused by design in w is.
func describe(w sim.Workload) []string {
	mov := byKey(w)
	var out []string
	for _, m := range w.Refused {
		switch t := mov[key(m.Cuenta, m.Anula)].Tipo; m.Tipo {
		case movimiento.Anulacion:
			if !m.Importe.IsZero() {
				out = append(out, "a refund of "+m.ImporteTexto()+" of "+m.Anula+", a cent more than is left")
			} else {
				out = append(out, "a second reversal of the "+string(t)+" "+m.Anula)
			}
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
