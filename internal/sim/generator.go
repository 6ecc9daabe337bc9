package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// generator draws a workload movement by movement and keeps its books: every account's
// balance, and the funds its debits may draw on. Only abonos bring funds in: what a
// transfer or reparto credits, what a refund of a cargo or a reversal gives back, what
// a capture or release frees is never drawn on again, so each debit (a reversal's debit
// legs on the accounts a transfer or reparto credited among them) has its funds in any
// arrival order once its account's abonos are in. An account takes at most
// cuenta.MaxRetenciones holds.
type generator struct {
	spec      Spec
	rng       *rand.Rand
	cuentas   []string
	tailStart int // the index of the first movement of the tail
	w         Workload
	err       error // the first invalid movement built: a bug here

	funds      map[string]decimal.Decimal // by account: its abonos less every debit and hold drawn
	holds      map[string]int             // by account: holds drawn (in some arrival order all are active at once)
	open       []movimiento.Movimiento    // holds a later movement captures or releases
	lapsing    []movimiento.Movimiento    // holds left to lapse
	reversible []movimiento.Movimiento    // abonos and cargos neither reversed nor refunded
	legged     []movimiento.Movimiento    // transfers and repartos not reversed
	refunding  []*refunding               // abonos and cargos being refunded in parts, that take more refunds
	refunds    []*refunding               // every abono and cargo refunded in parts, in the order drawn
	firstRev   movimiento.Movimiento      // the first reversal drawn of an abono or cargo
	firstLeg   movimiento.Movimiento      // the first reversal drawn of a transfer or reparto
	credited   decimal.Decimal            // every credit drawn: no balance can exceed it
}

func newGenerator(spec Spec) *generator {
	g := &generator{
		spec:      spec,
		rng:       rand.New(rand.NewPCG(spec.Seed, 0x6c6564676572)), // "ledger"
		cuentas:   make([]string, spec.Accounts),
		tailStart: spec.Movements,
		w:         Workload{Saldos: make(map[string]decimal.Decimal, spec.Accounts)},
		funds:     map[string]decimal.Decimal{},
		holds:     map[string]int{},
	}
	for i := range g.cuentas {
		g.cuentas[i] = fmt.Sprintf("%sES%02d-%04d", spec.Prefix, spec.Seed%100, i)
		g.w.Saldos[g.cuentas[i]] = decimal.Zero
	}
	if spec.Holds > 0 {
		g.w.Tail = spec.Movements / 10
		g.tailStart -= g.w.Tail
	}
	return g
}

// mixed reports whether the workload draws more than abonos and cargos.
func (g *generator) mixed() bool {
	return g.spec.Transfers+g.spec.Repartos+g.spec.Reversals+g.spec.Refunds+g.spec.Holds > 0
}

// step draws movement i. The first movement of the tail writes an account with a hold
// left to lapse; holds waiting for their capture or release take the last places when
// no others are left (hold keeps a place for each).
func (g *generator) step(i int) {
	if i == g.tailStart && len(g.lapsing) > 0 {
		g.abono(g.lapsing[len(g.lapsing)-1].Cuenta)
		return
	}
	if len(g.open) > 0 && len(g.open) >= g.places(i) {
		g.settle()
		return
	}
	if !g.mixed() {
		g.plain()
		return
	}
	t, p, r, f, h := g.spec.Transfers, g.spec.Repartos, g.spec.Reversals, g.spec.Refunds, g.spec.Holds
	drawn := false
	switch x := g.rng.Float64(); {
	case x < t:
		drawn = g.transfer()
	case x < t+p:
		drawn = g.reparto()
	case x < t+p+r:
		drawn = g.reversal()
	case x < t+p+r+f:
		drawn = g.refund()
	case x < t+p+r+f+h:
		drawn = g.hold(i)
	case x < t+p+r+f+2*h && len(g.open) > 0: // settlements about as often as holds
		drawn = g.settle()
	}
	if !drawn {
		g.plain()
	}
}

