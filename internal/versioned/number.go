package versioned

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"
)

// Number is a decimal.Decimal stored exactly as a DynamoDB number (N) by attributevalue.
// DynamoDB refuses (ErrRejected), never rounds, a value beyond 38 significant digits.
type Number struct {
	decimal.Decimal
}

// NumberOf wraps d.
func NumberOf(d decimal.Decimal) Number { return Number{d} }

// MarshalDynamoDBAttributeValue writes the decimal's exact text as an N.
func (n Number) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberN{Value: n.String()}, nil
}

// UnmarshalDynamoDBAttributeValue reads an N (or a decimal written as an S by another
// writer) exactly.
func (n *Number) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	var text string
	switch v := av.(type) {
	case *types.AttributeValueMemberN:
		text = v.Value
	case *types.AttributeValueMemberS:
		text = v.Value
	default:
		return fmt.Errorf("versioned: want a number, have %T", av)
	}
	d, err := decimal.NewFromString(text)
	if err != nil {
		return fmt.Errorf("versioned: number %q: %w", text, err)
	}
	n.Decimal = d
	return nil
}
