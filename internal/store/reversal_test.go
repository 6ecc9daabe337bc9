package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// anulacion is the reversal id of the movement anula on cta; importe and moneda are
// optional.

// refusedFor reports whether r is a permanent refusal by rule: a hold's, a reversal's or
// a limit's.
func refusedFor(r store.Result, rule cuenta.Rule) bool {
	return r.Outcome == store.Failed && errors.Is(r.Err, store.ErrPermanent) && errors.Is(r.Err, rule)
}

func TestAReversalUndoesItsOriginalOnce(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	apply(t, svc, mov(t, "a", "R", movimiento.Abono, "100.00"))
	apply(t, svc, mov(t, "pago", "R", movimiento.Cargo, "30.00"))

	r := apply(t, svc, anulacion(t, "an-1", "R", "pago", "", ""))
	if r.Outcome != store.Applied || r.Seq != 3 || r.SaldoTras.String() != "100" {
		t.Fatalf("reversal = %+v, want applied as seq 3, saldo 100", r)
	}
	rev := get(t, env, "CUENTA#R", "MOV#an-1")
	if rev.str("tipo") != "abono" || rev.str("anula") != "pago" || rev.num("importe").String() != "30" || rev.str("moneda") != "EUR" {
		t.Errorf("reversal item = %v, want the opposite abono of 30 EUR naming pago", rev)
	}
	if by := get(t, env, "CUENTA#R", "MOV#pago").str("anulado_por"); by != "an-1" {
		t.Errorf("original's anulado_por = %q, want an-1", by)
	}

	if r := apply(t, svc, anulacion(t, "an-1", "R", "pago", "", "")); r.Outcome != store.Duplicate || r.Seq != 3 {
		t.Errorf("the same reversal again = %+v, want a duplicate of seq 3", r)
	}
	r = apply(t, svc, anulacion(t, "an-2", "R", "pago", "", ""))
	if !refusedFor(r, cuenta.YaAnulado) || !strings.Contains(r.Err.Error(), "already reversed by an-1") {
		t.Errorf("another reversal of it = %+v, want permanent: already reversed by an-1", r)
	}
	assertAccount(t, env, "R", "100", 3, 3)
}

func TestAReversalWaitsForItsOriginalAndRefusesWhatItCannotUndo(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Reject)
	apply(t, svc, mov(t, "a", "Q", movimiento.Abono, "10.00"))

	if r := apply(t, svc, anulacion(t, "an-x", "Q", "pronto", "", "")); r.Outcome != store.Failed || !r.Retry() {
		t.Fatalf("reversal before its original = %+v, want transient: it may be on its way", r)
	}
	apply(t, svc, mov(t, "pronto", "Q", movimiento.Abono, "5.00"))
	if r := apply(t, svc, anulacion(t, "an-x", "Q", "pronto", "5", "EUR")); r.Outcome != store.Applied {
		t.Fatalf("once the original is there = %+v, want applied", r)
	}

	apply(t, svc, mov(t, "grande", "Q", movimiento.Cargo, "1000.00")) // rejected: no funds
	apply(t, svc, mov(t, "b", "Q", movimiento.Abono, "7.00"))
	for name, tc := range map[string]struct {
		m    movimiento.Movimiento
		want cuenta.Rule
	}{
		"a rejected original": {anulacion(t, "an-r", "Q", "grande", "", ""), cuenta.NoAplicado},
		"a reversal":          {anulacion(t, "an-rr", "Q", "an-x", "", ""), cuenta.AnulaAnulacion},
		"another importe":     {anulacion(t, "an-i", "Q", "b", "7.01", "EUR"), cuenta.ImporteAnulacion},
		"another moneda":      {anulacion(t, "an-m", "Q", "b", "", "USD"), cuenta.MonedaAnulacion},
	} {
		if r := apply(t, svc, tc.m); !refusedFor(r, tc.want) {
			t.Errorf("%s: %+v, want refused: %s", name, r, tc.want)
		}
	}
	if r := apply(t, svc, anulacion(t, "an-e", "Z", "b", "", "")); !r.Retry() || !errors.Is(r.Err, cuenta.NoRegistrado) {
		t.Errorf("an original elsewhere: %+v, want transient: it is not recorded on Z (yet)", r)
	}
	assertAccount(t, env, "Q", "17", 4, 4)

	// A hold and its release moved no balance: neither is a movement to reverse.
	apply(t, svc, mov(t, "r", "R", movimiento.Abono, "100.00"))
	apply(t, svc, hold(t, "aut", "R", "30.00", time.Now().Add(time.Hour)))
	apply(t, svc, settleHold(t, movimiento.Liberacion, "lib", "R", "aut", ""))
	for original, rule := range map[string]cuenta.Rule{"aut": cuenta.NoAplicado, "lib": cuenta.TipoNoAnulable} {
		if r := apply(t, svc, anulacion(t, "an-"+original, "R", original, "", "")); !refusedFor(r, rule) {
			t.Errorf("a reversal of %s: %+v, want refused: %s", original, r, rule)
		}
	}
	assertAccount(t, env, "R", "100", 3, 1)
}

