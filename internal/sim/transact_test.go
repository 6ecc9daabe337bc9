package sim_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/ledger-dev/ledger/internal/testenv"
)

// These tests hold the embedded store's transactions (internal/sim/transact.go) to
// what DynamoDB does; they run on moto too, which does it.

// row is an item of the test table: key (pk, "x") with a version.
func row(pk string, version int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "x"},
		"version": &types.AttributeValueMemberN{Value: strconv.Itoa(version)}}
}

func key(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "x"}}
}

// txPut is a transaction's Put of item under cond ("" for none), asking for ALL_OLD when allOld.
func txPut(table string, item map[string]types.AttributeValue, cond string, values map[string]types.AttributeValue, allOld bool) types.TransactWriteItem {
	p := &types.Put{TableName: aws.String(table), Item: item, ExpressionAttributeValues: values}
	if cond != "" {
		p.ConditionExpression = aws.String(cond)
	}
	if allOld {
		p.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	return types.TransactWriteItem{Put: p}
}

// txCheck is a transaction's ConditionCheck of the item pk under cond.
func txCheck(table, pk, cond string, values map[string]types.AttributeValue, allOld bool) types.TransactWriteItem {
	c := &types.ConditionCheck{TableName: aws.String(table), Key: key(pk), ConditionExpression: aws.String(cond), ExpressionAttributeValues: values}
	if allOld {
		c.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	return types.TransactWriteItem{ConditionCheck: c}
}

func version(n int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(n)}}
}

// stored is the version of the item pk, or -1 when there is none.
func stored(t *testing.T, env *testenv.DynamoDB, pk string) int {
	t.Helper()
	item := env.Get(t, pk, "x")
	if item == nil {
		return -1
	}
	n, _ := strconv.Atoi(item["version"].(*types.AttributeValueMemberN).Value)
	return n
}

// A transaction whose conditions fail writes nothing, and its cancellation names every
// action's reason in order, with the item as stored where ALL_OLD was asked and it exists.
func TestACancelledTransactionNamesEveryReason(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx, tb := context.Background(), env.Table()
	for _, it := range []map[string]types.AttributeValue{row("a", 1), row("d", 3), row("e", 5)} {
		env.Put(t, it)
	}
	_, err := env.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		txPut(tb, row("a", 2), "attribute_not_exists(pk)", nil, true), // a exists
		txCheck(tb, "b", "attribute_exists(pk)", nil, true),           // b does not
		txPut(tb, row("c", 1), "attribute_not_exists(pk)", nil, true), // holds
		txCheck(tb, "d", "version = :v", version(3), true),            // holds
		txPut(tb, row("e", 6), "version = :v", version(4), false),     // e is at 5; no ALL_OLD asked
	}})
	var cancelled *types.TransactionCanceledException
	if !errors.As(err, &cancelled) {
		t.Fatalf("err = %v, want a TransactionCanceledException", err)
	}
	var codes []string
	for _, r := range cancelled.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
	}
	if fmt.Sprint(codes) != "[ConditionalCheckFailed ConditionalCheckFailed None None ConditionalCheckFailed]" {
		t.Fatalf("reasons %v, want every failed condition named, None for the others", codes)
	}
	rs := cancelled.CancellationReasons
	if v, ok := rs[0].Item["version"].(*types.AttributeValueMemberN); !ok || v.Value != "1" {
		t.Errorf("a's reason carries %v, want the stored item (version 1)", rs[0].Item)
	}
	if rs[1].Item != nil || rs[4].Item != nil {
		t.Errorf("items %v and %v, want none: b does not exist, e's action asked for none", rs[1].Item, rs[4].Item)
	}
	for pk, want := range map[string]int{"a": 1, "c": -1, "d": 3, "e": 5} {
		if got := stored(t, env, pk); got != want {
			t.Errorf("%s at version %d after a cancelled transaction, want %d", pk, got, want)
		}
	}
}

