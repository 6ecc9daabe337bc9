package versioned

import (
	"errors"
	"fmt"
)

// The failures a transaction can end in, for errors.Is; ExistsError, ChangedError and
// AttemptsError carry the details. Nothing was written in any of them.
var (
	// ErrExists: a create-once (or Absent) record exists.
	ErrExists = errors.New("versioned: record already exists")
	// ErrChanged: a record to replace is gone or fails its conditions.
	ErrChanged = errors.New("versioned: record changed")
	// ErrVersionConflict: an item was not at the version the plan was based on.
	ErrVersionConflict = errors.New("versioned: version conflict")
	// ErrContention: a concurrent transaction or throttling; a later retry can succeed.
	ErrContention = errors.New("versioned: transaction conflict or throttling")
	// ErrRejected: DynamoDB refused the request itself (say, a number beyond 38
	// digits); retrying it cannot succeed.
	ErrRejected = errors.New("versioned: request rejected by DynamoDB")
	// ErrUnreadable: a stored item's version is not a positive integer (UnreadableError);
	// retrying cannot read it either.
	ErrUnreadable = errors.New("versioned: stored version unreadable")
	// ErrInvalidTxn: one transaction cannot do what the plan asked (over 100 actions,
	// an item twice, a record without its key); it was not sent.
	ErrInvalidTxn = errors.New("versioned: invalid transaction")
)

// Existing is a record a transaction found in its way: its index among Txn.Creates then
// Txn.Absent (ExistsError) or Txn.Replaces (ChangedError), and the stored item (nil:
// none).
type Existing struct {
	Index int
	Item  Item
}

// ExistsError reports the create-once (or Absent) records that exist. Backends that stop
// at the first failing action (the embedded store) report one even when several exist.
type ExistsError struct {
	Records []Existing
}

// Error implements error.
func (e *ExistsError) Error() string {
	return fmt.Sprintf("versioned: %d create-once record(s) already exist", len(e.Records))
}

// Is makes errors.Is(err, ErrExists) true.
func (e *ExistsError) Is(target error) bool { return target == ErrExists }

// ChangedError reports the records to replace that fail their conditions now.
type ChangedError struct {
	Records []Existing
}

// Error implements error.
func (e *ChangedError) Error() string {
	return fmt.Sprintf("versioned: %d record(s) to replace changed", len(e.Records))
}

// Is makes errors.Is(err, ErrChanged) true.
func (e *ChangedError) Is(target error) bool { return target == ErrChanged }

// AttemptsError is Update giving up on a retryable failure, after Policy.MaxAttempts
// commits or when ctx's deadline left no time for another. Err is the last failure.
type AttemptsError struct {
	Attempts int
	Err      error
}

// Error implements error.
func (e *AttemptsError) Error() string {
	return fmt.Sprintf("versioned: gave up after %d attempt(s): %v", e.Attempts, e.Err)
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *AttemptsError) Unwrap() error { return e.Err }

// UnreadableError is ErrUnreadable for the item at Index among the keys of an Update.
type UnreadableError struct {
	Index   int
	Version any // as stored, decoded leniently
}

// Error implements error.
func (e *UnreadableError) Error() string {
	return fmt.Sprintf("%v: item %d has version %#v, want a positive integer", ErrUnreadable, e.Index, e.Version)
}

// Is makes errors.Is(err, ErrUnreadable) true.
func (e *UnreadableError) Is(target error) bool { return target == ErrUnreadable }
