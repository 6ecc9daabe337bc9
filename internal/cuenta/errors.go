package cuenta

import (
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// ErrDebitRefused is matched by the rules an account may lift later (insufficient
// funds, a freeze), so the ledger's funds policy decides: retry, or record it rejected.
var ErrDebitRefused = errors.New("cuenta: debit refused")

// ErrRetencionInactiva is matched by a capture of a hold the account does not hold (it
// lapsed, or was settled): it reserves nothing, so nothing may be posted against it.
var ErrRetencionInactiva = errors.New("cuenta: hold not active")

// MonedaDistintaError reports a movement in another currency than its account's. It is
// permanent: no redelivery can change either currency.
type MonedaDistintaError struct {
	Cuenta           string
	Moneda           string // the account's
	MonedaMovimiento string
}

func (e *MonedaDistintaError) Error() string {
	return fmt.Sprintf("cuenta %s: movement in %s, but the account is in %s", e.Cuenta, e.MonedaMovimiento, e.Moneda)
}

// SaldoInsuficienteError reports a debit beyond Disponible. It may pass later (a credit
// can be on its way, out of order). Its text writes amounts in the currency's minor units.
type SaldoInsuficienteError struct {
	Cuenta, Moneda                   string
	Saldo, Limite, Retenido, Importe decimal.Decimal
}

func (e *SaldoInsuficienteError) Error() string {
	text := func(d decimal.Decimal) string { return movimiento.Texto(d, e.Moneda) }
	msg := fmt.Sprintf("cuenta %s: insufficient funds: debit of %s with balance %s and overdraft limit %s",
		e.Cuenta, text(e.Importe), text(e.Saldo), text(e.Limite))
	if e.Retenido.Sign() > 0 {
		msg += fmt.Sprintf(", %s held", text(e.Retenido))
	}
	return msg
}

// Is makes errors.Is(err, ErrDebitRefused) true.
func (e *SaldoInsuficienteError) Is(target error) bool { return target == ErrDebitRefused }

// BloqueadaError reports a debit of a frozen account; its text is the rejection reason.
type BloqueadaError struct{}

func (e *BloqueadaError) Error() string { return "cuenta bloqueada" }

// Is makes errors.Is(err, ErrDebitRefused) true.
func (e *BloqueadaError) Is(target error) bool { return target == ErrDebitRefused }

// RetencionError reports a hold the account cannot take or settle, and why. It is
// permanent: no redelivery changes it.
type RetencionError struct {
	Cuenta, Retencion, Reason string
}

func (e *RetencionError) Error() string {
	return fmt.Sprintf("cuenta %s: hold %s %s", e.Cuenta, e.Retencion, e.Reason)
}

// LimiteError reports an overdraft limit an operator may not set, and why.
type LimiteError struct {
	Cuenta string
	Limite decimal.Decimal
	Reason string
}

func (e *LimiteError) Error() string {
	return fmt.Sprintf("cuenta %s: limite %s %s", e.Cuenta, e.Limite, e.Reason)
}

// PrecisionError reports a movement whose resulting balance would need more than
// MaxDigits significant digits, which DynamoDB cannot store exactly.
type PrecisionError struct {
	Cuenta string
	Saldo  decimal.Decimal
}

func (e *PrecisionError) Error() string {
	return fmt.Sprintf("cuenta %s: balance %s would exceed %d significant digits", e.Cuenta, e.Saldo, MaxDigits)
}
