package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

func TestATransferWritesBothLegsInOneTransaction(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	apply(t, svc, mov(t, "a", "T1", movimiento.Abono, "100.00"))
	apply(t, svc, mov(t, "b", "T2", movimiento.Abono, "1.00"))

	r := apply(t, svc, traspaso(t, "tr-1", "T1", "T2", "25.00"))
	if r.Outcome != store.Applied || r.Seq != 2 || r.SaldoTras.String() != "75" {
		t.Fatalf("transfer = %+v, want applied as T1's seq 2 at 75", r)
	}
	debit, credit := get(t, env, "CUENTA#T1", "MOV#tr-1"), get(t, env, "CUENTA#T2", "MOV#tr-1")
	if debit.str("tipo") != "cargo" || debit.str("contrapartida") != "T2" || debit.num("seq").IntPart() != 2 || debit.num("saldo_tras").String() != "75" {
		t.Errorf("debit leg = %v", debit)
	}
	if credit.str("tipo") != "abono" || credit.str("contrapartida") != "T1" || credit.num("seq").IntPart() != 2 || credit.num("saldo_tras").String() != "26" {
		t.Errorf("credit leg = %v", credit)
	}
	if debit.str("huella") != credit.str("huella") || debit.num("importe").String() != "25" || credit.num("importe").String() != "25" {
		t.Errorf("legs differ: %s/%s, %s/%s", debit.str("huella"), credit.str("huella"), debit.num("importe"), credit.num("importe"))
	}
	assertAccount(t, env, "T1", "75", 2, 2)
	assertAccount(t, env, "T2", "26", 2, 2)

	// Redeliveries: the same message, an SNS copy under another message id, and a late
	// one after more movements — each a duplicate, nothing moves.
	for _, origen := range []string{"msg-tr-1", "sns-copy"} {
		if r, _ := testenv.One(svc.Apply(context.Background(), []store.Entrega{{Mov: traspaso(t, "tr-1", "T1", "T2", "25"), Origen: origen}})); r.Outcome != store.Duplicate || r.Seq != 2 || r.SaldoTras.String() != "75" {
			t.Errorf("redelivery from %s = %+v, want a duplicate of seq 2 leaving T1 at 75", origen, r)
		}
	}
	apply(t, svc, mov(t, "c", "T2", movimiento.Cargo, "26.00"))
	if r := apply(t, svc, traspaso(t, "tr-1", "T1", "T2", "25.00")); r.Outcome != store.Duplicate {
		t.Errorf("late redelivery with T2 empty = %+v, want a duplicate", r)
	}
	assertAccount(t, env, "T1", "75", 2, 2)
	assertAccount(t, env, "T2", "0", 3, 3)
	if r := apply(t, svc, anulacion(t, "an", "T2", "tr-1", "", "")); !refusedFor(r, cuenta.AnulaTraspaso) {
		t.Errorf("a reversal named on the credited account = %+v, want refused: it names the transfer on T1", r)
	}
	// Reversed on its payer, a transfer takes both legs back at once, by the debit's
	// rules on the credited account: T2 cannot pay it back until it has the funds.
	if r := apply(t, svc, anulacion(t, "an", "T1", "tr-1", "", "")); r.Outcome != store.Failed || !r.Retry() || !errors.Is(r.Err, cuenta.SaldoInsuficiente) {
		t.Fatalf("a reversal T2 cannot pay back = %+v, want it back: insufficient funds", r)
	}
	apply(t, svc, mov(t, "d", "T2", movimiento.Abono, "30.00"))
	if r := apply(t, svc, anulacion(t, "an", "T1", "tr-1", "", "")); r.Outcome != store.Applied || r.Seq != 3 || r.SaldoTras.String() != "100" {
		t.Fatalf("the reversal = %+v, want T1 credited back to 100 at seq 3", r)
	}
	if leg := get(t, env, "CUENTA#T2", "MOV#an"); leg.str("tipo") != "cargo" || leg.str("anula") != "tr-1" || leg.str("contrapartida") != "T1" || leg.num("importe").String() != "25" {
		t.Errorf("the reversal's leg on T2 = %v, want a cargo of 25 naming tr-1 and T1", leg)
	}
	if o := get(t, env, "CUENTA#T1", "MOV#tr-1"); o.str("anulado_por") != "an" {
		t.Errorf("the transfer's record = %v, want it reversed by an", o)
	}
	assertAccount(t, env, "T1", "100", 3, 3)
	assertAccount(t, env, "T2", "5", 5, 5)
	if r := apply(t, svc, anulacion(t, "an", "T1", "tr-1", "", "")); r.Outcome != store.Duplicate {
		t.Errorf("the reversal again = %+v, want a duplicate", r)
	}
}

func TestATransferOpensItsDestinationInItsCurrency(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	apply(t, svc, mov(t, "a", "O1", movimiento.Abono, "10.00"))
	if r := apply(t, svc, traspaso(t, "tr", "O1", "NUEVA", "4.00")); r.Outcome != store.Applied {
		t.Fatalf("transfer to a new account = %+v", r)
	}
	a := account(t, env, "NUEVA")
	if a.str("moneda") != "EUR" || a.num("saldo").String() != "4" || a.num("version").IntPart() != 1 {
		t.Errorf("new destination = %v", a)
	}
}

