package sim_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/sim"
)

// TestQueryOrdersNumberSortKeysByValue: through the SDK, as the ledger reads it, an
// index with a number sort key pages in numeric order (minidyn alone sorts 10 before 9).
func TestQueryOrdersNumberSortKeysByValue(t *testing.T) {
	_, db := startClient(t, sim.StartDynamoDB)
	ctx := context.Background()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String("t"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("seq"), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("by_seq"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
			KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("seq"), KeyType: types.KeyTypeRange}}}},
	}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 25; i++ {
		for _, pk := range []string{"a", "b"} {
			if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{
				"pk": s(pk), "sk": s(fmt.Sprintf("item-%d", i)), "seq": &types.AttributeValueMemberN{Value: strconv.Itoa(i)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// pages queries the index for partition a, limit per page, and returns the seqs.
	pages := func(forward bool, limit int32, cond string, values map[string]types.AttributeValue) []int {
		var seqs []int
		var start map[string]types.AttributeValue
		values[":pk"] = s("a")
		for range 30 {
			out, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("t"), IndexName: aws.String("by_seq"),
				KeyConditionExpression: aws.String(cond), ExpressionAttributeValues: values,
				ScanIndexForward: aws.Bool(forward), Limit: aws.Int32(limit), ExclusiveStartKey: start})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range out.Items {
				if it["pk"].(*types.AttributeValueMemberS).Value != "a" {
					t.Fatalf("item of another partition: %v", it)
				}
				n, _ := strconv.Atoi(it["seq"].(*types.AttributeValueMemberN).Value)
				seqs = append(seqs, n)
			}
			if out.LastEvaluatedKey == nil {
				return seqs
			}
			start = out.LastEvaluatedKey
		}
		t.Fatal("paging did not end")
		return nil
	}
	var down, up []int
	for i := 25; i >= 1; i-- {
		down = append(down, i)
		up = append([]int{i}, up...)
	}
	if got := pages(false, 4, "pk = :pk", map[string]types.AttributeValue{}); !slices.Equal(got, down) {
		t.Errorf("newest first = %v, want %v", got, down)
	}
	if got := pages(true, 7, "pk = :pk", map[string]types.AttributeValue{}); !slices.Equal(got, up) {
		t.Errorf("oldest first = %v, want %v", got, up)
	}
	below := map[string]types.AttributeValue{":b": &types.AttributeValueMemberN{Value: "12"}}
	if got := pages(false, 5, "pk = :pk AND seq < :b", below); !slices.Equal(got, down[14:]) {
		t.Errorf("below 12 = %v, want %v", got, down[14:])
	}
}
