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

// Error implements error.
func (e *MonedaDistintaError) Error() string {
	return fmt.Sprintf("cuenta %s: movement in %s, but the account is in %s", e.Cuenta, e.MonedaMovimiento, e.Moneda)
}

// SaldoInsuficienteError reports a debit beyond Disponible. It may pass later (a credit
// can be on its way, out of order). Its text writes amounts in the currency's minor units.
type SaldoInsuficienteError struct {
	Cuenta, Moneda                   string
	Saldo, Limite, Retenido, Importe decimal.Decimal
}

// Error implements error.
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

// Error implements error.
func (e *BloqueadaError) Error() string { return "cuenta bloqueada" }

// Is makes errors.Is(err, ErrDebitRefused) true.
func (e *BloqueadaError) Is(target error) bool { return target == ErrDebitRefused }

// Regla names the rule a hold, a reversal or an overdraft limit broke, so callers and
// tests tell refusals apart by a field, never by their text.
type Regla string

// The rules of holds, checked when one is taken (Retener) or settled (Capturar, and the
// store against the hold's record); each is reported by a *RetencionError.
const (
	ExpiraPasada          Regla = "expira-pasada"          // expira is at or before the hold is taken
	ExpiraLejana          Regla = "expira-lejana"          // expira is more than MaxExpira ahead
	DemasiadasRetenciones Regla = "demasiadas-retenciones" // the account has MaxRetenciones active
	NoEsRetencion         Regla = "no-es-retencion"        // the movement settled is not a hold
	NoRetenida            Regla = "no-retenida"            // the hold was refused, so never held
	YaCapturada           Regla = "ya-capturada"
	YaLiberada            Regla = "ya-liberada"
	Vencida               Regla = "vencida" // a capture at or after the hold's expira
	CapturaExcesiva       Regla = "captura-excesiva"
	MonedaRetencion       Regla = "moneda-retencion" // the settlement names another currency
	DecimalesRetencion    Regla = "decimales-retencion"
)

// The rules of reversals, checked against the original's record; each is reported by
// an *AnulacionError.
const (
	YaAnulado        Regla = "ya-anulado"
	NoAplicado       Regla = "no-aplicado" // the original was rejected: nothing moved
	AnulaAnulacion   Regla = "anula-anulacion"
	AnulaTraspaso    Regla = "anula-traspaso" // a transfer's leg: undoing one leg would unbalance it
	TipoNoAnulable   Regla = "tipo-no-anulable"
	ImporteAnulacion Regla = "importe-anulacion" // the reversal names another amount
	MonedaAnulacion  Regla = "moneda-anulacion"
)

// The rules of an overdraft limit; each is reported by a *LimiteError.
const (
	LimiteNegativo  Regla = "limite-negativo"
	LimiteDecimales Regla = "limite-decimales"
	LimiteDigitos   Regla = "limite-digitos" // more than MaxDigits: DynamoDB could not store it
)

// RetencionError reports a hold the account cannot take or settle, by which Regla, and
// why in words. It is permanent: no redelivery changes it.
type RetencionError struct {
	Cuenta, Retencion string
	Regla             Regla
	Reason            string
}

// Error implements error.
func (e *RetencionError) Error() string {
	return fmt.Sprintf("cuenta %s: hold %s %s", e.Cuenta, e.Retencion, e.Reason)
}

// AnulacionError reports a reversal its original's record does not allow, by which
// Regla, and why in words. It is permanent: a record's state only moves forward.
type AnulacionError struct {
	Cuenta, Original string
	Regla            Regla
	Reason           string
}

// Error implements error.
func (e *AnulacionError) Error() string {
	return fmt.Sprintf("cuenta %s: movement %s %s", e.Cuenta, e.Original, e.Reason)
}

// LimiteError reports an overdraft limit an operator may not set, by which Regla, and why.
type LimiteError struct {
	Cuenta string
	Limite decimal.Decimal
	Regla  Regla
	Reason string
}

// Error implements error.
func (e *LimiteError) Error() string {
	return fmt.Sprintf("cuenta %s: limite %s %s", e.Cuenta, e.Limite, e.Reason)
}

// PrecisionError reports a movement whose resulting balance would need more than
// MaxDigits significant digits, which DynamoDB cannot store exactly.
type PrecisionError struct {
	Cuenta string
	Saldo  decimal.Decimal
}

// Error implements error.
func (e *PrecisionError) Error() string {
	return fmt.Sprintf("cuenta %s: balance %s would exceed %d significant digits", e.Cuenta, e.Saldo, MaxDigits)
}
