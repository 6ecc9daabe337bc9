package compare

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/compare/idempotencia"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/versioned"
	"github.com/ledger-dev/ledger/migrations"
)

// Run runs every selected scenario for both strategies, each on fresh tables, then the bench.
func Run(ctx context.Context, opts Options) (Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Report{}, err
	}
	rep := Report{RTTms: ms(opts.RTT), ServiceMs: ms(opts.ServiceTime), Seed: opts.Seed, Movements: opts.Movements, Accounts: opts.Accounts,
		Backend: cmp.Or(opts.Endpoint, "embedded (minidyn)")}
	for _, name := range opts.Scenarios {
		sc, _ := scenarioNamed(name)
		for _, strategy := range Strategies {
			r, err := runScenario(ctx, opts, sc, strategy)
			if err != nil {
				return rep, fmt.Errorf("compare: %s/%s: %w", name, strategy, err)
			}
			opts.Progress("%-22s %-15s done: %d double applied, %d lost, %d stuck, %d balance errors, %s money created\n",
				name, strategy, r.DoubleApplied, r.Lost, r.Stuck, r.BalanceErrors, r.MoneyCreated)
			rep.Results = append(rep.Results, r)
		}
	}
	if opts.Bench {
		rep.Bench, err = runBench(ctx, opts)
	}
	return rep, err
}

// rig is one strategy on one store, its calls through the fault injector and the meter.
type rig struct {
	store    *backend
	strategy Strategy
	faults   *sim.Transport
	meter    *meter
	handler  consumer.Options
	// instance makes what one consumer (a Lambda instance) applies with; each consumer
	// has its own, as each instance has its own cache of the accounts it wrote.
	instance  func() (*probe, error)
	instances []*probe // by consumer, one per consumer
	saldo     func(ctx context.Context, cuenta string) (decimal.Decimal, error)
	clock     *sim.Clock
	queue     *sim.Queue

	mu        sync.Mutex
	stuck     int
	latencies []float64         // ms, one per applied delivery
	last      map[string]string // message id → why it last failed
	parked    map[string]int    // deliveries parked, by outcome
}

// Park counts a parked delivery (consumer.Parker): the scenarios send none to park.
func (r *rig) Park(_ context.Context, _ events.SQSMessage, reason consumer.Reason) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parked[string(reason.Outcome)]++
	return nil
}

