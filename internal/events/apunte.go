package events

import (
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// fromApunte is what a movement's record, just created, announces: a posted movement
// (and, for a capture's debit, its hold captured), a rejection, a hold taken, or, for
// a release's record, its hold released. A record of any other kind announces nothing.
func fromApunte(item versioned.Item) ([]Event, error) {
	if item == nil {
		return nil, ErrNoImage
	}
	a, err := items.DecodeApunte(item)
	if err != nil {
		return nil, err
	}
	m := a.Movimiento
	switch {
	case a.Posted() && m.Retencion != "":
		return []Event{movimientoEvent(a), settledEvent(a, movimiento.Capturada)}, nil
	case a.Posted():
		return []Event{movimientoEvent(a)}, nil
	case a.Estado == movimiento.Rechazado:
		return []Event{movimientoEvent(a)}, nil
	case m.Tipo == movimiento.Retencion && a.Estado == movimiento.Retenida:
		return []Event{heldEvent(a)}, nil
	case m.Tipo == movimiento.Liberacion && a.Estado == movimiento.Aplicado:
		return []Event{settledEvent(a, movimiento.Liberada)}, nil
	}
	return nil, nil
}

// movimientoEvent announces a posted or rejected movement as its record says.
func movimientoEvent(a movimiento.Apunte) Event {
	m := a.Movimiento
	d := Detail{
		Cuenta: m.Cuenta, Estado: string(a.Estado), Version: a.Version, Moneda: m.Moneda,
		ID: m.ID, Tipo: string(m.Tipo), Importe: movimiento.Texto(m.Importe, m.Moneda),
		Motivo: a.Motivo, Concepto: m.Concepto, Fecha: movimiento.ServedFecha(m.Fecha),
		Contrapartida: a.Contrapartida, Anula: m.Anula, Retencion: m.Retencion, Expira: expira(m),
	}
	if a.Posted() {
		d.Seq, d.SaldoTras = a.Seq, movimiento.Texto(a.SaldoTras, m.Moneda)
	}
	return newEvent(d, a.Aplicado)
}

// heldEvent announces a hold taken, as its record says.
func heldEvent(a movimiento.Apunte) Event {
	m := a.Movimiento
	return newEvent(Detail{
		Cuenta: m.Cuenta, Estado: string(movimiento.Retenida), Version: a.Version, Moneda: m.Moneda,
		ID: m.ID, Tipo: string(movimiento.Retencion), Importe: movimiento.Texto(m.Importe, m.Moneda),
		Concepto: m.Concepto, Fecha: movimiento.ServedFecha(m.Fecha), Expira: expira(m),
	}, a.Aplicado)
}

// settledEvent announces the hold that a, a capture's debit or a release, settled
// (estado capturada or liberada), when a was recorded: its importe is what a captured
// or freed.
func settledEvent(a movimiento.Apunte, estado movimiento.Estado) Event {
	m := a.Movimiento
	d := Detail{
		Cuenta: m.Cuenta, Estado: string(estado), Version: a.Version, Moneda: m.Moneda,
		ID: m.Retencion, Tipo: string(movimiento.Retencion), Importe: movimiento.Texto(m.Importe, m.Moneda),
	}
	if estado == movimiento.Capturada {
		d.CapturadaPor = m.ID
	} else {
		d.LiberadaPor = m.ID
	}
	return newEvent(d, a.Aplicado)
}

// expira is a hold's expiry as events carry it, or "" for a movement that has none.
func expira(m movimiento.Movimiento) string {
	if m.Expira.IsZero() {
		return ""
	}
	return movimiento.Timestamp(m.Expira)
}
