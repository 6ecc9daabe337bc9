// Package cuenta holds an account's state and every rule a movement must pass to change
// it: currency, funds, freeze, overdraft limit, holds and their expiry, reversal,
// capture and release (Decide). It is pure: the store reads what a rule needs, asks,
// and writes what it answers.
package cuenta

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// MaxDigits is the precision of a DynamoDB number: a balance with more significant
// digits cannot be stored exactly, so no movement may produce one.
const MaxDigits = 38

// Cuenta is an account as the ledger keeps it. Its active holds (Retenciones, by hold
// id) reserve funds without moving Saldo; a debit may take Disponible: Saldo minus the
// holds plus Limite (the allowed overdraft, 0 unless an operator sets it). While
// Bloqueada (frozen by an operator) it takes credits but no debit. Movimientos is the
// seq of the last applied movement. Version is the optimistic-locking counter as read;
// the store, not Mover, advances it. Aplicado is when the last record written with the
// account was applied (zero: not known, for an account no release that keeps it has
// written); Decide keeps it. Methods return a changed copy, maps included.
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
	Aplicado    time.Time
}

// Nueva is the empty account a first movement opens, in its currency.
func Nueva(id, moneda string) Cuenta {
	return Cuenta{ID: id, Moneda: moneda}
}

// Aplicar returns the account after the abono or cargo m, or the rule m breaks (Mover).
// A movement of another account or tipo is the caller's bug, refused as such.
func (c Cuenta) Aplicar(m movimiento.Movimiento) (Cuenta, error) {
	if m.Cuenta != c.ID {
		return c, fmt.Errorf("cuenta: movement %s names account %s, not %s", m.ID, m.Cuenta, c.ID)
	}
	if m.Tipo != movimiento.Abono && m.Tipo != movimiento.Cargo {
		return c, fmt.Errorf("cuenta: movement of tipo %q is not a plain abono or cargo", m.Tipo)
	}
	return c.Mover(m.Delta(), m.Moneda)
}

// Mover returns the account after one applied movement of delta in moneda (negative: a
// debit), or the *RuleError of the rule it breaks: MonedaDistinta; for a debit
// CuentaBloqueada or SaldoInsuficiente; Precision. Creada and Actualizada are the
// caller's to set.
func (c Cuenta) Mover(delta decimal.Decimal, moneda string) (Cuenta, error) {
	if err := c.enMoneda(moneda); err != nil {
		return c, err
	}
	if delta.Sign() < 0 {
		if err := c.debitable(delta.Neg()); err != nil {
			return c, err
		}
	}
	return c.post(delta)
}

// enMoneda refuses a movement in another currency than the account's: no redelivery
// can change either.
func (c Cuenta) enMoneda(moneda string) error {
	if moneda != c.Moneda {
		return broke(MonedaDistinta, c.ID, "movement in %s, but the account is in %s", moneda, c.Moneda)
	}
	return nil
}

// post returns the account with delta posted as its next movement, or the Precision
// refusal.
func (c Cuenta) post(delta decimal.Decimal) (Cuenta, error) {
	saldo := c.Saldo.Add(delta)
	if exceedsPrecision(saldo) {
		return c, broke(Precision, c.ID, "balance %s would exceed %d significant digits", saldo, MaxDigits)
	}
	c.Saldo = saldo
	c.Movimientos++
	return c, nil
}

// debitable checks that the account, not frozen, has the funds for a debit of importe.
func (c Cuenta) debitable(importe decimal.Decimal) error {
	if c.Bloqueada {
		return broke(CuentaBloqueada, c.ID, "bloqueada: it takes no debit while frozen")
	}
	if c.Disponible().LessThan(importe) {
		return c.insufficient(importe)
	}
	return nil
}

// ConLimite returns the account with the allowed overdraft limite: not negative, with
// no more decimals than the account's currency has (any in a currency since withdrawn),
// and at most MaxDigits significant digits.
func (c Cuenta) ConLimite(limite decimal.Decimal) (Cuenta, error) {
	if limite.Sign() < 0 {
		return c, broke(LimiteNegativo, c.ID, "limite %s must not be negative", limite)
	}
	if tooPrecise(limite, c.Moneda) {
		units, _ := movimiento.MinorUnits(c.Moneda)
		return c, broke(LimiteDecimales, c.ID, "limite %s: %s allows at most %d decimals", limite, c.Moneda, units)
	}
	if exceedsPrecision(limite) {
		return c, broke(LimiteDigitos, c.ID, "limite %s has more than %d significant digits", limite, MaxDigits)
	}
	c.Limite = limite
	return c, nil
}

// tooPrecise reports whether d has more decimals than moneda's minor units (an unknown
// currency, such as one since withdrawn, takes any).
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
