package consumer_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

// Report is Verify's verdict on one run.
type Report struct {
	// Violations lists every broken guarantee; a correct ledger has none.
	Violations []Violation
	// Applied and Rejected count the workload's movements recorded with each outcome (a
	// hold held, captured or released is applied). Refused counts the movements refused
	// by design that were refused. Unapplied are those never recorded because every
	// delivery of theirs ended in the DLQ, each with its reason: allowed by the
	// contract, and a sign of a stuck message when the scenario's maxReceiveCount is far
	// above what its faults can use. Excused counts those never recorded because, under
	// the reject policy, the movement they reverse or the hold they settle was rejected:
	// they are parked with the reason, as they must be.
	Applied   int
	Rejected  int
	Refused   int
	Unapplied []Violation
	Excused   int
}

// Violation is one broken guarantee, or one unapplied movement: where, and what.
type Violation struct {
	Where   string // cuenta/id, cuenta, or message id
	Problem string
}

// String is the violation as one line: where, then what.
func (v Violation) String() string { return v.Where + ": " + v.Problem }

// Verify reads every account of the run back (strongly consistent) and checks what a
// user is promised:
//
//   - each movement of the workload is recorded once, with its own fingerprint, as its
//     kind is (a transfer or reparto as every leg, a refund as the opposite movement of
//     what it gives back listed by its original, a reversal of a transfer or reparto
//     as every leg taken back, a capture as a cargo marking its hold captured, a release
//     marking it released, a hold left to lapse expired by the end), or rejected (reject
//     policy, debits only, with none of its legs), or else every delivery of it ended
//     in the DLQ with a reason;
//   - each movement refused by design is refused (under the reject policy, a transfer
//     may be recorded rejected, and a second reversal or a refund of more than was left
//     applies when a refund of the workload did not);
//   - nothing else is recorded; every statement is dense and adds up to its saldo, never
//     below the limit; no movement is refunded beyond its importe, each lists its
//     refunds and their sum, and a transfer or reparto is reversed at most once; the
//     active holds are the unexpired holds still held, none both captured and released,
//     and what is available is never negative (checkStatement, checkRefunds,
//     checkHolds);
//   - all legs or none: every leg of a transfer, reparto or reversal has its
//     counterpart, and all balances add up to the external credits less the external
//     debits (checkMoney); under the retry policy with nothing unapplied, every saldo
//     is the workload's;
//   - every malformed message and every late conflicting replay ended in the DLQ with
//     its reason, the replays as conflicting duplicates, and no genuine delivery was
//     parked.
func Verify(ctx context.Context, db QueryClient, table string, res Result) (Report, error) {
	v := &verifier{res: res, accounts: map[string]*account{}, sent: map[string][]string{}, workload: map[string]movimiento.Movimiento{}}
	for c := range res.Workload.Saldos {
		a, err := readAccount(ctx, db, table, c)
		if err != nil {
			return Report{}, err
		}
		v.accounts[c] = a
	}
	for _, m := range res.Workload.Movements {
		v.workload[m.Cuenta+"/"+m.ID] = m
	}
	v.deliveries()
	for _, m := range res.Workload.Movements {
		v.movement(m)
	}
	for _, m := range res.Workload.Refused {
		v.refused(m)
	}
	v.genuine()
	for _, c := range slices.Sorted(maps.Keys(v.accounts)) {
		a := v.accounts[c]
		checkStatement(c, a, res.Now, v.bad)
		checkRefunds(c, a, v.bad)
		checkHolds(c, a, res.Now, v.bad)
		if res.Scenario.Policy != cuenta.Reject && len(v.rep.Unapplied) == 0 && !a.saldo.Equal(res.Workload.Saldos[c]) {
			v.bad(c, "saldo %s, the workload's movements sum to %s", a.saldo, res.Workload.Saldos[c])
		}
	}
	checkMoney(v.accounts, v.bad)
	slices.SortFunc(v.rep.Violations, func(x, y Violation) int { return cmp.Compare(x.String(), y.String()) })
	return v.rep, nil
}

// verifier is one Verify: the run, the accounts as read back, and the verdict so far.
type verifier struct {
	res      Result
	accounts map[string]*account
	sent     map[string][]string              // cuenta/id → the message ids carrying it
	workload map[string]movimiento.Movimiento // the movements meant to apply, by cuenta/id
	rep      Report
}

func (v *verifier) bad(where, format string, args ...any) {
	v.rep.Violations = append(v.rep.Violations, Violation{Where: where, Problem: fmt.Sprintf(format, args...)})
}

