package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

func conLimite(limite string) func(cuenta.Cuenta) (cuenta.Cuenta, error) {
	return func(c cuenta.Cuenta) (cuenta.Cuenta, error) { return c.ConLimite(decimal.RequireFromString(limite)) }
}

var bloqueada = testenv.Bloqueada

// A consumer's cached image says limite 0; an operator sets 100 elsewhere. The cargo
// that needs the overdraft is applied on the consumer's next attempt (the version check
// refuses the stale plan), and a later write keeps the operator's limit.
func TestAnOperatorsLimitReachesAWarmConsumer(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	consumer, operator := newService(t, env, cuenta.Retry), newService(t, env, cuenta.Retry)
	ctx := context.Background()
	if r, err := testenv.One(consumer.Apply(ctx, []store.Entrega{{Mov: mov(t, "a", "W", movimiento.Abono, "50.00")}})); err != nil || r.Outcome != store.Applied {
		t.Fatalf("warm-up: %+v, %v", r, err)
	}
	antes, despues, err := operator.Administrar(ctx, "W", conLimite("100"))
	if err != nil || !antes.Limite.IsZero() || !despues.Limite.Equal(decimal.NewFromInt(100)) || despues.Version != antes.Version+1 {
		t.Fatalf("set limite: %+v → %+v, %v; want 0 → 100 at version+1", antes, despues, err)
	}
	r, err := testenv.One(consumer.Apply(ctx, []store.Entrega{{Mov: mov(t, "b", "W", movimiento.Cargo, "120.00")}}))
	if err != nil || r.Outcome != store.Applied || r.Attempts != 2 || !r.SaldoTras.Equal(decimal.NewFromInt(-70)) {
		t.Fatalf("cargo into the overdraft: %+v, %v; want applied on the second attempt at -70", r, err)
	}
	if _, err := testenv.One(consumer.Apply(ctx, []store.Entrega{{Mov: mov(t, "c", "W", movimiento.Abono, "10.00")}})); err != nil {
		t.Fatal(err)
	}
	a := account(t, env, "W")
	if !a.num("limite").Equal(decimal.NewFromInt(100)) || a.num("version").IntPart() != 4 {
		t.Errorf("account = limite %s version %s; want the operator's 100 kept, version 4", a.num("limite"), a.num("version"))
	}
}

func TestAdministrarRefusesAnUnknownAccountAndWritesNoNoChange(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, cuenta.Retry)
	ctx := context.Background()
	if _, _, err := svc.Administrar(ctx, "NADIE", bloqueada(true)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown account: %v, want ErrNotFound", err)
	}
	if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "a", "N", movimiento.Abono, "1.00")}})); err != nil {
		t.Fatal(err)
	}
	antes, despues, err := svc.Administrar(ctx, "N", bloqueada(false))
	if err != nil || antes.Version != 1 || despues.Version != 1 || account(t, env, "N").num("version").IntPart() != 1 {
		t.Fatalf("no change: %+v → %+v, %v; want nothing written", antes, despues, err)
	}
	if _, _, err := svc.Administrar(ctx, "N", conLimite("-5")); !errors.Is(err, cuenta.LimiteNegativo) {
		t.Fatalf("negative limite: %v, want a LimiteError", err)
	}
}

// While frozen, every debit breaks a rule the funds policy handles; credits apply.
func TestAFrozenAccountRefusesDebitsUnderEitherPolicy(t *testing.T) {
	for _, policy := range []cuenta.FundsPolicy{cuenta.Retry, cuenta.Reject} {
		t.Run(string(policy), func(t *testing.T) {
			env := testenv.NewDynamoDB(t)
			svc := newService(t, env, policy)
			ctx := context.Background()
			if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "a", "F", movimiento.Abono, "100.00")}})); err != nil {
				t.Fatal(err)
			}
			if _, _, err := svc.Administrar(ctx, "F", bloqueada(true)); err != nil {
				t.Fatal(err)
			}
			r, _ := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "b", "F", movimiento.Cargo, "1.00")}}))
			switch policy {
			case cuenta.Retry:
				if r.Outcome != store.Failed || !r.Retry() || !errors.Is(r.Err, cuenta.CuentaBloqueada) {
					t.Fatalf("cargo of a frozen account under retry: %+v, want a transient failure", r)
				}
			case cuenta.Reject:
				if r.Outcome != store.Rejected || r.Motivo != "cuenta F: bloqueada: it takes no debit while frozen" {
					t.Fatalf("cargo of a frozen account under reject: %+v, want rejected, its motivo the freeze", r)
				}
			}
			if r, _ := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "c", "F", movimiento.Abono, "5.00")}})); r.Outcome != store.Applied {
				t.Fatalf("abono of a frozen account: %+v, want applied", r)
			}
			if _, _, err := svc.Administrar(ctx, "F", bloqueada(false)); err != nil {
				t.Fatal(err)
			}
			if r, _ := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "d", "F", movimiento.Cargo, "1.00")}})); r.Outcome != store.Applied {
				t.Fatalf("cargo once unfrozen: %+v, want applied", r)
			}
			assertAccount(t, env, "F", "104", 5, 3)
		})
	}
}

// An operator's write is a write of the account like any other: it drops the holds
// that lapsed.
func TestAdministrarDropsLapsedHolds(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c := newClock()
	svc := clocked(t, env, cuenta.Retry, c)
	apply(t, svc, mov(t, "a", "L", movimiento.Abono, "100.00"))
	apply(t, svc, hold(t, "h", "L", "30.00", c.Now().Add(time.Hour)))
	c.Advance(2 * time.Hour)
	if _, held := retenido(t, env, "L"); held != "30" {
		t.Fatalf("before any write: %s held, want the lapsed 30 still in the item", held)
	}
	if _, _, err := svc.Administrar(context.Background(), "L", bloqueada(true)); err != nil {
		t.Fatal(err)
	}
	if _, held := retenido(t, env, "L"); held != "0" {
		t.Errorf("after the freeze: %s held, want the lapsed hold dropped", held)
	}
}

// An operator's change is judged on the stored account, not on an instance's cached
// image: the instance that wrote the account last, before another froze it, still
// unfreezes it (its cache says unfrozen, so it would otherwise write nothing).
func TestAChangeIsJudgedOnTheStoredAccount(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	warm, other := newService(t, env, cuenta.Retry), newService(t, env, cuenta.Retry)
	apply(t, warm, mov(t, "a", "C", movimiento.Abono, "10.00"))
	if _, _, err := other.Administrar(ctx, "C", bloqueada(true)); err != nil {
		t.Fatal(err)
	}
	antes, despues, err := warm.Administrar(ctx, "C", bloqueada(false))
	if err != nil || !antes.Bloqueada || despues.Bloqueada || despues.Version != 3 {
		t.Fatalf("unfreeze: antes %+v, despues %+v, %v; want frozen at 2 → unfrozen at 3", antes, despues, err)
	}
	stored, err := store.NewReader(env.Client, env.Table()).Cuenta(ctx, "C")
	if err != nil || stored.Bloqueada || stored.Version != 3 {
		t.Errorf("stored %+v, %v; want unfrozen at version 3", stored, err)
	}
}
