package idempotencia_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/compare/idempotencia"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

type fixture struct {
	env   *testenv.DynamoDB
	svc   *idempotencia.Service
	clock *sim.Clock
}

func newFixture(t *testing.T, db idempotencia.Client, env *testenv.DynamoDB, cfg idempotencia.Config) *fixture {
	t.Helper()
	c := sim.NewClock() // expiries pass without waiting
	cfg.Table, cfg.Accounts, cfg.Now = env.Tables[idempotencia.Table], env.Table(), c.Now
	svc, err := idempotencia.New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{env: env, svc: svc, clock: c}
}

// faultyFixture is a fixture whose calls go through a fault-injecting transport, each
// tried once.
func faultyFixture(t *testing.T) (*fixture, *sim.Transport) {
	t.Helper()
	env := baselineEnv(t)
	ft := sim.NewTransport(nil)
	cfg := env.Config.Copy()
	cfg.HTTPClient, cfg.RetryMaxAttempts = &http.Client{Transport: ft}, 1
	return newFixture(t, awsconf.DynamoDB(cfg, env.Endpoint), env, idempotencia.Config{}), ft
}

func mov(t *testing.T, id, cta, tipo, importe string) movimiento.Movimiento {
	t.Helper()
	return testenv.Movement(t, movimiento.Datos{ID: id, Cuenta: cta, Tipo: movimiento.Tipo(tipo), Importe: importe, Moneda: "EUR"})
}

func (f *fixture) apply(m movimiento.Movimiento, msgID string) store.Result {
	return f.svc.Apply(context.Background(), []store.Entrega{{Mov: m, Origen: msgID}})[0]
}

func (f *fixture) saldo(t *testing.T, cta string) string {
	t.Helper()
	s, n, ok, err := f.svc.Saldo(context.Background(), cta)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "none"
	}
	return fmt.Sprintf("%s/%d", s.StringFixed(2), n)
}

func (f *fixture) record(t *testing.T, key string) map[string]types.AttributeValue {
	t.Helper()
	out, err := f.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(f.env.Tables[idempotencia.Table]), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

func estado(item map[string]types.AttributeValue) string {
	if v, ok := item["estado"].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return "absent"
}

func TestDuplicateUnderAnotherMessageIDIsAppliedOnce(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{})
	m := mov(t, "pago-1", "ES01", "abono", "50.00")
	if r := f.apply(m, "msg-1"); r.Outcome != store.Applied || r.Err != nil {
		t.Fatalf("first delivery: %+v", r)
	}
	if r := f.apply(m, "msg-2"); r.Outcome != store.Duplicate || r.Estado != movimiento.Aplicado {
		t.Fatalf("second delivery: %+v, want a duplicate of an applied movement", r)
	}
	if got := f.saldo(t, "ES01"); got != "50.00/1" {
		t.Errorf("balance/count = %s, want 50.00/1", got)
	}
	if e := estado(f.record(t, "MOV#ES01#pago-1")); e != "hecho" {
		t.Errorf("record estado = %s, want hecho", e)
	}
}

func TestConflictingDuplicateIsRefusedForGood(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{})
	f.apply(mov(t, "pago-1", "ES01", "abono", "50.00"), "msg-1")
	r := f.apply(mov(t, "pago-1", "ES01", "abono", "60.00"), "msg-2")
	var conflict *store.ConflictingDuplicateError
	if r.Outcome != store.ConflictingDuplicate || !errors.As(r.Err, &conflict) || !errors.Is(r.Err, store.ErrPermanent) {
		t.Fatalf("result = %+v, want a permanent conflicting duplicate", r)
	}
	if got := f.saldo(t, "ES01"); got != "50.00/1" {
		t.Errorf("balance/count = %s, want the first movement only", got)
	}
}

var errCrash = errors.New("test: the process dies here")

// crashOnce makes the first delivery of movement id that reaches point p die there.
func crashOnce(p idempotencia.Point, id string) func(context.Context, idempotencia.Point, movimiento.Movimiento) error {
	var once sync.Once
	return func(_ context.Context, at idempotencia.Point, m movimiento.Movimiento) error {
		var err error
		if at == p && m.ID == id {
			once.Do(func() { err = errCrash })
		}
		return err
	}
}

