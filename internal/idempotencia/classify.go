package idempotencia

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/ledger-dev/ledger/internal/versioned"
)

// kind is what a DynamoDB answer means for the baseline's flow.
type kind int

const (
	done     kind = iota
	refused       // the condition failed: item is the stored one, if returned
	rejected      // DynamoDB refused the request itself: retrying cannot help
	failed        // throttling, 5xx, timeouts after the SDK's own retries: a retry may
)

type verdict struct {
	kind kind
	item versioned.Item
	err  error
}

// classify reads every DynamoDB answer the baseline gets; it is the only place that
// looks at SDK error types.
func classify(err error) verdict {
	if err == nil {
		return verdict{kind: done}
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		v := verdict{kind: refused, item: ccf.Item, err: err}
		if len(v.item) == 0 {
			v.item = nil
		}
		return v
	}
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "ValidationException" {
		return verdict{kind: rejected, err: fmt.Errorf("idempotencia: request rejected: %w", err)}
	}
	return verdict{kind: failed, err: fmt.Errorf("idempotencia: %w", err)}
}
