package idempotencia

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// The record's states and the layout of both tables. Ids cannot contain '#', so
// "MOV#<cuenta>#<id>" names one fact.
const (
	enCurso = "en-curso"
	hecho   = "hecho"

	factPrefix   = "MOV#"
	msgPrefix    = "MSG#"
	accountPK    = "SALDO#"
	accountSK    = "CUENTA"
	stampLayout  = time.RFC3339Nano
	conditionPut = "attribute_not_exists(#pk) OR #expira < :ahora OR (#estado = :en_curso AND #hasta < :ahora_ms)"
)

// record is an idempotency record. Expira is epoch seconds (DynamoDB's TTL attribute);
// Hasta epoch milliseconds, as Powertools keeps in_progress_expiration.
type record struct {
	PK        string `dynamodbav:"pk"`
	Estado    string `dynamodbav:"estado"`
	Expira    int64  `dynamodbav:"expira"`
	Hasta     int64  `dynamodbav:"en_curso_hasta,omitempty"`
	Creado    string `dynamodbav:"creado,omitempty"`
	Huella    string `dynamodbav:"huella"`
	Origen    string `dynamodbav:"origen,omitempty"`
	Resultado string `dynamodbav:"resultado,omitempty"`
	Motivo    string `dynamodbav:"motivo,omitempty"`
}

// account is the baseline's account item, as far as the baseline reads it.
type account struct {
	Moneda      string           `dynamodbav:"moneda"`
	Saldo       versioned.Number `dynamodbav:"saldo"`
	Limite      versioned.Number `dynamodbav:"limite"`
	Movimientos int64            `dynamodbav:"movimientos"`
}

// marshal is v's attribute values; what is built here always marshals.
func marshal(v any) versioned.Item {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		panic(err)
	}
	return item
}

// recordKey is a delivery's idempotency key: (cuenta, id), or the SQS message id.
func recordKey(e store.Entrega, fromMessageID bool) string {
	if fromMessageID {
		return msgPrefix + e.Origen
	}
	return factPrefix + e.Mov.Cuenta + "#" + e.Mov.ID
}

func keyOf(key string) versioned.Item { return marshal(map[string]string{"pk": key}) }

func accountKey(cuenta string) versioned.Item {
	return marshal(map[string]string{"pk": accountPK + cuenta, "sk": accountSK})
}

// reservation is what reserveInput writes.
type reservation struct {
	key, huella, origen string
	now, until, expira  time.Time
}

// reserveInput takes a key: it wins when no record exists, when the record expired (TTL
// deletes late), or when it is en-curso past its in-progress expiry (its holder died).
func reserveInput(table string, r reservation) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{
		TableName: aws.String(table),
		Item: marshal(record{PK: r.key, Estado: enCurso, Expira: r.expira.Unix(), Hasta: r.until.UnixMilli(),
			Creado: r.now.UTC().Format(stampLayout), Huella: r.huella, Origen: r.origen}),
		ConditionExpression:                 aws.String(conditionPut),
		ExpressionAttributeNames:            map[string]string{"#pk": "pk", "#expira": "expira", "#estado": "estado", "#hasta": "en_curso_hasta"},
		ExpressionAttributeValues:           marshal(map[string]any{":ahora": r.now.Unix(), ":ahora_ms": r.now.UnixMilli(), ":en_curso": enCurso}),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// effectInput ADDs the movement's delta to the account, creating it on its first
// movement, on condition of the same currency and, for a cargo, a balance that covers
// it. Condition expressions have no arithmetic, so limite is not honoured.
func effectInput(table string, m movimiento.Movimiento, now time.Time) *dynamodb.UpdateItemInput {
	cond := "attribute_not_exists(#pk) OR #moneda = :moneda"
	values := map[string]any{
		":delta":  versioned.NumberOf(m.Delta()),
		":uno":    1,
		":moneda": m.Moneda,
		":cero":   0,
		":ahora":  now.UTC().Format(stampLayout),
		":mov":    m.ID,
	}
	names := map[string]string{"#saldo": "saldo", "#moneda": "moneda"}
	if m.Tipo == movimiento.Cargo {
		cond = "#moneda = :moneda AND #saldo >= :importe"
		values[":importe"] = versioned.NumberOf(m.Importe)
	} else {
		names["#pk"] = "pk"
	}
	return &dynamodb.UpdateItemInput{
		TableName: aws.String(table),
		Key:       accountKey(m.Cuenta),
		UpdateExpression: aws.String("ADD #saldo :delta, movimientos :uno " +
			"SET #moneda = if_not_exists(#moneda, :moneda), limite = if_not_exists(limite, :cero), " +
			"creada = if_not_exists(creada, :ahora), actualizada = :ahora, ultimo = :mov"),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           marshal(values),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// markInput marks the record hecho and restarts its expiry, as Powertools does.
func markInput(table, key string, estado movimiento.Estado, motivo string, expira time.Time) *dynamodb.UpdateItemInput {
	set := "SET #estado = :hecho, #resultado = :resultado, #expira = :expira"
	names := map[string]string{"#estado": "estado", "#resultado": "resultado", "#expira": "expira"}
	values := map[string]any{":hecho": hecho, ":resultado": string(estado), ":expira": expira.Unix()}
	if motivo != "" {
		set += ", #motivo = :motivo"
		names["#motivo"], values[":motivo"] = "motivo", motivo
	}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(table),
		Key:                       keyOf(key),
		UpdateExpression:          aws.String(set),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: marshal(values),
	}
}

func releaseInput(table, key string) *dynamodb.DeleteItemInput {
	return &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: keyOf(key)}
}

// decodeRecord reads a stored record of an estado the baseline writes.
func decodeRecord(item versioned.Item) (record, error) {
	var r record
	if err := attributevalue.UnmarshalMap(item, &r); err != nil {
		return record{}, fmt.Errorf("idempotencia: record: %w", err)
	}
	if r.Estado != enCurso && r.Estado != hecho {
		return record{}, fmt.Errorf("idempotencia: record %s has estado %q", r.PK, r.Estado)
	}
	return r, nil
}

// decodeAccount reads an account item; no item is the zero account (no balance).
func decodeAccount(item versioned.Item) (account, error) {
	var a account
	if err := attributevalue.UnmarshalMap(item, &a); err != nil {
		return account{}, fmt.Errorf("idempotencia: account: %w", err)
	}
	return a, nil
}
