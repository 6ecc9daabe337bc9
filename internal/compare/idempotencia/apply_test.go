package idempotencia

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// The baseline classifies DynamoDB's answers as the transaction strategy does: what
// DynamoDB can never accept is not retried, whatever the code.
func TestClassifyAgreesWithTheTransactionStrategy(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want kind
	}{
		{nil, done},
		{&types.ConditionalCheckFailedException{}, refused},
		{&smithy.GenericAPIError{Code: "ValidationException"}, rejected},
		{&smithy.GenericAPIError{Code: "SerializationException"}, rejected},
		{&smithy.GenericAPIError{Code: "IdempotentParameterMismatchException"}, rejected},
		{&smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}, failed},
		{errors.New("connection reset"), failed},
	} {
		if got := classify(tc.err).kind; got != tc.want {
			t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