func TestCrashAfterReserveBlocksTheKeyUntilTheInProgressExpiry(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{InProgress: 30 * time.Second, Hook: crashOnce(idempotencia.AfterReserve, "pago-1")})
	m := mov(t, "pago-1", "ES01", "abono", "50.00")
	if r := f.apply(m, "msg-1"); !errors.Is(r.Err, errCrash) {
		t.Fatalf("crashed delivery: %+v", r)
	}
	if e := estado(f.record(t, "MOV#ES01#pago-1")); e != "en-curso" {
		t.Fatalf("record after the crash: %s, want en-curso", e)
	}
	f.clock.Advance(29 * time.Second)
	r := f.apply(m, "msg-1")
	var inProgress *idempotencia.InProgressError
	if !errors.As(r.Err, &inProgress) || !r.Retry() || inProgress.Key != "MOV#ES01#pago-1" {
		t.Fatalf("redelivery inside the window: %+v, want in progress (comes back)", r)
	}
	if got := f.saldo(t, "ES01"); got != "none" {
		t.Errorf("balance = %s: the effect ran although the crash came before it", got)
	}
	f.clock.Advance(2 * time.Second)
	if r := f.apply(m, "msg-1"); r.Outcome != store.Applied {
		t.Fatalf("redelivery after the in-progress expiry: %+v, want applied", r)
	}
	if got := f.saldo(t, "ES01"); got != "50.00/1" {
		t.Errorf("balance/count = %s, want 50.00/1", got)
	}
}

func TestCrashAfterEffectAppliesAgainOnceTheInProgressExpiryPasses(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{InProgress: 30 * time.Second, Hook: crashOnce(idempotencia.AfterEffect, "pago-1")})
	m := mov(t, "pago-1", "ES01", "cargo", "50.00")
	f.apply(mov(t, "nomina", "ES01", "abono", "500.00"), "msg-0")
	f.apply(m, "msg-1")
	f.clock.Advance(time.Minute) // the message comes back after its visibility timeout
	if r := f.apply(m, "msg-1"); r.Outcome != store.Applied {
		t.Fatalf("redelivery: %+v", r)
	}
	// The design's trap, pinned: the first effect landed, the record was never marked.
	if got := f.saldo(t, "ES01"); got != "400.00/3" {
		t.Errorf("balance/count = %s, want 400.00/3: the cargo charged twice", got)
	}
}

func TestFailedEffectReleasesTheReservation(t *testing.T) {
	f, ft := faultyFixture(t)
	m := mov(t, "pago-1", "ES01", "abono", "50.00")

	ft.Inject("UpdateItem", sim.InternalError)
	if r := f.apply(m, "msg-1"); !r.Retry() {
		t.Fatalf("delivery whose effect failed: %+v, want a transient failure", r)
	}
	if e := estado(f.record(t, "MOV#ES01#pago-1")); e != "absent" {
		t.Fatalf("record after the failed effect: %s, want it released", e)
	}
	if r := f.apply(m, "msg-1"); r.Outcome != store.Applied {
		t.Fatalf("retry: %+v, want applied", r)
	}

	// A cargo the balance cannot cover is released too (retry policy): it passes once
	// the credit it waited for arrives.
	cargo := mov(t, "pago-2", "ES01", "cargo", "80.00")
	if r := f.apply(cargo, "msg-2"); !r.Retry() || !errors.Is(r.Err, cuenta.SaldoInsuficiente) || estado(f.record(t, "MOV#ES01#pago-2")) != "absent" {
		t.Fatalf("uncovered cargo: %+v, record %s; want insufficient funds, transient, released", r, estado(f.record(t, "MOV#ES01#pago-2")))
	}
	f.apply(mov(t, "pago-3", "ES01", "abono", "40.00"), "msg-3")
	if r := f.apply(cargo, "msg-2"); r.Outcome != store.Applied {
		t.Fatalf("cargo after the credit: %+v", r)
	}
	if got := f.saldo(t, "ES01"); got != "10.00/3" {
		t.Errorf("balance/count = %s, want 10.00/3", got)
	}

	// A release that fails too is said: the key stays in progress until its window ends.
	ft.Inject("UpdateItem", sim.InternalError)
	ft.Inject("DeleteItem", sim.InternalError)
	if r := f.apply(mov(t, "pago-4", "ES01", "abono", "1.00"), "msg-4"); !r.Retry() || !strings.Contains(r.Err.Error(), "idempotencia: release MOV#ES01#pago-4") {
		t.Errorf("an effect and its release failed: %+v, want a transient failure naming the release", r)
	}
}

