package store_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// The shared builders of the ledger's tests.
var (
	fixedNow   = testenv.FixedNow
	newClock   = testenv.Clock
	mov        = testenv.Mov
	traspaso   = testenv.Traspaso
	hold       = testenv.Hold
	settleHold = testenv.SettleHold
	apply      = testenv.Apply
	anulacion  = testenv.Anulacion
)

func newService(t *testing.T, env *testenv.DynamoDB, policy cuenta.FundsPolicy) *store.Ledger {
	t.Helper()
	return testenv.Ledger(t, env, policy, nil)
}

type item map[string]types.AttributeValue

func get(t *testing.T, env *testenv.DynamoDB, pk, sk string) item {
	t.Helper()
	return env.Get(t, pk, sk)
}

func (it item) str(attr string) string {
	if v, ok := it[attr].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return fmt.Sprintf("<%T>", it[attr])
}

func (it item) num(attr string) decimal.Decimal {
	if v, ok := it[attr].(*types.AttributeValueMemberN); ok {
		return decimal.RequireFromString(v.Value)
	}
	return decimal.NewFromInt(-999999)
}

func account(t *testing.T, env *testenv.DynamoDB, cta string) item {
	t.Helper()
	return get(t, env, "CUENTA#"+cta, "CUENTA")
}

// assertAccount checks saldo, version and movimientos of an account item.
func assertAccount(t *testing.T, env *testenv.DynamoDB, cta, saldo string, version, movimientos int64) {
	t.Helper()
	a := account(t, env, cta)
	if !a.num("saldo").Equal(decimal.RequireFromString(saldo)) || a.num("version").IntPart() != version || a.num("movimientos").IntPart() != movimientos {
		t.Fatalf("account %s: saldo %s version %s movimientos %s; want %s, %d, %d",
			cta, a.num("saldo"), a.num("version"), a.num("movimientos"), saldo, version, movimientos)
	}
}

// settle delivers e as SQS would: again and again while the result says "retry", at
// most rounds times.
func settle(ctx context.Context, svc *store.Ledger, e store.Entrega, rounds int) store.Result {
	var r store.Result
	for range rounds {
		if r = svc.Apply(ctx, []store.Entrega{e})[0]; !r.Retry() {
			return r
		}
	}
	return r
}

func TestOneMovementIsRecordedAsDesigned(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	m := mov(t, "pago-8f2c", "ES76", movimiento.Abono, "50.00")

	r, err := testenv.One(svc.Apply(context.Background(), []store.Entrega{{Mov: m, Origen: "msg-1"}}))
	if err != nil || r.Outcome != store.Applied || r.Seq != 1 || !r.SaldoTras.Equal(decimal.RequireFromString("50")) || r.Attempts != 1 {
		t.Fatalf("result = %+v, %v; want applied as seq 1, saldo 50, 1 attempt", r, err)
	}
	assertAccount(t, env, "ES76", "50", 1, 1)
	a := account(t, env, "ES76")
	if a.str("moneda") != "EUR" || !a.num("limite").IsZero() || a.str("creada") != fixedNow.Format(time.RFC3339Nano) || a.str("actualizada") != a.str("creada") {
		t.Errorf("account item = %v", a)
	}

	it := get(t, env, "CUENTA#ES76", "MOV#pago-8f2c")
	want := map[string]string{"tipo": "abono", "moneda": "EUR", "concepto": "Pedido pago-8f2c", "fecha": "2026-12-02T10:15:00Z",
		"huella": m.Huella(), "estado": "aplicado", "aplicado": fixedNow.Format(time.RFC3339Nano), "origen": "msg-1"}
	for attr, v := range want {
		if got := it.str(attr); got != v {
			t.Errorf("movement %s = %q, want %q", attr, got, v)
		}
	}
	if it.num("seq").IntPart() != 1 || !it.num("saldo_tras").Equal(decimal.RequireFromString("50")) || !it.num("importe").Equal(m.Importe) {
		t.Errorf("movement seq/saldo_tras/importe = %s/%s/%s, want 1/50/50", it.num("seq"), it.num("saldo_tras"), it.num("importe"))
	}
	if len(m.Huella()) != 64 {
		t.Errorf("fingerprint %q is not a SHA-256 in hex", m.Huella())
	}
}

