package sim_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/sim"
)

// The embedded store's stream records what each kind of write changed, in order, with
// the item's images before and after: a put as an insert or a modification, an update,
// each item of a transaction and of a batch, a delete as a removal. A write that
// changes nothing, and a cancelled transaction, make no record.
func TestTheEmbeddedStreamRecordsEachChange(t *testing.T) {
	srv, db := startClient(t, sim.StartStreamingDynamoDB)
	ctx := context.Background()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := func(sk, v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": s("a"), "sk": s(sk), "v": s(v)}
	}
	key := func(sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": s("a"), "sk": s(sk)}
	}
	table := aws.String("t")
	writes := []func() error{
		func() error {
			_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: table, BillingMode: types.BillingModePayPerRequest,
				AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}, {AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}},
				KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}}})
			return err
		},
		func() error {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item("1", "x")})
			return err
		},
		func() error {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item("1", "x")})
			return err
		},
		func() error {
			_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("1"), UpdateExpression: aws.String("SET v = :v"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("y")}})
			return err
		},
		func() error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: table, Item: item("2", "p")}},
				{Put: &types.Put{TableName: table, Item: item("1", "z"), ConditionExpression: aws.String("v = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("y")}}}}})
			return err
		},
		func() error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: table, Item: item("3", "q")}},
				{ConditionCheck: &types.ConditionCheck{TableName: table, Key: key("2"), ConditionExpression: aws.String("attribute_not_exists(pk)")}}}})
			if err == nil {
				return fmt.Errorf("a transaction whose check fails committed")
			}
			return nil
		},
		func() error {
			_, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": {{PutRequest: &types.PutRequest{Item: item("4", "b")}}}}})
			return err
		},
		func() error {
			_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: table, Key: key("2")})
			return err
		},
	}
	for i, w := range writes {
		if err := w(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	recs, err := srv.Stream.Next(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s %s %s→%s", r.EventName, r.Change.Keys["sk"].String(), value(r.Change.OldImage), value(r.Change.NewImage)))
	}
	want := []string{"INSERT 1 -→x", "MODIFY 1 x→y", "INSERT 2 -→p", "MODIFY 1 y→z", "INSERT 4 -→b", "REMOVE 2 p→-"}
	if !slices.Equal(got, want) {
		t.Errorf("records:\n%q\nwant\n%q", got, want)
	}
	if _, err := srv.Stream.Next(ctx, 100); err == nil {
		t.Error("records were taken twice")
	}
}

// value is an image's v, or "-" for no image.
func value(image map[string]events.DynamoDBAttributeValue) string {
	if image == nil {
		return "-"
	}
	return image["v"].String()
}