func TestRejectPolicyRecordsTheRefusal(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{InsufficientFunds: cuenta.Reject})
	cargo := mov(t, "pago-1", "ES01", "cargo", "80.00")
	if r := f.apply(cargo, "msg-1"); r.Outcome != store.Rejected || r.Estado != movimiento.Rechazado {
		t.Fatalf("uncovered cargo: %+v, want rejected", r)
	}
	f.apply(mov(t, "pago-2", "ES01", "abono", "100.00"), "msg-2")
	if r := f.apply(cargo, "msg-1"); r.Outcome != store.Duplicate || r.Estado != movimiento.Rechazado {
		t.Fatalf("redelivery: %+v, want the same answer (a duplicate of the rejection)", r)
	}
	other := mov(t, "pago-3", "ES01", "abono", "5.00")
	other.Moneda = "USD"
	if r := f.apply(other, "msg-3"); !errors.Is(r.Err, store.ErrPermanent) {
		t.Errorf("another currency: %+v, want permanent", r)
	}
}

func TestMessageIDKeyAppliesAnSNSRedeliveryAgain(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{KeyFromMessageID: true})
	m := mov(t, "pago-1", "ES01", "abono", "50.00")
	f.apply(m, "msg-1")
	if r := f.apply(m, "msg-1"); r.Outcome != store.Duplicate {
		t.Fatalf("same message again: %+v, want a duplicate", r)
	}
	if r := f.apply(m, "msg-2"); r.Outcome != store.Applied {
		t.Fatalf("same fact under a new message id: %+v; the trap would make this applied", r)
	}
	if got := f.saldo(t, "ES01"); got != "100.00/2" {
		t.Errorf("balance/count = %s, want 100.00/2: one fact charged twice", got)
	}
}

func TestExpiredRecordNoLongerRecognisesALateDuplicate(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{Expiry: time.Hour})
	m := mov(t, "pago-1", "ES01", "abono", "50.00")
	f.apply(m, "msg-1")
	f.clock.Advance(59 * time.Minute)
	if r := f.apply(m, "msg-2"); r.Outcome != store.Duplicate {
		t.Fatalf("duplicate inside the expiry: %+v", r)
	}
	f.clock.Advance(2 * time.Minute) // expired, not yet deleted: TTL deletes within days
	if r := f.apply(m, "msg-3"); r.Outcome != store.Applied {
		t.Fatalf("late duplicate: %+v; the trap would make this applied", r)
	}
	if got := f.saldo(t, "ES01"); got != "100.00/2" {
		t.Errorf("balance/count = %s, want 100.00/2", got)
	}
}

// The baseline moves a transfer with two ADDs under one reservation. Done, it is exact;
// killed between them, the debit stands without its credit until the redelivery,
// after the in-progress expiry, debits again: money destroyed.
func TestATransferIsTwoEffectsUnderOneReservation(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{InProgress: 30 * time.Second, Hook: crashOnce(idempotencia.BetweenLegs, "tr-2")})
	f.apply(mov(t, "a", "T1", "abono", "100.00"), "msg-0")
	if r := f.apply(testenv.Traspaso(t, "tr-1", "T1", "T2", "30.00"), "msg-1"); r.Outcome != store.Applied {
		t.Fatalf("transfer: %+v", r)
	}
	if a, b := f.saldo(t, "T1"), f.saldo(t, "T2"); a != "70.00/2" || b != "30.00/1" {
		t.Fatalf("after the transfer: %s and %s", a, b)
	}
	f.apply(testenv.Traspaso(t, "tr-2", "T1", "T2", "10.00"), "msg-2") // dies between the legs
	if a, b := f.saldo(t, "T1"), f.saldo(t, "T2"); a != "60.00/3" || b != "30.00/1" {
		t.Fatalf("killed between the legs: %s and %s, want the debit alone", a, b)
	}
	f.clock.Advance(time.Minute)
	if r := f.apply(testenv.Traspaso(t, "tr-2", "T1", "T2", "10.00"), "msg-2"); r.Outcome != store.Applied {
		t.Fatalf("redelivery: %+v", r)
	}
	if a, b := f.saldo(t, "T1"), f.saldo(t, "T2"); a != "50.00/4" || b != "40.00/2" {
		t.Errorf("after the redelivery: %s and %s, want T1 debited twice (the design's trap)", a, b)
	}
}

