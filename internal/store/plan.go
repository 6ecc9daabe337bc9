package store

import (
	"errors"
	"slices"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// decision is what a plan made of one delivery.
type decision struct {
	entrega int
	outcome ledger.Outcome // Applied, Rejected, or Failed (a rule failure, checked as Absent)
	apunte  ledger.Apunte
	err     error
}

// planner builds one transaction for a chunk of deliveries from the state of the
// accounts they touch. It is a pure function of its fields and the state, so versioned
// may call it again after a version conflict; each call replaces the previous call's
// decisions.
type planner struct {
	entregas []ledger.Entrega
	chunk    []int    // the deliveries to decide, in arrival order
	cuentas  []string // the accounts they touch, as versioned keys, in order
	policy   ledger.FundsPolicy
	now      time.Time
	// known returns an account's last known decoded state, if any: used when its
	// version is the one planned on, it spares decoding the item again.
	known func(id string) (cuenta.Cuenta, bool)

	decisions []decision
	guarded   []int           // decision index of each guarded action: Creates, then Absent
	written   []cuenta.Cuenta // by account: the new state, where changed
}

// account is what a plan knows of one account while it decides.
type account struct {
	c       cuenta.Cuenta
	exists  bool
	changed bool
}

func (p *planner) plan(st versioned.State) (versioned.Txn, error) {
	p.decisions, p.guarded = p.decisions[:0], p.guarded[:0]
	accts := make([]account, len(p.cuentas))
	for i, item := range st.Items {
		if p.known != nil {
			if c, ok := p.known(p.cuentas[i]); ok && item != nil && c.Version == st.Versions[i] {
				accts[i] = account{c: c, exists: true}
				continue
			}
		}
		c, ok, err := decodeCuenta(item)
		if err != nil {
			return versioned.Txn{}, &ledger.PermanentError{Err: err}
		}
		accts[i] = account{c: c, exists: ok}
	}
	var txn versioned.Txn
	var absent []int
	for _, i := range p.chunk {
		e := p.entregas[i]
		a := &accts[slices.Index(p.cuentas, e.Mov.Cuenta)]
		base := a.c
		if !a.exists {
			base = cuenta.Nueva(e.Mov.Cuenta, e.Mov.Moneda)
		}
		next, ruleErr := base.Aplicar(e.Mov)
		d := decision{entrega: i, apunte: ledger.Apunte{Movimiento: e.Mov, Huella: e.Mov.Huella(), Aplicado: p.now, Origen: e.Origen}}
		var insuf *cuenta.SaldoInsuficienteError
		switch {
		case ruleErr == nil:
			a.c, a.exists, a.changed = next, true, true
			d.outcome, d.apunte.Estado, d.apunte.Seq, d.apunte.SaldoTras = ledger.Applied, ledger.Aplicado, next.Movimientos, next.Saldo
		case errors.As(ruleErr, &insuf) && p.policy == ledger.Reject:
			d.outcome, d.apunte.Estado, d.apunte.Motivo = ledger.Rejected, ledger.Rechazado, ruleErr.Error()
		default:
			// Not written, but checked absent: a redelivery of a movement recorded
			// earlier is a duplicate, whatever the balance says today.
			d.outcome, d.err = ledger.Failed, ruleErr
			absent = append(absent, len(p.decisions))
			txn.Absent = append(txn.Absent, movKey(e.Mov.Cuenta, e.Mov.ID))
			p.decisions = append(p.decisions, d)
			continue
		}
		item, err := encodeApunte(d.apunte)
		if err != nil {
			return versioned.Txn{}, &ledger.PermanentError{Err: err}
		}
		p.guarded = append(p.guarded, len(p.decisions))
		txn.Creates = append(txn.Creates, item)
		p.decisions = append(p.decisions, d)
	}
	p.guarded = append(p.guarded, absent...)
	txn.Next = make([]versioned.Item, len(accts))
	p.written = make([]cuenta.Cuenta, len(accts))
	for i, a := range accts {
		if !a.changed {
			continue
		}
		a.c.Actualizada = p.now
		if st.Items[i] == nil {
			a.c.Creada = p.now
		}
		item, err := encodeCuenta(a.c, st.Items[i])
		if err != nil {
			return versioned.Txn{}, &ledger.PermanentError{Err: err}
		}
		txn.Next[i], p.written[i] = item, a.c
	}
	return txn, nil
}

// result is a committed decision's result.
func (d decision) result(attempts int) ledger.Result {
	r := ledger.Result{Outcome: d.outcome, Estado: d.apunte.Estado, Seq: d.apunte.Seq, SaldoTras: d.apunte.SaldoTras, Motivo: d.apunte.Motivo, Attempts: attempts}
	if d.outcome == ledger.Failed {
		// The rule failure stands: the committed transaction proved the account was at
		// the version the rules were checked against, and the movement absent.
		var insuf *cuenta.SaldoInsuficienteError
		if errors.As(d.err, &insuf) {
			r.Err = &ledger.TransientError{Attempts: attempts, Err: d.err}
		} else {
			r.Err = &ledger.PermanentError{Err: d.err}
		}
		r.Estado = ""
	}
	return r
}
