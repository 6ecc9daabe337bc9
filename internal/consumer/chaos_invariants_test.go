package consumer_test

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// complain records one broken guarantee: where, and what.
type complain func(where, format string, args ...any)

// checkStatement checks one account against its own records: saldo and movimientos are
// its posted movements' sum and count, their seq are 1..n (a dense statement), each
// saldo_tras is the running balance and never below -limite, and what is left
// available (saldo - retenido + limite) is not negative.
func checkStatement(c string, a *account, now time.Time, bad complain) {
	var posted []stored
	for _, s := range a.movs {
		if s.posted() {
			posted = append(posted, s)
		}
	}
	if !a.exists {
		if len(posted) > 0 {
			bad(c, "no account item, but %d posted movements", len(posted))
		}
		return
	}
	slices.SortFunc(posted, func(x, y stored) int { return cmp.Compare(x.seq, y.seq) })
	running := decimal.Zero
	for i, s := range posted {
		running = running.Add(s.delta())
		if s.seq != int64(i+1) {
			bad(c, "posted seq values are not 1..%d: position %d holds %d", len(posted), i+1, s.seq)
			return
		}
		if !s.saldoTras.Equal(running) {
			bad(c, "saldo_tras of seq %d is %s, the running balance %s", s.seq, s.saldoTras, running)
		}
		if running.LessThan(a.limite.Neg()) {
			bad(c, "seq %d took the balance to %s, below the limit of -%s", s.seq, running, a.limite)
		}
	}
	if !a.saldo.Equal(running) {
		bad(c, "saldo %s, its posted movements sum to %s", a.saldo, running)
	}
	if a.movimientos != int64(len(posted)) {
		bad(c, "movimientos %d, %d movements posted", a.movimientos, len(posted))
	}
	if disponible := a.saldo.Sub(a.retenido(now)).Add(a.limite); disponible.IsNegative() {
		bad(c, "disponible %s: saldo %s, %s held, limite %s", disponible, a.saldo, a.retenido(now), a.limite)
	}
}

// checkReversals checks that every movement of the account is reversed at most once, by
// a reversal that names it and that it names back.
func checkReversals(c string, a *account, bad complain) {
	by := map[string][]string{} // original → the applied reversals naming it
	for id, s := range a.movs {
		if s.anula != "" && s.estado == movimiento.Aplicado {
			by[s.anula] = append(by[s.anula], id)
		}
	}
	for _, original := range slices.Sorted(maps.Keys(by)) {
		if rs := by[original]; len(rs) > 1 {
			bad(c+"/"+original, "reversed %d times: %v", len(rs), rs)
		} else if o := a.movs[original]; o.anuladoPor != rs[0] {
			bad(c+"/"+original, "reversed by %s, but marked reversed by %q", rs[0], o.anuladoPor)
		}
	}
	for id, s := range a.movs {
		if s.anuladoPor != "" && len(by[id]) == 0 {
			bad(c+"/"+id, "marked reversed by %s, which is no applied reversal of it", s.anuladoPor)
		}
	}
}

// checkHolds checks the account's holds at now: what its active holds not lapsed
// reserve (retenido) is exactly the unexpired holds still held, each for its importe
// and expira; no hold is both captured and released, or settled twice; every capture
// takes at most what its hold held.
func checkHolds(c string, a *account, now time.Time, bad complain) {
	held := decimal.Zero
	for id, s := range a.movs {
		if s.tipo != movimiento.Retencion || s.estado != movimiento.Retenida || !s.expira.After(now) {
			continue
		}
		held = held.Add(s.importe)
		if h, ok := a.retenciones[id]; !ok || !h.importe.Equal(s.importe) || !h.expira.Equal(s.expira) {
			bad(c+"/"+id, "held (%s until %s) but not among the account's active holds as such (%+v)", s.importe, s.expira, h)
		}
	}
	if r := a.retenido(now); !r.Equal(held) {
		bad(c, "retenido %s, but the unexpired holds still held sum to %s", r, held)
	}
	settled := map[string][]string{} // hold → the applied captures and releases naming it
	for id, s := range a.movs {
		if s.retencion != "" && s.estado == movimiento.Aplicado {
			settled[s.retencion] = append(settled[s.retencion], id)
			if h := a.movs[s.retencion]; s.tipo == movimiento.Cargo && s.importe.GreaterThan(h.importe) {
				bad(c+"/"+id, "captures %s of the hold %s, which held %s", s.importe, s.retencion, h.importe)
			}
		}
	}
	for id, s := range a.movs {
		if s.tipo != movimiento.Retencion {
			continue
		}
		switch by := settled[id]; {
		case s.capturadaPor != "" && s.liberadaPor != "":
			bad(c+"/"+id, "both captured (by %s) and released (by %s)", s.capturadaPor, s.liberadaPor)
		case len(by) > 1:
			bad(c+"/"+id, "settled %d times: %v", len(by), by)
		case len(by) == 1 && by[0] != cmp.Or(s.capturadaPor, s.liberadaPor):
			bad(c+"/"+id, "settled by %s, but marked captured by %q, released by %q", by[0], s.capturadaPor, s.liberadaPor)
		case len(by) == 0 && s.estado != movimiento.Retenida && s.estado != movimiento.Rechazado:
			bad(c+"/"+id, "estado %s, but nothing settled it", s.estado)
		}
	}
}

// checkMoney checks what holds across accounts: every applied transfer leg has its
// counterpart (the same id on the other account, the same importe, the opposite tipo,
// each naming the other account), and the balances of all accounts add up to the
// external credits less the external debits (transfers create and destroy nothing).
func checkMoney(accounts map[string]*account, bad complain) {
	total, external := decimal.Zero, decimal.Zero
	for _, c := range slices.Sorted(maps.Keys(accounts)) {
		a := accounts[c]
		total = total.Add(a.saldo)
		for id, s := range a.movs {
			if !s.posted() {
				continue
			}
			if s.contrapartida == "" {
				external = external.Add(s.delta())
				continue
			}
			var other stored
			if b := accounts[s.contrapartida]; b != nil {
				other = b.movs[id]
			}
			if !other.posted() || other.contrapartida != c ||
				!other.importe.Equal(s.importe) || !other.delta().Equal(s.delta().Neg()) {
				bad(c+"/"+id, "transfer leg (%s %s to %s) without its counterpart: %+v", s.tipo, s.importe, s.contrapartida, other)
			}
		}
	}
	if !total.Equal(external) {
		bad("all accounts", "balances sum to %s, but external credits less debits are %s", total, external)
	}
}
