package cuenta

import (
	"errors"
	"fmt"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Input is everything Decide decides a movement against; it reads nothing else.
type Input struct {
	Mov movimiento.Movimiento
	// Origen, Remitente and Via are where the delivery came from, recorded with the
	// movement (store.Entrega says what each is).
	Origen, Remitente, Via string
	// Enviado is when the first transport took the message (zero: unknown, Now): a
	// capture is judged against it, not against when it is applied.
	Enviado time.Time
	// Cuentas are the accounts the movement touches, as stored now, by id: its own, a
	// transfer's destino, a reparto's parts, the accounts a reversal takes a transfer or
	// reparto back from. An account without an entry has none yet: a movement opens it
	// in its currency.
	Cuentas map[string]*Cuenta
	// Referido is the record a reversal, capture or release names; nil when it is not
	// recorded (yet).
	Referido *movimiento.Apunte
	Now      time.Time
	Funds    FundsPolicy
}

// Decision is what Decide made of a movement: applied (Cuentas changed), rejected (a
// debit refused under Reject: a record, no change), or failed (Err: a *RuleError, or a
// *movimiento.FieldError for an importe finer than the currency it refers to).
type Decision struct {
	// Apuntes are the records to create: the movement's own, then one per other account
	// it moves (a transfer's or a reparto's credit legs, a reversal's debit legs).
	Apuntes []movimiento.Apunte
	// Cuentas are the accounts' new states when applied, in the order of Apuntes.
	Cuentas []Cuenta
	// Marca is Referido as it must read once the movement is applied: refunded,
	// captured or released; nil for other movements.
	Marca *movimiento.Apunte
	// Rechazo is the rule a movement recorded rejected broke ("" otherwise): the
	// record's motivo says it with the amounts, which logs must not carry.
	Rechazo Rule
	Err     error
}

// Decide decides the movement in against its accounts, the record it refers to and
// the time, by every rule of the account: funds, freeze, limit, currency, holds and
// their expiry, transfers, repartos, refunds, capture and release. Holds lapsed by Now
// are dropped first, as every write does. Its records are stamped applied at
// AplicadoEn: never earlier than the last movement of an account they write.
func Decide(in Input) Decision {
	return stamped(decide(in), in.Now, in.Cuentas[in.Mov.Cuenta])
}

// decide is Decide before its records are stamped.
func decide(in Input) Decision {
	m := in.Mov
	rec := movimiento.Apunte{Movimiento: m, Huella: m.Huella(), Aplicado: in.Now, Origen: in.Origen, Remitente: in.Remitente, Via: in.Via}
	c := in.cuenta(m.Cuenta, m.Moneda)
	switch m.Tipo {
	case movimiento.Abono, movimiento.Cargo:
		next, err := c.Aplicar(m)
		return in.settle(rec, next, err)
	case movimiento.Traspaso:
		rec.Movimiento.Tipo, rec.Contrapartida = movimiento.Cargo, m.Destino
		return in.apply(withLegs(rec, movimiento.Abono, []movimiento.Parte{{Cuenta: m.Destino, Importe: m.Importe}}), m.Moneda)
	case movimiento.Reparto:
		rec.Movimiento.Tipo, rec.Partes = movimiento.Cargo, m.Partes
		return in.apply(withLegs(rec, movimiento.Abono, m.Partes), m.Moneda)
	case movimiento.Retencion:
		next, err := c.Retener(m.ID, m.Importe, m.Moneda, m.Expira, in.Now)
		return in.settle(rec, next, err)
	case movimiento.Anulacion:
		return in.reverse(rec)
	case movimiento.Captura, movimiento.Liberacion:
		return in.settleHold(rec, c)
	}
	return Decision{Err: fmt.Errorf("cuenta: movements of tipo %q are not applied by this ledger", m.Tipo)}
}

// cuenta is account id as stored now, without its lapsed holds, or the empty account
// it opens in moneda.
func (in Input) cuenta(id, moneda string) Cuenta {
	if c := in.Cuentas[id]; c != nil {
		return c.Vigente(in.Now)
	}
	return Nueva(id, moneda)
}

// settle completes the record rec of a movement that moves its account to next (or
// breaks err): applied, a refused debit the funds policy records as rejected, or failed.
func (in Input) settle(rec movimiento.Apunte, next Cuenta, err error) Decision {
	if err != nil {
		return in.refused(rec, err)
	}
	rec.Estado = movimiento.Aplicado
	switch {
	case rec.Movimiento.Tipo == movimiento.Retencion:
		rec.Estado = movimiento.Retenida
	case rec.Posted():
		rec.Seq, rec.SaldoTras = next.Movimientos, next.Saldo
	}
	return Decision{Apuntes: []movimiento.Apunte{rec}, Cuentas: []Cuenta{next}}
}

// refused is the decision on a movement whose record is rec when err stops it: a
// refused debit the Reject policy records as rejected, else a failure.
func (in Input) refused(rec movimiento.Apunte, err error) Decision {
	var re *RuleError
	if errors.As(err, &re) && re.Rule.debit() && in.Funds == Reject {
		rec.Estado, rec.Motivo = movimiento.Rechazado, err.Error()
		return Decision{Apuntes: []movimiento.Apunte{rec}, Rechazo: re.Rule}
	}
	return Decision{Err: err}
}

// withLegs is rec, then a leg of tipo on each part's account, of the part's importe,
// naming rec's account in Contrapartida: the records of a transfer, a reparto or the
// reversal of one, in the order apply moves their accounts.
func withLegs(rec movimiento.Apunte, tipo movimiento.Tipo, partes []movimiento.Parte) []movimiento.Apunte {
	recs := []movimiento.Apunte{rec}
	for _, p := range partes {
		leg := rec
		leg.Movimiento.Cuenta, leg.Movimiento.Tipo, leg.Movimiento.Importe = p.Cuenta, tipo, p.Importe
		leg.Contrapartida, leg.Partes = rec.Movimiento.Cuenta, nil
		recs = append(recs, leg)
	}
	return recs
}

// apply applies recs, all or none, in moneda: each moves its own account by its delta.
// Every account must hold moneda (a new one opens in it), which no funds or freeze can
// change; then each debit meets a debit's rules, and one refused makes the whole
// movement refused (the first record is the one rejected). Each record posted takes its
// account's next seq.
func (in Input) apply(recs []movimiento.Apunte, moneda string) Decision {
	accts := make([]Cuenta, len(recs))
	for i, rec := range recs {
		accts[i] = in.cuenta(rec.Movimiento.Cuenta, moneda)
		if err := accts[i].enMoneda(moneda); err != nil {
			return Decision{Err: err}
		}
	}
	var d Decision
	for i, rec := range recs {
		next, err := accts[i].Mover(rec.Movimiento.Delta(), moneda)
		if err != nil {
			return in.refused(recs[0], err)
		}
		rec.Estado, rec.Seq, rec.SaldoTras = movimiento.Aplicado, next.Movimientos, next.Saldo
		d.Apuntes, d.Cuentas = append(d.Apuntes, rec), append(d.Cuentas, next)
	}
	return d
}

// referido is the record the movement refers to, or the NoRegistrado refusal: it may
// be on its way, out of order. noun and verb name it and the movement's effect on it.
func (in Input) referido(noun, verb string) (movimiento.Apunte, error) {
	m := in.Mov
	if in.Referido == nil {
		return movimiento.Apunte{}, broke(NoRegistrado, m.Cuenta, "%s %s, which %s %s, is not recorded (yet)", noun, m.Referido(), m.ID, verb)
	}
	return *in.Referido, nil
}