// deliveries files every message by the movement it carries, and checks that the
// malformed ones and the late conflicting replays ended in the DLQ with their reason.
func (v *verifier) deliveries() {
	s := v.res.Schedule
	for _, d := range slices.Concat(s.Deliveries, s.Tail, s.Late) {
		m, err := movimiento.Parse([]byte(d.Body))
		f := v.res.Fates[d.ID]
		key := m.Cuenta + "/" + m.ID
		w, ofWorkload := v.workload[key]
		switch {
		case err != nil:
			if !(f.Parked || f.Dead) || f.Reason == "" {
				v.bad(d.ID, "malformed message not sent to the DLQ with a reason (fate %+v)", f)
			}
		case ofWorkload && w.Huella() != m.Huella():
			if !(f.Parked || f.Dead) || f.Outcome != store.ConflictingDuplicate || f.Reason == "" {
				v.bad(d.ID, "late conflicting replay not refused as a conflicting duplicate with a reason (fate %+v)", f)
			}
		default:
			v.sent[key] = append(v.sent[key], d.ID)
		}
	}
}

// movement checks how the workload's movement m was recorded.
func (v *verifier) movement(m movimiento.Movimiento) {
	key := m.Cuenta + "/" + m.ID
	s, ok := v.accounts[m.Cuenta].movs[m.ID]
	excused := !ok && v.excused(m)
	for _, id := range v.sent[key] {
		if f := v.res.Fates[id]; f.Parked && !excused {
			v.bad(id, "a genuine delivery of %s was parked: %s", key, f.Reason)
		}
	}
	switch {
	case !ok:
		v.unrecorded(m, excused)
	case m.Huella() != s.huella:
		v.bad(key, "recorded with fingerprint %s, the movement's is %s: a conflicting duplicate was recorded", s.huella, m.Huella())
	case s.estado == movimiento.Rechazado:
		if v.res.Scenario.Policy != cuenta.Reject || !v.debit(m) || s.motivo == "" {
			v.bad(key, "recorded rejected (motivo %q) under policy %q for a %s", s.motivo, v.res.Scenario.Policy, m.Tipo)
		}
		v.noLegs(m)
		v.rep.Rejected++
	default:
		if problem := v.recordedAs(m, s); problem != "" {
			v.bad(key, "recorded %+v: %s", s, problem)
		}
		v.rep.Applied++
	}
}

// recordedAs says what is wrong with s as the applied record of m ("" for nothing).
func (v *verifier) recordedAs(m movimiento.Movimiento, s stored) string {
	a := v.accounts[m.Cuenta]
	switch m.Tipo {
	case movimiento.Abono, movimiento.Cargo:
		if s.tipo != m.Tipo || !s.importe.Equal(m.Importe) || s.estado != movimiento.Aplicado {
			return "not the " + string(m.Tipo) + " sent"
		}
	case movimiento.Traspaso, movimiento.Reparto:
		if s.tipo != movimiento.Cargo || s.contrapartida != m.Destino || !sameParts(s.partes, m.Partes) || !s.importe.Equal(m.Importe) || s.estado != movimiento.Aplicado {
			return "not the debit of the " + string(m.Tipo) + " sent"
		}
		return v.checkLegs(m, s)
	case movimiento.Anulacion:
		return v.checkRefund(m, s)
	case movimiento.Retencion:
		lapsing := !v.settled(m)
		switch {
		case s.tipo != movimiento.Retencion || !s.importe.Equal(m.Importe) || !s.expira.Equal(m.Expira):
			return "not the hold sent"
		case s.estado != movimiento.Retenida && s.estado != movimiento.Capturada && s.estado != movimiento.Liberada:
			return "in no state of a hold"
		case lapsing && (s.estado != movimiento.Retenida || s.expira.After(v.res.Now)):
			return fmt.Sprintf("left to lapse, but not expired at the end (%s)", v.res.Now)
		}
	case movimiento.Captura, movimiento.Liberacion:
		h := a.movs[m.Retencion]
		want, by, tipo, importe := movimiento.Capturada, h.capturadaPor, movimiento.Cargo, m.Importe
		if m.Tipo == movimiento.Liberacion { // the record says how much it freed: all of it
			want, by, tipo, importe = movimiento.Liberada, h.liberadaPor, movimiento.Liberacion, h.importe
		} else if importe.IsZero() { // a capture of all of it
			importe = h.importe
		}
		if s.tipo != tipo || s.retencion != m.Retencion || !s.importe.Equal(importe) || s.estado != movimiento.Aplicado {
			return "not the " + string(m.Tipo) + " of " + m.Retencion
		}
		if h.estado != want || by != m.ID {
			return fmt.Sprintf("its hold %s is %s by %q", m.Retencion, h.estado, by)
		}
	}
	return ""
}