// Reversing an abono is a debit: the funds policy and a freeze apply to it.
func TestReversingAnAbonoMeetsTheRulesOfADebit(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	apply(t, svc, mov(t, "a", "D", movimiento.Abono, "50.00"))
	apply(t, svc, mov(t, "b", "D", movimiento.Cargo, "40.00"))
	if r := apply(t, svc, anulacion(t, "an-a", "D", "a", "", "")); r.Outcome != store.Failed || !errors.Is(r.Err, cuenta.SaldoInsuficiente) || !r.Retry() {
		t.Fatalf("reversal of an abono without funds = %+v, want a transient refusal", r)
	}
	if _, _, err := svc.Administrar(context.Background(), "D", bloqueada(true)); err != nil {
		t.Fatal(err)
	}
	if r := apply(t, svc, anulacion(t, "an-b", "D", "b", "", "")); r.Outcome != store.Applied {
		t.Fatalf("reversal of a cargo (a credit) of a frozen account = %+v, want applied", r)
	}
	if r := apply(t, svc, anulacion(t, "an-a", "D", "a", "", "")); !errors.Is(r.Err, cuenta.CuentaBloqueada) {
		t.Fatalf("reversal of an abono of a frozen account = %+v, want refused: frozen", r)
	}
	assertAccount(t, env, "D", "50", 4, 3)
}

// Two consumers reverse one movement under two ids at once: one wins, the other is
// refused naming the winner, and the money moves once.
func TestRacingReversalsMoveMoneyOnce(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	setup := newService(t, env, cuenta.Retry)
	apply(t, setup, mov(t, "a", "C", movimiento.Abono, "100.00"))
	apply(t, setup, mov(t, "pago", "C", movimiento.Cargo, "25.00"))
	svcs := []*store.Ledger{newService(t, env, cuenta.Retry), newService(t, env, cuenta.Retry)}
	results := make([]store.Result, 2)
	var wg sync.WaitGroup
	for i := range svcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = apply(t, svcs[i], anulacion(t, []string{"an-1", "an-2"}[i], "C", "pago", "", ""))
		}()
	}
	wg.Wait()
	won, lost := 0, 0
	for i, r := range results {
		switch {
		case r.Outcome == store.Applied:
			won++
		case refusedFor(r, cuenta.YaAnulado) && strings.Contains(r.Err.Error(), "already reversed by an-"+string(rune('2'-i))):
			lost++
		default:
			t.Errorf("reversal %d = %+v", i, r)
		}
	}
	if won != 1 || lost != 1 {
		t.Fatalf("results = %+v, want one applied and one refused naming the winner", results)
	}
	assertAccount(t, env, "C", "100", 3, 3)
}

// Two reversals of one movement in one batch: the first is applied, the second refused
// naming it, in two transactions — the second is planned on the original as the first
// left it, not as it was read.
func TestTwoReversalsInOneBatchCostTwoTransactions(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, ft := countingService(t, env, cuenta.Retry)
	apply(t, svc, mov(t, "a", "D", movimiento.Abono, "100.00"))
	apply(t, svc, mov(t, "pago", "D", movimiento.Cargo, "25.00"))
	ft.ResetCounts()
	rs := svc.Apply(context.Background(), []store.Entrega{
		{Mov: anulacion(t, "an-1", "D", "pago", "", "")}, {Mov: anulacion(t, "an-2", "D", "pago", "", "")},
	})
	if rs[0].Outcome != store.Applied || !refusedFor(rs[1], cuenta.YaAnulado) || !strings.Contains(rs[1].Err.Error(), "already reversed by an-1") {
		t.Fatalf("results = %+v, want an-1 applied and an-2 refused naming it", rs)
	}
	if n := ft.Calls("TransactWriteItems"); n != 2 {
		t.Errorf("%d transactions, want 2", n)
	}
	assertAccount(t, env, "D", "100", 3, 3)
}
