// Package demo runs the product end to end on the embedded DynamoDB: a seeded workload
// of abonos and cargos over a few accounts, delivered at least once through the real
// consumer handler — duplicates under new message ids, SNS envelopes, redeliveries of
// the same message, shuffled order, concurrent batches, a few malformed and conflicting
// messages — and then the audit and a comparison of every balance with the workload's.
package demo

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
)

// Options size the demo. Zero values pick the defaults in brackets.
type Options struct {
	Accounts  int    // [20]
	Movements int    // [1000]
	Seed      uint64 // [1]
	Consumers int    // concurrent batch handlers [4]
	// Progress receives a progress bar (Terminal) or a line per tenth [nothing].
	Progress io.Writer
	Terminal bool
}

// Summary is what the demo did and found.
type Summary struct {
	Accounts    int
	Movements   int
	Deliveries  int
	Handled     int // deliveries handled, counting every retry and redelivery
	Outcomes    consumer.Outcomes
	DeadLetters int
	Audit       store.AuditReport
	Balances    []Balance // every account, sorted
	ExactlyOnce bool      // every movement applied once and every balance as the workload says
	Elapsed     time.Duration
}

// Balance is one account's final balance next to what the workload says it must be.
type Balance struct {
	Cuenta   string
	Saldo    decimal.Decimal
	Expected decimal.Decimal
}

const (
	// maxReceive is the simulated queue's maxReceiveCount: generous, because a cargo may
	// wait for credits from the back of the queue.
	maxReceive = 100
	// invocation is a batch's deadline, as a Lambda function's timeout.
	invocation = 30 * time.Second
	// visibility is the simulated queue's visibility timeout, in simulated time: a
	// message that comes back waits for it, as on SQS, instead of being received again
	// at once while the credit it waits for is still in flight.
	visibility = 6 * invocation
	// redeliverOneIn: about one batch in this many has a finished message delivered
	// again, as SQS does when a visibility timeout expires before the delete.
	redeliverOneIn = 50
)

// Run runs the demo on a fresh embedded store.
func Run(ctx context.Context, opts Options) (Summary, error) {
	opts = defaults(opts)
	start := time.Now()
	w, err := sim.Generate(sim.Spec{Accounts: opts.Accounts, Movements: opts.Movements, Seed: opts.Seed})
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
	const table = "ledger"
	if _, err := migrate.Run(ctx, client, migrate.Options{Tables: map[string]string{"ledger": table}, Poll: 10 * time.Millisecond}); err != nil {
		return Summary{}, err
	}
	svc, err := store.New(client, store.Config{Table: table, InsufficientFunds: ledger.Retry})
	if err != nil {
		return Summary{}, err
	}
	counts := &consumer.Tally{}
	dlq := &parked{}
	handler := consumer.New(svc, consumer.Options{Logger: slog.New(slog.DiscardHandler), Parker: dlq, Observer: counts.Observe})

	total := len(schedule.Deliveries) + len(schedule.Late)
	bar := newProgress(opts.Progress, opts.Terminal, total)
	q := sim.NewQueue(sim.QueueOptions{Visibility: visibility, Step: time.Second, MaxReceive: maxReceive})
	rngs := make([]*rand.Rand, opts.Consumers)
	for c := range rngs {
		rngs[c] = rand.New(rand.NewPCG(opts.Seed, uint64(c)))
	}
	handle := func(ctx context.Context, c int, batch []events.SQSMessage) map[string]bool {
		ctx, cancel := context.WithTimeout(ctx, invocation)
		defer cancel()
		back := handler.Settle(ctx, batch)
		if rngs[c].IntN(redeliverOneIn) == 0 {
			back[batch[rngs[c].IntN(len(batch))].MessageId] = true
		}
		bar.set(q.Settled()) // the batches settled before this one
		return back
	}
	for _, phase := range [][]sim.Delivery{schedule.Deliveries, schedule.Late} {
		q.Send(messages(phase)...)
		if err := q.Drain(ctx, opts.Consumers, consumer.MaxBatch, handle); err != nil {
			return Summary{}, err
		}
		bar.set(q.Settled())
	}
	bar.finish()

	report, err := store.Audit(ctx, client, table, store.AuditOptions{})
	if err != nil {
		return Summary{}, err
	}
	s := Summary{
		Accounts: opts.Accounts, Movements: opts.Movements, Deliveries: total,
		Handled: counts.Handled(), Outcomes: counts.Outcomes(), DeadLetters: len(q.Dead()) + int(dlq.n.Load()), Audit: report,
	}
	reader := store.NewReader(client, table)
	exact := true
	for cuenta, want := range w.Saldos {
		saldo := decimal.Zero // an account that received no movement has no item yet
		c, err := reader.Cuenta(ctx, cuenta)
		switch {
		case err == nil:
			saldo = c.Saldo
		case !errors.Is(err, ledger.ErrNotFound):
			return Summary{}, err
		}
		s.Balances = append(s.Balances, Balance{Cuenta: cuenta, Saldo: saldo, Expected: want})
		exact = exact && saldo.Equal(want)
	}
	sort.Slice(s.Balances, func(i, j int) bool { return s.Balances[i].Cuenta < s.Balances[j].Cuenta })
	s.ExactlyOnce = exact && s.Outcomes.Applied == opts.Movements && report.OK && report.Movements == opts.Movements
	s.Elapsed = time.Since(start)
	return s, nil
}

// messages are the deliveries as queue messages.
func messages(ds []sim.Delivery) []sim.Message {
	out := make([]sim.Message, len(ds))
	for i, d := range ds {
		out[i] = sim.Message{ID: d.MessageID, Body: d.Body}
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
	return o
}

// parked stands in for the DLQ: it counts what the consumer parks there.
type parked struct{ n atomic.Int64 }

func (p *parked) Park(context.Context, events.SQSMessage, consumer.Reason) error {
	p.n.Add(1)
	return nil
}
