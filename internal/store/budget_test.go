package store_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// patientSDK is a client on env through rt whose SDK would try a request 10 times, with
// waits of a millisecond: more than any budget here allows.
func patientSDK(env *testenv.DynamoDB, rt http.RoundTripper) store.Client {
	cfg := env.Config.Copy()
	cfg.HTTPClient = &http.Client{Transport: rt}
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts, o.MaxBackoff, o.RateLimiter = 10, time.Millisecond, ratelimit.None
		})
	}
	return awsconf.DynamoDB(cfg, env.Endpoint)
}

// Throttling, which the SDK retries, and contention, which the ledger retries, spend one
// budget: an attempt at a message sends at most 1 + Budget.Retries requests, however
// many the SDK would send on its own, then fails transient, with nothing written.
func TestTheSDKsRetriesAndTheLedgersShareOneBudget(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	budget := store.Budget{Retries: 5, Time: time.Minute, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}
	l, err := store.New(patientSDK(env, ft), store.Config{Table: env.Table(), Budget: budget, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, l, mov(t, "a1", "T", movimiento.Abono, "1.00")) // warm: a movement costs one commit
	var commits atomic.Int64
	for _, tc := range []struct {
		name  string
		fault func() sim.Fault // of every commit
	}{
		{"throttled", func() sim.Fault { return sim.Throttling }},
		{"throttled and contended in turn", func() sim.Fault {
			if commits.Add(1)%2 == 1 {
				return sim.Throttling
			}
			return sim.TransactionConflict
		}},
	} {
		ft.SetChooser(func(op string) sim.Fault {
			if op != "TransactWriteItems" {
				return 0
			}
			return tc.fault()
		})
		ft.ResetCounts()
		r := apply(t, l, mov(t, "a2", "T", movimiento.Abono, "1.00"))
		if calls := ft.Calls("TransactWriteItems"); !r.Retry() || calls != 1+budget.Retries {
			t.Errorf("%s: %+v after %d commits, want a transient failure after %d", tc.name, r, calls, 1+budget.Retries)
		}
	}
	ft.SetChooser(func(string) sim.Fault { return 0 })
	assertAccount(t, env, "T", "1", 1, 1)
}

// The budget's Time bounds an attempt at a message whatever its retries left: an
// endless contention fails transient once it has passed.
func TestTheBudgetsTimeEndsAnAttempt(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	l := lockedLedger(t, env, ft, store.Budget{Retries: 1_000_000, Time: 50 * time.Millisecond, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})
	ft.SetChooser(alwaysConflict)
	if r := apply(t, l, mov(t, "a", "U", movimiento.Abono, "1.00")); !r.Retry() || r.Attempts >= 1_000_000 {
		t.Errorf("%+v, want a transient failure once the budget's time has passed", r)
	}
}
