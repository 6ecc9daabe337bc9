package consumer_test

import (
	"fmt"
	"slices"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
)

// legsOf is what the movement m (of the workload, or refused by design) moves on
// accounts other than its own: what a transfer or reparto credits and, for a reversal
// of either, the same, each taken back; none for other movements.
func (v *verifier) legsOf(m movimiento.Movimiento) []movimiento.Parte {
	if m.Tipo == movimiento.Anulacion {
		return sim.Credited(v.workload[m.Cuenta+"/"+m.Anula])
	}
	return sim.Credited(m)
}

// checkLegs says what is wrong with the legs of m, whose record on its own account is
// s ("" for nothing): each must be recorded applied on its account with m's id and
// fingerprint, moving its part the other way, naming m's account (and, for a reversal,
// the movement it reverses).
func (v *verifier) checkLegs(m movimiento.Movimiento, s stored) string {
	for _, p := range v.legsOf(m) {
		leg, ok := v.accounts[p.Cuenta].movs[m.ID]
		if !ok || leg.estado != movimiento.Aplicado || leg.huella != s.huella || leg.contrapartida != m.Cuenta ||
			!leg.importe.Equal(p.Importe) || leg.delta().Sign() != -s.delta().Sign() || leg.anula != m.Anula {
			return fmt.Sprintf("its leg on %s is missing or not its counterpart: %+v", p.Cuenta, leg)
		}
	}
	return ""
}

// noLegs checks that the movement m, recorded rejected, wrote none of its legs.
func (v *verifier) noLegs(m movimiento.Movimiento) {
	for _, p := range v.legsOf(m) {
		if _, ok := v.accounts[p.Cuenta].movs[m.ID]; ok {
			v.bad(m.Cuenta+"/"+m.ID, "a rejected %s has its leg on %s", m.Tipo, p.Cuenta)
		}
	}
}

// checkRefund says what is wrong with s as the applied record of the refund m ("" for
// nothing): the opposite of its original of what it gives back (all of it when m
// names no importe), on m's account, naming the original, which lists it; a reversal
// of a transfer or reparto names what the original credited, completes it, and takes
// every leg back.
func (v *verifier) checkRefund(m movimiento.Movimiento, s stored) string {
	o := v.workload[m.Cuenta+"/"+m.Anula]
	opposite, importe := movimiento.Abono, m.Importe
	if o.Tipo == movimiento.Abono {
		opposite = movimiento.Cargo
	}
	if importe.IsZero() {
		importe = o.Importe
	}
	if s.tipo != opposite || s.anula != m.Anula || !s.importe.Equal(importe) || s.estado != movimiento.Aplicado ||
		s.contrapartida != o.Destino || !sameParts(s.partes, o.Partes) {
		return "not the refund of " + importe.String() + " of " + m.Anula
	}
	original := v.accounts[m.Cuenta].movs[m.Anula]
	if !slices.Contains(original.anulaciones, m.ID) {
		return fmt.Sprintf("its original %s lists the refunds %v", m.Anula, original.anulaciones)
	}
	if len(v.legsOf(m)) == 0 {
		return ""
	}
	if original.anuladoPor != m.ID {
		return fmt.Sprintf("its original %s is marked reversed by %q", m.Anula, original.anuladoPor)
	}
	return v.checkLegs(m, s)
}

// sameParts reports whether x and y are the same parts, in any order.
func sameParts(x, y []movimiento.Parte) bool {
	return len(x) == len(y) && !slices.ContainsFunc(x, func(p movimiento.Parte) bool {
		return !slices.ContainsFunc(y, func(q movimiento.Parte) bool { return q.Cuenta == p.Cuenta && q.Importe.Equal(p.Importe) })
	})
}
