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

// The states a movement item can be in: applied or rejected; a hold held, captured or
// released. Expirada is never stored: a hold still Retenida past its expira reads so.
const (
	Aplicado  Estado = "aplicado"
	Rechazado Estado = "rechazado"
	Retenida  Estado = "retenida"
	Capturada Estado = "capturada"
	Liberada  Estado = "liberada"
	Expirada  Estado = "expirada"
)

// Estados lists every state a recorded movement can be stored in; the audit reports any
// other.
var Estados = []Estado{Aplicado, Rechazado, Retenida, Capturada, Liberada}

// Apunte is a movement as the ledger recorded it, and what the ledger made of it. Seq and
// SaldoTras are set only when applied, Motivo only when rejected, AnuladoPor once a
// reversal undid it; a hold names who captured or released it. A reversal is recorded
// as the opposite abono or cargo whose Movimiento.Anula names the original; a transfer as
// two legs (the cargo on the debited account, the abono on the credited one), each naming
// the other account in Contrapartida. It is read without today's input rules, so its
// Movimiento may hold values a new message could no longer carry.
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

// Posted reports whether the recorded movement moved its account's balance: an applied
// abono or cargo (a transfer leg, a reversal, a capture are recorded as one), which
// takes the account's next seq. Holds and releases move no balance and have no seq.
func (a Apunte) Posted() bool {
	t := a.Movimiento.Tipo
	return a.Estado == Aplicado && (t == movimiento.Abono || t == movimiento.Cargo)
}

// EstadoAt is the state a reader sees at now: a hold still held past its expiry has
// lapsed.
func (a Apunte) EstadoAt(now time.Time) Estado {
	if a.Estado == Retenida && !a.Movimiento.Expira.After(now) {
		return Expirada
	}
	return a.Estado
}

// ErrNotFound is matched by the *NotFoundError readers return for an account or a
// movement the ledger has no record of.
var ErrNotFound = errors.New("ledger: not found")

// NotFoundError names what was not found: an account (ID empty) or one of its movements.
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