func TestSameMovementUnderANewMessageIdIsADuplicate(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	ctx := context.Background()
	m := mov(t, "pago-1", "ES76", movimiento.Abono, "10.00")
	if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: m, Origen: "msg-1"}})); err != nil {
		t.Fatal(err)
	}
	// The same fact, re-published through SNS: new message id, amount spelt otherwise.
	again := mov(t, "pago-1", "ES76", movimiento.Abono, "10")
	r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: again, Origen: "msg-2"}}))
	if err != nil || r.Outcome != store.Duplicate || r.Estado != movimiento.Aplicado || r.Seq != 1 {
		t.Fatalf("redelivery = %+v, %v; want duplicate of seq 1", r, err)
	}
	assertAccount(t, env, "ES76", "10", 1, 1)
	if o := get(t, env, "CUENTA#ES76", "MOV#pago-1").str("origen"); o != "msg-1" {
		t.Errorf("origen = %q: the duplicate overwrote the movement", o)
	}
}

func TestSameKeyOtherContentIsAConflictingDuplicate(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	ctx := context.Background()
	first := mov(t, "pago-1", "ES76", movimiento.Abono, "10.00")
	if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: first, Origen: "msg-1"}})); err != nil {
		t.Fatal(err)
	}
	other := mov(t, "pago-1", "ES76", movimiento.Abono, "99.00")
	r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: other, Origen: "msg-2"}}))
	var dup *store.ConflictingDuplicateError
	if r.Outcome != store.ConflictingDuplicate || !errors.As(err, &dup) || !errors.Is(err, store.ErrPermanent) || r.Retry() {
		t.Fatalf("result = %+v, %v; want a permanent conflicting duplicate", r, err)
	}
	if dup.Stored != first.Huella() || dup.Received != other.Huella() || dup.Cuenta != "ES76" || dup.ID != "pago-1" {
		t.Errorf("error = %+v, want stored %s and new %s", dup, first.Huella(), other.Huella())
	}
	if !strings.Contains(err.Error(), first.Huella()) {
		t.Errorf("message %q does not show the stored fingerprint", err)
	}
	assertAccount(t, env, "ES76", "10", 1, 1)
}

func TestFiftyConcurrentDeliveriesApplyOnce(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	m := mov(t, "pago-1", "ES76", movimiento.Cargo, "0.01")
	seed := mov(t, "seed", "ES76", movimiento.Abono, "1.00")
	if _, err := testenv.One(svc.Apply(context.Background(), []store.Entrega{{Mov: seed}})); err != nil {
		t.Fatal(err)
	}
	const n = 50
	results := make([]store.Result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = settle(context.Background(), svc, store.Entrega{Mov: m, Origen: fmt.Sprintf("msg-%d", i)}, 10)
		}()
	}
	close(start)
	wg.Wait()
	count := map[store.Outcome]int{}
	for _, r := range results {
		count[r.Outcome]++
	}
	if count[store.Applied] != 1 || count[store.Duplicate] != n-1 {
		t.Fatalf("outcomes = %v, want 1 applied and %d duplicates", count, n-1)
	}
	assertAccount(t, env, "ES76", "0.99", 2, 2)
}

func TestTwentyConcurrentMovementsOnOneAccountAllLand(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	const n = 20
	var wg sync.WaitGroup
	results := make([]store.Result, n)
	start := make(chan struct{})
	want := decimal.Zero
	for i := range n {
		importe := fmt.Sprintf("%d.%02d", i+1, i) // 1.00, 2.01, … all different
		want = want.Add(decimal.RequireFromString(importe))
		m := mov(t, fmt.Sprintf("abono-%d", i), "ES76", movimiento.Abono, importe)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = settle(context.Background(), svc, store.Entrega{Mov: m}, 10)
		}()
	}
	close(start)
	wg.Wait()
	var seqs []int
	for i, r := range results {
		if r.Outcome != store.Applied {
			t.Fatalf("movement %d: %+v", i, r)
		}
		seqs = append(seqs, int(r.Seq))
	}
	sort.Ints(seqs)
	for i, s := range seqs {
		if s != i+1 {
			t.Fatalf("seqs = %v, want exactly 1..%d", seqs, n)
		}
	}
	assertAccount(t, env, "ES76", want.String(), n, n)
	// Each movement's saldo_tras is the running balance at its seq.
	bySeq := map[int64]decimal.Decimal{}
	for i := range n {
		it := get(t, env, "CUENTA#ES76", fmt.Sprintf("MOV#abono-%d", i))
		bySeq[it.num("seq").IntPart()] = it.num("saldo_tras")
	}
	running := decimal.Zero
	for seq := int64(1); seq <= n; seq++ {
		prev := running
		running = bySeq[seq]
		if !running.GreaterThan(prev) {
			t.Fatalf("saldo_tras not increasing at seq %d: %s after %s", seq, running, prev)
		}
	}
	if !running.Equal(want) {
		t.Errorf("last saldo_tras %s, want %s", running, want)
	}
}