// newRig builds strategy on s as sc runs it, its invocations dying where plan says.
func newRig(s *backend, strategy Strategy, sc scenario, plan *crashPlan, rtt time.Duration, qo sim.QueueOptions) (*rig, error) {
	m := newMeter(s, !s.loopback)
	ft := sim.NewTransport(m)
	var db *dynamodb.Client
	// The store's back-off (nil: a timer). Simulated, each call takes its turn on the
	// scheduler's time and costs what it says.
	var wait func(context.Context, time.Duration) error
	if sc.simulated {
		db, wait = s.client(turns{base: ft}), backoff
	} else {
		ft.SetRoundTrip(rtt)
		db = s.client(ft)
	}
	qo.Clock = sim.NewClock()
	r := &rig{store: s, strategy: strategy, faults: ft, meter: m, clock: qo.Clock, queue: sim.NewQueue(qo), last: map[string]string{}, parked: map[string]int{}}
	r.handler = consumer.Options{Concurrency: cmp.Or(sc.concurrency, 1), Logger: slog.New(slog.DiscardHandler), Parker: r, Strategy: string(strategy)}
	now := qo.Clock.Now
	if strategy == Transaction {
		r.instance = func() (*probe, error) {
			svc, err := store.New(db, store.Config{Table: s.tables[migrations.Ledger], Now: now, Wait: wait})
			return &probe{inner: svc, plan: plan, around: true}, err
		}
		reader := store.NewReader(s.admin, s.tables[migrations.Ledger])
		r.saldo = func(ctx context.Context, c string) (decimal.Decimal, error) {
			acct, err := reader.Cuenta(ctx, c)
			if errors.Is(err, store.ErrNotFound) {
				return decimal.Zero, nil
			}
			return acct.Saldo, err
		}
	} else {
		cfg := idempotencia.Config{Table: s.tables[idempotencia.Table], Accounts: s.tables[migrations.Ledger], Now: now, Hook: plan.hook, KeyFromMessageID: sc.keyFromMessageID}
		r.instance = func() (*probe, error) {
			svc, err := idempotencia.New(db, cfg)
			return &probe{inner: svc, plan: plan}, err
		}
		reader, err := idempotencia.New(s.admin, cfg)
		if err != nil {
			return nil, err
		}
		r.saldo = func(ctx context.Context, c string) (decimal.Decimal, error) {
			saldo, _, _, err := reader.Saldo(ctx, c)
			return saldo, err
		}
	}
	r.instances = make([]*probe, max(sc.consumers, 1))
	for i := range r.instances {
		var err error
		if r.instances[i], err = r.instance(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *rig) record(records []consumer.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range records {
		r.last[rec.Msg.MessageId] = failureReason(rec.Result)
		if errors.Is(rec.Result.Err, idempotencia.ErrInProgress) {
			r.stuck++
		}
		if rec.Result.Outcome == store.Applied {
			r.latencies = append(r.latencies, ms(rec.Duration))
		}
	}
}

// failureReason names why a delivery failed, for the dead-letter summary.
func failureReason(r store.Result) string {
	switch {
	case r.Err == nil:
		return ""
	case errors.Is(r.Err, cuenta.SaldoInsuficiente):
		return "insufficient funds"
	case errors.Is(r.Err, idempotencia.ErrInProgress):
		return "in progress"
	case errors.Is(r.Err, store.ErrPermanent):
		return "permanent failure"
	}
	return "transient failure"
}

// runScenario puts one strategy through one scenario on a store of its own.
func runScenario(ctx context.Context, opts Options, sc scenario, strategy Strategy) (Result, error) {
	spec := sim.Spec{Accounts: opts.Accounts, Movements: opts.Movements, Seed: opts.Seed}
	if sc.hot {
		spec.Accounts = 1
	}
	generate := sim.Generate
	if sc.workload != nil {
		generate = sc.workload
	}
	w, err := generate(spec)
	if err != nil {
		return Result{}, err
	}
	rng := rngFor(opts.Seed, sc.name, 1)
	deliveries := sc.schedule(w, rng)
	plan := planCrashes(sc, strategy, w, rng)
	again, late := sc.redeliveries(w, deliveries, rng)
	s, err := openStore(ctx, opts.Endpoint)
	if err != nil {
		return Result{}, err
	}
	defer s.close()
	r, err := newRig(s, strategy, sc, plan, opts.RTT, sim.QueueOptions{Visibility: visibilityTimeout, Step: batchStep, MaxReceive: maxReceive})
	if err != nil {
		return Result{}, err
	}
	if sc.lostResponses > 0 {
		r.faults.SetChooser(loseResponses(rngFor(opts.Seed, sc.name, 2), sc.lostResponses))
	}
	if err := r.drive(ctx, deliveries, again); err != nil {
		return Result{}, err
	}
	if len(late) > 0 {
		r.clock.Advance(lateBy)
		if err := expireByTTL(ctx, s, r.clock.Now()); err != nil {
			return Result{}, err
		}
		if err := r.drive(ctx, late, nil); err != nil {
			return Result{}, err
		}
	}
	return r.measure(ctx, sc.name, w)
}

// redeliveries draws which deliveries the scenario's consumers see again (again, by
// message id) and which movements a producer sends again late, through SNS.
func (sc scenario) redeliveries(w sim.Workload, deliveries []sim.Message, rng *rand.Rand) (again map[string]bool, late []sim.Message) {
	again = map[string]bool{}
	for _, d := range deliveries {
		if rng.Float64() < sc.again {
			again[d.ID] = true
		}
	}
	for i, m := range w.Movements {
		if rng.Float64() < sc.late {
			late = append(late, viaSNS("late", i, m))
		}
	}
	return again, late
}

// loseResponses is a fault chooser that loses the answer of a write with probability p,
// drawn from rng.
func loseResponses(rng *rand.Rand, p float64) func(op string) sim.Fault {
	var mu sync.Mutex
	return func(op string) sim.Fault {
		switch op {
		case "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems":
			mu.Lock()
			defer mu.Unlock()
			if rng.Float64() < p {
				return sim.LostResponse
			}
		}
		return 0
	}
}

// drive sends msgs and runs the consumers until the queue is empty, each batch one
// Lambda invocation with its deadline. A dead invocation acknowledges nothing and its
// records are dropped. Messages in again come once more after their delete.
func (r *rig) drive(ctx context.Context, msgs []sim.Message, again map[string]bool) error {
	var mu sync.Mutex
	r.queue.Send(msgs...)
	return r.queue.Drain(ctx, len(r.instances), consumer.MaxBatch, func(ctx context.Context, c int, batch []events.SQSMessage) map[string]bool {
		inv := &invocation{}
		opts := r.handler
		opts.Observer = func(rec consumer.Record) { inv.records = append(inv.records, rec) }
		ictx, cancel := context.WithTimeout(context.WithValue(ctx, invocationKey{}, inv), invocationTimeout)
		back := consumer.New(r.instances[c], opts).Settle(ictx, batch)
		cancel()
		dead := inv.dead.Load()
		if dead { // the instance died with the invocation: the next starts cold (it built once, so it builds again)
			if fresh, err := r.instance(); err == nil {
				r.instances[c] = fresh
			}
		} else {
			r.record(inv.records)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, m := range batch {
			if dead || again[m.MessageId] {
				back[m.MessageId] = true
			}
			delete(again, m.MessageId)
		}
		return back
	})
}

// expireByTTL models DynamoDB's late TTL: it deletes every other expired item, in key order.
func expireByTTL(ctx context.Context, s *backend, now time.Time) error {
	for _, m := range s.all {
		if m.TTL == "" {
			continue
		}
		items, err := scanAll(ctx, s.admin, s.tables[m.Table])
		if err != nil {
			return err
		}
		expired := slices.DeleteFunc(items, func(item map[string]types.AttributeValue) bool {
			var expira int64
			return attributevalue.Unmarshal(item[m.TTL], &expira) != nil || expira <= 0 || expira >= now.Unix()
		})
		slices.SortFunc(expired, func(a, b map[string]types.AttributeValue) int {
			return strings.Compare(text(a[m.Key.Partition]), text(b[m.Key.Partition]))
		})
		for i := 0; i < len(expired); i += 2 {
			key := map[string]types.AttributeValue{m.Key.Partition: expired[i][m.Key.Partition]}
			if m.Key.Sort != "" {
				key[m.Key.Sort] = expired[i][m.Key.Sort]
			}
			if _, err := s.admin.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.tables[m.Table]), Key: key}); err != nil {
				return fmt.Errorf("model TTL deletion: %w", err)
			}
		}
	}
	return nil
}

