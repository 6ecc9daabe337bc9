package audit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/testenv"
)

func TestAuditChecksTheReversalLinks(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := testenv.Ledger(t, env, cuenta.Retry, nil)
	ctx := context.Background()
	testenv.Apply(t, svc, testenv.Mov(t, "a", "K", movimiento.Abono, "10.00"))
	testenv.Apply(t, svc, testenv.Anulacion(t, "an-a", "K", "a", "", ""))
	if report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{}); err != nil || !report.OK {
		t.Fatalf("healthy reversal: %+v, %v", report, err)
	}
	_, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(env.Table()),
		Key:              item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#K"}, "sk": &types.AttributeValueMemberS{Value: "MOV#a"}},
		UpdateExpression: aws.String("SET anulado_por = :otro, anulaciones = :otros"), ExpressionAttributeValues: item{":otro": &types.AttributeValueMemberS{Value: "otro"},
			":otros": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "otro"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{})
	if err != nil || report.OK || !strings.Contains(report.Broken[0].Reason, "reversal an-a undoes a, which does not name it") ||
		!strings.Contains(report.Broken[0].Reason, "marked reversed by otro, which is no applied reversal") {
		t.Fatalf("a reversed movement that names another reversal: %+v, %v", report, err)
	}
}

// A reversal that does not undo its original (another amount, the same direction) is
// broken even with the balance and the statement made to agree with it.
func TestAuditChecksWhatAReversalUndoes(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	for name, tc := range map[string]struct {
		tipo, importe, saldo, says string
	}{
		"a second cargo":  {"cargo", "10", "80", "reversal an-p moves"},                                     // 100 − 10 − 10
		"another importe": {"abono", "1000", "1090", "p says 10 was refunded, but its refunds sum to 1000"}, // 100 − 10 + 1000
	} {
		t.Run(name, func(t *testing.T) {
			env := testenv.NewDynamoDB(t)
			svc := testenv.Ledger(t, env, cuenta.Retry, nil)
			testenv.Apply(t, svc, testenv.Mov(t, "a", "K", movimiento.Abono, "100.00"))
			testenv.Apply(t, svc, testenv.Mov(t, "p", "K", movimiento.Cargo, "10.00"))
			testenv.Apply(t, svc, testenv.Anulacion(t, "an-p", "K", "p", "", ""))
			if report := audited(t, env); !report.OK {
				t.Fatalf("healthy reversal: %+v", report)
			}
			rev := env.Get(t, "CUENTA#K", "MOV#an-p")
			rev["tipo"], rev["importe"], rev["saldo_tras"] = s(tc.tipo), n(tc.importe), n(tc.saldo)
			env.Put(t, rev)
			k := env.Get(t, "CUENTA#K", "CUENTA")
			k["saldo"] = n(tc.saldo)
			env.Put(t, k)
			report := audited(t, env)
			if report.OK || len(report.Broken) != 1 || !strings.Contains(report.Broken[0].Reason, tc.says) {
				t.Errorf("audit = %+v, want K broken: the reversal does not undo p", report)
			}
		})
	}
}
