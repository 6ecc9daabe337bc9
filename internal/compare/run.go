package compare

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/idempotencia"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/migrations"
)

// Run runs every selected scenario for both strategies, one after the other, each on
// fresh tables, and the benchmark when asked.
func Run(ctx context.Context, opts Options) (Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Report{}, err
	}
	rep := Report{RTTms: ms(opts.RTT), Seed: opts.Seed, Movements: opts.Movements, Accounts: opts.Accounts, Backend: "embedded (minidyn)"}
	if opts.Endpoint != "" {
		rep.Backend = opts.Endpoint
	}
	for _, name := range opts.Scenarios {
		sc, _ := scenarioNamed(name)
		for _, strategy := range ledger.Strategies {
			r, err := runScenario(ctx, opts, sc, strategy)
			if err != nil {
				return rep, fmt.Errorf("compare: %s/%s: %w", name, strategy, err)
			}
			opts.Progress("%-22s %-15s done: %d double applied, %d lost, %d stuck, %d balance errors\n",
				name, strategy, r.DoubleApplied, r.Lost, r.Stuck, r.BalanceErrors)
			rep.Results = append(rep.Results, r)
		}
	}
	if opts.Bench {
		rep.Bench, err = runBench(ctx, opts)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// setup is one strategy's stack on one store: the metered client, the applier the
// consumer calls, and a balance reader that bypasses the meter.
type setup struct {
	backend *backend
	faults  *sim.Transport
	meter   *meter
	probe   *probe
	saldo   func(ctx context.Context, cuenta string) (decimal.Decimal, error)
}

// stack builds strategy on s, its calls going through the fault injector and the
// meter; the baseline keys on the message id when fromMessageID.
func stack(s *backend, strategy ledger.Strategy, rtt time.Duration, now func() time.Time, plan *crashPlan, fromMessageID bool) (*setup, error) {
	effects := transactionEffects
	if strategy == ledger.SeparateTable {
		effects = baselineEffects
	}
	m := newMeter(s.transport, effects, s.indexes, !s.loopback)
	ft := sim.NewTransport(m)
	ft.SetRoundTrip(rtt)
	db := s.client(ft)
	st := &setup{backend: s, faults: ft, meter: m}
	switch strategy {
	case ledger.Transaction:
		svc, err := store.New(db, store.Config{Table: s.tables["ledger"], Now: now})
		if err != nil {
			return nil, err
		}
		reader := store.NewReader(s.admin, s.tables["ledger"])
		st.probe = &probe{inner: svc, plan: plan, around: true}
		st.saldo = func(ctx context.Context, c string) (decimal.Decimal, error) {
			acct, err := reader.Cuenta(ctx, c)
			if errors.Is(err, ledger.ErrNotFound) {
				return decimal.Zero, nil
			}
			return acct.Saldo, err
		}
	case ledger.SeparateTable:
		cfg := idempotencia.Config{Table: s.tables["idempotencia"], Accounts: s.tables["ledger"], Now: now, Hook: plan.hook, KeyFromMessageID: fromMessageID}
		svc, err := idempotencia.New(db, cfg)
		if err != nil {
			return nil, err
		}
		reader, err := idempotencia.New(s.admin, cfg)
		if err != nil {
			return nil, err
		}
		st.probe = &probe{inner: svc, plan: plan}
		st.saldo = func(ctx context.Context, c string) (decimal.Decimal, error) {
			saldo, _, _, err := reader.Saldo(ctx, c)
			return saldo, err
		}
	default:
		return nil, fmt.Errorf("unknown strategy %q", strategy)
	}
	return st, nil
}

// tally is what the driver saw of the handled batches that lived.
type tally struct {
	mu         sync.Mutex
	deliveries int
	stuck      int
	latencies  []float64         // ms, one per applied delivery
	last       map[string]string // message id → why it last failed
}

func (t *tally) add(inv *invocation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last == nil {
		t.last = map[string]string{}
	}
	for _, call := range inv.calls {
		for i, r := range call.results {
			t.last[call.origins[i]] = failureReason(r)

			t.deliveries++
			if errors.Is(r.Err, idempotencia.ErrInProgress) {
				t.stuck++
			}
			if r.Outcome == ledger.Applied {
				t.latencies = append(t.latencies, ms(call.took))
			}
		}
	}
}

// failureReason names why a delivery failed, for the dead-letter summary ("" when it
// did not).
func failureReason(r ledger.Result) string {
	var insuf *cuenta.SaldoInsuficienteError
	switch {
	case r.Err == nil:
		return ""
	case errors.As(r.Err, &insuf):
		return "insufficient funds"
	case errors.Is(r.Err, idempotencia.ErrInProgress):
		return "in progress"
	case errors.Is(r.Err, ledger.ErrPermanent):
		return "permanent failure"
	}
	return "transient failure"
}

// runScenario puts one strategy through one scenario on a store of its own.
func runScenario(ctx context.Context, opts Options, sc scenario, strategy ledger.Strategy) (Result, error) {
	spec := sim.Spec{Accounts: opts.Accounts, Movements: opts.Movements, Seed: opts.Seed}
	if sc.hot {
		spec.Accounts = 1
	}
	w, err := sim.Generate(spec)
	if err != nil {
		return Result{}, err
	}
	rng := rngFor(opts.Seed, sc.name, 1)
	deliveries := sc.schedule(w, rng)
	plan := &crashPlan{point: sc.crash, targets: pick(w, sc.crashShare, rng)}
	again := map[string]bool{}
	for _, d := range deliveries {
		if rng.Float64() < sc.again {
			again[d.ID] = true
		}
	}
	late := lateCopies(w, pick(w, sc.late, rng))

	s, err := openStore(ctx, opts.Endpoint)
	if err != nil {
		return Result{}, err
	}
	defer s.close()
	clk := sim.NewClock()
	st, err := stack(s, strategy, opts.RTT, clk.Now, plan, sc.keyFromMessageID)
	if err != nil {
		return Result{}, err
	}
	if sc.lostResponses > 0 {
		faultRng, mu := rngFor(opts.Seed, sc.name, 2), sync.Mutex{}
		st.faults.SetChooser(func(op string) sim.Fault {
			switch op {
			case "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems":
				mu.Lock()
				defer mu.Unlock()
				if faultRng.Float64() < sc.lostResponses {
					return sim.LostResponse
				}
			}
			return 0
		})
	}
	h := consumer.New(st.probe, consumer.Options{Concurrency: sc.concurrency, Logger: slog.New(slog.DiscardHandler), Parker: parkNowhere{}, Strategy: strategy})
	q := sim.NewQueue(sim.QueueOptions{Clock: clk, Visibility: visibilityTimeout, Step: batchStep, MaxReceive: maxReceive})
	t := &tally{}
	q.Send(deliveries...)
	if err := drive(ctx, q, h, sc.consumers, again, t); err != nil {
		return Result{}, err
	}
	if len(late) > 0 {
		clk.Advance(lateBy)
		if err := expireByTTL(ctx, s, clk.Now()); err != nil {
			return Result{}, err
		}
		q.Send(late...)
		if err := drive(ctx, q, h, sc.consumers, nil, t); err != nil {
			return Result{}, err
		}
	}
	dead := map[string]int{}
	for _, m := range q.Dead() {
		dead[cmp.Or(t.last[m.ID], "no answer (its invocations died)")]++
	}
	return measure(ctx, sc, strategy, w, st, t, dead)
}

// parkNowhere stands in for the DLQ: permanent failures are settled there at once
// (the scenarios produce none; a conflicting duplicate would be one).
type parkNowhere struct{}

func (parkNowhere) Park(context.Context, events.SQSMessage, consumer.Reason) error { return nil }

// drive runs consumers batch handlers until the queue is empty, each batch as one
// Lambda invocation with its deadline. A dead invocation, or one that failed as a
// whole, acknowledges nothing: its batch comes back after the visibility timeout.
// Messages in again are delivered once more after they were deleted.
func drive(ctx context.Context, q *sim.Queue, h *consumer.Handler, consumers int, again map[string]bool, t *tally) error {
	var mu sync.Mutex
	redelivered := map[string]bool{}
	return q.Drain(ctx, consumers, consumer.MaxBatch, func(ctx context.Context, _ int, batch []events.SQSMessage) map[string]bool {
		inv := &invocation{}
		ictx, cancel := context.WithTimeout(context.WithValue(ctx, invocationKey{}, inv), invocationTimeout)
		back := h.Settle(ictx, batch)
		cancel()
		if inv.died() {
			for _, m := range batch {
				back[m.MessageId] = true
			}
		} else {
			t.add(inv)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, m := range batch {
			if again[m.MessageId] && !redelivered[m.MessageId] {
				redelivered[m.MessageId], back[m.MessageId] = true, true
			}
		}
		return back
	})
}

// expireByTTL models DynamoDB's TTL, which deletes expired items eventually (AWS says
// typically within a few days): of the items whose TTL attribute is past now, it
// deletes every other one (in key order) and leaves the rest, expired but still there.
func expireByTTL(ctx context.Context, s *backend, now time.Time) error {
	all, err := migrations.All()
	if err != nil {
		return err
	}
	for _, m := range all {
		if m.TTL == "" {
			continue
		}
		items, err := scanAll(ctx, s.admin, s.tables[m.Table])
		if err != nil {
			return err
		}
		var expired []map[string]types.AttributeValue
		for _, item := range items {
			var expira int64
			if attributevalue.Unmarshal(item[m.TTL], &expira) == nil && expira > 0 && expira < now.Unix() {
				expired = append(expired, item)
			}
		}
		slices.SortFunc(expired, func(a, b map[string]types.AttributeValue) int {
			return compareText(text(a[m.Key.Partition]), text(b[m.Key.Partition]))
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

func compareText(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// scanAll reads a whole table, page by page, strongly consistent.
func scanAll(ctx context.Context, db *dynamodb.Client, table string) ([]map[string]types.AttributeValue, error) {
	in := &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)}
	var items []map[string]types.AttributeValue
	for { // ends at the last page
		out, err := db.Scan(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", table, err)
		}
		items = append(items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			return items, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// measure turns what the run did into a Result: effects counted by the meter, balances
// read back, calls counted by the fault injector's transport.
func measure(ctx context.Context, sc scenario, strategy ledger.Strategy, w sim.Workload, st *setup, t *tally, dead map[string]int) (Result, error) {
	u := st.meter.usage()
	n := len(w.Movements)
	r := Result{Scenario: sc.name, Strategy: strategy, Movements: n, Deliveries: t.deliveries, DeadLetters: dead, Stuck: t.stuck, ReportedUnits: u.reported > 0}
	for _, m := range w.Movements {
		switch k := u.applied[movementKey(m.Cuenta, m.ID)]; {
		case k == 0:
			r.Lost++
		case k > 1:
			r.DoubleApplied++
		}
	}
	for c, want := range w.Saldos {
		got, err := st.saldo(ctx, c)
		if err != nil {
			return Result{}, err
		}
		// Rounded to the currency's minor units: the embedded store adds with float64
		// (0.1 + 0.2 = 0.30000000000000004); no movement moves less than a cent, so
		// rounding cannot hide one applied twice or lost.
		if !got.Round(2).Equal(want) {
			r.BalanceErrors++
		}
	}
	r.CallsPerMovement = float64(st.faults.TotalCalls()) / float64(n)
	r.WCUPerMovement, r.RCUPerMovement = u.wcu/float64(n), u.rcu/float64(n)
	r.P50ms, r.P99ms = percentile(t.latencies, 50), percentile(t.latencies, 99)
	for _, table := range st.backend.tables {
		items, err := scanAll(ctx, st.backend.admin, table)
		if err != nil {
			return Result{}, err
		}
		for _, item := range items {
			r.MaxItemBytes = max(r.MaxItemBytes, itemSize(item))
		}
	}
	return r, nil
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

var _ http.RoundTripper = (*meter)(nil)
