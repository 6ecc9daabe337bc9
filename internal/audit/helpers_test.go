package audit_test

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// item is a raw DynamoDB item, as a test writes one by hand.
type item = map[string]types.AttributeValue
