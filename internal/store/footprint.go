package store

import (
	"slices"

	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// movKey is a movement's idempotency key, (cuenta, id).
type movKey struct{ cuenta, id string }

// referred is the key of the record m refers to: the movement a reversal undoes, the
// hold a capture or release settles; id "" for none.
func referred(m movimiento.Movimiento) movKey {
	return movKey{m.Cuenta, m.Referido()}
}

// footprint is what one delivery touches in a transaction: the records it may write
// (its own first, then one per other account it moves), the record it refers to (id
// "": none), and the accounts it moves (its own first).
type footprint struct {
	writes   []movKey
	referred movKey
	cuentas  []string
}

// actions counts the transaction's actions the footprint takes besides its accounts.
func (f footprint) actions() int {
	if f.referred.id != "" {
		return len(f.writes) + 1
	}
	return len(f.writes)
}

// footprint is delivery i's: a transfer or reparto also writes on the accounts it
// credits; a reversal of one also writes on the accounts it takes back from, which its
// original's record names (read before: g.records).
func (g *group) footprint(i int) footprint {
	m := g.es[i].Mov
	f := footprint{writes: []movKey{{m.Cuenta, m.ID}}, referred: referred(m), cuentas: []string{m.Cuenta}}
	leg := func(c string) {
		f.writes, f.cuentas = append(f.writes, movKey{c, m.ID}), append(f.cuentas, c)
	}
	switch m.Tipo {
	case movimiento.Traspaso:
		leg(m.Destino)
	case movimiento.Reparto:
		for _, p := range m.Partes {
			leg(p.Cuenta)
		}
	case movimiento.Anulacion:
		for _, c := range g.legsOf(f.referred) {
			leg(c)
		}
	}
	return f
}

// legsOf is the accounts a transfer or reparto recorded at k credited, as last read;
// none for any other record, or one not read or not recorded.
func (g *group) legsOf(k movKey) []string {
	r := g.records[k]
	if r == nil || r.item == nil {
		return nil
	}
	a, err := r.apunte()
	if err != nil || a.Movimiento.Tipo != movimiento.Cargo { // a credit leg reverses nothing
		return nil
	}
	var legs []string
	for _, p := range a.Contrapartidas() {
		legs = append(legs, p.Cuenta)
	}
	return legs
}

// chunk is the deliveries one transaction records, in arrival order, each with its
// footprint, and the accounts they touch, in order.
type chunk struct {
	entregas   []int
	footprints []footprint
	cuentas    []string
}

// nextChunk is the longest prefix of pending, at most limit deliveries, that fits one
// transaction: at most versioned.MaxActions actions (one per record and per account),
// and no record named twice, so a movement naming a record named earlier in the chunk
// (say, a reversal of a movement written in it) waits for the next one.
func (g *group) nextChunk(pending []int, limit int) chunk {
	var c chunk
	var named []movKey // the chunk's records; a linear search, as a chunk names at most 100
	for n, i := range pending {
		f := g.footprint(i)
		var fresh []string
		for _, id := range f.cuentas {
			if !slices.Contains(c.cuentas, id) && !slices.Contains(fresh, id) {
				fresh = append(fresh, id)
			}
		}
		clash := slices.ContainsFunc(f.writes, func(k movKey) bool { return slices.Contains(named, k) }) ||
			(f.referred.id != "" && slices.Contains(named, f.referred))
		if n > 0 && (n == limit || clash || len(named)+f.actions()+len(c.cuentas)+len(fresh) > versioned.MaxActions) {
			c.entregas = pending[:n]
			return c
		}
		named = append(named, f.writes...)
		if f.referred.id != "" {
			named = append(named, f.referred)
		}
		c.footprints, c.cuentas = append(c.footprints, f), append(c.cuentas, fresh...)
	}
	c.entregas = pending
	return c
}

// prefix is the chunk's first n deliveries, which fit a transaction as they did in it,
// and the accounts they touch, in order.
func (c chunk) prefix(n int) chunk {
	p := chunk{entregas: c.entregas[:n], footprints: c.footprints[:n]}
	for _, f := range p.footprints {
		for _, id := range f.cuentas {
			if !slices.Contains(p.cuentas, id) {
				p.cuentas = append(p.cuentas, id)
			}
		}
	}
	return p
}

// unwritten are the keys a delivery of footprint f would have written but its decision
// did not, as written lists them, checked absent in the same transaction: a redelivery
// of one recorded earlier is a duplicate whatever the rules say today, and a leg's key
// with its id there is a conflicting duplicate.
func unwritten(f footprint, written []movimiento.Apunte) []versioned.Item {
	var keys []versioned.Item
	for _, k := range f.writes {
		if !slices.ContainsFunc(written, func(a movimiento.Apunte) bool { return a.Movimiento.Cuenta == k.cuenta && a.Movimiento.ID == k.id }) {
			keys = append(keys, items.MovKey(k.cuenta, k.id))
		}
	}
	return keys
}
