package store

import (
	"context"
	"errors"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// errNoChange stops an administrative update that would write what is stored already.
var errNoChange = errors.New("store: no change")

// Administrar changes account id as an operator does (an overdraft limit, a freeze):
// change gets the account as stored and returns it changed, or an error that stops
// everything. The new image goes through the versioned update like any other write of
// the account — version + 1 — so a consumer holding a cached image learns of it from
// the transaction the version check refuses, and the next whole-image write keeps it.
// change may run more than once (after a version conflict) and must have no other
// effect; it gets the account without the holds that lapsed, which the write drops. An unknown account is a *ledger.NotFoundError; a change that changes nothing
// writes nothing and returns the account twice.
func (l *Ledger) Administrar(ctx context.Context, id string, change func(cuenta.Cuenta) (cuenta.Cuenta, error)) (antes, despues cuenta.Cuenta, err error) {
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
			return versioned.Txn{Next: []versioned.Item{nil}}, errNoChange
		}
		despues.Actualizada = now
		item, err := encodeCuenta(despues, st.Items[0])
		return versioned.Txn{Next: []versioned.Item{item}}, err
	})
	switch {
	case errors.Is(err, errNoChange):
		return antes, antes, nil
	case err != nil:
		return cuenta.Cuenta{}, cuenta.Cuenta{}, err
	}
	despues.Version = r.Versions[0]
	if l.decoded != nil {
		l.decoded.Add(id, despues)
	}
	return antes, despues, nil
}
