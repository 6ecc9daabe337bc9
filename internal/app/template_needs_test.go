package app_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/idempotencia"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// What the code calls, as IAM actions, derived from the code itself so that a new call
// fails these tests until the template grants it.

// transactionTableActions are the DynamoDB actions of the transaction strategy: one per
// method of versioned.Client (the whole of its DynamoDB surface), TransactWriteItems
// expanded into the action types versioned.BuildInput puts in a transaction, since IAM
// authorises each of those as its own action.
func transactionTableActions(t *testing.T) []string {
	t.Helper()
	var out []string
	client := reflect.TypeFor[versioned.Client]()
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

// The tables the separate-table baseline is given (idempotencia.Config): its own, and
// the ledger table, where its accounts are.
const (
	idempotencyTable = "idempotency"
	accountsTable    = "accounts"
)

// tableUse is what a path of the code does on one table: the IAM actions it calls, and
// the dynamodb:LeadingKeys patterns of the partition keys it names (keyPatterns' form).
type tableUse struct {
	actions []string
	keys    string
}

// separateTableActions is what the separate-table baseline does, by the table it does
// it on (idempotencyTable, accountsTable). It is found by running what the consumer
// calls (idempotencia.Service.ApplyAll, the whole of consumer.Applier, configured as
// app.Applier configures it) against a client that answers each call in turn with
// success, a failed condition (without the stored item, the answer that makes the
// baseline read it back) or an error, in every combination, for a credit, a debit and a
// transfer under both funds policies. Each call is named by its idempotencia.Client
// method, and every method must be reached. Only what ApplyAll calls counts: Saldo's
// read of an account is the comparison's, not the consumer's; records keyed on the SQS
// message id (KeyFromMessageID, MSG#…) are the comparison's trap, never the consumer's.
func separateTableActions(t *testing.T) map[string]tableUse {
	t.Helper()
	const depth = 5 // the most calls one delivery makes: reserve, debit, credit, undo, release
	pk := partitionKey(t, config.DefaultIdempotencyTable)
	if partitionKey(t, config.DefaultTable) != pk {
		t.Fatal("the ledger and idempotency tables have different partition keys: record each table's here")
	}
	answers := []error{nil, &types.ConditionalCheckFailedException{Message: aws.String("condition failed")}, errors.New("throttled")}
	seen := map[string]map[string]bool{}
	keys := map[string][]string{}
	for _, policy := range []ledger.FundsPolicy{ledger.Retry, ledger.Reject} {
		for _, tipo := range []movimiento.Tipo{movimiento.Abono, movimiento.Cargo, movimiento.Traspaso} {
			d := movimiento.Datos{ID: "m-1", Cuenta: "ES00", Tipo: tipo, Importe: "10.00", Moneda: "EUR"}
			if tipo == movimiento.Traspaso {
				d.Destino = "ES01"
			}
			m, err := movimiento.New(d)
			if err != nil {
				t.Fatal(err)
			}
			for n := range pow(len(answers), depth) {
				script := make([]error, depth)
				for i := range script {
					script[i], n = answers[n%len(answers)], n/len(answers)
				}
				db := &scriptedClient{pk: pk, script: script}
				svc, err := idempotencia.New(db, idempotencia.Config{Table: idempotencyTable, Accounts: accountsTable, InsufficientFunds: policy})
				if err != nil {
					t.Fatal(err)
				}
				svc.ApplyAll(context.Background(), []ledger.Entrega{{Mov: m, Origen: "msg-1"}})
				if db.err != nil {
					t.Fatal(db.err)
				}
				for _, c := range db.calls {
					if seen[c.table] == nil {
						seen[c.table] = map[string]bool{}
					}
					seen[c.table][c.method] = true
					keys[c.table] = append(keys[c.table], c.key)
				}
			}
		}
	}
	for table := range seen {
		if table != idempotencyTable && table != accountsTable {
			t.Fatalf("the baseline called table %q, which is neither of the two it was given", table)
		}
	}
	out := map[string]tableUse{}
	client := reflect.TypeFor[idempotencia.Client]()
	for i := range client.NumMethod() {
		name := client.Method(i).Name
		switch name {
		case "GetItem", "PutItem", "UpdateItem", "DeleteItem":
		default:
			t.Fatalf("idempotencia.Client calls %s: name its IAM action here and grant it in template.yaml", name)
		}
		reached := false
		for table, methods := range seen {
			if methods[name] {
				u := out[table]
				u.actions = append(u.actions, "dynamodb:"+name)
				out[table] = u
				reached = true
			}
		}
		if !reached {
			t.Fatalf("idempotencia.Client has %s, which no path of ApplyAll calls: decide here whether the consumer needs it", name)
		}
	}
	for table, u := range out {
		slices.Sort(u.actions)
		u.keys = keyPatterns(t, keys[table])
		out[table] = u
	}
	return out
}

func pow(b, e int) int {
	r := 1
	for range e {
		r *= b
	}
	return r
}

// scriptedClient is an idempotencia.Client that answers its i-th call with script[i]
// (nil: success, with an empty output) and records each call's method, table and
// partition key.
type scriptedClient struct {
	pk     string
	script []error
	calls  []scriptedCall
	err    error // a call past the script: the exploration is not deep enough
}

// scriptedCall is one call: its method, its table and the partition key (pk) it names.
type scriptedCall struct{ method, table, key string }

func (c *scriptedClient) answer(method string, table *string, key map[string]types.AttributeValue) error {
	i := len(c.calls)
	c.calls = append(c.calls, scriptedCall{method, aws.ToString(table), value(key, c.pk)})
	if i >= len(c.script) {
		c.err = fmt.Errorf("a delivery made more than %d calls (%v): explore deeper", len(c.script), c.calls)
		return errors.New("past the script")
	}
	return c.script[i]
}

func (c *scriptedClient) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if err := c.answer("GetItem", in.TableName, in.Key); err != nil {
		return nil, err
	}
	return &dynamodb.GetItemOutput{}, nil
}

func (c *scriptedClient) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if err := c.answer("PutItem", in.TableName, in.Item); err != nil {
		return nil, err
	}
	return &dynamodb.PutItemOutput{}, nil
}

func (c *scriptedClient) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if err := c.answer("UpdateItem", in.TableName, in.Key); err != nil {
		return nil, err
	}
	return &dynamodb.UpdateItemOutput{}, nil
}

func (c *scriptedClient) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if err := c.answer("DeleteItem", in.TableName, in.Key); err != nil {
		return nil, err
	}
	return &dynamodb.DeleteItemOutput{}, nil
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
// timeout, so sqs:ChangeMessageVisibility — which consumer.SQSAPI has for the
// `ledger consume` worker — is not among them.
var eventSourceActions = []string{"sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"}

// logActions let a function write to a log group that already exists.
var logActions = []string{"logs:CreateLogStream", "logs:PutLogEvents"}
