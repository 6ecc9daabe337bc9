package versioned

import (
	"errors"
	"fmt"
)

// The failures a transaction can end in. Match them with errors.Is; ExistsError and
// AttemptsError carry the details.
var (
	// ErrExists: a create-once record already exists, so the transaction wrote nothing.
	ErrExists = errors.New("versioned: record already exists")
	// ErrVersionConflict: the item was not at the version the plan was based on.
	ErrVersionConflict = errors.New("versioned: version conflict")
	// ErrContention: DynamoDB cancelled the transaction for a concurrent transaction on
	// one of its items, or throttled one of them; retrying later can succeed.
	ErrContention = errors.New("versioned: transaction conflict or throttling")
	// ErrRejected: DynamoDB refused the request itself (a validation error); retrying
	// the same request cannot succeed.
	ErrRejected = errors.New("versioned: request rejected")
	// ErrInvalidTxn: the plan asked for something DynamoDB cannot do in one transaction
	// (over 100 actions, the same item twice, a record without its key).
	ErrInvalidTxn = errors.New("versioned: invalid transaction")
)

// Existing is a record that was already there: its position among the transaction's
// guarded actions (Txn.Creates, then Txn.Absent) and the stored item (as DynamoDB returned it with ALL_OLD, or as read
// back where the backend returned none; nil only if it vanished since).
type Existing struct {
	Index int
	Item  Item
}

// ExistsError reports the create-once (or Absent) records that already exist. The transaction wrote
// nothing. Backends that stop at the first failing action (the embedded store) report
// one record even when several exist.
type ExistsError struct {
	Records []Existing
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("versioned: %d create-once record(s) already exist", len(e.Records))
}

// Is makes errors.Is(err, ErrExists) true.
func (e *ExistsError) Is(target error) bool { return target == ErrExists }

// AttemptsError is what Update returns when it gives up on a retryable failure: after
// Policy.MaxAttempts commits, or because the context's deadline left no time for
// another. Err is the last failure (ErrVersionConflict, ErrContention, or the SDK's
// error for throttling, 5xx and timeouts, which the SDK itself retried first).
type AttemptsError struct {
	Attempts int
	Err      error
}

func (e *AttemptsError) Error() string {
	return fmt.Sprintf("versioned: gave up after %d attempt(s): %v", e.Attempts, e.Err)
}

func (e *AttemptsError) Unwrap() error { return e.Err }
