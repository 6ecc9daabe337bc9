package idempotencia

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/versioned"
)

func value(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	}
	return "?"
}

func testMov(t *testing.T, tipo movimiento.Tipo) movimiento.Movimiento {
	t.Helper()
	return testenv.Movement(t, movimiento.Datos{ID: "pago-1", Cuenta: "ES01", Tipo: tipo, Importe: "50", Moneda: "EUR"})
}

func TestRecordKey(t *testing.T) {
	e := store.Entrega{Mov: testMov(t, movimiento.Abono), Origen: "0f1c-msg"}
	if k := recordKey(e, false); k != "MOV#ES01#pago-1" {
		t.Errorf("business key = %q", k)
	}
	if k := recordKey(e, true); k != "MSG#0f1c-msg" {
		t.Errorf("message-id key = %q", k)
	}
}

func TestReserveInput(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	in := reserveInput("idem", reservation{key: "MOV#ES01#pago-1", huella: "abc", origen: "msg-1", now: now, until: now.Add(30 * time.Second), expira: now.Add(time.Hour)})
	want := map[string]string{"pk": "MOV#ES01#pago-1", "estado": "en-curso", "expira": "1772359200", "en_curso_hasta": "1772355630000", "huella": "abc", "origen": "msg-1", "creado": "2026-03-01T09:00:00Z"}
	for attr, v := range want {
		if got := value(in.Item[attr]); got != v {
			t.Errorf("%s = %q, want %q", attr, got, v)
		}
	}
	if aws.ToString(in.ConditionExpression) != "attribute_not_exists(#pk) OR #expira < :ahora OR (#estado = :en_curso AND #hasta < :ahora_ms)" {
		t.Errorf("condition = %s", aws.ToString(in.ConditionExpression))
	}
	if value(in.ExpressionAttributeValues[":ahora"]) != "1772355600" || value(in.ExpressionAttributeValues[":ahora_ms"]) != "1772355600000" {
		t.Errorf("values = %v", in.ExpressionAttributeValues)
	}
	if in.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
		t.Error("a lost reservation must return the record it lost to")
	}
}

func TestEffectInput(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		tipo     movimiento.Tipo
		delta    string
		cond     string
		hasPK    bool
		hasFloor bool
	}{
		{movimiento.Abono, "50", "attribute_not_exists(#pk) OR #moneda = :moneda", true, false},
		{movimiento.Cargo, "-50", "#moneda = :moneda AND #saldo >= :importe", false, true},
	}
	for _, tc := range cases {
		in := effectInput("ledger", testMov(t, tc.tipo), now)
		if value(in.Key["pk"]) != "SALDO#ES01" || value(in.Key["sk"]) != "CUENTA" {
			t.Errorf("%s: key = %v, want the baseline's own account item", tc.tipo, in.Key)
		}
		if got := value(in.ExpressionAttributeValues[":delta"]); got != tc.delta {
			t.Errorf("%s: delta = %s, want %s", tc.tipo, got, tc.delta)
		}
		if aws.ToString(in.ConditionExpression) != tc.cond {
			t.Errorf("%s: condition = %s", tc.tipo, aws.ToString(in.ConditionExpression))
		}
		// DynamoDB rejects expression names and values that the expressions do not use.
		if _, ok := in.ExpressionAttributeNames["#pk"]; ok != tc.hasPK {
			t.Errorf("%s: #pk named = %v", tc.tipo, ok)
		}
		if _, ok := in.ExpressionAttributeValues[":importe"]; ok != tc.hasFloor {
			t.Errorf("%s: :importe given = %v", tc.tipo, ok)
		}
		if value(in.ExpressionAttributeValues[":mov"]) != "pago-1" {
			t.Errorf("%s: the effect does not name its movement", tc.tipo)
		}
	}
}

func TestMarkAndReleaseInputs(t *testing.T) {
	expira := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	in := markInput("idem", "MOV#ES01#pago-1", movimiento.Rechazado, "insufficient funds", expira)
	if aws.ToString(in.UpdateExpression) != "SET #estado = :hecho, #resultado = :resultado, #expira = :expira, #motivo = :motivo" ||
		value(in.ExpressionAttributeValues[":resultado"]) != "rechazado" || value(in.ExpressionAttributeValues[":expira"]) != "1772359200" {
		t.Errorf("mark = %s %v", aws.ToString(in.UpdateExpression), in.ExpressionAttributeValues)
	}
	if in := markInput("idem", "k", movimiento.Aplicado, "", expira); len(in.ExpressionAttributeNames) != 3 {
		t.Errorf("mark without motivo names %v", in.ExpressionAttributeNames)
	}
	if del := releaseInput("idem", "k"); value(del.Key["pk"]) != "k" || del.ConditionExpression != nil {
		t.Errorf("release = %+v", del)
	}
}

func TestDecodeRecord(t *testing.T) {
	r, err := decodeRecord(versioned.Item{"pk": &types.AttributeValueMemberS{Value: "k"}, "estado": &types.AttributeValueMemberS{Value: "en-curso"},
		"huella": &types.AttributeValueMemberS{Value: "h"}, "en_curso_hasta": &types.AttributeValueMemberN{Value: "1772355630000"}})
	if err != nil || r.Estado != enCurso || r.Huella != "h" || !time.UnixMilli(r.Hasta).Equal(time.Date(2026, 3, 1, 9, 0, 30, 0, time.UTC)) {
		t.Errorf("record = %+v, %v", r, err)
	}
	if _, err := decodeRecord(versioned.Item{"pk": &types.AttributeValueMemberS{Value: "k"}, "estado": &types.AttributeValueMemberS{Value: "pending"}}); err == nil {
		t.Error("a record in an unknown state was accepted")
	}
}
