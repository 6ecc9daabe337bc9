package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/shopspring/decimal"
)

var reparto = testenv.Reparto

// audits fails the test unless the table passes the audit.
func audits(t *testing.T, env *testenv.DynamoDB) {
	t.Helper()
	if report, err := audit.Run(context.Background(), env.Client, env.Table(), audit.Options{}); err != nil || !report.OK {
		t.Fatalf("audit: %+v, %v", report, err)
	}
}

// A reparto debits its payer and credits every part in one transaction: all legs or
// none, each its own record naming the payer, answered as one movement on redelivery.
func TestARepartoWritesEveryLegOrNone(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	svc := lockedLedger(t, env, ft, store.Budget{})
	apply(t, svc, mov(t, "a", "COMPRADOR", movimiento.Abono, "150.00"))
	pago := reparto(t, "pedido-77", "COMPRADOR", "100.00", "VENDEDOR:90.00", "PLATAFORMA:8.50", "IMPUESTOS:1.50")
	ft.ResetCounts()
	if r := apply(t, svc, pago); r.Outcome != store.Applied || r.Seq != 2 || r.SaldoTras.String() != "50" || ft.Calls("TransactWriteItems") != 1 {
		t.Fatalf("the reparto = %+v in %d transactions, want applied at seq 2 leaving 50, in one", r, ft.Calls("TransactWriteItems"))
	}
	for cta, want := range map[string]string{"VENDEDOR": "90", "PLATAFORMA": "8.5", "IMPUESTOS": "1.5"} {
		leg := get(t, env, "CUENTA#"+cta, "MOV#pedido-77")
		if leg.str("tipo") != "abono" || leg.str("contrapartida") != "COMPRADOR" || leg.num("importe").String() != want || leg.num("seq").IntPart() != 1 {
			t.Errorf("%s's leg = %v, want an abono of %s naming COMPRADOR at seq 1", cta, leg, want)
		}
		assertAccount(t, env, cta, want, 1, 1)
	}
	if r := apply(t, svc, pago); r.Outcome != store.Duplicate || r.Seq != 2 {
		t.Errorf("its redelivery = %+v, want a duplicate of seq 2", r)
	}
	otro := reparto(t, "pedido-77", "COMPRADOR", "100.00", "VENDEDOR:90.00", "PLATAFORMA:9.50", "IMPUESTOS:0.50")
	if r := apply(t, svc, otro); r.Outcome != store.ConflictingDuplicate {
		t.Errorf("the same id with other parts = %+v, want a conflicting duplicate", r)
	}
	if r := apply(t, svc, reparto(t, "pedido-78", "COMPRADOR", "60.00", "VENDEDOR:30.00", "PLATAFORMA:30.00")); r.Outcome != store.Failed || !errors.Is(r.Err, cuenta.SaldoInsuficiente) {
		t.Errorf("a reparto beyond the payer's funds = %+v, want it back: insufficient funds", r)
	}
	if get(t, env, "CUENTA#VENDEDOR", "MOV#pedido-78") != nil {
		t.Error("a leg of the refused reparto was written")
	}
	audits(t, env)
}

// A leg's key already taken on a credited account (the same id, another movement) makes
// the reparto a conflicting duplicate, and nothing of it is written.
func TestARepartoWhoseLegIsTakenIsAConflict(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	apply(t, svc, mov(t, "a", "P", movimiento.Abono, "10.00"))
	apply(t, svc, mov(t, "x", "Q2", movimiento.Abono, "1.00"))
	r := apply(t, svc, reparto(t, "x", "P", "2.00", "Q1:1.00", "Q2:1.00"))
	var dup *store.ConflictingDuplicateError
	if r.Outcome != store.ConflictingDuplicate || !errors.As(r.Err, &dup) || dup.Cuenta != "Q2" {
		t.Fatalf("a reparto whose key is taken on Q2 = %+v, want a conflicting duplicate naming Q2", r)
	}
	assertAccount(t, env, "P", "10", 1, 1)
	if get(t, env, "CUENTA#Q1", "MOV#x") != nil {
		t.Error("Q1's leg was written")
	}
}

