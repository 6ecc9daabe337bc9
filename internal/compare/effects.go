package compare

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/ledger"
)

// The item layouts the effects are read from (internal/store and internal/idempotencia
// write them). The scenario test fails if they drift: every movement would count as
// lost.
const (
	ledgerAccountPrefix   = "CUENTA#"
	ledgerMovementPrefix  = "MOV#"
	baselineAccountPrefix = "SALDO#"
)

// effects names the movements whose effect a committed request carries (movementKey),
// and the request's idempotency token if it has one: a repeated token is DynamoDB
// answering an SDK retry from memory, not a second write. The transaction strategy's
// effects are the movement items a TransactWriteItems puts with estado "aplicado", in
// the transaction that moves their balance (a transfer's two legs, one per account,
// under its one id). The baseline's is an UpdateItem on one of its accounts, the ADD of
// one movement's delta naming the movement (:mov): a transfer's debit on cuenta and
// credit on destino are two calls. UpdateItem has no idempotency token, so an SDK retry
// of it is a second write. (The baseline undoes a debit whose credit the destination
// refused with a third ADD on cuenta, which would count as the debit landing twice; no
// scenario has a destination refuse a credit.)
func effects(in any) (movements []string, token string) {
	switch p := in.(type) {
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range p.TransactItems {
			if it.Put == nil {
				continue
			}
			cuenta, isAccount := strings.CutPrefix(text(it.Put.Item["pk"]), ledgerAccountPrefix)
			id, isMovement := strings.CutPrefix(text(it.Put.Item["sk"]), ledgerMovementPrefix)
			if isAccount && isMovement && text(it.Put.Item["estado"]) == string(ledger.Aplicado) {
				movements = append(movements, movementKey(cuenta, id))
			}
		}
		return movements, aws.ToString(p.ClientRequestToken)
	case *dynamodb.UpdateItemInput:
		if cuenta, ok := strings.CutPrefix(text(p.Key["pk"]), baselineAccountPrefix); ok {
			return []string{movementKey(cuenta, text(p.ExpressionAttributeValues[":mov"]))}, ""
		}
	}
	return nil, ""
}

func movementKey(cuenta, id string) string { return cuenta + "/" + id }

// text is v's string, or "" when v is not a string.
func text(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