func TestTheBaselineRefusesWhatItCannotApply(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{})
	an := testenv.Movement(t, movimiento.Datos{ID: "an", Cuenta: "T1", Tipo: movimiento.Anulacion, Anula: "a"})
	if r := f.apply(an, "msg"); !errors.Is(r.Err, idempotencia.ErrUnsupported) || !errors.Is(r.Err, store.ErrPermanent) {
		t.Fatalf("a reversal: %+v, want a permanent ErrUnsupported", r)
	}
}

// The baseline's trap: the effect is made but the record cannot be marked hecho. The
// delivery fails as ErrNotMarked, with the money already moved and the record still
// in progress.
func TestAnUnmarkedRecordFailsAsErrNotMarked(t *testing.T) {
	f, ft := faultyFixture(t)

	ft.Inject("UpdateItem", sim.Fault(0), sim.InternalError) // the effect passes, the mark fails
	r := f.apply(mov(t, "pago-1", "ES01", "abono", "50.00"), "msg-1")
	if !r.Retry() || !errors.Is(r.Err, idempotencia.ErrNotMarked) {
		t.Fatalf("delivery whose mark failed: %+v, want transient ErrNotMarked", r)
	}
	if got, e := f.saldo(t, "ES01"), estado(f.record(t, "MOV#ES01#pago-1")); got != "50.00/1" || e == "hecho" || e == "absent" {
		t.Errorf("after the failed mark: balance %s, record %s; want 50.00/1 and the record still in progress", got, e)
	}
}

// A transfer whose credit the destination refuses (another currency) has its debit
// undone and fails for good: no money is destroyed, and the reservation is released.
func TestARefusedCreditUndoesTheTransfersDebit(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{})
	f.apply(mov(t, "a", "U1", "abono", "100.00"), "msg-0")
	usd := testenv.Movement(t, movimiento.Datos{ID: "b", Cuenta: "U2", Tipo: movimiento.Abono, Importe: "5.00", Moneda: "USD"})
	f.apply(usd, "msg-1")
	r := f.apply(testenv.Traspaso(t, "tr-1", "U1", "U2", "30.00"), "msg-2")
	if !errors.Is(r.Err, store.ErrPermanent) || !strings.Contains(r.Err.Error(), "USD") {
		t.Fatalf("transfer into a USD account: %+v, want a permanent failure naming USD", r)
	}
	if a, b := f.saldo(t, "U1"), f.saldo(t, "U2"); !strings.HasPrefix(a, "100.00/") || b != "5.00/1" {
		t.Errorf("after the refused credit: %s and %s, want both balances as before", a, b)
	}
}

// baselineEnv is a DynamoDB with the ledger's table and the baseline's.
func baselineEnv(t *testing.T) *testenv.DynamoDB {
	t.Helper()
	m, err := idempotencia.Migration()
	if err != nil {
		t.Fatal(err)
	}
	return testenv.NewDynamoDBWith(t, m)
}

// A FIFO message group stops at its first failure in the baseline too: the comparison
// gives both designs one delivery contract.
func TestAFIFOGroupStopsAtItsFirstFailure(t *testing.T) {
	env := baselineEnv(t)
	f := newFixture(t, env.Client, env, idempotencia.Config{})
	rs := f.svc.Apply(context.Background(), []store.Entrega{
		{Mov: mov(t, "c1", "ES01", "cargo", "5.00"), Grupo: "ES01"}, // nothing to debit
		{Mov: mov(t, "b1", "ES02", "abono", "1.00"), Grupo: "ES02"},
		{Mov: mov(t, "a1", "ES01", "abono", "9.00"), Grupo: "ES01"},
	})
	if rs[0].Outcome != store.Failed || rs[1].Outcome != store.Applied || !errors.Is(rs[2].Err, store.ErrNotAttempted) {
		t.Fatalf("results %+v, want c1 failed, b1 applied, a1 not attempted", rs)
	}
	if got := f.saldo(t, "ES01"); got != "none" {
		t.Errorf("ES01 = %s, want no account: a1 untried", got)
	}
}
