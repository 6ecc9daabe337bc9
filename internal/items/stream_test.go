package items

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/versioned"
)

// An image as Lambda hands it over (DynamoDB JSON in the event) becomes the SDK's item,
// every type and nesting included, numbers exactly as written, and back; the decoders
// read it as they read a GetItem.
func TestStreamImagesReadAsItems(t *testing.T) {
	const image = `{
		"pk": {"S": "CUENTA#ES76"}, "sk": {"S": "CUENTA"}, "moneda": {"S": "EUR"},
		"saldo": {"N": "10.50"}, "movimientos": {"N": "3"}, "version": {"N": "4"},
		"limite": {"NULL": true}, "bloqueada": {"BOOL": true},
		"retenciones": {"M": {"aut-1": {"M": {"importe": {"N": "80.00"}, "expira": {"S": "2026-12-03T00:00:00Z"}}}}},
		"etiquetas": {"SS": ["a", "b"]}, "cifras": {"NS": ["1", "2.5"]}, "firma": {"B": "AQI="},
		"firmas": {"BS": ["AQI="]}, "notas": {"L": [{"S": "x"}, {"N": "1e3"}]}
	}`
	var in map[string]events.DynamoDBAttributeValue
	if err := json.Unmarshal([]byte(image), &in); err != nil {
		t.Fatal(err)
	}
	got, err := FromStream(in)
	if err != nil {
		t.Fatal(err)
	}
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	want := versioned.Item{
		"pk": s("CUENTA#ES76"), "sk": s("CUENTA"), "moneda": s("EUR"),
		"saldo": n("10.50"), "movimientos": n("3"), "version": n("4"),
		"limite": &types.AttributeValueMemberNULL{Value: true}, "bloqueada": &types.AttributeValueMemberBOOL{Value: true},
		"retenciones": &types.AttributeValueMemberM{Value: versioned.Item{"aut-1": &types.AttributeValueMemberM{Value: versioned.Item{
			"importe": n("80.00"), "expira": s("2026-12-03T00:00:00Z")}}}},
		"etiquetas": &types.AttributeValueMemberSS{Value: []string{"a", "b"}}, "cifras": &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}},
		"firma": &types.AttributeValueMemberB{Value: []byte{1, 2}}, "firmas": &types.AttributeValueMemberBS{Value: [][]byte{{1, 2}}},
		"notas": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("x"), n("1e3")}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromStream = %#v\nwant %#v", got, want)
	}
	back, err := ToStream(got)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := FromStream(back); err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("ToStream then FromStream = %#v, %v; want the item again", again, err)
	}
	c, ok, err := DecodeCuenta(got)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if c.Saldo.String() != "10.5" || c.Version != 4 || !c.Bloqueada || !c.Limite.IsZero() || c.Retenciones["aut-1"].Importe.String() != "80" {
		t.Errorf("decoded account %+v", c)
	}
}

// No image (a record of a stream that does not carry it) is no item, and back.
func TestStreamImagesWithoutAValue(t *testing.T) {
	if got, err := FromStream(nil); got != nil || err != nil {
		t.Errorf("FromStream(nil) = %v, %v; want nil, nil", got, err)
	}
	if got, err := ToStream(nil); got != nil || err != nil {
		t.Errorf("ToStream(nil) = %v, %v; want nil, nil", got, err)
	}
}
