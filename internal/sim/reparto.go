package sim

import (
	"slices"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// The parts a reparto is drawn with: usually a few, one time in wideOneIn up to
// movimiento.MaxPartes; never more than the workload's other accounts. Its payer is
// the first of payerTries accounts drawn that has funds: in a workload of many accounts
// and few movements, most have none.
const (
	fewPartes  = 5
	wideOneIn  = 10
	payerTries = 4
)

// reparto draws a reparto of at most what its payer has available among 2 to
// fewPartes other accounts of the workload (one time in wideOneIn up to
// movimiento.MaxPartes), each part at least a cent.
func (g *generator) reparto() bool {
	n := len(g.cuentas)
	if n < 3 {
		return false
	}
	i := g.payer()
	if i < 0 {
		return false
	}
	payer := g.cuentas[i]
	avail := g.funds[payer] // over 100 cents: a cent for each of at most 48 parts
	parts := 2 + g.rng.IntN(fewPartes-1)
	if g.rng.IntN(wideOneIn) == 0 {
		parts = 2 + g.rng.IntN(movimiento.MaxPartes-1)
	}
	parts = min(parts, n-1)
	total := int64(parts) + g.rng.Int64N(avail.Shift(2).IntPart()-int64(parts)+1)
	d := movimiento.Datos{Cuenta: payer, Tipo: movimiento.Reparto, Importe: amount(total), Moneda: g.spec.Moneda}
	cents := g.split(total, parts)
	for k, c := range g.others(i, parts) {
		d.Partes = append(d.Partes, movimiento.ParteDatos{Cuenta: c, Importe: amount(cents[k])})
	}
	m := g.add(d)
	g.post(payer, m.Importe.Neg())
	for _, p := range m.Partes {
		g.post(p.Cuenta, p.Importe)
	}
	g.funds[payer] = g.funds[payer].Sub(m.Importe)
	g.legged = append(g.legged, m)
	return true
}

// payer draws the index of an account with more than 1.00 available, trying at most
// payerTries accounts; -1 when none of them has.
func (g *generator) payer() int {
	for range payerTries {
		if i := g.rng.IntN(len(g.cuentas)); g.funds[g.cuentas[i]].GreaterThan(oneUnit) {
			return i
		}
	}
	return -1
}

// others draws k distinct accounts of the workload other than account i, in random
// order: the first k+1 steps of a Fisher–Yates shuffle with account i put first,
// keeping only the positions it moved.
func (g *generator) others(i, k int) []string {
	moved := map[int]int{} // position → account index, where they differ
	at := func(p int) int {
		if v, ok := moved[p]; ok {
			return v
		}
		return p
	}
	moved[0], moved[i] = i, 0
	out := make([]string, k)
	for p := 1; p <= k; p++ {
		q := p + g.rng.IntN(len(g.cuentas)-p)
		vp, vq := at(p), at(q)
		moved[p], moved[q] = vq, vp
		out[p-1] = g.cuentas[vq]
	}
	return out
}

// split draws n amounts of at least a cent each that sum to total cents.
func (g *generator) split(total int64, n int) []int64 {
	rest := total - int64(n)
	cuts := make([]int64, n-1)
	for k := range cuts {
		cuts[k] = g.rng.Int64N(rest + 1)
	}
	slices.Sort(cuts)
	out := make([]int64, n)
	prev := int64(0)
	for k, c := range cuts {
		out[k], prev = 1+c-prev, c
	}
	out[n-1] = 1 + rest - prev
	return out
}
