package sim

import (
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Kinds counts a workload's movements by what they do. Every hold is captured (in full
// or in part), released, or left to lapse.
//
// Reversals are whole reversals of abonos and cargos; Refunds the refunds of part of
// one (the refund that gives back what is left among them), and RefundedInFull the
// abonos and cargos whose refunds gave back all of them. Partes counts the accounts
// the repartos credit (their legs), MostPartes the parts of the widest. The reversed
// transfers and repartos are reversed whole; ReversedPartes counts the legs the
// reversals of repartos took back.
type Kinds struct {
	Abonos, Cargos, Transfers, Reversals int
	Repartos, Partes, MostPartes         int
	Refunds, RefundedInFull              int
	ReversedTransfers, ReversedRepartos  int
	ReversedPartes                       int
	Holds, Captured, PartlyCaptured      int
	Released, Lapsed                     int
}

// Kinds counts w's movements (those built to be refused aside).
func (w Workload) Kinds() Kinds {
	var k Kinds
	byKey := map[string]movimiento.Movimiento{}
	refunded := map[string]decimal.Decimal{} // by cuenta/id: what the refunds in parts gave back
	for _, m := range w.Movements {
		byKey[m.Cuenta+"/"+m.ID] = m
		switch m.Tipo {
		case movimiento.Abono:
			k.Abonos++
		case movimiento.Cargo:
			k.Cargos++
		case movimiento.Traspaso:
			k.Transfers++
		case movimiento.Reparto:
			k.Repartos++
			k.Partes += len(m.Partes)
			k.MostPartes = max(k.MostPartes, len(m.Partes))
		case movimiento.Anulacion:
			k.reversal(m, byKey[m.Cuenta+"/"+m.Anula], refunded)
		case movimiento.Retencion, movimiento.Captura, movimiento.Liberacion:
			k.hold(m, byKey)
		}
	}
	for key, sum := range refunded {
		if sum.Equal(byKey[key].Importe) {
			k.RefundedInFull++
		}
	}
	k.Lapsed = k.Holds - k.Captured - k.Released
	return k
}

// reversal counts the anulacion m of the movement o, adding what a refund in parts
// gave back to refunded.
func (k *Kinds) reversal(m, o movimiento.Movimiento, refunded map[string]decimal.Decimal) {
	switch {
	case o.Tipo == movimiento.Traspaso:
		k.ReversedTransfers++
	case o.Tipo == movimiento.Reparto:
		k.ReversedRepartos++
		k.ReversedPartes += len(o.Partes)
	case m.Importe.IsZero() || m.Importe.Equal(o.Importe):
		k.Reversals++
	default:
		k.Refunds++
		refunded[o.Cuenta+"/"+o.ID] = refunded[o.Cuenta+"/"+o.ID].Add(m.Importe)
	}
}

// hold counts the hold, capture or release m; byKey has the holds drawn before it.
func (k *Kinds) hold(m movimiento.Movimiento, byKey map[string]movimiento.Movimiento) {
	switch m.Tipo {
	case movimiento.Retencion:
		k.Holds++
	case movimiento.Captura:
		k.Captured++
		if h := byKey[m.Cuenta+"/"+m.Retencion]; !m.Importe.IsZero() && m.Importe.LessThan(h.Importe) {
			k.PartlyCaptured++
		}
	case movimiento.Liberacion:
		k.Released++
	}
}

// Posted counts the movements the workload posts to statements: abonos, cargos, both
// legs of every transfer, a reparto's debit and each of its parts, reversals and
// refunds, each leg of a reversed transfer or reparto, and captures.
func (k Kinds) Posted() int {
	return k.Abonos + k.Cargos + 2*k.Transfers + k.Repartos + k.Partes + k.Reversals + k.Refunds +
		2*k.ReversedTransfers + k.ReversedRepartos + k.ReversedPartes + k.Captured
}
