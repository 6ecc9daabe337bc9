package compare

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// movementKey names a movement in the effect counts.
func movementKey(cuenta, id string) string { return cuenta + "/" + id }

// The item layouts the effects are read from (internal/ledger and internal/idempotencia
// write them). The scenario test fails if they drift: every movement would count as
// lost.
const (
	ledgerAccountPrefix   = "CUENTA#"
	ledgerMovementPrefix  = "MOV#"
	baselineAccountPrefix = "SALDO#"
)

// transactionEffects reads a committed TransactWriteItems: each movement item written
// with estado "aplicado" is one movement's effect (it is written in the same
// transaction as the balance it moved). The token tells an SDK retry that DynamoDB
// answered from memory.
func transactionEffects(in any) ([]string, string) {
	p, ok := in.(*dynamodb.TransactWriteItemsInput)
	if !ok {
		return nil, ""
	}
	var movs []string
	for _, it := range p.TransactItems {
		if it.Put == nil {
			continue
		}
		pk, sk, estado := text(it.Put.Item["pk"]), text(it.Put.Item["sk"]), text(it.Put.Item["estado"])
		if strings.HasPrefix(pk, ledgerAccountPrefix) && strings.HasPrefix(sk, ledgerMovementPrefix) && estado == "aplicado" {
			movs = append(movs, movementKey(pk[len(ledgerAccountPrefix):], sk[len(ledgerMovementPrefix):]))
		}
	}
	return movs, aws.ToString(p.ClientRequestToken)
}

// baselineEffects reads a committed UpdateItem on a baseline account: the ADD of one
// movement's delta, which names the movement it applies (:mov). UpdateItem has no
// idempotency token: an SDK retry of it is a second write.
func baselineEffects(in any) ([]string, string) {
	p, ok := in.(*dynamodb.UpdateItemInput)
	if !ok {
		return nil, ""
	}
	pk := text(p.Key["pk"])
	if !strings.HasPrefix(pk, baselineAccountPrefix) {
		return nil, ""
	}
	return []string{movementKey(pk[len(baselineAccountPrefix):], text(p.ExpressionAttributeValues[":mov"]))}, ""
}

// text is v's string, or "" when v is not a string.
func text(v types.AttributeValue) string {
	var s string
	if attributevalue.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}
