package idempotencia

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Item is a DynamoDB item in the SDK's representation.
type Item = map[string]types.AttributeValue

// The record's states and the layout of both tables. Account and movement ids cannot
// contain '#' (movimiento validates both), so "MOV#<cuenta>#<id>" names one fact.
const (
	enCurso = "en-curso"
	hecho   = "hecho"

	attrPK       = "pk"
	attrSK       = "sk"
	attrEstado   = "estado"
	attrExpira   = "expira"         // epoch seconds: DynamoDB's TTL attribute
	attrHasta    = "en_curso_hasta" // epoch milliseconds, as Powertools keeps in_progress_expiration
	attrHuella   = "huella"
	attrResult   = "resultado"
	attrMotivo   = "motivo"
	factPrefix   = "MOV#"
	msgPrefix    = "MSG#"
	accountPK    = "SALDO#"
	accountSK    = "CUENTA"
	stampLayout  = time.RFC3339Nano
	conditionPut = "attribute_not_exists(#pk) OR #expira < :ahora OR (#estado = :en_curso AND #hasta < :ahora_ms)"
)

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func num(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func epoch(t time.Time) types.AttributeValue {
	return num(strconv.FormatInt(t.Unix(), 10))
}
func epochMilli(t time.Time) types.AttributeValue {
	return num(strconv.FormatInt(t.UnixMilli(), 10))
}

// recordKey is the idempotency key of a delivery: the business fact (cuenta, id), or
// the SQS message id under KeyFromMessageID.
func recordKey(e ledger.Entrega, fromMessageID bool) string {
	if fromMessageID {
		return msgPrefix + e.Origen
	}
	return factPrefix + e.Mov.Cuenta + "#" + e.Mov.ID
}

func keyOf(key string) Item { return Item{attrPK: str(key)} }

func accountKey(cuenta string) Item {
	return Item{attrPK: str(accountPK + cuenta), attrSK: str(accountSK)}
}

// reservation is what reserveInput writes: the key, the fingerprint, the delivery that
// holds it, and the three times.
type reservation struct {
	key, huella, origen string
	now, until, expira  time.Time
}

// reserveInput is the conditional put that takes a key: it wins when no record exists,
// when the record expired (TTL deletes late, so an expired record may still be there),
// or when it is en-curso past its in-progress expiry (its holder died). It returns the
// record it lost to (ALL_OLD).
func reserveInput(table string, r reservation) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{
		TableName: aws.String(table),
		Item: Item{
			attrPK:     str(r.key),
			attrEstado: str(enCurso),
			attrExpira: epoch(r.expira),
			attrHasta:  epochMilli(r.until),
			"creado":   str(r.now.UTC().Format(stampLayout)),
			attrHuella: str(r.huella),
			"origen":   str(r.origen),
		},
		ConditionExpression:      aws.String(conditionPut),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#expira": attrExpira, "#estado": attrEstado, "#hasta": attrHasta},
		ExpressionAttributeValues: Item{
			":ahora":    epoch(r.now),
			":ahora_ms": epochMilli(r.now),
			":en_curso": str(enCurso),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// effectInput is the effect: ADD the movement's delta to the account's balance and
// one to its count, creating the account on its first movement. The condition is the
// account's rules as far as a condition expression can state them: the same currency,
// and for a cargo a balance that covers the amount. Condition expressions have no
// arithmetic, so an overdraft limit (limite) is not honoured: that would need a read
// before every cargo. The failed condition returns the account (ALL_OLD) so the
// caller can tell which rule failed.
func effectInput(table string, m movimiento.Movimiento, now time.Time) *dynamodb.UpdateItemInput {
	cond := "attribute_not_exists(#pk) OR #moneda = :moneda"
	values := Item{
		":delta":  num(m.Delta().String()),
		":uno":    num("1"),
		":moneda": str(m.Moneda),
		":cero":   num("0"),
		":ahora":  str(now.UTC().Format(stampLayout)),
		":mov":    str(m.ID),
	}
	if m.Tipo == movimiento.Cargo {
		cond = "#moneda = :moneda AND #saldo >= :importe"
		values[":importe"] = num(m.Importe.String())
	}
	names := map[string]string{"#saldo": "saldo", "#moneda": "moneda"}
	if m.Tipo != movimiento.Cargo {
		names["#pk"] = attrPK
	}
	return &dynamodb.UpdateItemInput{
		TableName: aws.String(table),
		Key:       accountKey(m.Cuenta),
		UpdateExpression: aws.String("ADD #saldo :delta, movimientos :uno " +
			"SET #moneda = if_not_exists(#moneda, :moneda), limite = if_not_exists(limite, :cero), " +
			"creada = if_not_exists(creada, :ahora), actualizada = :ahora, ultimo = :mov"),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// markInput marks the record hecho with what became of the movement (aplicado, or
// rechazado with its motivo), and restarts its expiry from now, as Powertools does
// when it saves the result.
func markInput(table, key string, estado ledger.Estado, motivo string, expira time.Time) *dynamodb.UpdateItemInput {
	set := "SET #estado = :hecho, #resultado = :resultado, #expira = :expira"
	names := map[string]string{"#estado": attrEstado, "#resultado": attrResult, "#expira": attrExpira}
	values := Item{":hecho": str(hecho), ":resultado": str(string(estado)), ":expira": epoch(expira)}
	if motivo != "" {
		set += ", #motivo = :motivo"
		names["#motivo"], values[":motivo"] = attrMotivo, str(motivo)
	}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(table),
		Key:                       keyOf(key),
		UpdateExpression:          aws.String(set),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
}

// releaseInput deletes a reservation whose effect failed, so a retry can take it.
func releaseInput(table, key string) *dynamodb.DeleteItemInput {
	return &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: keyOf(key)}
}

func getInput(table string, key Item) *dynamodb.GetItemInput {
	return &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)}
}

// record is a stored idempotency record.
type record struct {
	estado    string
	huella    string
	until     time.Time
	resultado ledger.Estado
	motivo    string
}

func decodeRecord(item Item) (record, error) {
	s := func(attr string) string {
		v, _ := item[attr].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	r := record{estado: s(attrEstado), huella: s(attrHuella), resultado: ledger.Estado(s(attrResult)), motivo: s(attrMotivo)}
	if r.estado != enCurso && r.estado != hecho {
		return record{}, fmt.Errorf("idempotencia: record %s has estado %q", s(attrPK), r.estado)
	}
	if v, ok := item[attrHasta].(*types.AttributeValueMemberN); ok {
		ms, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			return record{}, fmt.Errorf("idempotencia: record %s: %s %q: %w", s(attrPK), attrHasta, v.Value, err)
		}
		r.until = time.UnixMilli(ms)
	}
	return r, nil
}

// account is what a refused effect says of the account: nil item means no account.
type account struct {
	exists      bool
	moneda      string
	saldo       decimal.Decimal
	limite      decimal.Decimal
	movimientos int64
}

func decodeAccount(item Item) (account, error) {
	if item == nil {
		return account{}, nil
	}
	a := account{exists: true}
	if v, ok := item["moneda"].(*types.AttributeValueMemberS); ok {
		a.moneda = v.Value
	}
	if v, ok := item["movimientos"].(*types.AttributeValueMemberN); ok {
		n, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			return account{}, fmt.Errorf("idempotencia: account attribute movimientos %q: %w", v.Value, err)
		}
		a.movimientos = n
	}
	for attr, dst := range map[string]*decimal.Decimal{"saldo": &a.saldo, "limite": &a.limite} {
		v, ok := item[attr].(*types.AttributeValueMemberN)
		if !ok {
			continue
		}
		d, err := decimal.NewFromString(v.Value)
		if err != nil {
			return account{}, fmt.Errorf("idempotencia: account attribute %s %q: %w", attr, v.Value, err)
		}
		*dst = d
	}
	return a, nil
}
