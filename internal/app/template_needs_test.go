package app_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// What the code calls, as IAM actions, derived from the code itself so that a new call
// fails these tests until the template grants it.

// transactionTableActions are the DynamoDB actions of the ledger (internal/store): one per
// method of store.Client (the whole of its DynamoDB surface), TransactWriteItems
// expanded into the action types versioned.BuildInput puts in a transaction, since IAM
// authorises each of those as its own action.
func transactionTableActions(t *testing.T) []string {
	t.Helper()
	var out []string
	client := reflect.TypeFor[store.Client]()
	for i := range client.NumMethod() {
		switch name := client.Method(i).Name; name {
		case "GetItem":
			out = append(out, "dynamodb:GetItem")
		case "TransactWriteItems":
			out = append(out, transactWriteActions(t)...)
		default:
			t.Fatalf("versioned.Client calls %s: name its IAM action here and grant it in template.yaml", name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// transactWriteActions builds every shape of transaction versioned.BuildInput makes
// (records to create, records that must be absent, records to replace, a new image of
// the item or only a check of its version; for a new and an existing item) and names the IAM action of
// each action type found.
func transactWriteActions(t *testing.T) []string {
	t.Helper()
	table := versioned.Table{Name: "ledger", PartitionKey: "pk", SortKey: "sk", Version: "version"}
	key := func(sk string) versioned.Item {
		return versioned.Item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#x"}, "sk": &types.AttributeValueMemberS{Value: sk}}
	}
	var out []string
	for _, expected := range []int64{0, 3} {
		for _, next := range []versioned.Item{key("CUENTA"), nil} {
			txn := versioned.Txn{
				Creates:  []versioned.Item{key("MOV#a")},
				Absent:   []versioned.Item{key("MOV#b")},
				Replaces: []versioned.Replace{{Item: key("MOV#c"), If: []versioned.Cond{versioned.Missing("x")}}},
				Next:     []versioned.Item{next},
			}
			in, err := versioned.BuildInput(table, []versioned.Item{key("CUENTA")}, []int64{expected}, txn)
			if err != nil {
				t.Fatal(err)
			}
			for _, item := range in.TransactItems {
				switch {
				case item.Put != nil:
					out = append(out, "dynamodb:PutItem")
				case item.Update != nil:
					out = append(out, "dynamodb:UpdateItem")
				case item.Delete != nil:
					out = append(out, "dynamodb:DeleteItem")
				case item.ConditionCheck != nil:
					out = append(out, "dynamodb:ConditionCheckItem")
				default:
					t.Fatalf("BuildInput made an action of no known type: %+v", item)
				}
			}
		}
	}
	return out
}

// parkActions are the SQS actions of the consumer's parker, one per method of
// consumer.SQSSender.
func parkActions(t *testing.T) []string {
	t.Helper()
	var out []string
	sender := reflect.TypeFor[consumer.SQSSender]()
	for i := range sender.NumMethod() {
		switch name := sender.Method(i).Name; name {
		case "SendMessage":
			out = append(out, "sqs:SendMessage")
		default:
			t.Fatalf("consumer.SQSSender calls %s: name its IAM action here and grant it in template.yaml", name)
		}
	}
	return out
}

// eventSourceActions are what Lambda's SQS event source mapping does with the
// function's execution role on the queue (the permissions Lambda documents for it, as
// AWSLambdaSQSQueueExecutionRole grants them). The handler itself makes no call on the
// queue: a failed record comes back by its batch item failure, after the visibility
// timeout, so sqs:ChangeMessageVisibility — which worker.SQSAPI has for the
// `ledger consume` worker — is not among them.
var eventSourceActions = []string{"sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"}

// logActions let a function write to a log group that already exists.
var logActions = []string{"logs:CreateLogStream", "logs:PutLogEvents"}