func TestTransfersThatMustNotMoveMoney(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	retry, reject := newService(t, env, cuenta.Retry), newService(t, env, cuenta.Reject)
	apply(t, retry, mov(t, "a", "X1", movimiento.Abono, "10.00"))
	apply(t, retry, mov(t, "a", "X2", movimiento.Abono, "10.00"))
	apply(t, retry, mov(t, "tr-x", "X2", movimiento.Abono, "1.00")) // an unrelated movement under the transfer's id
	if r, err := movimiento.New(movimiento.Datos{ID: "a", Cuenta: "U1", Tipo: movimiento.Abono, Importe: "5.00", Moneda: "USD"}); err == nil {
		apply(t, retry, r)
	}

	conflictOnX2 := func(r store.Result) bool {
		var dup *store.ConflictingDuplicateError
		return r.Outcome == store.ConflictingDuplicate && errors.As(r.Err, &dup) && dup.Cuenta == "X2" && dup.ID == "tr-x"
	}
	cases := []struct {
		name string
		svc  *store.Ledger
		m    movimiento.Movimiento
		ok   func(store.Result) bool
	}{
		{"the debit leg's id holds another movement", retry, traspaso(t, "a", "X1", "X2", "1.00"),
			func(r store.Result) bool { return r.Outcome == store.ConflictingDuplicate }},
		// The error names the movement recorded, on the destination, for whoever looks it up.
		{"the credit leg's id holds another movement", retry, traspaso(t, "tr-x", "X1", "X2", "1.00"), conflictOnX2},
		// Refused for funds, it is still a conflicting duplicate: its credit leg's id is taken.
		{"the credit leg's id is taken and funds are short, under retry", retry, traspaso(t, "tr-x", "X1", "X2", "50.00"), conflictOnX2},
		{"the credit leg's id is taken and funds are short, under reject", reject, traspaso(t, "tr-x", "X1", "X2", "50.00"), conflictOnX2},
		{"insufficient funds under retry", retry, traspaso(t, "tr-f", "X1", "X2", "50.00"),
			func(r store.Result) bool {
				return r.Outcome == store.Failed && r.Retry() && errors.Is(r.Err, cuenta.SaldoInsuficiente)
			}},
		{"the destination in another currency", retry, traspaso(t, "tr-u", "X1", "U1", "1.00"),
			func(r store.Result) bool {
				return r.Outcome == store.Failed && errors.Is(r.Err, store.ErrPermanent) && strings.Contains(r.Err.Error(), "USD")
			}},
		{"the debited account in another currency", retry, traspaso(t, "tr-v", "U1", "X1", "1.00", "USD"),
			func(r store.Result) bool { return r.Outcome == store.Failed && errors.Is(r.Err, store.ErrPermanent) }},
	}
	for _, tc := range cases {
		if r := apply(t, tc.svc, tc.m); !tc.ok(r) {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
	assertAccount(t, env, "X1", "10", 1, 1)
	assertAccount(t, env, "X2", "11", 2, 2)

	// Under reject: the debit leg is recorded rejected, nothing on the destination, and
	// every redelivery gets the same answer.
	for range 2 {
		if r := apply(t, reject, traspaso(t, "tr-r", "X1", "X2", "50.00")); r.Outcome != store.Rejected && r.Outcome != store.Duplicate {
			t.Fatalf("insufficient funds under reject: %+v", r)
		}
	}
	if leg := get(t, env, "CUENTA#X1", "MOV#tr-r"); leg.str("estado") != "rechazado" || leg.str("contrapartida") != "X2" {
		t.Errorf("rejected debit leg = %v", leg)
	}
	if leg := get(t, env, "CUENTA#X2", "MOV#tr-r"); leg != nil {
		t.Errorf("a rejected transfer wrote on its destination: %v", leg)
	}
	if r := apply(t, retry, anulacion(t, "an", "X2", "tr-x", "", "")); r.Outcome != store.Applied {
		t.Errorf("reversal of the plain movement: %+v", r)
	}
	assertAccount(t, env, "X1", "10", 1, 1)
}

// Writers moving the destination meanwhile make the transfer plan again, from the
// fresh state; every movement lands and money is neither created nor destroyed.
func TestTransfersRaceWithWritersOnBothAccounts(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	setup := newService(t, env, cuenta.Retry)
	apply(t, setup, mov(t, "a", "P1", movimiento.Abono, "100.00"))
	apply(t, setup, mov(t, "a", "P2", movimiento.Abono, "100.00"))
	var wg sync.WaitGroup
	for w := range 4 {
		svc := newService(t, env, cuenta.Retry)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				id := string(rune('a'+w)) + string(rune('0'+i))
				var m movimiento.Movimiento
				switch w {
				case 0:
					m = traspaso(t, "t"+id, "P1", "P2", "1.00")
				case 1:
					m = traspaso(t, "t"+id, "P2", "P1", "2.00")
				case 2:
					m = mov(t, "m"+id, "P1", movimiento.Abono, "0.10")
				default:
					m = mov(t, "m"+id, "P2", movimiento.Cargo, "0.10")
				}
				if r := settle(context.Background(), svc, store.Entrega{Mov: m}, 20); r.Outcome != store.Applied {
					t.Errorf("%s: %+v", m.ID, r)
				}
			}
		}()
	}
	wg.Wait()
	assertAccount(t, env, "P1", "105.5", 16, 16)
	assertAccount(t, env, "P2", "94.5", 16, 16)
}