func TestInsufficientFundsUnderRetryComesBack(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	ctx := context.Background()
	if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "abono-1", "ES76", movimiento.Abono, "30.00")}})); err != nil {
		t.Fatal(err)
	}
	cargo := mov(t, "cargo-1", "ES76", movimiento.Cargo, "30.01")
	r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: cargo}}))
	if r.Outcome != store.Failed || !r.Retry() || !errors.Is(err, store.ErrTransient) || !errors.Is(err, cuenta.SaldoInsuficiente) {
		t.Fatalf("result = %+v, %v; want a transient failure: insufficient funds", r, err)
	}
	if want := "ledger: transient failure: cuenta ES76: insufficient funds: debit of 30.01 with balance 30.00 and overdraft limit 0.00"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if get(t, env, "CUENTA#ES76", "MOV#cargo-1") != nil {
		t.Error("the refused cargo was recorded")
	}
	assertAccount(t, env, "ES76", "30", 1, 1)

	// The credit it was waiting for arrives; the redelivered cargo now applies.
	if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "abono-2", "ES76", movimiento.Abono, "0.01")}})); err != nil {
		t.Fatal(err)
	}
	if r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: cargo}})); err != nil || r.Outcome != store.Applied || r.Seq != 3 {
		t.Fatalf("redelivery after the credit = %+v, %v; want applied as seq 3", r, err)
	}
	assertAccount(t, env, "ES76", "0", 3, 3)
}

func TestOverdraftLimitIsHonoured(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	ctx := context.Background()
	if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "abono-1", "ES76", movimiento.Abono, "10.00")}})); err != nil {
		t.Fatal(err)
	}
	// An operator grants a 100 EUR overdraft (and, like every writer, bumps the version).
	_, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(env.Table()),
		Key:                       item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#ES76"}, "sk": &types.AttributeValueMemberS{Value: "CUENTA"}},
		UpdateExpression:          aws.String("SET limite = :l, version = version + :one"),
		ExpressionAttributeValues: item{":l": &types.AttributeValueMemberN{Value: "100"}, ":one": &types.AttributeValueMemberN{Value: "1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "cargo-1", "ES76", movimiento.Cargo, "110.00")}})); err != nil || r.Outcome != store.Applied {
		t.Fatalf("cargo down to -limite = %+v, %v; want applied", r, err)
	}
	if r, _ := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "cargo-2", "ES76", movimiento.Cargo, "0.01")}})); !r.Retry() {
		t.Fatalf("cargo beyond -limite = %+v, want a transient failure", r)
	}
	assertAccount(t, env, "ES76", "-100", 3, 2)
}

