package cuenta

import (
	"errors"
	"fmt"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Input is everything Decide decides a movement against; it reads nothing else.
type Input struct {
	Mov    movimiento.Movimiento
	Origen string // the id of the message that carried it, recorded for tracing
	// Cuenta is the account Mov names, and Destino a transfer's credited account, as
	// stored now; nil when it has none yet (the movement opens it in its currency).
	Cuenta, Destino *Cuenta
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
	// Apuntes are the records to create: the movement's own, then a transfer's credit leg.
	Apuntes []movimiento.Apunte
	// Cuentas are the accounts' new states when applied: Mov's, then a transfer's
	// credited one.
	Cuentas []Cuenta
	// Marca is Referido as it must read once the movement is applied: reversed,
	// captured or released; nil for other movements.
	Marca *movimiento.Apunte
	Err   error
}

// Decide decides the movement in against its accounts, the record it refers to and
// the time, by every rule of the account: funds, freeze, limit, currency, holds and
// their expiry, reversal, capture and release. Holds lapsed by Now are dropped first,
// as every write does. Its records are stamped applied at AplicadoEn: never earlier
// than the last movement of an account they write.
func Decide(in Input) Decision {
	return stamped(decide(in), in.Now, in.Cuenta)
}

// decide is Decide before its records are stamped.
func decide(in Input) Decision {
	m := in.Mov
	rec := movimiento.Apunte{Movimiento: m, Huella: m.Huella(), Aplicado: in.Now, Origen: in.Origen}
	c := opened(in.Cuenta, m.Cuenta, m.Moneda).Vigente(in.Now)
	switch m.Tipo {
	case movimiento.Abono, movimiento.Cargo:
		next, err := c.Aplicar(m)
		return in.settle(rec, next, err)
	case movimiento.Traspaso:
		return in.transfer(rec, c)
	case movimiento.Retencion:
		next, err := c.Retener(m.ID, m.Importe, m.Moneda, m.Expira, in.Now)
		return in.settle(rec, next, err)
	case movimiento.Anulacion:
		return in.reverse(rec, c)
	case movimiento.Captura, movimiento.Liberacion:
		return in.settleHold(rec, c)
	}
	return Decision{Err: fmt.Errorf("cuenta: movements of tipo %q are not applied by this ledger", m.Tipo)}
}

// opened is c, or the empty account id opens in moneda when c is nil.
func opened(c *Cuenta, id, moneda string) Cuenta {
	if c == nil {
		return Nueva(id, moneda)
	}
	return *c
}

// settle completes the record rec of a movement that moves its account to next (or
// breaks err): applied, a refused debit the funds policy records as rejected, or failed.
func (in Input) settle(rec movimiento.Apunte, next Cuenta, err error) Decision {
	var re *RuleError
	switch {
	case err == nil:
		rec.Estado = movimiento.Aplicado
		switch {
		case rec.Movimiento.Tipo == movimiento.Retencion:
			rec.Estado = movimiento.Retenida
		case rec.Posted():
			rec.Seq, rec.SaldoTras = next.Movimientos, next.Saldo
		}
		return Decision{Apuntes: []movimiento.Apunte{rec}, Cuentas: []Cuenta{next}}
	case errors.As(err, &re) && re.Rule.debit() && in.Funds == Reject:
		rec.Estado, rec.Motivo = movimiento.Rechazado, err.Error()
		return Decision{Apuntes: []movimiento.Apunte{rec}}
	}
	return Decision{Err: err}
}

// transfer decides a traspaso: the debit leg on c (all its rules apply) and the credit
// leg on the destino (only its currency; a new account opens in the transfer's), both
// or neither. Each leg is recorded on its account, naming the other in Contrapartida.
func (in Input) transfer(rec movimiento.Apunte, c Cuenta) Decision {
	m := in.Mov
	rec.Movimiento.Tipo, rec.Contrapartida = movimiento.Cargo, m.Destino
	credit := rec
	credit.Movimiento.Cuenta, credit.Movimiento.Tipo, credit.Contrapartida = m.Destino, movimiento.Abono, m.Cuenta
	dst := opened(in.Destino, m.Destino, m.Moneda).Vigente(in.Now)
	if err := dst.enMoneda(m.Moneda); err != nil { // no funds or freeze of c can change that
		return Decision{Err: err}
	}
	debited, err := c.Mover(m.Importe.Neg(), m.Moneda)
	if err != nil {
		return in.settle(rec, debited, err)
	}
	credited, err := dst.Mover(m.Importe, m.Moneda)
	if err != nil {
		return Decision{Err: err}
	}
	d := in.settle(rec, debited, nil)
	credit.Estado, credit.Seq, credit.SaldoTras = movimiento.Aplicado, credited.Movimientos, credited.Saldo
	d.Apuntes = append(d.Apuntes, credit)
	d.Cuentas = append(d.Cuentas, credited)
	return d
}

// referido is the record the movement refers to, or the NoRegistrado refusal: it may
// be on its way, out of order. noun and verb name it and the movement's effect on it.
func (in Input) referido(noun, verb string) (movimiento.Apunte, error) {
	m := in.Mov
	if in.Referido == nil {
		ref := m.Anula + m.Retencion
		return movimiento.Apunte{}, broke(NoRegistrado, m.Cuenta, "%s %s, which %s %s, is not recorded (yet)", noun, ref, m.ID, verb)
	}
	return *in.Referido, nil
}
