//go:build soak

package consumer_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// The soak's shape. A shard is one Run: its own accounts, its own queue, its own
// table: moto copies a table on every transaction, so a call's cost grows with the
// table (measured: 17 movements/s with 2,000-movement tables, 40 with 250).
const (
	soakEnv         = "LEDGER_SOAK_MOVEMENTS"
	soakDefault     = 100_000
	shardMovements  = 250
	shardAccounts   = 20
	shardsPerTable  = 1
	soakMaxDuration = 85 * time.Minute
)

// TestSoak (make soak; not in CI) applies LEDGER_SOAK_MOVEMENTS movements (100,000 by
// default; transfers, repartos, reversals, refunds in parts and holds among them)
// through the consumer with every kind of fault at a low, steady rate, both
// insufficient-funds policies in turn, and reports violations (there must be none) and
// throughput.
func TestSoak(t *testing.T) {
	total := soakDefault
	if v := os.Getenv(soakEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number of movements", soakEnv, v)
		}
		total = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), soakMaxDuration)
	defer cancel()

	var (
		env        *testenv.DynamoDB
		stats      Stats
		violations int
		audited    int
		until      time.Time // the latest end of the shards on the table, by their clocks
	)
	audit := func() {
		report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{Now: func() time.Time { return until }})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range report.Broken {
			t.Errorf("audit: %s: %s", b.Cuenta, b.Reason)
		}
		violations += len(report.Broken)
		audited += report.Movements
	}
	start := time.Now()
	shards := (total + shardMovements - 1) / shardMovements
	for shard := range shards {
		if shard%shardsPerTable == 0 { // a fresh table every shardsPerTable shards
			if env != nil {
				audit()
			}
			env = testenv.NewDynamoDB(t)
		}
		policy := cuenta.Retry
		if shard%2 == 1 {
			policy = cuenta.Reject
		}
		sc := Scenario{
			Prefix: fmt.Sprintf("s%d-", shard), Seed: uint64(shard) + 1,
			Accounts: shardAccounts, Movements: min(shardMovements, total-shard*shardMovements),
			Transfers: 0.1, Repartos: 0.05, Reversals: 0.05, Refunds: 0.05, Holds: 0.1, Refusals: true,
			Duplicates: 0.2, Malformed: 0.01, Conflicting: 0.005,
			Policy: policy, Consumers: 4, BatchSize: 10,
			Rates: Rates{InternalError: 2, Throttling: 2, TransactionConflict: 2, LostResponse: 2,
				Redeliver: 2, CrashAfter: 2, CrashMid: 2, Deadline: 2},
		}
		res, err := Run(ctx, Target{Config: env.Config, Endpoint: env.Endpoint, Table: env.Table()}, sc)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Verify(ctx, env.Client, env.Table(), res)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range append(rep.Violations, rep.Unapplied...) {
			t.Errorf("shard %d: %s", shard, v)
		}
		violations += len(rep.Violations) + len(rep.Unapplied)
		stats.Add(res.Stats)
		if res.Now.After(until) {
			until = res.Now
		}
		if (shard+1)%10 == 0 {
			t.Logf("%d of %d movements, %s, %d violations", stats.Movements, total, time.Since(start).Round(time.Second), violations)
		}
	}
	audit()
	elapsed := time.Since(start)
	t.Logf("soak on %s: %d movements (%d messages, %d records handled, %d DynamoDB calls) in %s: %.0f movements/s; %d applied movements audited; violations: %d",
		env.Backend, stats.Movements, stats.Deliveries, stats.Handled, stats.Calls, elapsed.Round(time.Second),
		float64(stats.Movements)/elapsed.Seconds(), audited, violations)
	t.Logf("faults injected: 5xx %d, throttling %d, transaction-conflict %d, lost-response %d; crashes after the handler %d, mid-batch %d; deadlines mid-way %d (timed out %d); redelivered after success %d; parked %d, dead %d",
		stats.Faults[sim.InternalError], stats.Faults[sim.Throttling], stats.Faults[sim.TransactionConflict], stats.Faults[sim.LostResponse],
		stats.CrashesAfter, stats.CrashesMid, stats.Deadlines, stats.Timeouts, stats.Redelivered, stats.Parked, stats.Dead)
}