// A transaction whose conditions all hold writes every Put and leaves checked items as
// they were; one that names an item twice is refused whole.
func TestATransactionWritesAllOrNothing(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx, tb := context.Background(), env.Table()
	env.Put(t, row("a", 1))
	env.Put(t, row("d", 3))
	if _, err := env.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		txPut(tb, row("a", 2), "version = :v", version(1), true),
		txPut(tb, row("c", 1), "attribute_not_exists(pk)", nil, true),
		txCheck(tb, "d", "version = :v", version(3), true),
	}}); err != nil {
		t.Fatal(err)
	}
	for pk, want := range map[string]int{"a": 2, "c": 1, "d": 3} {
		if got := stored(t, env, pk); got != want {
			t.Errorf("%s at version %d, want %d", pk, got, want)
		}
	}
	_, err := env.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		txPut(tb, row("f", 1), "", nil, false), txCheck(tb, "f", "attribute_not_exists(pk)", nil, false),
	}})
	var refused smithy.APIError
	if !errors.As(err, &refused) || refused.ErrorCode() != "ValidationException" || stored(t, env, "f") != -1 {
		t.Errorf("an item named twice: %v, f at %d; want a ValidationException and nothing written", err, stored(t, env, "f"))
	}
}

// A transaction sent again with its ClientRequestToken, as the SDK resends one whose
// answer was lost, is answered success and not applied again; the token on another
// request is refused, and that request writes nothing. The same request under a new
// token runs again.
func TestATokenAppliesItsTransactionOnce(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx, tb := context.Background(), env.Table()
	env.Put(t, row("a", 1))
	increment := &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(rand.Text()), TransactItems: []types.TransactWriteItem{
		txPut(tb, row("a", 2), "version = :v", version(1), false),
	}}
	for try := range 2 { // run again, the condition would fail: a is at 2
		if _, err := env.Client.TransactWriteItems(ctx, increment); err != nil {
			t.Fatalf("send %d: %v", try+1, err)
		}
	}
	if got := stored(t, env, "a"); got != 2 {
		t.Errorf("a at version %d, want 2", got)
	}
	_, err := env.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{ClientRequestToken: increment.ClientRequestToken,
		TransactItems: []types.TransactWriteItem{txPut(tb, row("b", 1), "", nil, false)}})
	var refused smithy.APIError
	if !errors.As(err, &refused) || refused.ErrorCode() != "IdempotentParameterMismatchException" || stored(t, env, "b") != -1 {
		t.Errorf("the token on another request: %v, b at %d; want IdempotentParameterMismatchException and nothing written", err, stored(t, env, "b"))
	}
	increment.ClientRequestToken = aws.String(rand.Text())
	var cancelled *types.TransactionCanceledException
	if _, err := env.Client.TransactWriteItems(ctx, increment); !errors.As(err, &cancelled) {
		t.Errorf("the request under a new token: %v, want it cancelled (a is at 2)", err)
	}
}

// Transactions are isolated: writers racing on one item with version checks lose none
// of the increments that committed.
func TestTransactionsRacingOnOneItemLoseNothing(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	tb := env.Table()
	env.Put(t, row("hot", 0))
	env.Put(t, row("other", 0))
	var wg sync.WaitGroup
	var mu sync.Mutex
	committed := 0
	for range 6 {
		wg.Go(func() {
			for range 15 {
				v := stored(t, env, "hot")
				_, err := env.Client.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					txPut(tb, row("hot", v+1), "version = :v", version(v), false),
					txCheck(tb, "other", "version = :v", version(0), false),
				}})
				if err == nil {
					mu.Lock()
					committed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if got := stored(t, env, "hot"); got != committed || committed == 0 {
		t.Errorf("hot at version %d after %d committed increments", got, committed)
	}
}

// BenchmarkTransactionOnATableOf measures one ledger-sized transaction (ten puts and
// an account) on tables of growing size: its cost stays flat.
func BenchmarkTransactionOnATableOf(b *testing.B) {
	for _, size := range []int{1_000, 10_000} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			env := testenv.NewDynamoDB(b)
			ctx, tb := context.Background(), env.Table()
			for i := range size {
				if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tb), Item: row(fmt.Sprintf("fill-%d", i), 1)}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := range b.N {
				items := []types.TransactWriteItem{txPut(tb, row(fmt.Sprintf("acct-%d", i), 1), "attribute_not_exists(pk)", nil, true)}
				for j := range 10 {
					items = append(items, txPut(tb, row(fmt.Sprintf("mov-%d-%d", i, j), 1), "attribute_not_exists(pk)", nil, true))
				}
				if _, err := env.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