func TestInsufficientFundsUnderRejectIsRecordedOnce(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Reject)
	ctx := context.Background()
	if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "abono-1", "ES76", movimiento.Abono, "30.00")}})); err != nil {
		t.Fatal(err)
	}
	cargo := mov(t, "cargo-1", "ES76", movimiento.Cargo, "50.00")
	r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: cargo, Origen: "msg-1"}}))
	if err != nil || r.Outcome != store.Rejected || r.Estado != movimiento.Rechazado || !strings.Contains(r.Motivo, "insufficient funds") {
		t.Fatalf("result = %+v, %v; want rejected with the reason", r, err)
	}
	it := get(t, env, "CUENTA#ES76", "MOV#cargo-1")
	if it.str("estado") != "rechazado" || it["seq"] != nil || it["saldo_tras"] != nil || it.str("motivo") != r.Motivo {
		t.Errorf("rejected movement item = %v, want estado rechazado, no seq/saldo_tras, the motivo", it)
	}
	assertAccount(t, env, "ES76", "30", 1, 1)

	// Funds arrive; the redelivered cargo still gets the recorded answer.
	if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "abono-2", "ES76", movimiento.Abono, "100.00")}})); err != nil {
		t.Fatal(err)
	}
	r2, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: cargo, Origen: "msg-2"}}))
	if err != nil || r2.Outcome != store.Duplicate || r2.Estado != movimiento.Rechazado || r2.Motivo != r.Motivo {
		t.Fatalf("redelivery = %+v, %v; want the same rejection", r2, err)
	}
	assertAccount(t, env, "ES76", "130", 2, 2)
}

func TestRejectOnANewAccountCreatesNoAccount(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Reject)
	r, err := testenv.One(svc.Apply(context.Background(), []store.Entrega{{Mov: mov(t, "cargo-1", "NEW1", movimiento.Cargo, "1.00")}}))
	if err != nil || r.Outcome != store.Rejected {
		t.Fatalf("result = %+v, %v", r, err)
	}
	if account(t, env, "NEW1") != nil {
		t.Error("a rejected first movement opened the account")
	}
}

func TestCurrencyMismatchIsPermanent(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	ctx := context.Background()
	if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "abono-1", "ES76", movimiento.Abono, "30.00")}})); err != nil {
		t.Fatal(err)
	}
	usd, err := movimiento.New(movimiento.Datos{ID: "abono-2", Cuenta: "ES76", Tipo: movimiento.Abono, Importe: "5", Moneda: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: usd}}))
	if r.Outcome != store.Failed || r.Retry() || !errors.Is(err, store.ErrPermanent) || !errors.Is(err, cuenta.MonedaDistinta) {
		t.Fatalf("result = %+v, %v; want a permanent MonedaDistinta", r, err)
	}
	if get(t, env, "CUENTA#ES76", "MOV#abono-2") != nil {
		t.Error("the refused movement was recorded")
	}
	assertAccount(t, env, "ES76", "30", 1, 1)
}

func TestLateRedeliveryOfAnAppliedCargoIsADuplicateWhateverTheBalance(t *testing.T) {
	for _, policy := range []cuenta.FundsPolicy{cuenta.Retry, cuenta.Reject} {
		t.Run(string(policy), func(t *testing.T) {
			env := testenv.NewDynamoDB(t)
			svc := newService(t, env, policy)
			ctx := context.Background()
			cargo := mov(t, "cargo-1", "ES76", movimiento.Cargo, "80.00")
			for _, m := range []movimiento.Movimiento{mov(t, "abono-1", "ES76", movimiento.Abono, "100.00"), cargo} {
				if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: m}})); err != nil {
					t.Fatal(err)
				}
			}
			// Balance is now 20: the cargo could not pass the rules again, but it is
			// already in the ledger, so its redelivery must be a plain duplicate.
			r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: cargo}}))
			if err != nil || r.Outcome != store.Duplicate || r.Estado != movimiento.Aplicado || r.Seq != 2 {
				t.Fatalf("late redelivery = %+v, %v; want a duplicate of seq 2", r, err)
			}
			assertAccount(t, env, "ES76", "20", 2, 2)
		})
	}
}

func TestExactDecimalArithmetic(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	ctx := context.Background()
	var batch []store.Entrega
	for i := range 300 {
		batch = append(batch, store.Entrega{Mov: mov(t, fmt.Sprintf("c-%d", i), "ES76", movimiento.Abono, "0.10")})
	}
	batch = append(batch,
		store.Entrega{Mov: mov(t, "big-1", "ES76", movimiento.Abono, "123456789012345678.91")},
		store.Entrega{Mov: mov(t, "big-2", "ES76", movimiento.Abono, "876543210987654321.09")},
		store.Entrega{Mov: mov(t, "big-3", "ES76", movimiento.Cargo, "999999999999999999.99")},
	)
	for i, r := range svc.Apply(ctx, batch) {
		if r.Outcome != store.Applied {
			t.Fatalf("movement %d: %+v", i, r)
		}
	}
	// 300 × 0.10 = 30.00 exactly; the big ones sum to 1e18 - 999999999999999999.99 = 0.01.
	assertAccount(t, env, "ES76", "30.01", 4, 303)
	big := get(t, env, "CUENTA#ES76", "MOV#big-2").num("saldo_tras")
	if want := decimal.RequireFromString("1000000000000000030.00"); !big.Equal(want) {
		t.Errorf("saldo_tras after big-2 = %s, want %s (20+ significant digits kept exactly)", big, want)
	}
}

