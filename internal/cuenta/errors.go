package cuenta

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Rule names one rule a movement, or an operator's change, must pass. A Rule is also
// the sentinel errors.Is matches a *RuleError of it against, so code and tests tell
// refusals apart by rule, never by text.
type Rule string

// Error makes a Rule usable as a sentinel error.
func (r Rule) Error() string { return "cuenta: rule " + string(r) }

// The rules of a debit (a cargo, a transfer's debit leg, the reversal of an abono, a
// new hold). The account may pass them later (a credit on its way, a freeze lifted), so
// the funds policy decides: retry, or record the movement rejected.
const (
	SaldoInsuficiente Rule = "saldo-insuficiente" // disponible is less than the debit
	CuentaBloqueada   Rule = "cuenta-bloqueada"   // frozen by an operator: credits only
)

// The rules a later delivery may pass with no one's help.
const (
	NoRegistrado      Rule = "no-registrado"      // the movement a reversal, capture or release names is not recorded (yet)
	RetencionInactiva Rule = "retencion-inactiva" // a capture of a hold the account does not hold (lapsed, or settled since its record was read)
)

// The rules every movement must pass, for good.
const (
	MonedaDistinta Rule = "moneda-distinta" // the movement's currency is not its account's
	Precision      Rule = "precision"       // the balance would need more than MaxDigits significant digits
)

// The rules of holds, checked when one is taken (Retener) or settled (Capturar, and
// Decide against the hold's record).
const (
	ExpiraPasada          Rule = "expira-pasada"          // expira is at or before the hold is taken
	ExpiraLejana          Rule = "expira-lejana"          // expira is more than MaxExpira ahead
	DemasiadasRetenciones Rule = "demasiadas-retenciones" // the account has MaxRetenciones active
	NoEsRetencion         Rule = "no-es-retencion"        // the movement settled is not a hold
	NoRetenida            Rule = "no-retenida"            // the hold was refused, so never held
	YaCapturada           Rule = "ya-capturada"
	YaLiberada            Rule = "ya-liberada"
	Vencida               Rule = "vencida" // a capture sent after the hold's expira (give or take ToleranciaReloj), or applied GraciaCaptura after it
	CapturaExcesiva       Rule = "captura-excesiva"
	MonedaRetencion       Rule = "moneda-retencion" // the settlement names another currency
	DecimalesRetencion    Rule = "decimales-retencion"
)

// The rules of reversals (refunds), checked against the original's record.
const (
	YaAnulado        Rule = "ya-anulado"
	NoAplicado       Rule = "no-aplicado" // the original was rejected: nothing moved
	AnulaAnulacion   Rule = "anula-anulacion"
	AnulaTraspaso    Rule = "anula-traspaso" // a transfer's or reparto's credit leg: the reversal names it on its payer
	TipoNoAnulable   Rule = "tipo-no-anulable"
	ImporteAnulacion Rule = "importe-anulacion" // more than is left to refund, or part of a transfer or reparto
	MonedaAnulacion  Rule = "moneda-anulacion"
	// DemasiadosReembolsos: the original has movimiento.MaxReembolsos refunds.
	DemasiadosReembolsos Rule = "demasiados-reembolsos"
)

// The rules of an overdraft limit an operator sets.
const (
	LimiteNegativo  Rule = "limite-negativo"
	LimiteDecimales Rule = "limite-decimales"
	LimiteDigitos   Rule = "limite-digitos" // more than MaxDigits: DynamoDB could not store it
)

// Transient reports whether a movement r refuses may pass on a later delivery: a debit
// the account refuses now, or a reference to a record not recorded yet or not active.
// Every other rule refuses it for good.
func (r Rule) Transient() bool {
	switch r {
	case SaldoInsuficiente, CuentaBloqueada, NoRegistrado, RetencionInactiva:
		return true
	}
	return false
}

// debit reports whether r refuses a debit the funds policy may record as rejected.
func (r Rule) debit() bool { return r == SaldoInsuficiente || r == CuentaBloqueada }

// RuleError is the one error a rule returns: which Rule account Cuenta's movement (or
// an operator's change) broke, and why in words. errors.Is matches it against its Rule.
type RuleError struct {
	Rule   Rule
	Cuenta string
	Detail string
}

// Error reads "cuenta ES76: hold aut-1 is already captured by cap-1".
func (e *RuleError) Error() string { return "cuenta " + e.Cuenta + ": " + e.Detail }

// Is makes errors.Is(err, rule) true for the rule e broke.
func (e *RuleError) Is(target error) bool { return target == e.Rule }

// broke is the *RuleError of rule on account id, its detail formatted.
func broke(rule Rule, id, format string, args ...any) *RuleError {
	return &RuleError{Rule: rule, Cuenta: id, Detail: fmt.Sprintf(format, args...)}
}

// insufficient is the SaldoInsuficiente refusal of a debit of importe from c, with the
// amounts in the currency's minor units.
func (c Cuenta) insufficient(importe decimal.Decimal) *RuleError {
	text := func(d decimal.Decimal) string { return movimiento.Texto(d, c.Moneda) }
	detail := fmt.Sprintf("insufficient funds: debit of %s with balance %s and overdraft limit %s", text(importe), text(c.Saldo), text(c.Limite))
	if held := c.Retenido(); held.Sign() > 0 {
		detail += fmt.Sprintf(", %s held", text(held))
	}
	return &RuleError{Rule: SaldoInsuficiente, Cuenta: c.ID, Detail: detail}
}
