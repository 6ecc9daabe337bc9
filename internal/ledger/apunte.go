package ledger

import (
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Estado is a recorded movement's state.
type Estado string

// The states of a movement item. Expirada is never stored: a hold still Retenida past
// its expira reads so.
const (
	Aplicado  Estado = "aplicado"
	Rechazado Estado = "rechazado"
	Retenida  Estado = "retenida"
	Capturada Estado = "capturada"
	Liberada  Estado = "liberada"
	Expirada  Estado = "expirada"
)

// Estados lists the states a movement can be stored in; the audit reports any other.
var Estados = []Estado{Aplicado, Rechazado, Retenida, Capturada, Liberada}

// Apunte is a movement as the ledger recorded it, and what it made of it. Seq and
// SaldoTras are set only when applied, Motivo when rejected, AnuladoPor once reversed;
// a hold names who settled it. A reversal is recorded as the opposite abono or cargo
// naming the original in Anula; a transfer as a cargo and an abono leg, each naming the
// other account in Contrapartida. Its Movimiento is read without today's input rules.
type Apunte struct {
	Movimiento    movimiento.Movimiento
	Huella        string
	Estado        Estado
	Seq           int64
	SaldoTras     decimal.Decimal
	Motivo        string
	Aplicado      time.Time
	Origen        string
	AnuladoPor    string
	Contrapartida string
	CapturadaPor  string
	LiberadaPor   string
}

// Posted reports whether the movement moved its account's balance and took its next
// seq: an applied abono or cargo (as transfer legs, reversals and captures are recorded).
func (a Apunte) Posted() bool {
	t := a.Movimiento.Tipo
	return a.Estado == Aplicado && (t == movimiento.Abono || t == movimiento.Cargo)
}

// EstadoAt is the state a reader sees at now: Expirada for a hold held past expira.
func (a Apunte) EstadoAt(now time.Time) Estado {
	if a.Estado == Retenida && !a.Movimiento.Expira.After(now) {
		return Expirada
	}
	return a.Estado
}

// ErrNotFound is matched by every *NotFoundError.
var ErrNotFound = errors.New("ledger: not found")

// NotFoundError names an account (ID empty), or one of its movements, with no record.
type NotFoundError struct {
	Cuenta, ID string
}

// Error implements error.
func (e *NotFoundError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("account %s not found", e.Cuenta)
	}
	return fmt.Sprintf("movement %s of account %s not found", e.ID, e.Cuenta)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }
