// Package cuenta holds an account's state and the rules a movement must pass to change
// it. It is pure: the ledger decides when to ask, the store how to persist.
package cuenta

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// MaxDigits is the precision of a DynamoDB number: a balance with more significant
// digits cannot be stored exactly, so no movement may produce one.
const MaxDigits = 38

// ErrOtraCuenta reports a movement offered to an account it does not name: a bug in the
// caller, never a property of the message.
var ErrOtraCuenta = errors.New("cuenta: movement names another account")

// Cuenta is an account as the ledger keeps it. Its active holds (Retenciones, by hold
// id) reserve funds without moving Saldo; a debit may take Disponible: Saldo minus the
// holds plus Limite (the allowed overdraft, 0 unless an operator sets it). While
// Bloqueada (frozen by an operator) it takes credits but no debit. Movimientos is the
// seq of the last applied movement. Version is the optimistic-locking counter as read;
// the store, not Mover, advances it. Methods return a changed copy, maps included.
type Cuenta struct {
	ID          string
	Moneda      string
	Saldo       decimal.Decimal
	Limite      decimal.Decimal
	Bloqueada   bool
	Retenciones map[string]Retencion
	Movimientos int64
	Version     int64
	Creada      time.Time
	Actualizada time.Time
}

// Nueva is the empty account a first movement opens, in its currency.
func Nueva(id, moneda string) Cuenta {
	return Cuenta{ID: id, Moneda: moneda}
}

// Aplicar returns the account after the abono or cargo m, or the rule m breaks (Mover).
func (c Cuenta) Aplicar(m movimiento.Movimiento) (Cuenta, error) {
	if m.Cuenta != c.ID {
		return c, ErrOtraCuenta
	}
	if m.Tipo != movimiento.Abono && m.Tipo != movimiento.Cargo {
		return c, fmt.Errorf("cuenta: movement of tipo %q is not a plain abono or cargo", m.Tipo)
	}
	return c.Mover(m.Delta(), m.Moneda)
}

// Mover returns the account after one applied movement of delta in moneda (negative: a
// debit), or the rule it breaks: *MonedaDistintaError; for a debit *BloqueadaError or
// *SaldoInsuficienteError (both match ErrDebitRefused: the funds policy decides);
// *PrecisionError. Creada and Actualizada are the caller's to set.
func (c Cuenta) Mover(delta decimal.Decimal, moneda string) (Cuenta, error) {
	if moneda != c.Moneda {
		return c, &MonedaDistintaError{Cuenta: c.ID, Moneda: c.Moneda, MonedaMovimiento: moneda}
	}
	if delta.Sign() < 0 {
		if err := c.debitable(delta.Neg()); err != nil {
			return c, err
		}
	}
	return c.post(delta)
}

// post returns the account with delta posted as its next movement, or a *PrecisionError.
func (c Cuenta) post(delta decimal.Decimal) (Cuenta, error) {
	saldo := c.Saldo.Add(delta)
	if exceedsPrecision(saldo) {
		return c, &PrecisionError{Cuenta: c.ID, Saldo: saldo}
	}
	c.Saldo = saldo
	c.Movimientos++
	return c, nil
}

// debitable checks that the account, not frozen, has the funds for a debit of importe.
func (c Cuenta) debitable(importe decimal.Decimal) error {
	if c.Bloqueada {
		return &BloqueadaError{}
	}
	if c.Disponible().LessThan(importe) {
		return &SaldoInsuficienteError{Cuenta: c.ID, Moneda: c.Moneda, Saldo: c.Saldo, Limite: c.Limite, Retenido: c.Retenido(), Importe: importe}
	}
	return nil
}

// ConLimite returns the account with the allowed overdraft limite: not negative, with
// no more decimals than the account's currency has (any in a currency since withdrawn),
// and at most MaxDigits significant digits.
func (c Cuenta) ConLimite(limite decimal.Decimal) (Cuenta, error) {
	if limite.Sign() < 0 {
		return c, &LimiteError{Cuenta: c.ID, Limite: limite, Regla: LimiteNegativo, Reason: "must not be negative"}
	}
	if tooPrecise(limite, c.Moneda) {
		units, _ := movimiento.MinorUnits(c.Moneda)
		return c, &LimiteError{Cuenta: c.ID, Limite: limite, Regla: LimiteDecimales, Reason: fmt.Sprintf("%s allows at most %d decimals", c.Moneda, units)}
	}
	if exceedsPrecision(limite) {
		return c, &LimiteError{Cuenta: c.ID, Limite: limite, Regla: LimiteDigitos, Reason: fmt.Sprintf("has more than %d significant digits", MaxDigits)}
	}
	c.Limite = limite
	return c, nil
}

// tooPrecise reports whether d has more decimals than moneda's minor units (an unknown
// currency, from an older ledger, takes any).
func tooPrecise(d decimal.Decimal, moneda string) bool {
	units, ok := movimiento.MinorUnits(moneda)
	return ok && !d.Equal(d.Truncate(units))
}

// exceedsPrecision reports whether d needs more than MaxDigits significant digits. The
// coefficient's length (plus a positive exponent) bounds them and costs no allocation,
// so the exact count runs only near the limit.
func exceedsPrecision(d decimal.Decimal) bool {
	return d.NumDigits()+int(max(d.Exponent(), 0)) > MaxDigits && digits(d) > MaxDigits
}

// digits counts the significant digits of d but not trailing fractional zeros, which
// DynamoDB trims (and String omits); trailing integer zeros count, erring on the safe side.
func digits(d decimal.Decimal) int {
	s := strings.TrimLeft(strings.Replace(d.Abs().String(), ".", "", 1), "0")
	return max(len(s), 1) // zero has one digit
}
