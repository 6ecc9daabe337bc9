package consumer_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// minChecks is how many cases the property runs at least, on each backend, unless
// -rapid.checks or RAPID_CHECKS asks for another number.
const minChecks = 200

// propertyShards is how many parts the property's cases run in on the embedded store,
// side by side, each on tables of its own: there a case is bound by the CPU, the race
// detector's above all, and two parts use two cores. On an external server (moto) the
// cases run in one part: it takes DynamoDB requests one at a time, so a second part
// only queues behind the first. A run that names its cases (-rapid.checks,
// RAPID_CHECKS, -rapid.seed, -rapid.failfile) runs them in one part, as asked: the same
// seed in two parts would draw the same cases twice.
const propertyShards = 2

// shardsAndChecks sets rapid's count of cases per part and returns the parts: minChecks
// in all, in propertyShards parts on the embedded store, unless the run names its cases.
func shardsAndChecks(t *testing.T) int {
	t.Helper()
	named := false
	flag.Visit(func(f *flag.Flag) {
		named = named || f.Name == "rapid.checks" || f.Name == "rapid.seed" || f.Name == "rapid.failfile"
	})
	if _, env := os.LookupEnv("RAPID_CHECKS"); named || env {
		return 1
	}
	shards := propertyShards
	if os.Getenv(testenv.DynamoDBEndpointEnv) != "" {
		shards = 1
	}
	if err := flag.Set("rapid.checks", strconv.Itoa((minChecks+shards-1)/shards)); err != nil {
		t.Fatal(err)
	}
	return shards
}

// drawScenario draws a small case: a few accounts and 5 to 40 movements (one case in
// ten, enough accounts for a reparto of movimiento.MaxPartes parts and 40 to 80
// movements, for their payers to have funds) of every kind (transfers
// and repartos between the accounts, whole reversals, refunds in parts, holds
// captured, released or left to lapse, and sometimes the movements refused by
// design), and a random mix of everything that can go wrong.
func drawScenario(t *rapid.T, prefix string) Scenario {
	accounts, movements := rapid.IntRange(1, 5).Draw(t, "accounts"), rapid.IntRange(5, 40).Draw(t, "movements")
	if rapid.SampledFrom([]bool{false, false, false, false, false, false, false, false, false, true}).Draw(t, "wide") {
		accounts = rapid.IntRange(movimiento.MaxPartes+1, movimiento.MaxPartes+4).Draw(t, "wide accounts")
		movements = rapid.IntRange(40, 80).Draw(t, "wide movements")
	}
	return Scenario{
		Prefix:      prefix,
		Seed:        rapid.Uint64().Draw(t, "seed"),
		Accounts:    accounts,
		Movements:   movements,
		Transfers:   float64(rapid.IntRange(0, 25).Draw(t, "transfers%")) / 100,
		Repartos:    float64(rapid.IntRange(0, 15).Draw(t, "repartos%")) / 100,
		Reversals:   float64(rapid.IntRange(0, 15).Draw(t, "reversals%")) / 100,
		Refunds:     float64(rapid.IntRange(0, 15).Draw(t, "refunds%")) / 100,
		Holds:       float64(rapid.IntRange(0, 30).Draw(t, "holds%")) / 100,
		Refusals:    rapid.SampledFrom([]bool{false, false, false, true}).Draw(t, "refusals"), // one case in four: a refusal under retry costs maxReceiveCount receives
		Duplicates:  rapid.Float64Range(0, 0.5).Draw(t, "duplicates"),
		Malformed:   rapid.Float64Range(0, 0.2).Draw(t, "malformed"),
		Conflicting: rapid.Float64Range(0, 0.2).Draw(t, "conflicting"),
		Policy:      rapid.SampledFrom([]cuenta.FundsPolicy{cuenta.Retry, cuenta.Reject}).Draw(t, "policy"),
		Consumers:   rapid.IntRange(1, 4).Draw(t, "consumers"),
		BatchSize:   rapid.IntRange(1, 10).Draw(t, "batch"),
		Rates: Rates{
			InternalError:       rapid.IntRange(0, 10).Draw(t, "5xx%"),
			Throttling:          rapid.IntRange(0, 10).Draw(t, "throttling%"),
			TransactionConflict: rapid.IntRange(0, 10).Draw(t, "txconflict%"),
			LostResponse:        rapid.IntRange(0, 10).Draw(t, "lost%"),
			Redeliver:           rapid.IntRange(0, 10).Draw(t, "redeliver%"),
			CrashAfter:          rapid.IntRange(0, 15).Draw(t, "crash-after%"),
			CrashMid:            rapid.IntRange(0, 15).Draw(t, "crash-mid%"),
			Deadline:            rapid.IntRange(0, 15).Draw(t, "deadline%"),
		},
	}
}

// casesPerTable is how many cases share one table. Both emulators copy a table for
// every transaction (to roll it back), so a call's cost grows with the table: measured
// on moto, 50 transactions take 0.96 s on an empty table and 1.55 s once it holds
// 100 movements. A fresh table every few cases keeps each case fast, and costs one
// table creation (about 150 ms on moto) per group.
const casesPerTable = 4

