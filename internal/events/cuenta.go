package events

import (
	"maps"
	"slices"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// fromCuenta is what a write of an account announces, from its images before (nil for
// a new account) and after: each hold the write dropped as lapsed (expirada), and an
// administration when its limite or bloqueada changed. What else the write changed
// (saldo, movimientos, a hold taken, captured or released) its movements' records
// announce.
func fromCuenta(change string, old, now versioned.Item) ([]Event, error) {
	if now == nil || (change == modify && old == nil) {
		return nil, ErrNoImage
	}
	after, _, err := items.DecodeCuenta(now)
	if err != nil {
		return nil, err
	}
	before := cuenta.Nueva(after.ID, after.Moneda) // a new account: no limite, not frozen, no holds
	if old != nil {
		if before, _, err = items.DecodeCuenta(old); err != nil {
			return nil, err
		}
	}
	evs := lapsed(before, after)
	if !after.Limite.Equal(before.Limite) || after.Bloqueada != before.Bloqueada {
		evs = append(evs, administrada(after))
	}
	return evs, nil
}

// lapsed announces the holds before had and after has not, whose expira had passed
// when after was written (its actualizada): those the write dropped as lapsed, as
// every write does (cuenta.Cuenta.Vigente). A hold settled by the write was still
// live, or it could not have been captured; one released after it lapsed was dropped
// as lapsed all the same, and its release announces itself too.
func lapsed(before, after cuenta.Cuenta) []Event {
	var evs []Event
	dropped := before.Vigente(after.Actualizada)
	for _, id := range slices.Sorted(maps.Keys(before.Retenciones)) {
		_, kept := after.Retenciones[id]
		if _, live := dropped.Retenciones[id]; kept || live {
			continue
		}
		r := before.Retenciones[id]
		evs = append(evs, newEvent(Detail{
			Cuenta: after.ID, Estado: string(movimiento.Expirada), Version: after.Version, Moneda: after.Moneda,
			ID: id, Tipo: string(movimiento.Retencion), Importe: movimiento.Texto(r.Importe, after.Moneda),
			Expira: movimiento.Timestamp(r.Expira),
		}, after.Actualizada))
	}
	return evs
}

// administrada announces an account's limite and bloqueada as an operator left them.
func administrada(c cuenta.Cuenta) Event {
	bloqueada := c.Bloqueada
	return newEvent(Detail{
		Cuenta: c.ID, Estado: Administrada, Version: c.Version, Moneda: c.Moneda,
		Limite: movimiento.Texto(c.Limite, c.Moneda), Bloqueada: &bloqueada,
	}, c.Actualizada)
}
