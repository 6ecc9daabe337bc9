// Package movimiento is an account movement: the message that asks for it, parsed and
// validated, with the fingerprint that tells a redelivery from a conflicting reuse of
// its key, and the record (Apunte) the ledger keeps of it. No I/O, no clock: the
// rules a movement must pass against its account are cuenta's.
package movimiento

import (
	"cmp"
	"time"

	"github.com/shopspring/decimal"
)

// Tipo is what a movement does, as its wire value (compared case-sensitively).
type Tipo string

// The tipos of the message contract.
const (
	Abono      Tipo = "abono"      // a credit of Importe
	Cargo      Tipo = "cargo"      // a debit of Importe
	Traspaso   Tipo = "traspaso"   // debits Cuenta and credits Destino, both or neither
	Reparto    Tipo = "reparto"    // debits Cuenta and credits each of Partes, all or none
	Anulacion  Tipo = "anulacion"  // refunds the movement Anula of the same account: all of it, or Importe of what is left
	Retencion  Tipo = "retencion"  // holds Importe until Expira, moving no balance
	Captura    Tipo = "captura"    // posts the hold Retencion as a debit of at most its amount (all if Importe is absent)
	Liberacion Tipo = "liberacion" // frees the whole hold Retencion
)

// Movimiento is a validated movement, built by New or Parse (its zero value is not
// valid). The idempotency key is (Cuenta, ID), never the transport's message id.
type Movimiento struct {
	ID       string          // business fact id, 1–128 chars of [A-Za-z0-9._:/@+=-]
	Cuenta   string          // account id, 1–64 chars of [A-Za-z0-9._-]
	Tipo     Tipo            // one of the Tipo constants
	Importe  decimal.Decimal // > 0, ≤ 20 significant digits; zero when absent (anulacion, captura, liberacion)
	Moneda   string          // active ISO 4217 code; "" when absent (anulacion, captura, liberacion)
	Concepto string          // optional, ≤ 256 characters, no control characters
	Fecha    string          // optional RFC 3339 text as received; informational only

	Destino   string    // traspaso only: the credited account, cuenta's rules, ≠ Cuenta
	Partes    []Parte   // reparto only: 2–MaxPartes credited accounts, each once, ≠ Cuenta, summing to Importe
	Anula     string    // anulacion only: the reversed movement's id, id's rules
	Retencion string    // captura and liberacion only: the hold's id, id's rules
	Expira    time.Time // retencion only: when the hold lapses; zero otherwise
}

// Datos is a movement's fields as unvalidated text, for New: Importe is the decimal
// literal ("50.00"), so nothing is lost before validation; "" means absent.
type Datos struct {
	ID        string
	Cuenta    string
	Tipo      Tipo
	Importe   string
	Moneda    string
	Concepto  string
	Fecha     string // RFC 3339
	Destino   string
	Partes    []ParteDatos
	Anula     string
	Retencion string
	Expira    string // RFC 3339
}

// Delta is what the movement does to its own account's balance: +Importe for an abono,
// −Importe for a cargo, zero for the other tipos, whose effect the ledger works out.
func (m Movimiento) Delta() decimal.Decimal {
	switch m.Tipo {
	case Abono:
		return m.Importe
	case Cargo:
		return m.Importe.Neg()
	}
	return decimal.Zero
}

// Referido is the id of the movement m refers to: the one a reversal undoes, the hold a
// capture or release settles; "" for the other tipos.
func (m Movimiento) Referido() string {
	return cmp.Or(m.Anula, m.Retencion)
}

// ImporteTexto is Importe as text to show and store (Texto); "" when Importe is absent.
func (m Movimiento) ImporteTexto() string {
	if m.Importe.IsZero() {
		return ""
	}
	return Texto(m.Importe, m.Moneda)
}
