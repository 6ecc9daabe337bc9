package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

func countingService(t *testing.T, env *testenv.DynamoDB, policy cuenta.FundsPolicy) (*store.Ledger, *sim.Transport) {
	t.Helper()
	ft := sim.NewTransport(nil)
	svc, err := store.New(env.ClientVia(ft), store.Config{Table: env.Table(), InsufficientFunds: policy, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	return svc, ft
}

func abonos(t *testing.T, cta string, from, n int) []store.Entrega {
	t.Helper()
	var out []store.Entrega
	for i := from; i < from+n; i++ {
		out = append(out, store.Entrega{Mov: mov(t, fmt.Sprintf("m%03d", i), cta, movimiento.Abono, fmt.Sprintf("%d.01", i+1))})
	}
	return out
}

func TestAHotAccountBatchIsOneTransaction(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, ft := countingService(t, env, cuenta.Retry)
	ctx := context.Background()
	svc.Apply(ctx, abonos(t, "HOT", 0, 10)) // warms the cache
	ft.ResetCounts()

	results := svc.Apply(ctx, abonos(t, "HOT", 10, 10))
	want := decimal.Zero
	for i := range 20 {
		want = want.Add(decimal.RequireFromString(fmt.Sprintf("%d.01", i+1)))
	}
	for i, r := range results {
		if r.Outcome != store.Applied || r.Seq != int64(11+i) {
			t.Fatalf("movement %d: %+v, want applied as seq %d", i, r, 11+i)
		}
	}
	if !results[9].SaldoTras.Equal(want) {
		t.Errorf("last saldo_tras %s, want %s", results[9].SaldoTras, want)
	}
	if calls := ft.TotalCalls(); calls != 1 {
		t.Errorf("%d calls for a warm batch of 10, want 1 TransactWriteItems", calls)
	}
	assertAccount(t, env, "HOT", want.String(), 2, 20)
}

func TestDuplicatesDropOutAndTheRestIsRetried(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, ft := countingService(t, env, cuenta.Retry)
	ctx := context.Background()
	batch := abonos(t, "HOT", 0, 10)
	svc.Apply(ctx, []store.Entrega{batch[2], batch[5], batch[7]})
	ft.ResetCounts()

	results := svc.Apply(ctx, batch)
	count := map[store.Outcome]int{}
	for _, r := range results {
		count[r.Outcome]++
	}
	if count[store.Applied] != 7 || count[store.Duplicate] != 3 {
		t.Fatalf("outcomes = %v, want 7 applied and 3 duplicates", count)
	}
	// Every backend names every duplicate in one cancellation, as DynamoDB does: one
	// cancelled transaction, then the commit of the rest.
	if calls := ft.Calls("TransactWriteItems"); calls != 2 {
		t.Errorf("%d transactions, want 2: the duplicates named at once, then the rest", calls)
	}
	assertAccount(t, env, "HOT", "55.10", 2, 10) // 1.01 + 2.01 + … + 10.01
}

func TestMoreThan99MovementsSplitIntoChunks(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, ft := countingService(t, env, cuenta.Retry)
	results := svc.Apply(context.Background(), abonos(t, "BIG", 0, 250))
	for i, r := range results {
		if r.Outcome != store.Applied || r.Seq != int64(i+1) {
			t.Fatalf("movement %d: %+v", i, r)
		}
	}
	if calls := ft.Calls("TransactWriteItems"); calls != 3 {
		t.Errorf("%d transactions for 250 movements, want 3 (99 + 99 + 52)", calls)
	}
	sum := decimal.Zero
	for i := range 250 {
		sum = sum.Add(decimal.RequireFromString(fmt.Sprintf("%d.01", i+1)))
	}
	assertAccount(t, env, "BIG", sum.String(), 3, 250)
}

func TestARuleFailureExcludesOnlyItsOwnMovement(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, _ := countingService(t, env, cuenta.Retry)
	ctx := context.Background()
	results := svc.Apply(ctx, []store.Entrega{
		{Mov: mov(t, "a1", "A", movimiento.Abono, "10.00")},
		{Mov: mov(t, "c1", "A", movimiento.Cargo, "15.00")}, // not yet covered
		{Mov: mov(t, "a2", "A", movimiento.Abono, "10.00")},
		{Mov: mov(t, "c2", "A", movimiento.Cargo, "15.00")}, // covered by a1 + a2
	})
	got := []store.Outcome{results[0].Outcome, results[1].Outcome, results[2].Outcome, results[3].Outcome}
	if fmt.Sprint(got) != "[applied failed applied applied]" || !results[1].Retry() {
		t.Fatalf("outcomes = %v (%v), want only c1 to fail, transiently", got, results[1].Err)
	}
	if results[3].Seq != 3 || !results[3].SaldoTras.Equal(decimal.NewFromInt(5)) {
		t.Errorf("c2 = %+v, want seq 3 and saldo_tras 5", results[3])
	}
	assertAccount(t, env, "A", "5", 1, 3)
}
