package store

import (
	"errors"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Entrega is one delivery of a movement and where it came from, as the transports
// stated it, all recorded with the movement (never part of its key): the id of the SQS
// message that carried it (origen), the SQS sender (remitente: SenderId, the transport's
// own word), what an SNS or EventBridge envelope claims of its origin (via), and when
// the first transport took it (enviado: SQS's SentTimestamp, or the envelope's time if
// earlier; zero when unknown), which a capture is judged at.
type Entrega struct {
	Mov       movimiento.Movimiento
	Origen    string
	Remitente string
	Via       string
	Enviado   time.Time
	// Grupo is the FIFO message group the delivery came in; "" from a standard queue.
	// Apply keeps a group's deliveries in arrival order and stops the group at its first
	// failure: the later ones fail with ErrNotAttempted, untried.
	Grupo string
}

// Outcome is what became of one delivery of a movement.
type Outcome string

// The outcomes, as they appear in logs, metrics and JSON.
const (
	Applied              Outcome = "applied"               // now in the ledger; the balance moved
	Duplicate            Outcome = "duplicate"             // recorded alike, applied or rejected (Result.Estado); nothing changed
	ConflictingDuplicate Outcome = "conflicting_duplicate" // (cuenta, id) recorded with other content; a permanent failure
	Rejected             Outcome = "rejected"              // recorded with estado "rechazado" under the reject policy
	Failed               Outcome = "failed"                // nothing recorded; Result.Err says whether a retry can succeed
)

// Result is the outcome of one delivery. Seq and SaldoTras describe the movement when
// posted (Applied, or a Duplicate of an applied one); Attempts counts the transactions
// tried for it; Err is nil unless Outcome is ConflictingDuplicate or Failed, and then
// matches ErrTransient or ErrPermanent.
type Result struct {
	Outcome   Outcome
	Estado    movimiento.Estado
	Seq       int64
	SaldoTras decimal.Decimal
	Motivo    string
	// Rechazo is the rule a movement rejected by this delivery broke; "" when it was
	// not, or was rejected by an earlier one (its Motivo says why).
	Rechazo  cuenta.Rule
	Attempts int
	Err      error
}

// Retry reports whether the delivery must come back (a transient failure).
func (r Result) Retry() bool { return errors.Is(r.Err, ErrTransient) }

// failed is the Result of a failure after attempts transactions.
func failed(err error, attempts int) Result {
	return Result{Outcome: Failed, Attempts: attempts, Err: err}
}

// decided is the Result of a decision committed after attempts transactions.
func decided(d decision, attempts int) Result {
	if d.Err != nil {
		return failed(classify(d.Err), attempts)
	}
	a := d.Apuntes[0]
	r := Result{Outcome: Applied, Estado: a.Estado, Seq: a.Seq, SaldoTras: a.SaldoTras, Attempts: attempts}
	if a.Estado == movimiento.Rechazado {
		r.Outcome, r.Motivo, r.Rechazo = Rejected, a.Motivo, d.Rechazo
	}
	return r
}

// existing is the result for m when a movement with its key is already recorded as
// stored: a duplicate, or a conflicting one when its fingerprint is another.
func existing(m movimiento.Movimiento, a movimiento.Apunte, attempts int) Result {
	if a.Huella != m.Huella() { // named as recorded: a transfer's may be on its destination
		return Result{Outcome: ConflictingDuplicate, Attempts: attempts,
			Err: &ConflictingDuplicateError{Cuenta: a.Movimiento.Cuenta, ID: a.Movimiento.ID, Stored: a.Huella, Received: m.Huella()}}
	}
	return Result{Outcome: Duplicate, Estado: a.Estado, Seq: a.Seq, SaldoTras: a.SaldoTras, Motivo: a.Motivo, Attempts: attempts}
}

// follow is the result of a later delivery of the same (cuenta, id) within one Apply,
// given the first delivery m0 and its result r0.
func follow(m, m0 movimiento.Movimiento, r0 Result) Result {
	h := m.Huella()
	var conflicting *ConflictingDuplicateError
	switch {
	case r0.Outcome == Applied || r0.Outcome == Duplicate || r0.Outcome == Rejected:
		if h != m0.Huella() {
			return Result{Outcome: ConflictingDuplicate, Err: &ConflictingDuplicateError{Cuenta: m.Cuenta, ID: m.ID, Stored: m0.Huella(), Received: h}}
		}
		return Result{Outcome: Duplicate, Estado: r0.Estado, Seq: r0.Seq, SaldoTras: r0.SaldoTras, Motivo: r0.Motivo}
	case errors.As(r0.Err, &conflicting) && conflicting.Stored != h:
		return Result{Outcome: ConflictingDuplicate, Err: &ConflictingDuplicateError{Cuenta: m.Cuenta, ID: m.ID, Stored: conflicting.Stored, Received: h}}
	case r0.Outcome == Failed && h == m0.Huella():
		return r0 // the same fact failed: it fails alike, and comes back if that one does
	}
	// What is recorded under this key is not known here: decide it on redelivery.
	return failed(Transient(errDecidedOnRedelivery), 0)
}
