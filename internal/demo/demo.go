// Package demo runs the product end to end on the embedded DynamoDB: a seeded workload
// of abonos and cargos over a few accounts, delivered at least once through the real
// consumer handler — duplicates under new message ids, SNS envelopes, redeliveries of
// the same message, shuffled order, concurrent batches, a few malformed and conflicting
// messages — and then the audit and a comparison of every balance with the workload's.
package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/sim"
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
	Outcomes    Outcomes
	DeadLetters int
	Audit       ledger.AuditReport
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
	batchSize  = 10
	maxReceive = 100 // a cargo may wait for credits from the back of the queue
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

	store, err := sim.StartDynamoDB()
	if err != nil {
		return Summary{}, err
	}
	defer store.Close()
	awsCfg, err := awsconf.Load(ctx, store.URL)
	if err != nil {
		return Summary{}, err
	}
	db := awsconf.DynamoDB(awsCfg, store.URL)
	const table = "ledger"
	if _, err := migrate.Run(ctx, db, migrate.Options{Tables: map[string]string{"ledger": table}, Poll: 10 * time.Millisecond}); err != nil {
		return Summary{}, err
	}
	svc, err := ledger.New(db, ledger.Config{Table: table, InsufficientFunds: ledger.Retry})
	if err != nil {
		return Summary{}, err
	}
	counts := newTally()
	dlq := &parked{}
	handler := consumer.New(svc, consumer.Options{Logger: slog.New(counts), Parker: dlq})

	total := len(schedule.Deliveries) + len(schedule.Late)
	bar := newProgress(opts.Progress, opts.Terminal, total)
	q := sim.NewQueue(maxReceive)
	q.Send(messages(schedule.Deliveries)...)
	if err := drain(ctx, q, handler, opts, bar); err != nil {
		return Summary{}, err
	}
	q.Send(messages(schedule.Late)...)
	if err := drain(ctx, q, handler, opts, bar); err != nil {
		return Summary{}, err
	}
	bar.finish()

	report, err := ledger.Audit(ctx, db, table, ledger.AuditOptions{})
	if err != nil {
		return Summary{}, err
	}
	_, dead := q.Counts()
	s := Summary{
		Accounts: opts.Accounts, Movements: opts.Movements, Deliveries: total,
		Handled: counts.deliveriesHandled(), Outcomes: counts.outcomes(), DeadLetters: dead + int(dlq.n.Load()), Audit: report,
	}
	reader := ledger.NewReader(db, table)
	exact := true
	for cuenta, want := range w.Saldos {
		c, err := reader.Cuenta(ctx, cuenta)
		if err != nil {
			return Summary{}, err
		}
		s.Balances = append(s.Balances, Balance{Cuenta: cuenta, Saldo: c.Saldo, Expected: want})
		exact = exact && c.Saldo.Equal(want)
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

// drain runs opts.Consumers batch handlers until q is empty. Now and then a batch that
// succeeded is delivered again with the same message ids, as SQS does when a
// visibility timeout expires before the delete.
func drain(ctx context.Context, q *sim.Queue, h *consumer.Handler, opts Options, bar *progress) error {
	var g errgroup.Group
	for c := range opts.Consumers {
		g.Go(func() error {
			rng := rand.New(rand.NewPCG(opts.Seed, uint64(c)))
			for {
				batch, ok := q.Receive(batchSize)
				if !ok {
					return nil
				}
				if len(batch) == 0 { // others are in flight; their failures may come back
					time.Sleep(time.Millisecond)
					continue
				}
				back, err := handle(ctx, h, batch)
				if err != nil {
					return err
				}
				if rng.IntN(50) == 0 {
					back[batch[rng.IntN(len(batch))].ID] = true
				}
				q.Settle(batch, back)
				settled, _ := q.Counts()
				bar.set(settled)
			}
		})
	}
	return g.Wait()
}

// handle gives one batch to the handler as Lambda would, with a Lambda-like deadline.
func handle(ctx context.Context, h *consumer.Handler, batch []sim.Message) (map[string]bool, error) {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(batch))}
	for i, m := range batch {
		ev.Records[i] = events.SQSMessage{MessageId: m.ID, Body: m.Body, EventSource: "aws:sqs",
			Attributes: map[string]string{"ApproximateReceiveCount": fmt.Sprint(m.Receives)}}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := h.Handle(ctx, ev)
	if err != nil {
		return nil, fmt.Errorf("demo: the consumer failed a whole batch: %w", err)
	}
	back := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		back[f.ItemIdentifier] = true
	}
	return back, nil
}

// parked stands in for the DLQ: it counts what the consumer parks there.
type parked struct{ n atomic.Int64 }

func (p *parked) Park(context.Context, events.SQSMessage, consumer.Reason) error {
	p.n.Add(1)
	return nil
}
