package versioned

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
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
		kind     kind
		existing []int
		changed  []int
		moved    bool
		is       error
	}{
		{name: "success", err: nil, kind: committed},
		{name: "record exists, ALL_OLD returned", err: cancelled(reason("ConditionalCheckFailed", stored), reason("None", nil)), kind: refused, existing: []int{0}, is: ErrExists},
		{name: "record exists, no item (embedded store)", err: cancelled(reason("ConditionalCheckFailed", nil), reason("None", nil)), kind: refused, existing: []int{0}, is: ErrExists},
		{name: "record exists and item moved", err: cancelled(reason("ConditionalCheckFailed", stored), reason("ConditionalCheckFailed", head)), kind: refused, existing: []int{0}, moved: true, is: ErrExists},
		{name: "two of three records exist", creates: 3, err: cancelled(reason("ConditionalCheckFailed", stored), reason("None", nil), reason("ConditionalCheckFailed", stored), reason("None", nil)), kind: refused, existing: []int{0, 2}, is: ErrExists},
		{name: "a replaced record changed", replaces: 1, err: cancelled(reason("None", nil), reason("ConditionalCheckFailed", stored), reason("None", nil)), kind: refused, changed: []int{0}, is: ErrChanged},
		{name: "a replaced record changed and the item moved", replaces: 1, err: cancelled(reason("None", nil), reason("ConditionalCheckFailed", stored), reason("ConditionalCheckFailed", head)), kind: refused, changed: []int{0}, moved: true, is: ErrChanged},
		{name: "only the item moved", err: cancelled(reason("None", nil), reason("ConditionalCheckFailed", head)), kind: conflict, moved: true, is: ErrVersionConflict},
		{name: "item moved, no item returned", err: cancelled(reason("None", nil), reason("ConditionalCheckFailed", nil)), kind: conflict, is: ErrVersionConflict},
		{name: "transaction conflict", err: cancelled(reason("TransactionConflict", nil), reason("None", nil)), kind: contention, is: ErrContention},
		{name: "throttled item", err: cancelled(reason("None", nil), reason("ThrottlingError", nil)), kind: contention, is: ErrContention},
		{name: "validation error", err: cancelled(reason("ValidationError", nil), reason("None", nil)), kind: giveUp, is: ErrRejected},
		{name: "ValidationException", err: &smithy.GenericAPIError{Code: "ValidationException", Message: "Number overflow"}, kind: giveUp, is: ErrRejected},
		{name: "deadline", err: fmt.Errorf("send: %w", context.DeadlineExceeded), kind: giveUp, is: context.DeadlineExceeded},
		// A backend answering for actions the request did not have is not trusted: no
		// index past the request's actions is ever read.
		{name: "more reasons than actions", err: cancelled(reason("None", nil), reason("ConditionalCheckFailed", head), reason("ConditionalCheckFailed", head)), kind: giveUp},
		{name: "5xx after the SDK's retries", err: &smithy.GenericAPIError{Code: "InternalServerError"}, kind: giveUp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := classify(tc.err, max(tc.creates, 1), tc.replaces, max(tc.creates, 1)+tc.replaces+1)
			if v.kind != tc.kind {
				t.Fatalf("kind = %d, want %d", v.kind, tc.kind)
			}
			var got []int
			for _, e := range v.existing {
				got = append(got, e.Index)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.existing) {
				t.Errorf("existing = %v, want %v", got, tc.existing)
			}
			var changed []int
			for _, e := range v.changed {
				changed = append(changed, e.Index)
			}
			if fmt.Sprint(changed) != fmt.Sprint(tc.changed) {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if (v.moved[0] != nil) != tc.moved {
				t.Errorf("moved = %v, want the item's image=%v", v.moved, tc.moved)
			}
			if tc.is != nil && !errors.Is(v.err, tc.is) {
				t.Errorf("err = %v, want errors.Is %v", v.err, tc.is)
			}
			if tc.kind != committed && v.err == nil {
				t.Error("a failure classified without an error to report")
			}
		})
	}
}
