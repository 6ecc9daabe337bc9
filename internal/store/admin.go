package store

import (
	"context"
	"fmt"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Administrar changes account id as an operator does (an overdraft limit, a freeze):
// change gets the account as stored, without the holds that lapsed, and returns it
// changed, or an error that stops everything. The write is a versioned update (version
// + 1), so consumers holding a cached image learn of it from their next version check;
// after a version conflict change runs again, within the Budget (which the SDK's
// retries spend too), so it must have no other effect. An unknown account is ErrNotFound; a change that changes
// nothing writes nothing and returns the account twice.
func (l *Ledger) Administrar(ctx context.Context, id string, change func(cuenta.Cuenta) (cuenta.Cuenta, error)) (antes, despues cuenta.Cuenta, err error) {
	if !items.Storable(id, "") {
		return antes, despues, fmt.Errorf("account %s %w", id, ErrNotFound)
	}
	// A change that changes nothing sends no request, so it must be judged on the stored
	// image, not on this instance's cached one.
	l.forget(id)
	ctx, cancel := l.budget.bound(ctx)
	defer cancel()
	r := newRetries(l.budget.Retries)
	for attempt := 1; ; attempt++ { // each commit after the first spends a retry of r
		s, err := l.account(ctx, r, id)
		switch {
		case err != nil:
			return antes, despues, err
		case s.item == nil:
			return antes, despues, fmt.Errorf("account %s %w", id, ErrNotFound)
		}
		now := l.now()
		antes = s.c.Vigente(now) // a write drops the holds that lapsed, as every write does
		if despues, err = change(antes); err != nil {
			return antes, despues, err
		}
		if despues.Limite.Equal(antes.Limite) && despues.Bloqueada == antes.Bloqueada {
			return antes, antes, nil
		}
		despues.Actualizada = now
		item, err := items.EncodeCuenta(despues, s.item)
		if err != nil {
			return antes, despues, err
		}
		txn := versioned.Txn{Next: []versioned.Item{item}}
		v := l.commit(ctx, r, []versioned.Item{items.CuentaKey(id)}, []int64{s.c.Version}, txn)
		switch {
		case v.Kind == versioned.Committed:
			despues.Version = s.c.Version + 1
			l.keep(id, stored{c: despues, item: item})
			return antes, despues, nil
		case v.Kind != versioned.Conflict && v.Kind != versioned.Contention:
			l.forget(id)
			return antes, despues, v.Err
		case !r.take():
			return antes, despues, fmt.Errorf("%w after %d commits: %w", errBudgetSpent, attempt, v.Err)
		}
		l.forget(id)
		if err := l.backoff(ctx, attempt); err != nil {
			return antes, despues, err
		}
	}
}
