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

// The states a movement item can be in.
const (
	Aplicado  Estado = "aplicado"
	Rechazado Estado = "rechazado"
)

// Estados lists every state a recorded movement can be in; the audit reports any other.
var Estados = []Estado{Aplicado, Rechazado}

// Apunte is a movement as the ledger recorded it: the movement itself, and what the
// ledger made of it. Seq and SaldoTras are set only when Estado is Aplicado; Motivo
// only when it is Rechazado; AnuladoPor when a reversal has undone it. A reversal is
// recorded as the opposite abono or cargo whose Movimiento.Anula names the original; a
// transfer as two legs, the cargo on the debited account and the abono on the credited
// one, each naming the other account in Contrapartida. A stored Apunte is read without
// today's input rules, so its Movimiento may hold values a new message could no longer
// carry.
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
}

// ErrNotFound is matched, with errors.Is, by the *NotFoundError readers return for an
// account or a movement the ledger has no record of.
var ErrNotFound = errors.New("ledger: not found")

// NotFoundError names what was not found: an account (ID empty) or one of its
// movements.
type NotFoundError struct {
	Cuenta string
	ID     string
}

func (e *NotFoundError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("ledger: account %s not found", e.Cuenta)
	}
	return fmt.Sprintf("ledger: movement %s of account %s not found", e.ID, e.Cuenta)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }
