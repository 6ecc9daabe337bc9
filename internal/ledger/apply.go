package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Entrega is one delivery of a movement: the movement, and the id of the message that
// carried it (recorded as the movement's origen, for tracing; never part of the key).
type Entrega struct {
	Mov    movimiento.Movimiento
	Origen string
}

// Apply applies one delivery and returns its result; the error is Result.Err.
func (s *Service) Apply(ctx context.Context, e Entrega) (Result, error) {
	r := s.ApplyAll(ctx, []Entrega{e})[0]
	return r, r.Err
}

// ApplyAll applies deliveries and returns one result per delivery, in the same order.
// Each account's movements are checked against its rules in arrival order and written
// in as few transactions as possible: one account update carrying their summed change
// plus up to 99 movement items each (DynamoDB's 100-action limit). A duplicate drops out
// of the transaction the cancellation names it in, and the rest is retried; a rule
// failure excludes only its own movement. Deliveries of the same (cuenta, id) within
// the call are resolved against the first of them. Accounts are processed one after the
// other; run ApplyAll per account concurrently to spread them.
func (s *Service) ApplyAll(ctx context.Context, entregas []Entrega) []Result {
	results := make([]Result, len(entregas))
	// One timestamp per call: a transaction rebuilt for the same state has the same
	// content, hence the same ClientRequestToken.
	now := s.now()
	byCuenta := map[string][]int{}
	var order []string
	for i, e := range entregas {
		c := e.Mov.Cuenta
		if _, ok := byCuenta[c]; !ok {
			order = append(order, c)
		}
		byCuenta[c] = append(byCuenta[c], i)
	}
	for _, c := range order {
		s.applyCuenta(ctx, c, entregas, byCuenta[c], results, now)
	}
	return results
}

// applyCuenta applies the deliveries idx (all of account id, in arrival order).
func (s *Service) applyCuenta(ctx context.Context, id string, es []Entrega, idx []int, res []Result, now time.Time) {
	leaderOf := map[string]int{} // movement id → first delivery of it
	var pending, followers []int
	for _, i := range idx {
		if _, ok := leaderOf[es[i].Mov.ID]; ok {
			followers = append(followers, i)
			continue
		}
		leaderOf[es[i].Mov.ID] = i
		pending = append(pending, i)
	}
	// Every round decides at least one delivery or ends them all, so this bound is never
	// the reason to stop; it guards against a bug turning into an endless loop.
	for round := 0; len(pending) > 0; round++ {
		if round > len(idx) {
			for _, i := range pending {
				res[i] = failed(&TransientError{Err: errors.New("ledger: no progress applying the batch")}, res[i].Attempts)
			}
			break
		}
		pending = s.round(ctx, id, es, pending, res, now)
	}
	for _, i := range followers {
		res[i] = follow(es[i].Mov, es[leaderOf[es[i].Mov.ID]].Mov, res[leaderOf[es[i].Mov.ID]])
	}
}

// decision is what a plan made of one delivery.
type decision struct {
	entrega int
	outcome Outcome // Applied, Rejected, or Failed (a rule failure, checked as Absent)
	apunte  Apunte
	err     error
}

// planner builds a round's transaction from the account's state; it is a pure
// function of its fields and the state, so versioned may call it again after a version
// conflict. Each call records its decisions, replacing the previous call's.
type planner struct {
	cuenta   string
	entregas []Entrega
	pending  []int
	policy   FundsPolicy
	now      time.Time
	stamp    string // now as stored

	decisions []decision
	guarded   []int // decision index of each guarded action: Creates, then Absent
}

func (p *planner) plan(st versioned.State) (versioned.Txn, error) {
	p.decisions, p.guarded = p.decisions[:0], p.guarded[:0]
	acct, exists, err := decodeCuenta(st.Item)
	if err != nil {
		return versioned.Txn{}, err
	}
	var txn versioned.Txn
	var absent []int
	for _, i := range p.pending {
		if len(txn.Creates)+len(txn.Absent) >= versioned.MaxActions-1 {
			break // the rest waits for the next round
		}
		m := p.entregas[i].Mov
		base := acct
		if !exists {
			base = cuenta.Nueva(p.cuenta, m.Moneda)
		}
		next, ruleErr := base.Aplicar(m)
		d := decision{entrega: i, apunte: Apunte{Movimiento: m, Huella: m.Huella(), Aplicado: p.now, Origen: p.entregas[i].Origen}}
		var insuf *cuenta.SaldoInsuficienteError
		switch {
		case ruleErr == nil:
			acct, exists = next, true
			d.outcome, d.apunte.Estado, d.apunte.Seq, d.apunte.SaldoTras = Applied, Aplicado, next.Movimientos, next.Saldo
			p.guarded = append(p.guarded, len(p.decisions))
			txn.Creates = append(txn.Creates, apunteItem(d.apunte, p.stamp))
		case errors.As(ruleErr, &insuf) && p.policy == Reject:
			d.outcome, d.apunte.Estado, d.apunte.Motivo = Rejected, Rechazado, ruleErr.Error()
			p.guarded = append(p.guarded, len(p.decisions))
			txn.Creates = append(txn.Creates, apunteItem(d.apunte, p.stamp))
		default:
			// Not written, but checked absent: a redelivery of a movement recorded
			// earlier is a duplicate, whatever the balance says today.
			d.outcome, d.err = Failed, ruleErr
			absent = append(absent, len(p.decisions))
			txn.Absent = append(txn.Absent, movKey(p.cuenta, m.ID))
		}
		p.decisions = append(p.decisions, d)
	}
	p.guarded = append(p.guarded, absent...)
	if anyApplied(p.decisions) {
		txn.Next = cuentaItem(acct, st.Item, p.stamp)
	}
	return txn, nil
}

