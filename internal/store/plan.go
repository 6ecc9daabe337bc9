package store

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// decision is what a plan made of one delivery: its record, written (Applied, Rejected)
// or checked absent (Failed); a transfer's credit leg, written only when applied; the
// Replace marking the record a reversal or settlement refers to.
type decision struct {
	entrega int
	outcome ledger.Outcome
	apunte  ledger.Apunte
	credit  *ledger.Apunte
	replace *versioned.Replace
	err     error
}

// writes lists the records the decision writes, its own first.
func (d decision) writes() []ledger.Apunte {
	switch {
	case d.outcome == ledger.Failed:
		return nil
	case d.outcome == ledger.Applied && d.credit != nil:
		return []ledger.Apunte{d.apunte, *d.credit}
	}
	return []ledger.Apunte{d.apunte}
}

// checks lists the keys the decision checks absent: the record it would have written (a
// redelivery of one recorded earlier is a duplicate, whatever the rules say today), and
// an unwritten credit leg (a movement with its id there is a conflicting duplicate).
func (d decision) checks() []versioned.Item {
	m := d.apunte.Movimiento
	var keys []versioned.Item
	if d.outcome == ledger.Failed {
		keys = append(keys, movKey(m.Cuenta, m.ID))
	}
	if d.credit != nil && d.outcome != ledger.Applied {
		keys = append(keys, movKey(d.credit.Movimiento.Cuenta, m.ID))
	}
	return keys
}

// planner builds one transaction for a chunk of deliveries. plan is a pure function of
// its fields and the state, so versioned may call it again after a version conflict;
// each call replaces the previous call's decisions.
type planner struct {
	entregas []ledger.Entrega
	chunk    []int    // the deliveries to decide, in arrival order
	cuentas  []string // the accounts they touch, as versioned keys, in order
	records  map[movID]versioned.Item
	policy   ledger.FundsPolicy
	now      time.Time
	// known returns an account's last decoded state, if any: at the version planned
	// on, it spares decoding the item again.
	known func(id string) (cuenta.Cuenta, bool)

	decisions []decision
	guarded   []int           // decision index of each guarded action: Creates, then Absent
	replaced  []int           // decision index of each Replace
	written   []cuenta.Cuenta // by account: the new state, where changed
}

// account is what a plan knows of one account while it decides.
type account struct {
	c       cuenta.Cuenta
	exists  bool
	changed bool
}

