package demo

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
)

// Freeze is what the operator's freeze did: Cuenta ("" for none) was frozen at Desde
// for Frozen of simulated time while the tail was delivered, and Waited of its debits
// (movements, however often delivered) came back meanwhile, to be applied once it was
// unfrozen.
type Freeze struct {
	Cuenta string
	Desde  time.Time
	Frozen time.Duration
	Waited int
}

// frozenFor is how long the account stays frozen, in simulated time: longer than a
// visibility timeout, so that its debits come back more than once.
const frozenFor = 10 * time.Minute

// freezer freezes one account as `ledger cuenta --bloquear` does, and unfreezes it
// once frozenFor has passed on the clock, checked before every batch. It is safe for
// concurrent use.
type freezer struct {
	ledger *store.Ledger
	clock  *sim.Clock

	mu     sync.Mutex
	cuenta string
	desde  time.Time
	until  time.Time // zero when not frozen
	err    error
	waited map[string]bool // the debits refused while it was frozen, by cuenta/id
}

// freeze freezes account c.
func (f *freezer) freeze(ctx context.Context, c string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cuenta, f.desde = c, f.clock.Now()
	f.until = f.desde.Add(frozenFor)
	return f.set(ctx, true)
}

// thaw unfreezes the account if its time has come; an error is end's to report.
func (f *freezer) thaw(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.until.IsZero() || f.clock.Now().Before(f.until) || f.err != nil {
		return
	}
	f.err = f.set(ctx, false)
	f.until = time.Time{}
}

// end unfreezes the account if it still is, and says what the freeze did.
func (f *freezer) end(ctx context.Context) (Freeze, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.until.IsZero() && f.err == nil {
		f.err = f.set(ctx, false)
	}
	return Freeze{Cuenta: f.cuenta, Desde: f.desde, Frozen: frozenFor, Waited: len(f.waited)}, f.err
}

// set freezes or unfreezes the account through store.Ledger.Administrar.
func (f *freezer) set(ctx context.Context, frozen bool) error {
	_, _, err := f.ledger.Administrar(ctx, f.cuenta, func(c cuenta.Cuenta) (cuenta.Cuenta, error) {
		c.Bloqueada = frozen
		return c, nil
	})
	return err
}

// observe counts the records of debits the freeze refused; it is a consumer.Observer.
func (f *freezer) observe(r consumer.Record) {
	if !errors.Is(r.Result.Err, cuenta.CuentaBloqueada) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waited[key(r.Mov.Cuenta, r.Mov.ID)] = true
}

// debtor is the account to freeze: of those opened before w's tail, the one with the
// most debits in it, or "" for none.
func debtor(w sim.Workload) string {
	head, tail := w.Movements[:len(w.Movements)-w.Tail], w.Movements[len(w.Movements)-w.Tail:]
	opened := map[string]bool{}
	for _, m := range head {
		opened[m.Cuenta], opened[m.Destino] = true, true
	}
	isDebit := debits(w)
	count := map[string]int{}
	for _, m := range tail {
		if opened[m.Cuenta] && isDebit[key(m.Cuenta, m.ID)] {
			count[m.Cuenta]++
		}
	}
	best := ""
	for _, c := range slices.Sorted(maps.Keys(count)) {
		if count[c] > count[best] {
			best = c
		}
	}
	return best
}

// debits is w's movements that take money from their account, which a freeze holds
// back, by key: cargos, transfers, repartos, holds and refunds of abonos.
func debits(w sim.Workload) map[string]bool {
	mov := byKey(w)
	out := map[string]bool{}
	for _, m := range w.Movements {
		switch m.Tipo {
		case movimiento.Cargo, movimiento.Traspaso, movimiento.Reparto, movimiento.Retencion:
			out[key(m.Cuenta, m.ID)] = true
		case movimiento.Anulacion:
			out[key(m.Cuenta, m.ID)] = mov[key(m.Cuenta, m.Anula)].Tipo == movimiento.Abono
		}
	}
	return out
}

// key names a movement: its account and id.
func key(cuenta, id string) string { return cuenta + "/" + id }

// byKey is w's movements by key.
func byKey(w sim.Workload) map[string]movimiento.Movimiento {
	out := make(map[string]movimiento.Movimiento, len(w.Movements))
	for _, m := range w.Movements {
		out[key(m.Cuenta, m.ID)] = m
	}
	return out
}
