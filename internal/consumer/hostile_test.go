package consumer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

const goodMov = `{"id":"pago-1","cuenta":"ES76-1","tipo":"abono","importe":"50.00","moneda":"EUR","concepto":"Pedido 1"}`

// with replaces (or adds) one field of goodMov with a raw JSON value.
func with(field, raw string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(goodMov), &m); err != nil {
		panic(err)
	}
	m[field] = json.RawMessage(raw)
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%q:%s", k, v))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func snsOf(inner string) string {
	return `{"Type":"Notification","MessageId":"m-1","TopicArn":"arn:aws:sns:eu-west-1:1:t","Message":` + quoted(inner) + `}`
}

func snsTyped(typ string) string {
	return `{"Type":` + typ + `,"MessageId":"m-1","Message":` + quoted(goodMov) + `}`
}

func eventBridgeOf(detail string) string {
	return `{"version":"0","id":"6a7e8feb","detail-type":"Movimiento","source":"ledger.test","detail":` + detail + `}`
}

const dupImporte = `{"id":"pago-1","cuenta":"ES76-1","tipo":"abono","importe":"1.00","importe":"1000.00","moneda":"EUR"}`

// hostile is the catalogue of bodies a producer bug or an attacker may put on the
// queue, with the field movimiento must blame for each ("" for the body as a whole).
func hostile() []struct {
	name  string
	body  string
	field string
} {
	return []struct {
		name  string
		body  string
		field string
	}{
		{"10,001 levels of nesting", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), ""},
		{"10,001 nested objects", strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001), ""},
		{"100 levels of nesting as importe", with("importe", strings.Repeat("[", 100)+strings.Repeat("]", 100)), "importe"},
		{"256 KB concepto", with("concepto", quoted(strings.Repeat("x", 256_000))), "concepto"},
		{"256 KB id", with("id", quoted(strings.Repeat("a", 256_000))), "id"},
		{"body just over 256 KiB", with("relleno", quoted(strings.Repeat("x", 256<<10))), ""},
		{"id MOV#x", with("id", `"MOV#x"`), "id"},
		{"cuenta CUENTA#x", with("cuenta", `"CUENTA#x"`), "cuenta"},
		{"id x#MOV#y", with("id", `"x#MOV#y"`), "id"},
		{"id with a Cyrillic а", with("id", `"p\u0430go-1"`), "id"},
		{"cuenta with fullwidth digits", with("cuenta", `"ES７６-1"`), "cuenta"},
		{"id with a zero-width joiner", with("id", quoted("pago\u200d-1")), "id"},
		{"cuenta with an RTL override", with("cuenta", quoted("ES76\u202e-1")), "cuenta"},
		{"importe \"NaN\"", with("importe", `"NaN"`), "importe"},
		{"importe \"Infinity\"", with("importe", `"Infinity"`), "importe"},
		{"importe \"-Infinity\"", with("importe", `"-Infinity"`), "importe"},
		{"importe bare NaN", with("importe", `NaN`), ""},
		{"importe bare Infinity", with("importe", `Infinity`), ""},
		{"importe bare -Infinity", with("importe", `-Infinity`), ""},
		{"importe \"1e400\"", with("importe", `"1e400"`), "importe"},
		{"importe bare 1e400", with("importe", `1e400`), "importe"},
		{"importe with 10,001 decimals", with("importe", `"1.`+strings.Repeat("0", 10001)+`"`), "importe"},
		{"importe 0.(10⁵ zeros)1", with("importe", `0.`+strings.Repeat("0", 100_000)+`1`), "importe"},
		{"importe \"-0\"", with("importe", `"-0"`), "importe"},
		{"importe bare -0.00", with("importe", `-0.00`), "importe"},
		{"importe with 21 significant digits", with("importe", `"1234567890123456789.01"`), "importe"},
		{"duplicate key at the top level", dupImporte, ""},
		{"duplicate key inside the SNS Message", snsOf(dupImporte), "Message"},
		{"duplicate key inside the EventBridge detail", eventBridgeOf(dupImporte), ""},
		{"SNS SubscriptionConfirmation", `{"Type":"SubscriptionConfirmation","Message":"You have chosen to subscribe","SubscribeURL":"https://example.com"}`, "Type"},
		{"SNS UnsubscribeConfirmation", `{"Type":"UnsubscribeConfirmation","Message":"You have chosen to deactivate","SubscribeURL":"https://example.com"}`, "Type"},
		{"SNS Type a number", snsTyped("1"), "Type"},
		{"EventBridge detail an array", eventBridgeOf("[" + goodMov + "]"), "detail"},
		{"EventBridge detail a string", eventBridgeOf(quoted(goodMov)), "detail"},
		{"EventBridge detail null", eventBridgeOf("null"), "detail"},
		{"SNS in SNS", snsOf(snsOf(goodMov)), "Message"},
		{"EventBridge in SNS", snsOf(eventBridgeOf(goodMov)), "Message"},
		{"SNS in EventBridge", eventBridgeOf(snsOf(goodMov)), "detail"},
		{"invalid UTF-8", with("concepto", "\"caf\xe9\""), ""},
		{"a byte-order mark", "\xEF\xBB\xBF" + goodMov, ""},
		{"a JSON string", quoted(goodMov), ""},
		{"a JSON number", `50.00`, ""},
		{"a JSON array", "[" + goodMov + "]", ""},
		{"null", `null`, ""},
		{"an empty body", ``, ""},
		{"whitespace only", " \t\r\n ", ""},
		{"trailing garbage", goodMov + `}`, ""},
		{"concepto with control characters", with("concepto", `"Pedido\u0007\u001b[31m1"`), "concepto"},
		{"unknown currency", with("moneda", `"EURO"`), "moneda"},
		{"currency without minor units (XAU)", with("moneda", `"XAU"`), "moneda"},
		{"JPY with decimals", with("moneda", `"JPY"`), "importe"},
	}
}