func (p *planner) plan(st versioned.State) (versioned.Txn, error) {
	p.decisions, p.guarded, p.replaced = p.decisions[:0], p.guarded[:0], p.replaced[:0]
	accts := make([]account, len(p.cuentas))
	for i, item := range st.Items {
		if p.known != nil {
			if c, ok := p.known(p.cuentas[i]); ok && item != nil && c.Version == st.Versions[i] {
				accts[i] = account{c: c.Vigente(p.now), exists: true}
				continue
			}
		}
		c, ok, err := decodeCuenta(item)
		if err != nil {
			return versioned.Txn{}, &unreadableAccount{index: i, err: err}
		}
		accts[i] = account{c: c.Vigente(p.now), exists: ok}
	}
	var txn versioned.Txn
	var absent []int
	for _, i := range p.chunk {
		d := p.decide(i, accts)
		n := len(p.decisions)
		for _, a := range d.writes() {
			item, err := encodeApunte(a)
			if err != nil {
				return versioned.Txn{}, &ledger.PermanentError{Err: err}
			}
			p.guarded = append(p.guarded, n)
			txn.Creates = append(txn.Creates, item)
		}
		for _, k := range d.checks() {
			absent = append(absent, n)
			txn.Absent = append(txn.Absent, k)
		}
		if d.replace != nil {
			p.replaced = append(p.replaced, n)
			txn.Replaces = append(txn.Replaces, *d.replace)
		}
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

// decide decides delivery i against the plan's accounts, moving those it applies to.
func (p *planner) decide(i int, accts []account) decision {
	e := p.entregas[i]
	m := e.Mov
	d := decision{entrega: i, apunte: ledger.Apunte{Movimiento: m, Huella: m.Huella(), Aplicado: p.now, Origen: e.Origen}}
	a := &accts[slices.Index(p.cuentas, m.Cuenta)]
	base := a.c
	if !a.exists {
		base = cuenta.Nueva(m.Cuenta, m.Moneda)
	}
	var next cuenta.Cuenta
	var err error
	switch m.Tipo {
	case movimiento.Abono, movimiento.Cargo:
		next, err = base.Aplicar(m)
	case movimiento.Anulacion:
		var original ledger.Apunte
		if original, d.replace, err = p.reversal(m); err != nil {
			return d.fail(err)
		}
		d.apunte.Movimiento = reversalOf(m, original.Movimiento)
		next, err = base.Mover(original.Movimiento.Delta().Neg(), original.Movimiento.Moneda)
	case movimiento.Traspaso:
		return p.transfer(d, base, a, &accts[slices.Index(p.cuentas, m.Destino)])
	case movimiento.Retencion:
		next, err = base.Retener(m.ID, m.Importe, m.Moneda, m.Expira, p.now)
	case movimiento.Captura, movimiento.Liberacion:
		var hold ledger.Apunte
		if hold, d.replace, err = p.settlement(m); err != nil {
			return d.fail(err)
		}
		d.apunte.Movimiento.Moneda = hold.Movimiento.Moneda
		if m.Tipo == movimiento.Liberacion { // the record says how much it freed
			d.apunte.Movimiento.Importe = hold.Movimiento.Importe
			next = base.Liberar(hold.Movimiento.ID)
			break
		}
		importe := m.Importe
		if importe.IsZero() { // omitted: all of it
			importe = hold.Movimiento.Importe
		}
		d.apunte.Movimiento.Tipo, d.apunte.Movimiento.Importe = movimiento.Cargo, importe
		next, err = base.Capturar(hold.Movimiento.ID, hold.Movimiento.Importe, importe)
		if errors.Is(err, cuenta.ErrRetencionInactiva) {
			// Its record says held and unexpired: the record was settled since it was read
			// (the round reads it again, once), or a writer with a later clock dropped the
			// hold (a later delivery is refused as expired).
			return d.fail(&ledger.TransientError{Err: fmt.Errorf("%w, although its record holds it: settled since it was read, or lapsed by another writer's clock", err)})
		}
	default:
		return d.fail(&ledger.PermanentError{Err: fmt.Errorf("store: movements of tipo %q are not applied by this ledger", m.Tipo)})
	}
	return d.settle(p.policy, a, next, err)
}

// settle completes d with what moving account a to next (or err) means: applied, a
// refused debit the funds policy turns into a rejection, or a failure.
func (d decision) settle(policy ledger.FundsPolicy, a *account, next cuenta.Cuenta, err error) decision {
	switch {
	case err == nil:
		a.c, a.exists, a.changed = next, true, true
		d.outcome, d.apunte.Estado = ledger.Applied, ledger.Aplicado
		switch {
		case d.apunte.Movimiento.Tipo == movimiento.Retencion:
			d.apunte.Estado = ledger.Retenida
		case d.apunte.Posted():
			d.apunte.Seq, d.apunte.SaldoTras = next.Movimientos, next.Saldo
		}
	case errors.Is(err, cuenta.ErrDebitRefused) && policy == ledger.Reject:
		d.outcome, d.apunte.Estado, d.apunte.Motivo, d.replace = ledger.Rejected, ledger.Rechazado, err.Error(), nil
	default:
		return d.fail(err)
	}
	return d
}

// transfer decides a traspaso: the debit leg on a (all its rules apply) and the credit
// leg on dst (only its currency; a new account opens in the transfer's), both or
// neither.
func (p *planner) transfer(d decision, base cuenta.Cuenta, a, dst *account) decision {
	m := d.apunte.Movimiento
	d.apunte.Movimiento.Tipo, d.apunte.Contrapartida = movimiento.Cargo, m.Destino
	credit := d.apunte
	credit.Movimiento.Cuenta, credit.Movimiento.Tipo, credit.Contrapartida = m.Destino, movimiento.Abono, m.Cuenta
	d.credit = &credit
	dstBase := dst.c
	if !dst.exists {
		dstBase = cuenta.Nueva(m.Destino, m.Moneda)
	}
	if dstBase.Moneda != m.Moneda { // no funds or freeze of the debited account can change that
		return d.fail(&cuenta.MonedaDistintaError{Cuenta: m.Destino, Moneda: dstBase.Moneda, MonedaMovimiento: m.Moneda})
	}
	debited, err := base.Mover(m.Importe.Neg(), m.Moneda)
	if err != nil {
		return d.settle(p.policy, a, debited, err)
	}
	credited, err := dstBase.Mover(m.Importe, m.Moneda)
	if err != nil {
		return d.fail(err)
	}
	d = d.settle(p.policy, a, debited, nil)
	dst.c, dst.exists, dst.changed = credited, true, true
	d.credit.Estado, d.credit.Seq, d.credit.SaldoTras = ledger.Aplicado, credited.Movimientos, credited.Saldo
	return d
}

func (d decision) fail(err error) decision {
	d.outcome, d.err, d.replace = ledger.Failed, err, nil
	return d
}

// reversal checks that m may reverse the movement it names, as recorded before this
// plan, and returns that original and the Replace that marks it reversed by m: only
// while it is applied and not reversed yet, so a movement is reversed at most once.
func (p *planner) reversal(m movimiento.Movimiento) (ledger.Apunte, *versioned.Replace, error) {
	stored, original, err := p.referredRecord(m, "movement", "reverses")
	if err != nil {
		return ledger.Apunte{}, nil, err
	}
	o := original.Movimiento
	recorded := original.AnuladoPor == m.ID // this very reversal is recorded: its record answers
	var rule cuenta.Regla
	var why string
	switch {
	case recorded:
	case original.AnuladoPor != "":
		rule, why = cuenta.YaAnulado, "is already reversed by "+original.AnuladoPor
	case original.Estado != ledger.Aplicado:
		rule, why = cuenta.NoAplicado, "was not applied (estado "+string(original.Estado)+"): there is nothing to reverse"
	case o.Anula != "":
		rule, why = cuenta.AnulaAnulacion, "is itself the reversal of "+o.Anula
	case original.Contrapartida != "":
		rule, why = cuenta.AnulaTraspaso, "is a leg of a transfer with "+original.Contrapartida+", which a reversal does not undo"
	case o.Tipo != movimiento.Abono && o.Tipo != movimiento.Cargo:
		rule, why = cuenta.TipoNoAnulable, "is a "+string(o.Tipo)+", which a reversal does not undo"
	case !m.Importe.IsZero() && !m.Importe.Equal(o.Importe):
		rule, why = cuenta.ImporteAnulacion, fmt.Sprintf("has importe %s, not the %s the reversal says", o.Importe, m.Importe)
	case m.Moneda != "" && m.Moneda != o.Moneda:
		rule, why = cuenta.MonedaAnulacion, fmt.Sprintf("is in %s, not the %s the reversal says", o.Moneda, m.Moneda)
	}
	if rule != "" {
		return ledger.Apunte{}, nil, &ledger.PermanentError{Err: &cuenta.AnulacionError{Cuenta: m.Cuenta, Original: o.ID, Regla: rule, Reason: why}}
	}
	if err := movimiento.CheckDecimals(m.Importe, o.Moneda); err != nil && !recorded { // an importe without its moneda is in the original's
		return ledger.Apunte{}, nil, &ledger.PermanentError{Err: err}
	}
	return original, mark(stored, map[string]string{attrAnuladoPor: m.ID},
		versioned.Equals(attrEstado, string(ledger.Aplicado)), versioned.Missing(attrAnuladoPor)), nil
}

// settlement checks that m (a captura or a liberacion) may settle the hold it names, as
// recorded before this plan, and returns that hold and the Replace that marks it
// settled by m while it is still held, so a hold is settled at most once. A capture
// must come before the hold expires; an expired hold may be released (it frees
// nothing). cuenta.Capturar refuses a capture over the hold's importe or finer than its
// currency.
func (p *planner) settlement(m movimiento.Movimiento) (ledger.Apunte, *versioned.Replace, error) {
	stored, hold, err := p.referredRecord(m, "hold", "settles")
	if err != nil {
		return ledger.Apunte{}, nil, err
	}
	h := hold.Movimiento
	recorded := hold.CapturadaPor == m.ID || hold.LiberadaPor == m.ID // this very message is recorded: its record answers
	var rule cuenta.Regla
	var why string
	switch {
	case recorded:
	case h.Tipo != movimiento.Retencion:
		rule, why = cuenta.NoEsRetencion, "is a "+string(h.Tipo)+", not a hold"
	case hold.Estado == ledger.Capturada:
		rule, why = cuenta.YaCapturada, "is already captured by "+hold.CapturadaPor
	case hold.Estado == ledger.Liberada:
		rule, why = cuenta.YaLiberada, "is already released by "+hold.LiberadaPor
	case hold.Estado != ledger.Retenida:
		rule, why = cuenta.NoRetenida, "was not held (estado "+string(hold.Estado)+")"
	case m.Tipo == movimiento.Captura && !h.Expira.After(p.now):
		rule, why = cuenta.Vencida, "expired at "+h.Expira.UTC().Format(time.RFC3339)+"; it can no longer be captured"
	case m.Moneda != "" && m.Moneda != h.Moneda:
		rule, why = cuenta.MonedaRetencion, fmt.Sprintf("is in %s, not the %s the %s says", h.Moneda, m.Moneda, m.Tipo)
	}
	if rule != "" {
		return ledger.Apunte{}, nil, &ledger.PermanentError{Err: &cuenta.RetencionError{Cuenta: m.Cuenta, Retencion: h.ID, Regla: rule, Reason: why}}
	}
	if err := movimiento.CheckDecimals(m.Importe, h.Moneda); err != nil && !recorded { // an importe without its moneda is in the hold's
		return ledger.Apunte{}, nil, &ledger.PermanentError{Err: err}
	}
	by, state := attrCapturadaPor, ledger.Capturada
	if m.Tipo == movimiento.Liberacion {
		by, state = attrLiberadaPor, ledger.Liberada
	}
	return hold, mark(stored, map[string]string{by: m.ID, attrEstado: string(state)}, versioned.Equals(attrEstado, string(ledger.Retenida))), nil
}

// referredRecord is the record m refers to (referred), as stored and decoded; noun and
// verb name it and m's effect on it in the error for a record not recorded (yet).
func (p *planner) referredRecord(m movimiento.Movimiento, noun, verb string) (versioned.Item, ledger.Apunte, error) {
	stored := p.records[movID{m.Cuenta, referred(m)}]
	if len(stored) == 0 { // it may be on its way, out of order
		return nil, ledger.Apunte{}, &ledger.TransientError{Err: fmt.Errorf("%w: %s %s of cuenta %s, which %s %s, is not recorded (yet)", ledger.ErrWaiting, noun, referred(m), m.Cuenta, m.ID, verb)}
	}
	a, err := decodeApunte(stored)
	if err != nil {
		return nil, ledger.Apunte{}, &ledger.PermanentError{Err: err}
	}
	return stored, a, nil
}

// mark is the Replace that rewrites stored with the string attributes set, if conds hold.
func mark(stored versioned.Item, set map[string]string, conds ...versioned.Cond) *versioned.Replace {
	marked := maps.Clone(stored)
	maps.Copy(marked, values(set))
	return &versioned.Replace{Item: marked, If: conds}
}

// reversalOf is the movement recorded for the reversal m of original: the opposite
// abono or cargo, of the original's importe and moneda.
func reversalOf(m, original movimiento.Movimiento) movimiento.Movimiento {
	r := m
	r.Tipo, r.Importe, r.Moneda = movimiento.Cargo, original.Importe, original.Moneda
	if original.Tipo == movimiento.Cargo {
		r.Tipo = movimiento.Abono
	}
	return r
}

// result is a committed decision's result.
func (d decision) result(attempts int) ledger.Result {
	r := ledger.Result{Outcome: d.outcome, Estado: d.apunte.Estado, Seq: d.apunte.Seq, SaldoTras: d.apunte.SaldoTras, Motivo: d.apunte.Motivo, Attempts: attempts}
	if d.outcome == ledger.Failed {
		// The committed transaction proved the state the rules were checked against.
		r.Estado, r.Err = "", failure(d.err, attempts)
	}
	return r
}

// failure classifies a decision's error: a refused debit may pass later (a credit on
// its way, a freeze lifted), so it is transient; any other broken rule is permanent.
func failure(err error, attempts int) error {
	var transient *ledger.TransientError
	switch {
	case errors.As(err, &transient):
		return &ledger.TransientError{Attempts: attempts, Err: transient.Err}
	case errors.Is(err, ledger.ErrPermanent):
		return err
	case errors.Is(err, cuenta.ErrDebitRefused):
		return &ledger.TransientError{Attempts: attempts, Err: err}
	}
	return &ledger.PermanentError{Err: err}
}
