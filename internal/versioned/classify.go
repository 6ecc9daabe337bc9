package versioned

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// kind is what a TransactWriteItems answer means for the optimistic-locking loop.
type kind int

const (
	committed  kind = iota
	exists          // a create-once record is there: the caller decides (duplicate?)
	conflict        // the versioned item moved: plan again on the fresh state
	contention      // a concurrent transaction or throttling on an item: back off, retry
	giveUp          // retrying this request cannot help, or the SDK already did
)

// verdict is the classification of one TransactWriteItems answer.
type verdict struct {
	kind     kind
	existing []Existing // exists: the records found, items as returned (may be nil)
	current  Item       // conflict or exists: the versioned item's ALL_OLD image, if returned
	err      error      // the error to report if the loop stops here
}

// classify turns a TransactWriteItems error into a verdict. This is the only place
// that reads CancellationReasons. nGuarded is the number of attribute_not_exists
// actions (Creates, then Absent), which come first in the request; the versioned action
// is last. DynamoDB lists one reason per
// action, in order; a backend that stops at the first failing action marks the others
// "None", which this reads as "not known to have failed".
func classify(err error, nGuarded int) verdict {
	if err == nil {
		return verdict{kind: committed}
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return verdict{kind: giveUp, err: err}
		}
		// Throttling, 5xx, connection errors and TransactionInProgress were retried by
		// the SDK's own retryer already; more attempts here would only multiply them.
		return verdict{kind: giveUp, err: fmt.Errorf("versioned: transact write: %w", err)}
	}

	var (
		existing        []Existing
		current         Item
		moved, rejected bool
	)
	for i, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "ConditionalCheckFailed":
			if i < nGuarded {
				existing = append(existing, Existing{Index: i, Item: nonEmpty(r.Item)})
			} else {
				moved, current = true, nonEmpty(r.Item)
			}
		case "ValidationError", "ItemCollectionSizeLimitExceeded":
			rejected = true
		}
	}
	switch {
	case len(existing) > 0:
		return verdict{kind: exists, existing: existing, current: current, err: &ExistsError{Records: existing}}
	case moved:
		return verdict{kind: conflict, current: current, err: ErrVersionConflict}
	case rejected:
		return verdict{kind: giveUp, err: fmt.Errorf("%w: %v", ErrRejected, err)}
	default:
		// TransactionConflict, ThrottlingError, ProvisionedThroughputExceeded, or a
		// reason we do not recognise: back off and retry, bounded.
		return verdict{kind: contention, err: fmt.Errorf("%w: %v", ErrContention, err)}
	}
}

func nonEmpty(item Item) Item {
	if len(item) == 0 {
		return nil
	}
	return item
}