// round runs one optimistic-locking update over the pending deliveries and returns those
// still pending: the ones beyond this transaction's capacity, and those that were not
// known to be duplicates when a transaction was refused for others.
func (s *Service) round(ctx context.Context, id string, es []Entrega, pending []int, res []Result, now time.Time) []int {
	p := &planner{cuenta: id, entregas: es, pending: pending, policy: s.policy, now: now, stamp: stamp(now)}
	r, err := s.store.Update(ctx, cuentaKey(id), p.plan)

	var exists *versioned.ExistsError
	switch {
	case err == nil:
		for _, d := range p.decisions {
			res[d.entrega] = d.result(res[d.entrega].Attempts + r.Attempts)
		}
		return pending[len(p.decisions):] // decisions are a prefix of pending
	case errors.As(err, &exists):
		resolved := map[int]bool{}
		for _, rec := range exists.Records {
			d := p.decisions[p.guarded[rec.Index]]
			res[d.entrega] = existing(d.apunte.Movimiento, rec.Item, res[d.entrega].Attempts+r.Attempts)
			resolved[d.entrega] = true
		}
		var still []int
		for _, i := range pending {
			if !resolved[i] {
				res[i].Attempts += r.Attempts
				still = append(still, i)
			}
		}
		return still
	default:
		attempts := r.Attempts
		var ae *versioned.AttemptsError
		if errors.As(err, &ae) {
			attempts = ae.Attempts
		}
		for _, i := range pending {
			res[i] = failed(&TransientError{Attempts: res[i].Attempts + attempts, Err: err}, res[i].Attempts+attempts)
		}
		return nil
	}
}

func anyApplied(ds []decision) bool {
	for _, d := range ds {
		if d.outcome == Applied {
			return true
		}
	}
	return false
}

// result is a committed decision's result.
func (d decision) result(attempts int) Result {
	r := Result{Outcome: d.outcome, Estado: d.apunte.Estado, Seq: d.apunte.Seq, SaldoTras: d.apunte.SaldoTras, Motivo: d.apunte.Motivo, Attempts: attempts}
	if d.outcome == Failed {
		// The rule failure stands: the committed transaction proved the account was at
		// the version the rules were checked against, and the movement absent.
		var insuf *cuenta.SaldoInsuficienteError
		if errors.As(d.err, &insuf) {
			r.Err = &TransientError{Attempts: attempts, Err: d.err}
		} else {
			r.Err = &PermanentError{Err: d.err}
		}
		r.Estado = ""
	}
	return r
}

// existing is the result for m when a movement with its key is already recorded.
func existing(m movimiento.Movimiento, stored versioned.Item, attempts int) Result {
	if stored == nil { // cannot happen while nothing deletes movements; retry decides again
		return failed(&TransientError{Attempts: attempts, Err: fmt.Errorf("ledger: movement %s/%s reported existing but not found", m.Cuenta, m.ID)}, attempts)
	}
	a, err := decodeApunte(stored)
	if err != nil {
		return failed(&TransientError{Attempts: attempts, Err: err}, attempts)
	}
	if h := m.Huella(); a.Huella != h {
		return Result{Outcome: ConflictingDuplicate, Attempts: attempts,
			Err: &DuplicadoConflictivoError{Cuenta: m.Cuenta, ID: m.ID, HuellaGuardada: a.Huella, HuellaNueva: h}}
	}
	return Result{Outcome: Duplicate, Estado: a.Estado, Seq: a.Seq, SaldoTras: a.SaldoTras, Motivo: a.Motivo, Attempts: attempts}
}

// follow is the result of a later delivery of the same (cuenta, id) within one call,
// given the first delivery m0 and its result r0.
func follow(m, m0 movimiento.Movimiento, r0 Result) Result {
	h := m.Huella()
	var conflicting *DuplicadoConflictivoError
	switch {
	case r0.Outcome == Applied || r0.Outcome == Duplicate || r0.Outcome == Rejected:
		if h != m0.Huella() {
			return Result{Outcome: ConflictingDuplicate, Err: &DuplicadoConflictivoError{Cuenta: m.Cuenta, ID: m.ID, HuellaGuardada: m0.Huella(), HuellaNueva: h}}
		}
		return Result{Outcome: Duplicate, Estado: r0.Estado, Seq: r0.Seq, SaldoTras: r0.SaldoTras, Motivo: r0.Motivo}
	case errors.As(r0.Err, &conflicting) && conflicting.HuellaGuardada != h:
		return Result{Outcome: ConflictingDuplicate, Err: &DuplicadoConflictivoError{Cuenta: m.Cuenta, ID: m.ID, HuellaGuardada: conflicting.HuellaGuardada, HuellaNueva: h}}
	case r0.Outcome == Failed && h == m0.Huella():
		return r0 // the same fact failed: it fails alike, and comes back if that one does
	default:
		// What is recorded under this key is not known here (the first delivery was not
		// recorded, or conflicted with a stored movement this one may match): let it
		// come back and be decided against the store.
		return failed(&TransientError{Err: fmt.Errorf("ledger: movement %s/%s is decided on redelivery", m.Cuenta, m.ID)}, 0)
	}
}

func failed(err error, attempts int) Result {
	return Result{Outcome: Failed, Attempts: attempts, Err: err}
}