// The largest reparto (movimiento.MaxPartes parts) is one transaction, and so is its
// reversal, which takes every part back; a movement beside it that would take the
// transaction past DynamoDB's 100 actions waits for the next one.
func TestTheLargestRepartoAndItsReversalAreOneTransactionEach(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	svc := lockedLedger(t, env, ft, store.Budget{})
	apply(t, svc, mov(t, "a", "PAGADOR", movimiento.Abono, "1000.00"))
	var partes []string
	for i := range movimiento.MaxPartes {
		partes = append(partes, fmt.Sprintf("P%02d:1.00", i))
	}
	big := reparto(t, "grande", "PAGADOR", fmt.Sprintf("%d.00", movimiento.MaxPartes), partes...)
	ft.ResetCounts()
	rs := svc.Apply(context.Background(), []store.Entrega{
		{Mov: mov(t, "antes", "OTRA", movimiento.Abono, "1.00")}, {Mov: big}, {Mov: mov(t, "despues", "P00", movimiento.Abono, "1.00")},
	})
	for i, r := range rs {
		if r.Outcome != store.Applied {
			t.Fatalf("delivery %d = %+v, want applied", i, r)
		}
	}
	if n := ft.Calls("TransactWriteItems"); n != 2 {
		t.Errorf("%d transactions, want 2: OTRA's 2 actions and the reparto's 98 fill one, and the next movement waits", n)
	}
	ft.ResetCounts()
	if r := apply(t, svc, anulacion(t, "vuelta", "PAGADOR", "grande", "", "")); r.Outcome != store.Applied || r.SaldoTras.String() != "1000" || ft.Calls("TransactWriteItems") != 1 {
		t.Fatalf("its reversal = %+v in %d transactions, want one, PAGADOR back to 1000", r, ft.Calls("TransactWriteItems"))
	}
	assertAccount(t, env, "P47", "0", 2, 2)
	assertAccount(t, env, "P00", "1", 3, 3)
	audits(t, env)
}

// An abono or cargo is refunded in parts, each its own movement and at most once,
// until nothing is left; a refund of more than is left is refused for good, naming
// what is left; the original shows what was refunded and by whom.
func TestPartialRefundsUntilNothingIsLeft(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	apply(t, svc, mov(t, "a", "R", movimiento.Abono, "100.00"))
	apply(t, svc, mov(t, "compra", "R", movimiento.Cargo, "60.00"))
	for _, step := range []struct {
		id, importe, saldo, left string
	}{{"dev-1", "10.00", "50", "50"}, {"dev-2", "20.00", "70", "30"}} {
		if r := apply(t, svc, anulacion(t, step.id, "R", "compra", step.importe, "")); r.Outcome != store.Applied || r.SaldoTras.String() != step.saldo {
			t.Fatalf("refund %s of %s = %+v, want applied leaving %s", step.id, step.importe, r, step.saldo)
		}
		if r := apply(t, svc, anulacion(t, step.id, "R", "compra", step.importe, "")); r.Outcome != store.Duplicate {
			t.Errorf("refund %s again = %+v, want a duplicate", step.id, r)
		}
	}
	if r := apply(t, svc, anulacion(t, "dev-3", "R", "compra", "30.01", "")); !refusedFor(r, cuenta.ImporteAnulacion) || !contains(r.Err, "has 30 left to refund") {
		t.Errorf("a refund of more than is left = %+v, want refused naming the 30 left", r)
	}
	o, err := store.NewReader(env.Client, env.Table()).Apunte(context.Background(), "R", "compra")
	if err != nil || !o.Reembolsado.Equal(dec("30")) || fmt.Sprint(o.Anulaciones) != "[dev-1 dev-2]" || o.AnuladoPor != "" {
		t.Fatalf("the original = %+v, %v; want 30 refunded by dev-1 and dev-2, not reversed yet", o, err)
	}
	if r := apply(t, svc, anulacion(t, "dev-3", "R", "compra", "", "")); r.Outcome != store.Applied || r.SaldoTras.String() != "100" {
		t.Fatalf("a refund of what is left = %+v, want 30 back, leaving 100", r)
	}
	if r := apply(t, svc, anulacion(t, "dev-4", "R", "compra", "0.01", "")); !refusedFor(r, cuenta.YaAnulado) {
		t.Errorf("a refund once nothing is left = %+v, want refused: already reversed", r)
	}
	assertAccount(t, env, "R", "100", 5, 5)
	audits(t, env)
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// contains reports whether err says s.
func contains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }
