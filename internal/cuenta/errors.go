package cuenta

import (
	"fmt"

	"github.com/shopspring/decimal"
)

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

// SaldoInsuficienteError reports a cargo that would take the balance below -Limite. It
// may pass later (a credit can still be on its way, out of order), so the ledger's
// policy decides whether it is retried or recorded as rejected.
type SaldoInsuficienteError struct {
	Cuenta  string
	Saldo   decimal.Decimal
	Limite  decimal.Decimal
	Importe decimal.Decimal
}

func (e *SaldoInsuficienteError) Error() string {
	return fmt.Sprintf("cuenta %s: insufficient funds: cargo of %s with balance %s and overdraft limit %s",
		e.Cuenta, e.Importe, e.Saldo, e.Limite)
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
