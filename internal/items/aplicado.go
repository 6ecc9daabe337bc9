package items

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/versioned"
)

// The sparse index por_aplicado (pk, aplicado_seq) holds each posted movement once, in
// the order of its aplicado and then its seq (migrations/0002_por_aplicado.json): the
// last movement posted by an instant is one Query away, whatever the account's size.
// It projects the keys only, seq included in its own key; what else a reader needs is
// read from the movement itself, strongly consistently.
const (
	IndexPorAplicado = "por_aplicado"
	AttrAplicadoSeq  = "aplicado_seq"
)

// aplicadoLayout writes an instant in UTC with nine fractional digits, always the same
// width, so that text order is time order (years 0000 to 9999). seqDigits is the width
// of an int64 seq, zero-padded for the same reason.
const (
	aplicadoLayout = "2006-01-02T15:04:05.000000000Z"
	seqDigits      = 19
)

// AplicadoSeq is a posted movement's key in por_aplicado: its aplicado in aplicadoLayout,
// '#', its seq in seqDigits digits. Within one instant, seq orders the movements.
func AplicadoSeq(aplicado time.Time, seq int64) string {
	return aplicado.UTC().Format(aplicadoLayout) + "#" + fmt.Sprintf("%0*d", seqDigits, seq)
}

// UltimoHastaInput queries por_aplicado for the last movement of account cuentaID
// posted at or before t: one item, newest first, keys only. It is eventually
// consistent, as every query of a global secondary index is.
func UltimoHastaInput(table, cuentaID string, t time.Time) *dynamodb.QueryInput {
	in := PartitionQuery(table, cuentaID)
	in.IndexName, in.ScanIndexForward, in.Limit = aws.String(IndexPorAplicado), aws.Bool(false), aws.Int32(1)
	in.KeyConditionExpression = aws.String("#pk = :pk AND #k <= :k")
	in.ExpressionAttributeNames["#k"] = AttrAplicadoSeq
	// The greatest key of instant t: every seq of t sorts before it.
	in.ExpressionAttributeValues[":k"] = &types.AttributeValueMemberS{Value: t.UTC().Format(aplicadoLayout) + "#" + strings.Repeat("9", seqDigits)}
	return in
}

// SeqOfAplicado reads the seq from an item of por_aplicado; ok is false when the item
// holds no key of AplicadoSeq's form.
func SeqOfAplicado(item map[string]types.AttributeValue) (seq int64, ok bool) {
	s, isString := item[AttrAplicadoSeq].(*types.AttributeValueMemberS)
	if !isString {
		return 0, false
	}
	_, digits, found := strings.Cut(s.Value, "#")
	n, err := strconv.ParseInt(digits, 10, 64)
	if !found || err != nil || len(digits) != seqDigits || n < 1 {
		return 0, false
	}
	return n, true
}

// UnkeyedScan is one page of a scan for the posted movements without aplicado_seq, those
// posted before por_aplicado existed, with what AplicadoSeqUpdate reads of them.
// start continues a scan (nil: from the start).
func UnkeyedScan(table string, start versioned.Item) *dynamodb.ScanInput {
	return &dynamodb.ScanInput{
		TableName:                aws.String(table),
		FilterExpression:         aws.String("attribute_exists(#seq) AND attribute_not_exists(#k)"),
		ProjectionExpression:     aws.String("#pk, #sk, #seq, #aplicado"),
		ExpressionAttributeNames: map[string]string{"#pk": AttrPK, "#sk": AttrSK, "#seq": AttrSeq, "#k": AttrAplicadoSeq, "#aplicado": attrAplicado},
		ExclusiveStartKey:        start,
	}
}

// AplicadoSeqUpdate gives item, a posted movement as UnkeyedScan reads it, its
// aplicado_seq, unless it has one by then; ok is false when its aplicado or seq cannot
// be read, so no key can be made for it.
func AplicadoSeqUpdate(table string, item versioned.Item) (in *dynamodb.UpdateItemInput, ok bool) {
	var it struct {
		Seq      int64     `dynamodbav:"seq"`
		Aplicado time.Time `dynamodbav:"aplicado"`
	}
	if _, text := item[attrAplicado].(*types.AttributeValueMemberS); !text { // a number would read as Unix time
		return nil, false
	}
	if attributevalue.UnmarshalMap(item, &it) != nil || it.Seq < 1 || it.Aplicado.IsZero() || item[AttrPK] == nil || item[AttrSK] == nil {
		return nil, false
	}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(table),
		Key:                       keyTable.KeyOf(item),
		UpdateExpression:          aws.String("SET #k = :k"),
		ConditionExpression:       aws.String("attribute_exists(#seq) AND attribute_not_exists(#k)"),
		ExpressionAttributeNames:  map[string]string{"#k": AttrAplicadoSeq, "#seq": AttrSeq},
		ExpressionAttributeValues: versioned.Item{":k": &types.AttributeValueMemberS{Value: AplicadoSeq(it.Aplicado, it.Seq)}},
	}, true
}
