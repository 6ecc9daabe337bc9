package versioned_test

import (
	"context"
	"testing"

	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/versioned"
)

func cachedStore(t *testing.T, env *testenv.DynamoDB, ft *sim.Transport) *versioned.Store {
	t.Helper()
	st, err := versioned.New(env.ClientVia(ft), versioned.Table{Name: env.Table(), PartitionKey: "pk", SortKey: "sk", Version: "version"}, versioned.Options{CacheSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestAWarmItemCostsOneCallPerUpdate(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	store := cachedStore(t, env, ft)
	ctx := context.Background()
	if _, err := store.Update(ctx, heads, increment("a", "")); err != nil { // reads: the item is not cached yet
		t.Fatal(err)
	}
	ft.ResetCounts()
	for _, id := range []string{"b", "c", "d"} {
		if _, err := store.Update(ctx, heads, increment(id, "")); err != nil {
			t.Fatal(err)
		}
	}
	if reads, writes := ft.Calls("GetItem"), ft.Calls("TransactWriteItems"); reads != 0 || writes != 3 {
		t.Errorf("%d reads and %d transactions for 3 updates of a warm item, want none and 3", reads, writes)
	}
	if h := get(t, env, "HEAD"); num(t, h, "count") != 4 || num(t, h, "version") != 4 {
		t.Errorf("head = %v", h)
	}
}

func TestAStaleCacheCostsOneConflictNotACorruptWrite(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ours, theirs := sim.NewTransport(nil), sim.NewTransport(nil)
	a, b := cachedStore(t, env, ours), cachedStore(t, env, theirs) // two Lambda instances
	ctx := context.Background()
	if _, err := a.Update(ctx, heads, increment("a", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Update(ctx, heads, increment("b", "")); err != nil { // a's image is now stale
		t.Fatal(err)
	}
	res, err := a.Update(ctx, heads, increment("c", ""))
	if err != nil || res.Attempts != 2 {
		t.Fatalf("update from a stale image: %+v, %v; want success on the second attempt", res, err)
	}
	if h := get(t, env, "HEAD"); num(t, h, "count") != 3 || num(t, h, "version") != 3 {
		t.Errorf("head = %v, want count 3: the stale image must not have overwritten b's increment", h)
	}
	// The fresh image came from the cancellation (moto, DynamoDB) or a read (minidyn);
	// either way a's next update is warm again.
	before := ours.TotalCalls()
	if res, err := a.Update(ctx, heads, increment("d", "")); err != nil || res.Attempts != 1 || ours.TotalCalls()-before != 1 {
		t.Errorf("after the refresh: %+v, %v, %d calls; want one call", res, err, ours.TotalCalls()-before)
	}
}