// TestExactlyOnceUnderAdversarialDelivery is the reliability property: for random
// workloads (abonos, cargos, transfers, repartos, reversals, refunds in parts, holds),
// delivery schedules and
// faults, after the queue drains every movement is applied exactly once with its own
// fingerprint (or recorded rejected under the reject policy), every movement refused by
// design is refused, nothing is lost or recorded twice, no conflicting duplicate is
// ever applied, every bad message is in the DLQ with its reason, the money adds up
// (Verify), and every table the cases wrote passes the audit. Cases share tables, each
// in its own account namespace; the parts (propertyShards) have tables of their own.
func TestExactlyOnceUnderAdversarialDelivery(t *testing.T) {
	shards := shardsAndChecks(t)
	// The cases are bounded by the test binary's own deadline (go test's -timeout, 10
	// minutes by default), less time to shrink and report (a minute, or a quarter of a
	// short -timeout): on moto, beside the other packages, they take minutes.
	bound := 5 * time.Minute
	if d, ok := t.Deadline(); ok {
		left := time.Until(d)
		bound = left - min(time.Minute, left/4)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	var total propertyTotals
	t.Run("cases", func(t *testing.T) {
		for shard := range shards {
			t.Run(strconv.Itoa(shard+1), func(t *testing.T) {
				t.Parallel()
				total.add(checkProperty(ctx, t))
			})
		}
	})
	total.log(t)
}

// propertyTotals sums what the property's parts did, for its closing log.
type propertyTotals struct {
	mu                         sync.Mutex
	backend                    testenv.Backend
	stats                      Stats
	applied, rejected, refused int
	excused, audited           int
}

// add sums one part's totals in.
func (p *propertyTotals) add(part *propertyTotals) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backend = part.backend
	p.stats.Add(part.stats)
	p.applied, p.rejected, p.refused = p.applied+part.applied, p.rejected+part.rejected, p.refused+part.refused
	p.excused, p.audited = p.excused+part.excused, p.audited+part.audited
}

// checkProperty runs one part of the property's cases, on tables of its own, each
// table audited once its cases are done, and returns what they did.
func checkProperty(ctx context.Context, t *testing.T) *propertyTotals {
	var (
		env   *testenv.DynamoDB
		part  propertyTotals
		until time.Time // the latest end of the cases on the table, by their clocks
	)
	audit := func() {
		report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{Now: func() time.Time { return until }})
		if err != nil {
			t.Fatal(err)
		}
		if !report.OK {
			t.Errorf("audit of %s: %+v", env.Table(), report.Broken)
		}
		part.audited += report.Accounts
	}
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		if n%casesPerTable == 0 {
			if env != nil {
				audit()
			}
			env = testenv.NewDynamoDB(t)
		}
		n++ // shrinking replays a case: each run gets a namespace of its own
		sc := drawScenario(rt, fmt.Sprintf("p%d-", n))
		res, err := Run(ctx, Target{Config: env.Config, Endpoint: env.Endpoint, Table: env.Table()}, sc)
		if err != nil {
			rt.Fatal(err)
		}
		rep, err := Verify(ctx, env.Client, env.Table(), res)
		if err != nil {
			rt.Fatal(err)
		}
		for _, v := range rep.Violations {
			rt.Error(v)
		}
		// maxReceiveCount (100) is far above what these rates can exhaust: a movement
		// that never got recorded is a stuck message.
		for _, v := range rep.Unapplied {
			rt.Errorf("never recorded: %s", v)
		}
		part.stats.Add(res.Stats)
		part.applied, part.rejected, part.refused, part.excused = part.applied+rep.Applied, part.rejected+rep.Rejected, part.refused+rep.Refused, part.excused+rep.Excused
		if res.Now.After(until) {
			until = res.Now
		}
	})
	audit()
	part.backend = env.Backend
	return &part
}

// log writes what the property's cases did: the movements, their kinds, the faults.
func (p *propertyTotals) log(t *testing.T) {
	total := p.stats
	t.Logf("%s: %d cases in %s; %d movements (%d applied, %d rejected, %d parked after their referent was rejected), %d messages, %d records handled in %d batches, %d DynamoDB calls; %d accounts audited",
		p.backend, total.Runs, total.Elapsed.Round(time.Millisecond), total.Movements, p.applied, p.rejected, p.excused, total.Deliveries, total.Handled, total.Batches, total.Calls, p.audited)
	k := total.Kinds
	t.Logf("kinds: %d transfers, %d repartos (%d legs, the widest %d parts), %d whole reversals, %d refunds in parts (%d movements refunded in full), %d transfers and %d repartos reversed (%d legs); %d holds (%d captured, %d released, %d lapsed); %d of %d sent refused by design were refused",
		k.Transfers, k.Repartos, k.Partes, k.MostPartes, k.Reversals, k.Refunds, k.RefundedInFull, k.ReversedTransfers, k.ReversedRepartos, k.ReversedPartes,
		k.Holds, k.Captured, k.Released, k.Lapsed, p.refused, total.Refused)
	t.Logf("faults injected: 5xx %d, throttling %d, transaction-conflict %d, lost-response %d; crashes after the handler %d, mid-batch %d; deadlines mid-way %d (timed out %d); redelivered after success %d; parked %d, dead %d",
		total.Faults[sim.InternalError], total.Faults[sim.Throttling], total.Faults[sim.TransactionConflict], total.Faults[sim.LostResponse],
		total.CrashesAfter, total.CrashesMid, total.Deadlines, total.Timeouts, total.Redelivered, total.Parked, total.Dead)
}
