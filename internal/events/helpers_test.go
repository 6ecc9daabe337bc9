package events_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/events"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// t0 is when the records these tests build were written.
var t0 = time.Date(2026, 12, 2, 10, 15, 0, 0, time.UTC)

// record is the stream record of a write of an item from old to now (nil: none), as
// Lambda delivers it from a NEW_AND_OLD_IMAGES stream, with sequence number seq.
func record(t *testing.T, seq int, old, now versioned.Item) lambdaevents.DynamoDBEventRecord {
	t.Helper()
	name, keyed := "MODIFY", now
	switch {
	case old == nil:
		name = "INSERT"
	case now == nil:
		name, keyed = "REMOVE", old
	}
	image := func(item versioned.Item) map[string]lambdaevents.DynamoDBAttributeValue {
		img, err := items.ToStream(item)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	return lambdaevents.DynamoDBEventRecord{
		EventName:      name,
		EventSource:    "aws:dynamodb",
		EventSourceArn: "arn:aws:dynamodb:eu-west-1:123456789012:table/ledger/stream/2026-12-01T00:00:00.000",
		Change: lambdaevents.DynamoDBStreamRecord{
			Keys:           image(items.Table("").KeyOf(keyed)),
			OldImage:       image(old),
			NewImage:       image(now),
			SequenceNumber: strconv.Itoa(1000 + seq),
			StreamViewType: "NEW_AND_OLD_IMAGES",
		},
	}
}

// apunte is the item of record a, as the ledger writes it.
func apunte(t *testing.T, a movimiento.Apunte) versioned.Item {
	t.Helper()
	item, err := items.EncodeApunte(a)
	if err != nil {
		t.Fatal(err)
	}
	return item
}

// account is the item of account c at its version, as a transaction writes it.
func account(t *testing.T, c cuenta.Cuenta) versioned.Item {
	t.Helper()
	item, err := items.EncodeCuenta(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	item[items.AttrVersion] = &types.AttributeValueMemberN{Value: strconv.FormatInt(c.Version, 10)}
	return item
}

// posted is the record of m applied at seq with saldo_tras, at account version v.
func posted(m movimiento.Movimiento, seq int64, saldoTras string, v int64) movimiento.Apunte {
	return movimiento.Apunte{Movimiento: m, Huella: m.Huella(), Estado: movimiento.Aplicado, Seq: seq,
		SaldoTras: decimal.RequireFromString(saldoTras), Aplicado: t0, Origen: "msg-" + m.ID, Version: v}
}

// details are the events' details as JSON objects, each checked against the contract.
func details(t *testing.T, evs []events.Event) []map[string]any {
	t.Helper()
	schema := testenv.LoadEventSchema(t)
	var out []map[string]any
	for _, ev := range evs {
		raw, err := json.Marshal(ev.Detail)
		if err != nil {
			t.Fatal(err)
		}
		schema.Check(t, ev.DetailType, raw)
		var d map[string]any
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}
