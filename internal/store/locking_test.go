package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// lockedLedger is a Ledger on env through rt, with the retry budget given.
func lockedLedger(t *testing.T, env *testenv.DynamoDB, rt http.RoundTripper, budget store.Budget) *store.Ledger {
	t.Helper()
	l, err := store.New(env.ClientVia(rt), store.Config{Table: env.Table(), Budget: budget, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func alwaysConflict(op string) sim.Fault {
	if op == "TransactWriteItems" {
		return sim.TransactionConflict
	}
	return 0
}

// Contention (a concurrent transaction on the account) is retried after a back-off, up
// to the budget's retries, then given up as transient: nothing is written.
func TestContentionIsRetriedThenGivenUp(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	l := lockedLedger(t, env, ft, store.Budget{Retries: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})
	ft.Inject("TransactWriteItems", sim.TransactionConflict, sim.TransactionConflict)
	if r := apply(t, l, mov(t, "a", "C", movimiento.Abono, "1.00")); r.Outcome != store.Applied || r.Attempts != 3 {
		t.Fatalf("two conflicts then success: %+v; want applied on the third commit", r)
	}
	ft.SetChooser(alwaysConflict)
	ft.ResetCounts()
	r := apply(t, l, mov(t, "b", "C", movimiento.Abono, "1.00"))
	if r.Outcome != store.Failed || !r.Retry() || r.Attempts != 4 || ft.Calls("TransactWriteItems") != 4 {
		t.Fatalf("endless contention: %+v after %d calls; want a transient failure after 4 commits", r, ft.Calls("TransactWriteItems"))
	}
	if get(t, env, "CUENTA#C", "MOV#b") != nil {
		t.Error("a movement that never committed was recorded")
	}
}

// MaxDelay caps every wait, however large BaseDelay grows it; and no wait outlasts the
// context's deadline: the delivery fails in time to be reported.
func TestBackoffIsCappedAndNeverOutlivesTheDeadline(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	capped := lockedLedger(t, env, ft, store.Budget{Retries: 3, BaseDelay: time.Hour, MaxDelay: time.Millisecond})
	ft.Inject("TransactWriteItems", sim.TransactionConflict, sim.TransactionConflict)
	if r := capped.Apply(ctx, []store.Entrega{{Mov: mov(t, "a", "D", movimiento.Abono, "1.00")}})[0]; r.Outcome != store.Applied || r.Attempts != 3 {
		t.Fatalf("two conflicts then success: %+v; want applied after waits of at most 1 ms", r)
	}
	ft.SetChooser(alwaysConflict)
	patient := lockedLedger(t, env, ft, store.Budget{Retries: 99, BaseDelay: time.Hour, MaxDelay: time.Hour})
	short, cancelShort := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelShort()
	r := patient.Apply(short, []store.Entrega{{Mov: mov(t, "b", "D", movimiento.Abono, "1.00")}})[0]
	if !r.Retry() || r.Attempts >= 100 || short.Err() != nil {
		t.Fatalf("%+v (context: %v); want a transient failure before the deadline, not a sleep past it", r, short.Err())
	}
}

// A warm account costs one call per transaction; an image another writer made stale
// costs one version conflict, never a corrupt write, and is warm again after it.
func TestAWarmAccountCostsOneCallAndAStaleOneAConflict(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ours, theirs := sim.NewTransport(nil), sim.NewTransport(nil)
	a, b := lockedLedger(t, env, ours, store.Budget{}), lockedLedger(t, env, theirs, store.Budget{})
	apply(t, a, mov(t, "a1", "W", movimiento.Abono, "1.00"))
	ours.ResetCounts()
	for _, id := range []string{"a2", "a3", "a4"} {
		apply(t, a, mov(t, id, "W", movimiento.Abono, "1.00"))
	}
	if reads, writes := ours.Calls("GetItem"), ours.Calls("TransactWriteItems"); reads != 0 || writes != 3 {
		t.Errorf("%d reads and %d transactions for 3 movements of a warm account, want none and 3", reads, writes)
	}
	apply(t, b, mov(t, "b1", "W", movimiento.Abono, "1.00")) // a's image is now stale
	if r := apply(t, a, mov(t, "a5", "W", movimiento.Abono, "1.00")); r.Outcome != store.Applied || r.Attempts != 2 {
		t.Fatalf("a movement on a stale image: %+v; want applied on the second commit", r)
	}
	assertAccount(t, env, "W", "6", 6, 6)
	before := ours.TotalCalls()
	if r := apply(t, a, mov(t, "a6", "W", movimiento.Abono, "1.00")); r.Attempts != 1 || ours.TotalCalls()-before != 1 {
		t.Errorf("after the refresh: %+v in %d calls; want one call", r, ours.TotalCalls()-before)
	}
}

// refusing answers DynamoDB's ValidationException, naming no item, to every
// TransactWriteItems whose request holds culprit, and passes the rest on.
type refusing struct {
	next    http.RoundTripper
	culprit string
	refused int
}

func (r *refusing) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if !strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".TransactWriteItems") || !bytes.Contains(body, []byte(r.culprit)) {
		return r.next.RoundTrip(req)
	}
	r.refused++
	return &http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}}, Request: req,
		Body: io.NopCloser(strings.NewReader(`{"__type":"com.amazonaws.dynamodb.v20120810#ValidationException","message":"injected: the request is refused"}`))}, nil
}