// TestEmbeddedStoreNumberGap pins down a known gap of the embedded store (minidyn), so
// nobody mistakes it for a bug of ours: arithmetic and values in UpdateItem expressions
// pass through float64, while a plain Put keeps the number's exact text. The ledger
// writes whole items with Put (never ADD/SET arithmetic), which is why its balances
// are exact on every backend. If this test fails, minidyn fixed the gap: update
// docs/design.md's "Test backends" and delete the test.
func TestEmbeddedStoreNumberGap(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	if env.Backend != testenv.Minidyn {
		t.Skip("the gap is the embedded store's")
	}
	ctx := context.Background()
	key := item{"pk": &types.AttributeValueMemberS{Value: "GAP"}, "sk": &types.AttributeValueMemberS{Value: "GAP"}}
	_, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(env.Table()), Key: key,
		UpdateExpression:          aws.String("ADD saldo :v"),
		ExpressionAttributeValues: item{":v": &types.AttributeValueMemberN{Value: "1234567890123456.78"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, env, "GAP", "GAP").num("saldo"); !got.Equal(decimal.RequireFromString("1234567890123456.8")) {
		t.Fatalf("minidyn ADD stored %s; the float64 gap is gone", got)
	}
	_, err = env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table()),
		Item: item{"pk": key["pk"], "sk": key["sk"], "saldo": &types.AttributeValueMemberN{Value: "1234567890123456.78"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, env, "GAP", "GAP").num("saldo"); !got.Equal(decimal.RequireFromString("1234567890123456.78")) {
		t.Fatalf("minidyn Put stored %s, want the exact value", got)
	}
}

// A second delivery of a (cuenta, id) in the same batch is answered as its first: the
// duplicate of a rejected debit says rejected, with the reason; another content under
// that id is a conflicting duplicate, whether the first was rejected or itself refused
// as conflicting with what is stored.
func TestRepeatsWithinABatchAreAnsweredAsTheirFirst(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Reject)
	ctx := context.Background()
	if r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "a1", "R", movimiento.Abono, "10.00")}})); err != nil || r.Outcome != store.Applied {
		t.Fatalf("abono: %+v, %v", r, err)
	}
	res := svc.Apply(ctx, []store.Entrega{
		{Mov: mov(t, "c1", "R", movimiento.Cargo, "50.00")}, // beyond the balance: rejected
		{Mov: mov(t, "c1", "R", movimiento.Cargo, "50.00")},
		{Mov: mov(t, "c1", "R", movimiento.Cargo, "60.00")},
		{Mov: mov(t, "a1", "R", movimiento.Abono, "20.00")}, // not the stored a1
		{Mov: mov(t, "a1", "R", movimiento.Abono, "30.00")},
	})
	if res[0].Outcome != store.Rejected || res[0].Motivo == "" {
		t.Fatalf("the debit beyond the balance: %+v", res[0])
	}
	if r := res[1]; r.Outcome != store.Duplicate || r.Estado != movimiento.Rechazado || r.Motivo != res[0].Motivo {
		t.Errorf("its repeat: %+v, want a duplicate of the rejection, motivo %q", r, res[0].Motivo)
	}
	for i, what := range map[int]string{2: "another amount under the rejected debit's id", 3: "another a1", 4: "a third a1"} {
		if res[i].Outcome != store.ConflictingDuplicate {
			t.Errorf("%s: %+v, want a conflicting duplicate", what, res[i])
		}
	}
}

func put(t *testing.T, env *testenv.DynamoDB, it item) {
	t.Helper()
	env.Put(t, it)
}
