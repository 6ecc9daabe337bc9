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

// checkRefunds checks every refund link of the account: each movement refunded (an
// abono or cargo in one refund or several, a transfer or reparto on its payer whole and
// once) lists exactly the applied refunds naming it, which sum to what it says was
// refunded (reembolsado), never more than its importe; it names the refund that
// completed it (anulado_por) exactly when nothing is left. A reversal's debit leg on
// an account a transfer or reparto credited names that movement's credit leg, which it
// does not mark: checkMoney checks it against its payer's.
func checkRefunds(c string, a *account, bad complain) {
	by := map[string][]string{} // original → the applied refunds naming it
	sum := map[string]decimal.Decimal{}
	for id, s := range a.movs {
		if s.anula == "" || s.estado != movimiento.Aplicado || a.movs[s.anula].creditLeg() {
			continue
		}
		by[s.anula] = append(by[s.anula], id)
		sum[s.anula] = sum[s.anula].Add(s.importe)
		if _, ok := a.movs[s.anula]; !ok {
			bad(c+"/"+id, "refunds %s, which the account does not have", s.anula)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(a.movs)) {
		o, refunds := a.movs[id], slices.Sorted(slices.Values(by[id]))
		switch completed := len(refunds) > 0 && o.reembolsado.Equal(o.importe); {
		case !slices.Equal(refunds, slices.Sorted(slices.Values(o.anulaciones))):
			bad(c+"/"+id, "refunded by %v, but lists %v", refunds, o.anulaciones)
		case !sum[id].Equal(o.reembolsado):
			bad(c+"/"+id, "its refunds sum to %s, but it says %s was refunded", sum[id], o.reembolsado)
		case o.reembolsado.GreaterThan(o.importe):
			bad(c+"/"+id, "refunded %s of %s: more than it moved", o.reembolsado, o.importe)
		case completed != (o.anuladoPor != "") || (completed && !slices.Contains(refunds, o.anuladoPor)):
			bad(c+"/"+id, "refunded %s of %s by %v, yet anulado_por is %q", o.reembolsado, o.importe, refunds, o.anuladoPor)
		case o.payerLeg() && len(refunds) > 1:
			bad(c+"/"+id, "a transfer or reparto reversed %d times: %v", len(refunds), refunds)
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

// checkMoney checks what holds across accounts: every applied leg of a transfer, a
// reparto or a reversal of one has its counterpart (the same id and fingerprint on the
// other account, moving the same amount the other way, naming this account or listing
// it as a part), a reparto's parts sum to its importe, and the balances of all
// accounts add up to the external credits less the external debits (legs create and
// destroy nothing).
func checkMoney(accounts map[string]*account, bad complain) {
	total, external := decimal.Zero, decimal.Zero
	for _, c := range slices.Sorted(maps.Keys(accounts)) {
		a := accounts[c]
		total = total.Add(a.saldo)
		for id, s := range a.movs {
			if !s.posted() {
				continue
			}
			legs := s.legs()
			if len(legs) == 0 {
				external = external.Add(s.delta())
				continue
			}
			if len(s.partes) > 0 && !sumOf(s.partes).Equal(s.importe) {
				bad(c+"/"+id, "moves %s, but its parts sum to %s", s.importe, sumOf(s.partes))
			}
			for _, leg := range legs {
				var other stored
				if b := accounts[leg.Cuenta]; b != nil {
					other = b.movs[id]
				}
				if !counterparts(c, s, other, leg.Importe) {
					bad(c+"/"+id, "leg (%s %s with %s) without its counterpart: %+v", s.tipo, leg.Importe, leg.Cuenta, other)
				}
			}
		}
	}
	if !total.Equal(external) {
		bad("all accounts", "balances sum to %s, but external credits less debits are %s", total, external)
	}
}

// counterparts reports whether y, with x's id on the account of x's leg of amount, is
// that leg's other side: posted with x's fingerprint, moving the other way, and naming
// x's account c with amount, or listing c as a part of amount.
func counterparts(c string, x, y stored, amount decimal.Decimal) bool {
	if !y.posted() || y.huella != x.huella || y.delta().Sign() != -x.delta().Sign() {
		return false
	}
	if len(y.partes) > 0 {
		return slices.ContainsFunc(y.partes, func(p movimiento.Parte) bool { return p.Cuenta == c && p.Importe.Equal(amount) })
	}
	return y.contrapartida == c && y.importe.Equal(amount)
}

// sumOf is what parts move together.
func sumOf(partes []movimiento.Parte) decimal.Decimal {
	sum := decimal.Zero
	for _, p := range partes {
		sum = sum.Add(p.Importe)
	}
	return sum
}
