package store

import (
	"context"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Administrar changes account id as an operator does (an overdraft limit, a freeze):
// change gets the account as stored, without the holds that lapsed, and returns it
// changed, or an error that stops everything. The write is a versioned update (version
// + 1), so consumers holding a cached image learn of it from their next version check.
// change may run more than once (after a version conflict) and must have no other
// effect. An unknown account is a *ledger.NotFoundError; a change that changes nothing
// writes nothing and returns the account twice.
func (l *Ledger) Administrar(ctx context.Context, id string, change func(cuenta.Cuenta) (cuenta.Cuenta, error)) (antes, despues cuenta.Cuenta, err error) {
	if !storable(id, "") {
		return cuenta.Cuenta{}, cuenta.Cuenta{}, &ledger.NotFoundError{Cuenta: id}
	}
	// A change that changes nothing sends no request, so it must be judged on the stored
	// image, not on this instance's cached one.
	l.store.Forget(cuentaKey(id))
	now := l.now()
	r, err := l.store.Update(ctx, []versioned.Item{cuentaKey(id)}, func(st versioned.State) (versioned.Txn, error) {
		c, ok, err := decodeCuenta(st.Items[0])
		switch {
		case err != nil:
			return versioned.Txn{}, err
		case !ok:
			return versioned.Txn{}, &ledger.NotFoundError{Cuenta: id}
		}
		antes = c.Vigente(now) // a write drops the holds that lapsed, as every write does
		if despues, err = change(antes); err != nil {
			return versioned.Txn{}, err
		}
		if despues.Limite.Equal(antes.Limite) && despues.Bloqueada == antes.Bloqueada {
			return versioned.Txn{Next: []versioned.Item{nil}}, nil // costs no call
		}
		despues.Actualizada = now
		item, err := encodeCuenta(despues, st.Items[0])
		return versioned.Txn{Next: []versioned.Item{item}}, err
	})
	switch {
	case err != nil:
		return cuenta.Cuenta{}, cuenta.Cuenta{}, err
	case !r.Written:
		return antes, antes, nil
	}
	despues.Version = r.Versions[0]
	l.remember([]cuenta.Cuenta{despues}, r.Versions)
	return antes, despues, nil
}
