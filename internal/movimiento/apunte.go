package movimiento

import (
	"time"

	"github.com/shopspring/decimal"
)

// Estado is a recorded movement's state.
type Estado string

// The states of a movement's record. Expirada is never stored: a hold still Retenida
// past its expira reads so.
const (
	Aplicado  Estado = "aplicado"
	Rechazado Estado = "rechazado"
	Retenida  Estado = "retenida"
	Capturada Estado = "capturada"
	Liberada  Estado = "liberada"
	Expirada  Estado = "expirada"
)

// Estados lists the states a record can be stored in; the audit reports any other.
var Estados = []Estado{Aplicado, Rechazado, Retenida, Capturada, Liberada}

// Apunte is a movement as the ledger recorded it, and what it made of it. Seq and
// SaldoTras are set only when posted, Motivo when rejected; a hold names who settled
// it. A refund (an anulacion) is recorded as the opposite abono or cargo of what it
// gives back, naming the original in Anula; the original keeps the total refunded
// (Reembolsado), the refunds' ids in order (Anulaciones, at most MaxReembolsos) and,
// once nothing is left to refund, AnuladoPor: the refund that completed it. A transfer
// is recorded as a cargo and an abono leg, each naming the other account in
// Contrapartida; a reparto as a cargo on the payer listing its Partes, and an abono leg
// on each credited account naming the payer. Version is the account's version once the
// write that created the record committed (0: written before records carried it, or on
// an account that does not exist: a rejection of its first movement). A stored Apunte
// is read without today's input rules.
type Apunte struct {
	Movimiento    Movimiento
	Huella        string
	Estado        Estado
	Seq           int64
	SaldoTras     decimal.Decimal
	Motivo        string
	Aplicado      time.Time
	Origen        string
	Remitente     string
	Via           string
	AnuladoPor    string
	Reembolsado   decimal.Decimal
	Anulaciones   []string
	Contrapartida string
	Partes        []Parte
	CapturadaPor  string
	LiberadaPor   string
	Version       int64
}

// MaxReembolsos bounds the refunds one movement takes: each rewrites the original's
// record, which lists them all, so the record and what each refund pays to mark it
// stay small (50 ids of up to 128 bytes: under 7 KB).
const MaxReembolsos = 50

// Restante is what is left to refund of the original this record is: its importe less
// what was refunded.
func (a Apunte) Restante() decimal.Decimal {
	return a.Movimiento.Importe.Sub(a.Reembolsado)
}

// Contrapartidas is what this record moves on other accounts: a reparto's Partes, or
// else the Contrapartida it names (a transfer's leg, or a reversal's), of its importe;
// none for a record that names neither.
func (a Apunte) Contrapartidas() []Parte {
	switch {
	case len(a.Partes) > 0:
		return a.Partes
	case a.Contrapartida != "":
		return []Parte{{Cuenta: a.Contrapartida, Importe: a.Movimiento.Importe}}
	}
	return nil
}

// Posted reports whether the movement moved its account's balance and took its next
// seq: an applied abono or cargo (as transfer legs, reversals and captures are recorded).
func (a Apunte) Posted() bool {
	t := a.Movimiento.Tipo
	return a.Estado == Aplicado && (t == Abono || t == Cargo)
}

// EstadoAt is the state a reader sees at now: Expirada for a hold held past expira.
func (a Apunte) EstadoAt(now time.Time) Estado {
	if a.Estado == Retenida && !a.Movimiento.Expira.After(now) {
		return Expirada
	}
	return a.Estado
}