// plain draws an abono or, when the account has more than 1.00 available, four times
// in ten a cargo of at most what is available.
func (g *generator) plain() {
	c := g.cuentas[g.rng.IntN(len(g.cuentas))]
	tipo, cents := movimiento.Abono, 100+g.rng.Int64N(99_900) // 1.00 … 999.99
	if avail := g.funds[c]; g.rng.IntN(10) < 4 && avail.GreaterThan(oneUnit) {
		tipo, cents = movimiento.Cargo, 1+g.rng.Int64N(avail.Shift(2).IntPart())
	}
	g.book(c, tipo, cents)
}

// abono draws an abono to c.
func (g *generator) abono(c string) { g.book(c, movimiento.Abono, 100+g.rng.Int64N(99_900)) }

// book adds an abono or cargo of cents to c.
func (g *generator) book(c string, tipo movimiento.Tipo, cents int64) {
	m := g.add(movimiento.Datos{Cuenta: c, Tipo: tipo, Importe: amount(cents), Moneda: g.spec.Moneda})
	g.post(c, m.Delta())
	g.funds[c] = g.funds[c].Add(m.Delta())
	g.reversible = append(g.reversible, m)
}

// transfer draws a transfer of at most what its account has available to another
// account of the workload.
func (g *generator) transfer() bool {
	n := len(g.cuentas)
	if n < 2 {
		return false
	}
	i := g.rng.IntN(n)
	from := g.cuentas[i]
	avail := g.funds[from]
	if !avail.GreaterThan(oneUnit) {
		return false
	}
	j := g.rng.IntN(n - 1) // any account but from
	if j >= i {
		j++
	}
	to := g.cuentas[j]
	m := g.add(movimiento.Datos{Cuenta: from, Destino: to, Tipo: movimiento.Traspaso,
		Importe: amount(1 + g.rng.Int64N(avail.Shift(2).IntPart())), Moneda: g.spec.Moneda})
	g.post(from, m.Importe.Neg())
	g.post(to, m.Importe)
	g.funds[from] = g.funds[from].Sub(m.Importe)
	g.legged = append(g.legged, m)
	return true
}

// places counts the places from movement i on where holds can be captured or
// released: all but the tail's first, kept for a write of an account with a hold left
// to lapse.
func (g *generator) places(i int) int {
	n := g.spec.Movements - i
	if i <= g.tailStart && g.w.Tail > 0 {
		n--
	}
	return n
}

// hold draws movement i as a hold of at most what its account has available: left to
// lapse one time in four before the tail, else captured or released later, when a
// place is left for that.
func (g *generator) hold(i int) bool {
	c := g.cuentas[g.rng.IntN(len(g.cuentas))]
	avail := g.funds[c]
	if !avail.GreaterThan(oneUnit) || g.holds[c] >= cuenta.MaxRetenciones {
		return false
	}
	lapse := i < g.tailStart && g.rng.IntN(4) == 0
	if !lapse && len(g.open) >= g.places(i+1) {
		return false
	}
	expira := g.spec.Now.Add(settledHold)
	if lapse {
		expira = g.spec.Now.Add(lapsingHold)
	}
	m := g.add(movimiento.Datos{Cuenta: c, Tipo: movimiento.Retencion, Importe: amount(1 + g.rng.Int64N(avail.Shift(2).IntPart())),
		Moneda: g.spec.Moneda, Expira: expira.UTC().Truncate(time.Second).Format(time.RFC3339)})
	g.funds[c] = g.funds[c].Sub(m.Importe)
	g.holds[c]++
	if lapse {
		g.lapsing = append(g.lapsing, m)
		g.w.Lapse = m.Expira.Add(cuenta.ToleranciaReloj)
	} else {
		g.open = append(g.open, m)
	}
	return true
}

