package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// grouped is m delivered in FIFO message group grupo.
func grouped(grupo string, m movimiento.Movimiento) store.Entrega {
	return store.Entrega{Mov: m, Origen: "msg-" + m.ID, Grupo: grupo}
}

// notAttempted fails t unless r is the untried failure of a delivery behind a failed
// one. (It may have shared a transaction DynamoDB refused, which wrote nothing.)
func notAttempted(t *testing.T, what string, r store.Result) {
	t.Helper()
	if r.Outcome != store.Failed || !errors.Is(r.Err, store.ErrNotAttempted) || !r.Retry() {
		t.Errorf("%s: %+v, want failed untried (ErrNotAttempted, transient)", what, r)
	}
}

// A FIFO group stops at its first failure: its later deliveries are not tried, even
// those that would pass, while the other groups of the batch go on.
func TestAFIFOGroupStopsAtItsFirstFailure(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	rs := svc.Apply(context.Background(), []store.Entrega{
		grouped("B", mov(t, "b1", "B", movimiento.Abono, "10.00")),
		grouped("A", mov(t, "a1", "A", movimiento.Abono, "10.00")),
		grouped("A", mov(t, "a2", "A", movimiento.Cargo, "50.00")), // beyond A's 10.00
		grouped("B", mov(t, "b2", "B", movimiento.Cargo, "5.00")),
		grouped("A", mov(t, "a3", "A", movimiento.Abono, "100.00")), // would cover a2, and a4
		grouped("A", mov(t, "a4", "A", movimiento.Cargo, "1.00")),
	})
	for i, want := range []store.Outcome{store.Applied, store.Applied, store.Failed, store.Applied} {
		if rs[i].Outcome != want {
			t.Errorf("delivery %d: %+v, want %s", i, rs[i], want)
		}
	}
	if !errors.Is(rs[2].Err, cuenta.SaldoInsuficiente) || !rs[2].Retry() {
		t.Errorf("a2: %v, want insufficient funds, transient", rs[2].Err)
	}
	notAttempted(t, "a3", rs[4])
	notAttempted(t, "a4", rs[5])
	if rs[4].Attempts != 0 || rs[5].Attempts != 0 {
		t.Errorf("a3, a4 were in %d and %d transactions, want none", rs[4].Attempts, rs[5].Attempts)
	}
	assertAccount(t, env, "A", "10.00", 1, 1)
	assertAccount(t, env, "B", "5.00", 2, 2)
	if it := get(t, env, "CUENTA#A", "MOV#a3"); len(it) != 0 {
		t.Errorf("a3 was recorded: %v", it)
	}

	// The same batch from a standard queue: no group, so a rule failure excludes only its own movement.
	env = testenv.NewDynamoDB(t)
	svc = newService(t, env, cuenta.Retry)
	rs = svc.Apply(context.Background(), []store.Entrega{
		{Mov: mov(t, "a1", "A", movimiento.Abono, "10.00")}, {Mov: mov(t, "a2", "A", movimiento.Cargo, "50.00")},
		{Mov: mov(t, "a3", "A", movimiento.Abono, "100.00")}, {Mov: mov(t, "a4", "A", movimiento.Cargo, "1.00")},
	})
	if rs[2].Outcome != store.Applied || rs[3].Outcome != store.Applied {
		t.Errorf("without a group: %+v, %+v, want a3 and a4 applied", rs[2], rs[3])
	}
}

// A transfer joins its two accounts in one Apply, yet each message group stops alone:
// the debited account's group behind a transfer it cannot pay, the credited account's
// group not at all.
func TestAFailedTransferStopsOnlyItsOwnGroup(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	ctx := context.Background()
	apply(t, svc, mov(t, "b0", "B", movimiento.Abono, "20.00"))
	rs := svc.Apply(ctx, []store.Entrega{
		grouped("A", traspaso(t, "t1", "A", "B", "30.00")), // A has nothing
		grouped("B", mov(t, "b1", "B", movimiento.Cargo, "15.00")),
		grouped("A", mov(t, "a1", "A", movimiento.Abono, "40.00")),
		grouped("B", mov(t, "b2", "B", movimiento.Cargo, "5.00")),
	})
	if rs[0].Outcome != store.Failed || !errors.Is(rs[0].Err, cuenta.SaldoInsuficiente) {
		t.Errorf("t1: %+v, want refused for funds", rs[0])
	}
	notAttempted(t, "a1", rs[2])
	if rs[1].Outcome != store.Applied || rs[3].Outcome != store.Applied {
		t.Errorf("B's group: %+v, %+v, want both applied", rs[1], rs[3])
	}
	assertAccount(t, env, "B", "0.00", 2, 3) // b1 and b2 in one write
	if it := get(t, env, "CUENTA#A", "CUENTA"); len(it) != 0 {
		t.Errorf("account A exists: %v", it)
	}
}

// A permanent failure stops its group too, whether the rules find it (another
// currency) or DynamoDB does (a conflicting duplicate, found when the write is refused).
func TestPermanentFailuresStopTheirGroup(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	ctx := context.Background()
	apply(t, svc, mov(t, "a0", "A", movimiento.Abono, "10.00"))
	usd := testenv.Movement(t, movimiento.Datos{ID: "u1", Cuenta: "A", Tipo: movimiento.Abono, Importe: "5.00", Moneda: "USD"})
	rs := svc.Apply(ctx, []store.Entrega{grouped("A", usd), grouped("A", mov(t, "a1", "A", movimiento.Abono, "1.00"))})
	if rs[0].Outcome != store.Failed || !errors.Is(rs[0].Err, store.ErrPermanent) {
		t.Errorf("u1: %+v, want a permanent failure", rs[0])
	}
	notAttempted(t, "a1 behind u1", rs[1])

	rs = svc.Apply(ctx, []store.Entrega{
		grouped("A", mov(t, "a0", "A", movimiento.Abono, "11.00")), // a0's id, another amount
		grouped("A", mov(t, "a2", "A", movimiento.Abono, "2.00")),
	})
	if rs[0].Outcome != store.ConflictingDuplicate {
		t.Errorf("a0 again: %+v, want a conflicting duplicate", rs[0])
	}
	notAttempted(t, "a2 behind the conflicting a0", rs[1])
	assertAccount(t, env, "A", "10.00", 1, 1)
}
