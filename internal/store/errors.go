package store

import (
	"errors"
	"fmt"

	"github.com/ledger-dev/ledger/internal/cuenta"
)

// The two classes of failure, for errors.Is: nothing was recorded, and a retry may
// succeed (contention, throttling, a timeout, a debit an account refuses now) or never
// can (another currency, a conflicting duplicate, a request DynamoDB refuses). Every
// error a Result carries matches exactly one.
var (
	ErrTransient = errors.New("ledger: transient failure")
	ErrPermanent = errors.New("ledger: permanent failure")
)

// ErrNotFound is matched by the error of a read of an account, or a movement, that is
// not recorded; the error names it ("account ES76 not found").
var ErrNotFound = errors.New("not found")

// ErrNotYetOpen is matched by the error of a read of an account at an instant before it
// was opened (its creada); the error names both ("account ES76 was not open yet at …").
var ErrNotYetOpen = errors.New("was not open yet")

// failure is err of one class (ErrTransient or ErrPermanent), which it names first.
type failure struct {
	class, err error
}

func (f *failure) Error() string   { return f.class.Error() + ": " + f.err.Error() }
func (f *failure) Unwrap() []error { return []error{f.class, f.err} }

// Transient marks err as a failure a retry may cure.
func Transient(err error) error { return &failure{class: ErrTransient, err: err} }

// Permanent marks err as a failure no retry can cure.
func Permanent(err error) error { return &failure{class: ErrPermanent, err: err} }

// classify marks a decision's error by its rule: one an account may pass later
// (cuenta.Rule.Transient) is transient; any other broken rule or invalid field is
// permanent.
func classify(err error) error {
	var re *cuenta.RuleError
	if errors.As(err, &re) && re.Rule.Transient() {
		return Transient(err)
	}
	return Permanent(err)
}

// ConflictingDuplicateError reports a movement whose (cuenta, id) is recorded with
// another fingerprint (huella): the producer reused an id for a different fact, or a
// message was altered. It is never applied, never skipped silently, and permanent.
type ConflictingDuplicateError struct {
	Cuenta, ID       string
	Stored, Received string // the fingerprints recorded and delivered
}

// Error names the movement and both fingerprints.
func (e *ConflictingDuplicateError) Error() string {
	return fmt.Sprintf("store: conflicting duplicate: movement %s of cuenta %s is recorded with fingerprint %s, this delivery has %s",
		e.ID, e.Cuenta, e.Stored, e.Received)
}

// Is makes errors.Is(err, ErrPermanent) true.
func (e *ConflictingDuplicateError) Is(target error) bool { return target == ErrPermanent }

// errDecidedOnRedelivery fails a later delivery of a key whose first delivery left it
// undecided: its redelivery reads what is recorded.
var errDecidedOnRedelivery = errors.New("store: a movement with this key is decided on redelivery")

// ErrNotAttempted is matched by the transient failure of a delivery that follows a
// failed delivery of its FIFO message group (Entrega.Grupo): it was not tried, so that
// it comes back after the one that failed, in order.
var ErrNotAttempted = errors.New("store: not attempted: an earlier delivery of its message group failed")

// NotAttempted is the transient failure, ErrNotAttempted, of a delivery of message
// group grupo left untried after an earlier one of it failed.
func NotAttempted(grupo string) error {
	return Transient(fmt.Errorf("%w: message group %s", ErrNotAttempted, grupo))
}
