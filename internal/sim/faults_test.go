package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/testenv"
)

func put(pk string) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "X"}}}
}

func TestFaultsReachTheSDKAsDynamoDBWouldSendThem(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	db := env.ClientVia(ft)
	ctx := context.Background()
	in := put("A")
	in.TableName = aws.String(env.Table())

	ft.Inject("PutItem", sim.Throttling, sim.Throttling, sim.Throttling, sim.Throttling)
	_, err := db.PutItem(ctx, in)
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "ThrottlingException" {
		t.Fatalf("4 throttles: %v, want ThrottlingException after the SDK's 4 attempts", err)
	}
	if ft.Calls("PutItem") != 4 || ft.Injected()[sim.Throttling] != 4 {
		t.Errorf("calls %d, injected %v", ft.Calls("PutItem"), ft.Injected())
	}

	ft.Inject("TransactWriteItems", sim.TransactionConflict)
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(env.Table()), Item: put("B").Item}},
		{Put: &types.Put{TableName: aws.String(env.Table()), Item: put("C").Item}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[1].Code) != "TransactionConflict" {
		t.Fatalf("injected conflict: %v, want a cancellation with one TransactionConflict reason per action", err)
	}

	ft.Inject("PutItem", sim.LostResponse)
	in = put("D")
	in.TableName = aws.String(env.Table())
	in.ConditionExpression = aws.String("attribute_not_exists(pk)")
	_, err = db.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("lost response: %v; want the SDK's retry to find the item the lost call wrote", err)
	}
}

func TestRoundTripIsAFloor(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	ft.SetRoundTrip(30 * time.Millisecond)
	db := env.ClientVia(ft)
	in := put("A")
	in.TableName = aws.String(env.Table())
	start := time.Now()
	if _, err := db.PutItem(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("a call took %v, under the 30 ms round trip", took)
	}
}