// unrecorded checks a movement of the workload that is not recorded: every delivery of
// it must have ended in the DLQ with a reason.
func (v *verifier) unrecorded(m movimiento.Movimiento, excused bool) {
	key := m.Cuenta + "/" + m.ID
	reasons, ok := v.inDLQ(key)
	switch {
	case !ok:
		v.bad(key, "lost: not recorded, and not every delivery of it is in the DLQ with a reason")
	case excused:
		v.rep.Excused++
	default:
		v.rep.Unapplied = append(v.rep.Unapplied, Violation{Where: key, Problem: strings.Join(reasons, "; ")})
	}
}

// refused checks a movement refused by design, when it was sent.
func (v *verifier) refused(m movimiento.Movimiento) {
	key := m.Cuenta + "/" + m.ID
	if len(v.sent[key]) == 0 {
		return
	}
	s, ok := v.accounts[m.Cuenta].movs[m.ID]
	reject := v.res.Scenario.Policy == cuenta.Reject
	switch {
	case !ok:
		if _, dlq := v.inDLQ(key); !dlq {
			v.bad(key, "refused by design, but not every delivery of it is in the DLQ with a reason")
		}
		v.rep.Refused++
	case reject && m.Tipo == movimiento.Traspaso && s.estado == movimiento.Rechazado:
		v.noLegs(m)
		v.rep.Refused++
	case reject && m.Tipo == movimiento.Anulacion && !v.refundedInWorkload(m.Cuenta, m.Anula):
		// a refund of the workload was rejected: more is left, and this one may apply
	default:
		v.bad(key, "refused by design, but recorded %+v", s)
	}
}

// genuine checks that every item recorded is one the run sent: a movement of the
// workload or refused by design, or a leg of one on another account.
func (v *verifier) genuine() {
	sent := map[string]bool{}
	for _, m := range slices.Concat(v.res.Workload.Movements, v.res.Workload.Refused) {
		sent[m.Cuenta+"/"+m.ID] = true
		for _, p := range v.legsOf(m) {
			sent[p.Cuenta+"/"+m.ID] = true
		}
	}
	for c, a := range v.accounts {
		for id := range a.movs {
			if !sent[c+"/"+id] {
				v.bad(c+"/"+id, "recorded, but no such movement was sent")
			}
		}
	}
}

// inDLQ reports whether every delivery of the movement key ended in the DLQ with a
// reason, and the reasons.
func (v *verifier) inDLQ(key string) ([]string, bool) {
	var reasons []string
	for _, id := range v.sent[key] {
		f := v.res.Fates[id]
		if !(f.Parked || f.Dead) || f.Reason == "" {
			return nil, false
		}
		reasons = append(reasons, id+": "+f.Reason)
	}
	return reasons, len(reasons) > 0
}

// excused reports whether m may go unrecorded because, under the reject policy, the
// movement it reverses or the hold it settles was rejected.
func (v *verifier) excused(m movimiento.Movimiento) bool {
	referent := cmp.Or(m.Anula, m.Retencion)
	return v.res.Scenario.Policy == cuenta.Reject && referent != "" && v.accounts[m.Cuenta].movs[referent].estado == movimiento.Rechazado
}

// debit reports whether m debits an account, so that the reject policy may reject it:
// its own, or, for a reversal of a transfer or reparto, those it credited.
func (v *verifier) debit(m movimiento.Movimiento) bool {
	switch m.Tipo {
	case movimiento.Cargo, movimiento.Traspaso, movimiento.Reparto, movimiento.Retencion:
		return true
	case movimiento.Anulacion:
		t := v.workload[m.Cuenta+"/"+m.Anula].Tipo
		return t == movimiento.Abono || t == movimiento.Traspaso || t == movimiento.Reparto
	}
	return false
}

// settled reports whether the workload captures or releases the hold h.
func (v *verifier) settled(h movimiento.Movimiento) bool {
	return slices.ContainsFunc(v.res.Workload.Movements, func(m movimiento.Movimiento) bool {
		return m.Cuenta == h.Cuenta && m.Retencion == h.ID
	})
}

// refundedInWorkload reports whether every refund of the workload naming the movement
// original of cuenta c is recorded applied, and there is one: nothing is left of it
// that the workload did not mean to refund.
func (v *verifier) refundedInWorkload(c, original string) bool {
	refunds := 0
	for _, m := range v.res.Workload.Movements {
		if m.Cuenta != c || m.Anula != original {
			continue
		}
		if refunds++; v.accounts[c].movs[m.ID].estado != movimiento.Aplicado {
			return false
		}
	}
	return refunds > 0
}
