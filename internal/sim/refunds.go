package sim

import (
	"slices"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// maxRefunds bounds the refunds drawn of one movement: enough to refund one in parts
// and to complete it, far under movimiento.MaxReembolsos.
const maxRefunds = 3

// refunding is an abono or cargo refunded in parts: the cents left to refund and the
// refunds drawn so far.
type refunding struct {
	m    movimiento.Movimiento
	left int64
	n    int
}

// reversal draws the whole reversal of an abono or cargo, or (one time in two when
// there is one) of a transfer or reparto, neither reversed nor refunded yet. Reversing
// an abono is a debit of its account, and reversing a transfer or reparto a debit of
// each account it credited: drawn only when each has the funds.
func (g *generator) reversal() bool {
	pool := &g.reversible
	if len(g.legged) > 0 && (len(g.reversible) == 0 || g.rng.IntN(2) == 0) {
		pool = &g.legged
	}
	if len(*pool) == 0 {
		return false
	}
	k := g.rng.IntN(len(*pool))
	o := (*pool)[k]
	legs := Credited(o)
	if !g.canPayBack(o, legs) {
		return false
	}
	*pool = slices.Delete(*pool, k, k+1)
	d := movimiento.Datos{Cuenta: o.Cuenta, Tipo: movimiento.Anulacion, Anula: o.ID}
	if g.rng.IntN(2) == 0 { // importe and moneda are optional; when given, the original's
		d.Importe, d.Moneda = o.ImporteTexto(), o.Moneda
	}
	m := g.add(d)
	first := &g.firstRev
	if len(legs) > 0 {
		first = &g.firstLeg
	}
	if first.ID == "" {
		*first = m
	}
	if len(legs) == 0 {
		g.giveBack(o, o.Importe)
		return true
	}
	g.post(o.Cuenta, o.Importe)
	for _, p := range legs {
		g.post(p.Cuenta, p.Importe.Neg())
		g.funds[p.Cuenta] = g.funds[p.Cuenta].Sub(p.Importe)
	}
	return true
}

// Credited is what the transfer or reparto o credits, account by account (its legs
// besides its payer's); none for other movements. A reversal of o takes each back.
func Credited(o movimiento.Movimiento) []movimiento.Parte {
	if o.Tipo == movimiento.Traspaso {
		return []movimiento.Parte{{Cuenta: o.Destino, Importe: o.Importe}}
	}
	return o.Partes
}

// canPayBack reports whether the accounts a reversal of o debits have the funds: o's
// own when o is an abono, each credited one (legs) when o is a transfer or reparto.
func (g *generator) canPayBack(o movimiento.Movimiento, legs []movimiento.Parte) bool {
	if o.Tipo == movimiento.Abono {
		return !g.funds[o.Cuenta].LessThan(o.Importe)
	}
	return !slices.ContainsFunc(legs, func(p movimiento.Parte) bool { return g.funds[p.Cuenta].LessThan(p.Importe) })
}

// giveBack books a refund of importe of the abono or cargo o: the opposite of o on its
// account, drawn on its funds when o is an abono.
func (g *generator) giveBack(o movimiento.Movimiento, importe decimal.Decimal) {
	if o.Tipo == movimiento.Abono {
		g.post(o.Cuenta, importe.Neg())
		g.funds[o.Cuenta] = g.funds[o.Cuenta].Sub(importe)
		return
	}
	g.post(o.Cuenta, importe)
}

// refund draws a refund of part of an abono or cargo: of one refunded in part already
// or, one time in as many as there are plus one, of one neither reversed nor refunded.
// Each refund carries its importe, so the refunds of one movement fit in any order; a
// movement takes maxRefunds at most.
func (g *generator) refund() bool {
	k := g.rng.IntN(len(g.refunding) + 1)
	fresh := -1
	var r *refunding
	switch {
	case k < len(g.refunding):
		r = g.refunding[k]
	case len(g.reversible) == 0:
		return false
	default:
		fresh = g.rng.IntN(len(g.reversible))
		o := g.reversible[fresh]
		r = &refunding{m: o, left: o.Importe.Shift(2).IntPart()}
	}
	cents := g.refundCents(r)
	if cents == 0 {
		return false
	}
	if r.n == 0 {
		g.reversible = slices.Delete(g.reversible, fresh, fresh+1)
		g.refunding, g.refunds = append(g.refunding, r), append(g.refunds, r)
	}
	d := movimiento.Datos{Cuenta: r.m.Cuenta, Tipo: movimiento.Anulacion, Anula: r.m.ID, Importe: amount(cents)}
	if g.rng.IntN(2) == 0 { // moneda is optional; when given, the original's
		d.Moneda = r.m.Moneda
	}
	g.add(d)
	g.giveBack(r.m, decimal.New(cents, -2))
	r.left, r.n = r.left-cents, r.n+1
	if r.left == 0 || r.n == maxRefunds {
		g.refunding = slices.DeleteFunc(g.refunding, func(x *refunding) bool { return x == r })
	}
	return true
}

// refundCents draws the cents a refund of r gives back: part of what is left or, for a
// refund after the first, one time in two (and always at the last) all of it. A refund
// of an abono takes no more than its account's funds. 0: none can be drawn.
func (g *generator) refundCents(r *refunding) int64 {
	most := r.left
	if r.m.Tipo == movimiento.Abono {
		most = min(most, g.funds[r.m.Cuenta].Shift(2).IntPart())
	}
	if r.n > 0 && (r.n == maxRefunds-1 || g.rng.IntN(2) == 0) && most == r.left {
		return r.left
	}
	if most = min(most, r.left-1); most < 1 { // a part leaves something
		return 0
	}
	return 1 + g.rng.Int64N(most)
}