// TestHostileBodiesAreParkedAndWriteNothing sends every hostile body through the
// handler: each must be parked at once as a permanent failure with the reason
// movimiento gives, and nothing may reach the table.
func TestHostileBodiesAreParkedAndWriteNothing(t *testing.T) {
	f := newFixture(t, cuenta.Retry, true)
	cases := hostile()
	var records []events.SQSMessage
	for i, tc := range cases {
		records = append(records, msg(fmt.Sprintf("h%02d", i), tc.body))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for start := 0; start < len(records); start += 10 {
		batch := records[start:min(start+10, len(records))]
		resp, err := f.handler.Handle(ctx, events.SQSEvent{Records: batch})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("batch from %s: resp %+v, err %v; want every record parked, none back", batch[0].MessageId, resp, err)
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, parseErr := movimiento.Parse([]byte(tc.body))
			if !errors.Is(parseErr, movimiento.ErrInvalid) {
				t.Fatalf("movimiento.Parse: %v, want an ErrInvalid", parseErr)
			}
			var fe *movimiento.FieldError
			if !errors.As(parseErr, &fe) || fe.Field != tc.field {
				t.Errorf("movimiento.Parse: %v, want a *FieldError for field %q", parseErr, tc.field)
			}
			reason, ok := f.parker.parked[records[i].MessageId]
			if !ok {
				t.Fatal("not parked")
			}
			want := (store.Permanent(parseErr)).Error()
			if reason.Outcome != store.Failed || reason.Error != want {
				t.Errorf("parked with %+v, want outcome failed and reason %q", reason, want)
			}
		})
	}
	if extra := ledgerItems(t, f); len(extra) != 0 {
		t.Fatalf("hostile bodies wrote %d item(s): %v", len(extra), extra)
	}
	// The handler was live all along: a genuine movement after them is applied.
	if resp, err := f.handler.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg("ok", goodMov)}}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("genuine movement: %+v, %v", resp, err)
	}
	if got := f.saldo(t, "ES76-1"); got != "50" {
		t.Errorf("saldo after the genuine movement = %s, want 50", got)
	}
}

// ledgerItems scans the table and returns the keys of every item that is not a
// migration record.
func ledgerItems(t *testing.T, f *fixture) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in := &dynamodb.ScanInput{TableName: aws.String(f.env.Table()), ConsistentRead: aws.Bool(true)}
	var keys []string
	for page := 0; ; page++ { // a table of migration records is a page or two
		if page == 100 {
			t.Fatal("scan: over 100 pages")
		}
		out, err := f.env.Client.Scan(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			pk := it["pk"].(*types.AttributeValueMemberS).Value
			if !strings.HasPrefix(pk, migrate.RecordPrefix) {
				keys = append(keys, pk+"/"+it["sk"].(*types.AttributeValueMemberS).Value)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return keys
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
