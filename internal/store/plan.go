package store

import (
	"fmt"
	"slices"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// stored is an account as the table holds it: decoded, and the item it was decoded
// from (nil: no account yet), whose unknown attributes a write carries over.
type stored struct {
	c    cuenta.Cuenta
	item versioned.Item
}

// decision is cuenta's decision on delivery entrega and, when it marks a record, the
// Replace that rewrites it.
type decision struct {
	cuenta.Decision
	entrega int
	mark    *versioned.Replace
}

// plan is the transaction that records a chunk's decisions, and how its actions map
// back to them.
type plan struct {
	keys      []versioned.Item // the chunk's accounts, as versioned keys
	versions  []int64          // their versions as decided on (0: none yet)
	txn       versioned.Txn
	decisions []decision
	guarded   []int    // the decision of each guarded action, by Txn.Guarded's index
	replaced  []int    // the decision of each Replace
	written   []stored // by account: the new state and image where changed, else zero
}

// plan decides the chunk's deliveries in arrival order against its accounts as stored
// (accounts, in the order of c.cuentas) and the records they refer to, each seeing the
// changes of those before it, and builds the transaction that records them. It does
// no I/O.
func (g *group) plan(c chunk, accounts []stored, funds cuenta.FundsPolicy) (plan, error) {
	cuentas := c.cuentas
	p := plan{keys: make([]versioned.Item, len(cuentas)), versions: make([]int64, len(cuentas)), written: make([]stored, len(cuentas))}
	state := map[string]*cuenta.Cuenta{} // the accounts as the decisions so far left them
	for i, id := range cuentas {
		p.keys[i], p.versions[i] = items.CuentaKey(id), accounts[i].c.Version
		if accounts[i].item != nil {
			state[id] = &accounts[i].c
		}
	}
	var absent []int
	var records []movimiento.Apunte // encoded once the accounts' new versions are known
	for n, i := range c.entregas {
		f := c.footprints[n]
		d := g.decide(i, f, state, funds)
		n := len(p.decisions)
		for _, a := range d.Apuntes {
			records, p.guarded = append(records, a), append(p.guarded, n)
		}
		for _, k := range unwritten(f, d.Apuntes) {
			p.txn.Absent, absent = append(p.txn.Absent, k), append(absent, n)
		}
		if d.mark != nil {
			p.txn.Replaces, p.replaced = append(p.txn.Replaces, *d.mark), append(p.replaced, n)
		}
		p.decisions = append(p.decisions, d)
	}
	p.guarded = append(p.guarded, absent...)
	if err := p.images(cuentas, accounts, state, g.now); err != nil {
		return plan{}, err
	}
	if err := p.creates(records, cuentas); err != nil {
		return plan{}, err
	}
	return p, nil
}

// creates encodes the records the chunk creates, each with its account's version once
// the transaction commits: the version read, plus one when the chunk writes the
// account's new image. The events that announce a record carry it.
func (p *plan) creates(records []movimiento.Apunte, cuentas []string) error {
	for _, a := range records {
		i := slices.Index(cuentas, a.Movimiento.Cuenta)
		if i < 0 {
			return fmt.Errorf("store: record %s/%s is of an account the chunk does not write", a.Movimiento.Cuenta, a.Movimiento.ID)
		}
		a.Version = p.versions[i]
		if p.txn.Next[i] != nil {
			a.Version++
		}
		item, err := items.EncodeApunte(a)
		if err != nil {
			return err
		}
		p.txn.Creates = append(p.txn.Creates, item)
	}
	return nil
}

// images sets the new image of each account a decision changed (state differs from
// what was read), and a version check of the others: a decision based on an account's
// state is recorded only if that state is still current.
func (p *plan) images(cuentas []string, accounts []stored, state map[string]*cuenta.Cuenta, now time.Time) error {
	p.txn.Next = make([]versioned.Item, len(cuentas))
	for i, id := range cuentas {
		c, ok := state[id]
		if !ok || c == &accounts[i].c {
			continue
		}
		next := *c
		next.Actualizada = now
		if accounts[i].item == nil {
			next.Creada = now
		}
		item, err := items.EncodeCuenta(next, accounts[i].item)
		if err != nil {
			return err
		}
		next.Version = p.versions[i] + 1
		p.txn.Next[i], p.written[i] = item, stored{c: next, item: item}
	}
	return nil
}

// decide asks cuenta.Decide about delivery i, of footprint f, given the accounts as the
// chunk's earlier decisions left them, and moves them as it applies. A record it refers
// to that cannot be read fails it for good.
func (g *group) decide(i int, f footprint, state map[string]*cuenta.Cuenta, funds cuenta.FundsPolicy) decision {
	e := g.es[i]
	in := cuenta.Input{Mov: e.Mov, Origen: e.Origen, Remitente: e.Remitente, Via: e.Via, Enviado: e.Enviado,
		Cuentas: map[string]*cuenta.Cuenta{}, Now: g.now, Funds: funds}
	for _, c := range f.cuentas {
		if state[c] != nil {
			in.Cuentas[c] = state[c]
		}
	}
	r := g.records[f.referred]
	if r != nil && r.item != nil {
		a, err := r.apunte()
		if err != nil {
			return decision{entrega: i, Decision: cuenta.Decision{Err: err}}
		}
		in.Referido = &a
	}
	d := decision{entrega: i, Decision: cuenta.Decide(in)}
	for i := range d.Cuentas {
		state[d.Cuentas[i].ID] = &d.Cuentas[i]
	}
	if d.Marca != nil {
		d.mark = items.Mark(r.item, *d.Marca)
	}
	return d
}
