package versioned

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func cancelled(reasons ...types.CancellationReason) error {
	return fmt.Errorf("operation error DynamoDB: TransactWriteItems: %w", &types.TransactionCanceledException{Message: aws.String("cancelled"), CancellationReasons: reasons})
}

func reason(code string, item Item) types.CancellationReason {
	return types.CancellationReason{Code: aws.String(code), Item: item}
}

func TestClassify(t *testing.T) {
	stored := record("A", "R#1", "3")
	head := record("A", "HEAD", "9")
	cases := []struct {
		name     string
		creates  int
		replaces int
		err      error
		kind     Kind
		found    []int
		moved    bool
	}{
		{name: "success", err: nil, kind: Committed},
		{name: "record exists, ALL_OLD returned", err: cancelled(reason("ConditionalCheckFailed", stored), reason("None", nil)), kind: Exists, found: []int{0}},
		{name: "record exists, no item (embedded store)", err: cancelled(reason("ConditionalCheckFailed", nil), reason("None", nil)), kind: Exists, found: []int{0}},
		{name: "record exists and item moved", err: cancelled(reason("ConditionalCheckFailed", stored), reason("ConditionalCheckFailed", head)), kind: Exists, found: []int{0}, moved: true},
		{name: "two of three records exist", creates: 3, err: cancelled(reason("ConditionalCheckFailed", stored), reason("None", nil), reason("ConditionalCheckFailed", stored), reason("None", nil)), kind: Exists, found: []int{0, 2}},
		{name: "a replaced record changed", replaces: 1, err: cancelled(reason("None", nil), reason("ConditionalCheckFailed", stored), reason("None", nil)), kind: Changed, found: []int{0}},
		{name: "a replaced record changed and the item moved", replaces: 1, err: cancelled(reason("None", nil), reason("ConditionalCheckFailed", stored), reason("ConditionalCheckFailed", head)), kind: Changed, found: []int{0}, moved: true},
		{name: "only the item moved", err: cancelled(reason("None", nil), reason("ConditionalCheckFailed", head)), kind: Conflict, moved: true},
		{name: "item moved, no item returned", err: cancelled(reason("None", nil), reason("ConditionalCheckFailed", nil)), kind: Conflict},
		{name: "transaction conflict", err: cancelled(reason("TransactionConflict", nil), reason("None", nil)), kind: Contention},
		{name: "throttled item", err: cancelled(reason("None", nil), reason("ThrottlingError", nil)), kind: Contention},
		{name: "validation error", err: cancelled(reason("ValidationError", nil), reason("None", nil)), kind: Rejected},
		{name: "ValidationException", err: &smithy.GenericAPIError{Code: "ValidationException", Message: "Number overflow"}, kind: Rejected},
		{name: "deadline", err: fmt.Errorf("send: %w", context.DeadlineExceeded), kind: Failed},
		// A backend answering for actions the request did not have is not trusted: no
		// index past the request's actions is ever read.
		{name: "more reasons than actions", err: cancelled(reason("None", nil), reason("ConditionalCheckFailed", head), reason("ConditionalCheckFailed", head)), kind: Failed},
		{name: "5xx after the SDK's retries", err: &smithy.GenericAPIError{Code: "InternalServerError"}, kind: Failed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			txn := Txn{Creates: make([]Item, max(tc.creates, 1)), Replaces: make([]Replace, tc.replaces), Next: []Item{nil}}
			v := Classify(tc.err, txn)
			if v.Kind != tc.kind {
				t.Fatalf("kind = %d, want %d", v.Kind, tc.kind)
			}
			var got []int
			for _, e := range v.Found {
				got = append(got, e.Index)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.found) {
				t.Errorf("found = %v, want %v", got, tc.found)
			}
			if (v.Moved[0] != nil) != tc.moved {
				t.Errorf("moved = %v, want the item's image=%v", v.Moved, tc.moved)
			}
			if tc.kind != Committed && (v.Err == nil || !errors.Is(v.Err, tc.err)) {
				t.Errorf("err = %v, want it to wrap %v", v.Err, tc.err)
			}
		})
	}
}

// answered is err as the SDK reports a DynamoDB answer with status.
func answered(status int, err error) error {
	resp := &smithyhttp.Response{Response: &http.Response{StatusCode: status}}
	return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "GetItem", Err: &smithyhttp.ResponseError{Response: resp, Err: err}}
}

func TestUnavailable(t *testing.T) {
	throttled := answered(400, &types.ProvisionedThroughputExceededException{Message: aws.String("rate exceeded")})
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"provisioned throughput exceeded", throttled, true},
		{"throttled after the SDK's retries", &retry.MaxAttemptsError{Attempt: 3, Err: throttled}, true},
		{"on-demand throttling", answered(400, &smithy.GenericAPIError{Code: "ThrottlingException"}), true},
		{"internal server error", answered(500, &types.InternalServerError{Message: aws.String("internal")}), true},
		{"service unavailable", answered(503, &smithy.GenericAPIError{Code: "ServiceUnavailable"}), true},
		{"unreachable", &smithyhttp.RequestSendError{Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}, true},
		{"refused request", answered(400, &smithy.GenericAPIError{Code: "ValidationException"}), false},
		{"access denied", answered(400, &smithy.GenericAPIError{Code: "AccessDeniedException"}), false},
		{"no such table", answered(400, &types.ResourceNotFoundException{Message: aws.String("no table")}), false},
		{"cancelled", &aws.RequestCanceledError{Err: context.Canceled}, false},
		{"no error", nil, false},
	} {
		if got := Unavailable(tc.err); got != tc.want {
			t.Errorf("%s: Unavailable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