// A request DynamoDB refuses whole, naming no item, parks only the movement that causes
// it: the group is retried in smaller transactions until that one is alone, and its
// neighbours on the same account apply.
func TestARequestRefusedWholeFailsOnlyItsCause(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	rt := &refusing{next: http.DefaultTransport, culprit: "MOV#culpable"}
	l := lockedLedger(t, env, rt, store.Budget{})
	var es []store.Entrega
	for _, id := range []string{"a1", "a2", "culpable", "a3", "a4", "a5"} {
		es = append(es, store.Entrega{Mov: mov(t, id, "V", movimiento.Abono, "1.00")})
	}
	rs := l.Apply(context.Background(), es)
	for i, r := range rs {
		culprit := es[i].Mov.ID == "culpable"
		switch {
		case culprit && (r.Outcome != store.Failed || !errors.Is(r.Err, store.ErrPermanent) || !strings.Contains(r.Err.Error(), "injected")):
			t.Errorf("the culprit: %+v, want a permanent failure with DynamoDB's reason", r)
		case !culprit && r.Outcome != store.Applied:
			t.Errorf("%s beside it: %+v, want applied", es[i].Mov.ID, r)
		}
	}
	assertAccount(t, env, "V", "5", 3, 5) // in three transactions: a1, a2, then a3 a4 a5
	if rt.refused > 4 {
		t.Errorf("%d requests refused to find one culprit in 6, want at most 4 (halving)", rt.refused)
	}
	if r := testenv.Apply(t, testenv.Ledger(t, env, cuenta.Retry, nil), es[2].Mov); r.Outcome != store.Applied {
		t.Errorf("the culprit where DynamoDB takes it: %+v, want applied: it was never recorded", r)
	}
}

// A back-off waits through Config.Wait when one is given, which draws and waits the
// jitter up to each ceiling of the budget's: a simulation's seed and clock, not the
// wall's.
func TestBackoffWaitsThroughTheGivenWait(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	var ceilings []time.Duration
	l, err := store.New(env.ClientVia(ft), store.Config{Table: env.Table(), Now: func() time.Time { return fixedNow },
		Budget: store.Budget{Retries: 3, BaseDelay: time.Hour, MaxDelay: 90 * time.Minute},
		Wait:   func(_ context.Context, ceiling time.Duration) error { ceilings = append(ceilings, ceiling); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ft.Inject("TransactWriteItems", sim.TransactionConflict, sim.TransactionConflict, sim.TransactionConflict)
	start := time.Now()
	if r := apply(t, l, mov(t, "a", "C", movimiento.Abono, "1.00")); r.Outcome != store.Applied || r.Attempts != 4 {
		t.Fatalf("three conflicts then success: %+v", r)
	}
	if fmt.Sprint(ceilings) != "[1h0m0s 1h30m0s 1h30m0s]" || time.Since(start) > time.Minute {
		t.Errorf("ceilings %v in %v, want 1 h, then 2 h capped at 90 min twice, none waited on the wall clock", ceilings, time.Since(start))
	}
}
