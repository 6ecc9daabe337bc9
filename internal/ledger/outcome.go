package ledger

import (
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
)

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
// applied (Applied, or a Duplicate of an applied one); Attempts counts the transactions
// tried; Err is nil unless Outcome is ConflictingDuplicate or Failed.
type Result struct {
	Outcome   Outcome
	Estado    Estado
	Seq       int64
	SaldoTras decimal.Decimal
	Motivo    string
	Attempts  int
	Err       error
}

// Retry reports whether the delivery must come back (a transient failure).
func (r Result) Retry() bool { return errors.Is(r.Err, ErrTransient) }

// The two classes of failure: nothing was recorded, and a retry may succeed or not.
// Every error a Result carries matches exactly one.
var (
	// ErrTransient: contention, throttling, timeouts, an unreachable table, insufficient
	// funds under Retry.
	ErrTransient = errors.New("ledger: transient failure")
	// ErrPermanent: another currency, a conflicting duplicate, a balance beyond
	// DynamoDB's precision.
	ErrPermanent = errors.New("ledger: permanent failure")
)

// ErrWaiting is matched by the transient failure of a movement that refers to another
// not recorded yet (a reversal before its original), which may be on its way. Like a
// refused debit it says nothing about the service's health.
var ErrWaiting = errors.New("ledger: waits for a movement not recorded yet")

// TransientError is a failure a retry may cure, with the transactions attempted.
type TransientError struct {
	Attempts int
	Err      error
}

// Error implements error.
func (e *TransientError) Error() string {
	return fmt.Sprintf("ledger: transient failure after %d attempt(s): %v", e.Attempts, e.Err)
}

// Unwrap returns the cause.
func (e *TransientError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrTransient) true.
func (e *TransientError) Is(target error) bool { return target == ErrTransient }

// PermanentError is a failure no retry can cure.
type PermanentError struct {
	Err error
}

// Error implements error.
func (e *PermanentError) Error() string { return "ledger: permanent failure: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *PermanentError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrPermanent) true.
func (e *PermanentError) Is(target error) bool { return target == ErrPermanent }

// DuplicadoConflictivoError reports a movement whose (cuenta, id) is recorded with
// another fingerprint: the producer reused an id for a different fact, or a message was
// altered. It is never applied and never skipped silently.
type DuplicadoConflictivoError struct {
	Cuenta, ID                  string
	HuellaGuardada, HuellaNueva string
}

// Error implements error.
func (e *DuplicadoConflictivoError) Error() string {
	return fmt.Sprintf("ledger: conflicting duplicate: movement %s of cuenta %s is recorded with fingerprint %s, this delivery has %s",
		e.ID, e.Cuenta, e.HuellaGuardada, e.HuellaNueva)
}

// Is makes errors.Is(err, ErrPermanent) true.
func (e *DuplicadoConflictivoError) Is(target error) bool { return target == ErrPermanent }