// scanAll reads a whole table, page by page, strongly consistent.
func scanAll(ctx context.Context, db *dynamodb.Client, table string) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	pages := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	var last versioned.Item
	for pages.HasMorePages() { // ends at the table's last page
		out, err := pages.NextPage(ctx)
		if err == nil {
			err = audit.CheckPage(last, out.LastEvaluatedKey)
		}
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", table, err)
		}
		last = out.LastEvaluatedKey
		items = append(items, out.Items...)
	}
	return items, nil
}

// measure turns what the run did into a Result.
func (r *rig) measure(ctx context.Context, scenario string, w sim.Workload) (Result, error) {
	u := r.meter.usage()
	n := float64(len(w.Movements))
	res := Result{Scenario: scenario, Strategy: r.strategy, Movements: len(w.Movements), Stuck: r.stuck, DeadLetters: map[string]int{},
		CallsPerMovement: float64(r.faults.TotalCalls()) / n, WCUPerMovement: u.wcu / n, RCUPerMovement: u.rcu / n,
		P50ms: percentile(r.latencies, 50), P99ms: percentile(r.latencies, 99)}
	res.ParkedWhy = maps.Clone(r.parked)
	for _, n := range r.parked {
		res.Parked += n
	}
	for _, m := range r.queue.Dead() {
		res.DeadLetters[cmp.Or(r.last[m.ID], "no answer (its invocations died)")]++
	}
	brought, held := decimal.Zero, decimal.Zero // credits less debits from outside; what the accounts hold
	for _, m := range w.Movements {
		legs := []int{u.applied[movementKey(m.Cuenta, m.ID)]}
		if m.Tipo == movimiento.Traspaso {
			legs = append(legs, u.applied[movementKey(m.Destino, m.ID)])
		}
		if slices.Min(legs) == 0 {
			res.Lost++
		}
		if slices.Max(legs) > 1 {
			res.DoubleApplied++
		}
		brought = brought.Add(m.Delta()) // zero for a transfer
	}
	for c, want := range w.Saldos {
		got, err := r.saldo(ctx, c)
		if err != nil {
			return Result{}, err
		}
		// The embedded store adds with float64; no movement is below a cent, so rounding
		// to cents hides none applied twice or lost.
		got = got.Round(2)
		if !got.Equal(want) {
			res.BalanceErrors++
		}
		held = held.Add(got)
	}
	res.MoneyCreated = held.Sub(brought)
	for _, table := range r.store.tables {
		items, err := scanAll(ctx, r.store.admin, table)
		if err != nil {
			return Result{}, err
		}
		for _, item := range items {
			res.MaxItemBytes = max(res.MaxItemBytes, itemSize(item))
		}
	}
	return res, nil
}

// percentile is the nearest-rank p-th percentile of xs (0 for none).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
