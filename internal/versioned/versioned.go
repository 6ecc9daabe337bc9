// Package versioned is the ledger's optimistic-locking primitive on DynamoDB: records
// created once, records rewritten under conditions, and items moved from version v to
// v+1 (or checked at v), all or nothing in one TransactWriteItems of at most 100
// actions. BuildInput builds that request, with a ClientRequestToken of its content, so
// an SDK retry of a lost answer is not applied twice; Classify says what DynamoDB's
// answer means. It does no I/O and knows nothing of accounts or movements: the caller
// reads, decides, sends, and retries.
package versioned

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item is a DynamoDB item in the SDK's representation.
type Item = map[string]types.AttributeValue

// Table says where versioned items live: the table, its key attributes (SortKey empty
// for a hash-only key) and the numeric attribute holding an item's version.
type Table struct {
	Name         string
	PartitionKey string
	SortKey      string
	Version      string
}

// GetInput is a strongly consistent GetItem of key in table: a reader sees the last
// write, as a decision must.
func GetInput(table string, key Item) *dynamodb.GetItemInput {
	return &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)}
}
