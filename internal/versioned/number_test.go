package versioned_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// A 38-digit balance (DynamoDB's precision) survives the round trip exactly, on every
// backend: written as an N by the marshaler, read back through attributevalue.
func TestNumberKeeps38DigitsExactly(t *testing.T) {
	type balance struct {
		PK    string           `dynamodbav:"pk"`
		SK    string           `dynamodbav:"sk"`
		Saldo versioned.Number `dynamodbav:"saldo"`
	}
	env := testenv.NewDynamoDB(t)
	for _, text := range []string{"1234567890123456789012345678.9012345678", "-0.00000000000000000000000000000000000001", "99999999999999999999999999999999999999"} {
		want := decimal.RequireFromString(text)
		item, err := attributevalue.MarshalMap(balance{PK: "N#" + text, SK: "HEAD", Saldo: versioned.NumberOf(want)})
		if err != nil {
			t.Fatal(err)
		}
		key := versioned.Item{"pk": item["pk"], "sk": item["sk"]}
		if v := commit(t, env.Client, counter(env), []versioned.Item{key}, []int64{0}, versioned.Txn{Next: []versioned.Item{item}}); v.Kind != versioned.Committed {
			t.Fatalf("%s: %+v", text, v)
		}
		var got balance
		if err := attributevalue.UnmarshalMap(env.Get(t, "N#"+text, "HEAD"), &got); err != nil {
			t.Fatal(err)
		}
		if !got.Saldo.Equal(want) {
			t.Errorf("stored %s, read back %s", want, got.Saldo)
		}
	}
}
