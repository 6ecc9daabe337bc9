package versioned

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Kind is what a TransactWriteItems answer means for the caller's optimistic-locking
// loop.
type Kind int

// The kinds of answer. Nothing was written unless the answer is Committed (or Failed,
// whose write may have committed unseen).
const (
	Committed  Kind = iota
	Exists          // a create-once or Absent record exists (Verdict.Found): the caller answers from it
	Changed         // a record to replace changed (Verdict.Found): decide again on it
	Conflict        // only versioned items moved (Verdict.Moved): decide again on their state
	Contention      // a concurrent transaction or throttling on an item: back off, try again
	Rejected        // DynamoDB refuses the request itself: as it is, it never succeeds
	Failed          // anything else: a deadline, the network, 5xx after the SDK's retries
)

// Verdict is what one TransactWriteItems answer means.
type Verdict struct {
	Kind Kind
	// Found are the records in the way, by index: among Txn.Guarded's (Exists) or
	// Txn.Replaces (Changed), with the stored item when the answer carried it (else nil:
	// the caller reads it).
	Found []Found
	// Moved are the versioned items whose version check failed, by index among the keys,
	// with their stored image when the answer carried it (else nil).
	Moved map[int]Item
	Err   error // what to report if the caller stops here; nil when Committed
}

// Found is a record a transaction found in its way, and the stored item (nil: unknown).
type Found struct {
	Index int
	Item  Item
}

// Classify says what err, TransactWriteItems's answer to BuildInput's request for txn,
// means. A cancellation has one reason per action; "None" reads as "not known to have
// failed", and more reasons than actions are an answer that cannot be trusted (Failed).
// An existing record outranks a changed one, which outranks a moved item.
func Classify(err error, txn Txn) Verdict {
	if err == nil {
		return Verdict{Kind: Committed}
	}
	var tce *types.TransactionCanceledException
	switch {
	case errors.As(err, &tce):
	case NeverAccepted(err):
		return Verdict{Kind: Rejected, Err: err}
	default: // the SDK retried throttling, 5xx and connection errors already
		return Verdict{Kind: Failed, Err: fmt.Errorf("versioned: transact write: %w", err)}
	}
	guarded, replaces := txn.guarded(), len(txn.Replaces)
	if n, actions := len(tce.CancellationReasons), guarded+replaces+len(txn.Next); n > actions {
		return Verdict{Kind: Failed, Err: fmt.Errorf("versioned: transact write: %d cancellation reasons for %d actions: %w", n, actions, err)}
	}
	var exists, changed []Found
	v := Verdict{Moved: map[int]Item{}, Err: err}
	rejected := false
	for i, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "ConditionalCheckFailed":
			item := nonEmpty(r.Item)
			switch {
			case i < guarded:
				exists = append(exists, Found{Index: i, Item: item})
			case i < guarded+replaces:
				changed = append(changed, Found{Index: i - guarded, Item: item})
			default:
				v.Moved[i-guarded-replaces] = item
			}
		case "ValidationError", "ItemCollectionSizeLimitExceeded":
			rejected = true
		}
	}
	switch {
	case len(exists) > 0:
		v.Kind, v.Found = Exists, exists
	case len(changed) > 0:
		v.Kind, v.Found = Changed, changed
	case len(v.Moved) > 0:
		v.Kind = Conflict
	case rejected:
		v.Kind = Rejected
	default: // TransactionConflict, throttling or an unknown reason
		v.Kind = Contention
	}
	return v
}

// NeverAccepted reports whether err is DynamoDB refusing the request itself (invalid,
// unreadable, or a reused ClientRequestToken with other content): retrying it as it
// is can never succeed. Every writer classifies its failures by it.
func NeverAccepted(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && neverAccepted[api.ErrorCode()]
}

// neverAccepted are the error codes of requests DynamoDB can never accept as they are.
var neverAccepted = map[string]bool{
	"ValidationException":                  true,
	"SerializationException":               true,
	"IdempotentParameterMismatchException": true,
}

// Unavailable reports a failure a later request may not meet: DynamoDB throttling the
// request, failing on its side (5xx), or unreachable, as the SDK's retryer judges
// errors (it has retried them already). A refused request or a cancelled one is not.
func Unavailable(err error) bool {
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// NoTable reports DynamoDB answering that the table does not exist
// (ResourceNotFoundException), as DescribeTable does before CreateTable.
func NoTable(err error) bool {
	var e *types.ResourceNotFoundException
	return errors.As(err, &e)
}

// TableInUse reports CreateTable refused because the table exists or is being created
// (ResourceInUseException): another migrator won the race.
func TableInUse(err error) bool {
	var e *types.ResourceInUseException
	return errors.As(err, &e)
}

// BackupsUnavailable reports UpdateContinuousBackups refused because backups are not
// enabled on the table yet (ContinuousBackupsUnavailableException), as happens for some
// seconds after CreateTable: the call succeeds later.
func BackupsUnavailable(err error) bool {
	var e *types.ContinuousBackupsUnavailableException
	return errors.As(err, &e)
}

// ConditionFailed reports a single-item write refused by its condition
// (ConditionalCheckFailedException), with the stored item when the call asked for it
// (ReturnValuesOnConditionCheckFailure ALL_OLD; else nil).
func ConditionFailed(err error) (Item, bool) {
	var e *types.ConditionalCheckFailedException
	if !errors.As(err, &e) {
		return nil, false
	}
	return nonEmpty(e.Item), true
}

// Unsupported reports an endpoint without the operation: UnknownOperationException, or
// a bare 400 the SDK cannot deserialize. Only an emulator answers so; from anywhere
// else the second is a proxy's page, and the caller must treat it as an error.
func Unsupported(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "UnknownOperationException" {
		return true
	}
	var resp *smithyhttp.ResponseError
	var decode *smithy.DeserializationError
	return errors.As(err, &resp) && resp.HTTPStatusCode() == 400 && errors.As(err, &decode)
}

func nonEmpty(item Item) Item {
	if len(item) == 0 {
		return nil
	}
	return item
}