// settle draws the release, the full capture or the partial capture of an open hold,
// one time in three each.
func (g *generator) settle() bool {
	k := g.rng.IntN(len(g.open))
	h := g.open[k]
	g.open = slices.Delete(g.open, k, k+1)
	d := movimiento.Datos{Cuenta: h.Cuenta, Tipo: movimiento.Captura, Retencion: h.ID}
	captured := h.Importe
	switch held := h.Importe.Shift(2).IntPart(); g.rng.IntN(3) {
	case 0:
		d.Tipo, captured = movimiento.Liberacion, decimal.Zero
	case 1: // importe omitted: all of it
	default:
		if held > 1 {
			d.Importe = amount(1 + g.rng.Int64N(held-1)) // less than held
			captured = decimal.RequireFromString(d.Importe)
		}
	}
	g.add(d)
	g.post(h.Cuenta, captured.Neg())
	return true
}

// refusals builds the movements refused by design, from what was drawn: a second
// reversal of the first abono or cargo reversed, a transfer of more than every credit
// of the workload (more than any balance can reach), a capture of the first hold left
// to lapse, a second reversal of the first transfer or reparto reversed, and a refund
// of a cent more than is left of the first movement refunded in part.
func (g *generator) refusals() {
	if !g.mixed() {
		return
	}
	if r := g.firstRev; r.ID != "" {
		g.refuse(movimiento.Datos{Cuenta: r.Cuenta, Tipo: movimiento.Anulacion, Anula: r.Anula})
	}
	if len(g.cuentas) > 1 && g.spec.Transfers > 0 {
		g.refuse(movimiento.Datos{Cuenta: g.cuentas[0], Destino: g.cuentas[1], Tipo: movimiento.Traspaso,
			Importe: g.credited.Add(decimal.New(1000, 0)).StringFixed(2), Moneda: g.spec.Moneda})
	}
	if len(g.lapsing) > 0 {
		h := g.lapsing[0]
		g.refuse(movimiento.Datos{Cuenta: h.Cuenta, Tipo: movimiento.Captura, Retencion: h.ID})
	}
	if r := g.firstLeg; r.ID != "" {
		g.refuse(movimiento.Datos{Cuenta: r.Cuenta, Tipo: movimiento.Anulacion, Anula: r.Anula})
	}
	if k := slices.IndexFunc(g.refunds, func(r *refunding) bool { return r.left > 0 }); k >= 0 {
		r := g.refunds[k]
		g.refuse(movimiento.Datos{Cuenta: r.m.Cuenta, Tipo: movimiento.Anulacion, Anula: r.m.ID, Importe: amount(r.left + 1)})
	}
}

// add builds d as the workload's next movement; the caller books what it posts.
func (g *generator) add(d movimiento.Datos) movimiento.Movimiento {
	m := g.build(d)
	g.w.Movements = append(g.w.Movements, m)
	return m
}

// refuse builds d as a movement refused by design.
func (g *generator) refuse(d movimiento.Datos) {
	g.w.Refused = append(g.w.Refused, g.build(d))
}

// build gives d the next id and a concepto and validates it.
func (g *generator) build(d movimiento.Datos) movimiento.Movimiento {
	d.ID = fmt.Sprintf("mov-%d-%06d", g.spec.Seed, len(g.w.Movements)+len(g.w.Refused))
	d.Concepto = conceptos[g.rng.IntN(len(conceptos))]
	m, err := movimiento.New(d)
	if err != nil && g.err == nil {
		g.err = err
	}
	return m
}

// post books delta on account c.
func (g *generator) post(c string, delta decimal.Decimal) {
	g.w.Saldos[c] = g.w.Saldos[c].Add(delta)
	if delta.IsPositive() {
		g.credited = g.credited.Add(delta)
	}
}

// oneUnit is 1.00: a debit is drawn only from an account with more available.
var oneUnit = decimal.New(100, -2)

// amount is cents as decimal text: 1234 is "12.34".
func amount(cents int64) string { return decimal.New(cents, -2).StringFixed(2) }
