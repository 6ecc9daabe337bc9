package versioned

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// kind is what a TransactWriteItems answer means for the optimistic-locking loop.
type kind int

const (
	committed  kind = iota
	refused         // a record exists or changed: the caller decides
	conflict        // only versioned items moved: plan again on the fresh state
	contention      // a concurrent transaction or throttling on an item: back off, retry
	giveUp          // retrying this request cannot help, or the SDK already did
)

// verdict is the classification of one TransactWriteItems answer.
type verdict struct {
	kind     kind
	existing []Existing   // refused: the create-once or Absent records found
	changed  []Existing   // refused: the records to replace that changed
	moved    map[int]Item // versioned items whose check failed → ALL_OLD image (or nil)
	err      error        // the error to report if the loop stops here
}

// classify turns a TransactWriteItems error into a verdict, for a request of actions
// actions: guarded Creates and Absent, then replaces Replaces, then the versioned items.
// A cancellation has one reason per action; "None" reads as "not known to have failed",
// and more reasons than actions are an answer that cannot be trusted.
func classify(err error, guarded, replaces, actions int) verdict {
	if err == nil {
		return verdict{kind: committed}
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		switch {
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return verdict{kind: giveUp, err: err}
		case NeverAccepted(err):
			return verdict{kind: giveUp, err: fmt.Errorf("%w: %w", ErrRejected, err)}
		}
		// The SDK retried throttling, 5xx and connection errors already.
		return verdict{kind: giveUp, err: fmt.Errorf("versioned: transact write: %w", err)}
	}

	if n := len(tce.CancellationReasons); n > actions {
		return verdict{kind: giveUp, err: fmt.Errorf("versioned: transact write: %d cancellation reasons for %d actions: %w", n, actions, err)}
	}
	v := verdict{moved: map[int]Item{}}
	rejected := false
	for i, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "ConditionalCheckFailed":
			item := nonEmpty(r.Item)
			switch {
			case i < guarded:
				v.existing = append(v.existing, Existing{Index: i, Item: item})
			case i < guarded+replaces:
				v.changed = append(v.changed, Existing{Index: i - guarded, Item: item})
			default:
				v.moved[i-guarded-replaces] = item
			}
		case "ValidationError", "ItemCollectionSizeLimitExceeded":
			rejected = true
		}
	}
	switch {
	case len(v.existing) > 0:
		v.kind, v.err = refused, &ExistsError{Records: v.existing}
	case len(v.changed) > 0:
		v.kind, v.err = refused, &ChangedError{Records: v.changed}
	case len(v.moved) > 0:
		v.kind, v.err = conflict, ErrVersionConflict
	case rejected:
		v.kind, v.err = giveUp, fmt.Errorf("%w: %w", ErrRejected, err)
	default:
		// TransactionConflict, throttling or an unknown reason: back off, retry.
		v.kind, v.err = contention, fmt.Errorf("%w: %w", ErrContention, err)
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
