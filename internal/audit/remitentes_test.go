package audit_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// The audit counts the records by who sent them, as the transports stated it: a
// transfer's two legs are two records of its sender.
func TestTheAuditCountsTheRecordsBySender(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := testenv.Ledger(t, env, cuenta.Retry, nil)
	const orders, topic = "AROAORDERS:svc", "sns:arn:aws:sns:eu-west-1:111122223333:movimientos"
	for _, e := range []store.Entrega{
		{Mov: testenv.Mov(t, "a", "A", movimiento.Abono, "10.00"), Remitente: orders},
		{Mov: testenv.Traspaso(t, "t", "A", "B", "4.00"), Remitente: orders},
		{Mov: testenv.Mov(t, "b", "B", movimiento.Abono, "1.00"), Remitente: "AIDASNS", Via: topic},
		{Mov: testenv.Mov(t, "c", "B", movimiento.Abono, "1.00")},
	} {
		if _, err := testenv.One(svc.Apply(context.Background(), []store.Entrega{e})); err != nil {
			t.Fatal(err)
		}
	}
	report, err := audit.Run(context.Background(), env.Client, env.Table(), audit.Options{})
	if err != nil || !report.OK {
		t.Fatalf("audit = %+v, %v", report, err)
	}
	want := []audit.Remitente{{Remitente: orders, Registros: 3}, {Remitente: "", Registros: 1}, {Remitente: "AIDASNS", Via: topic, Registros: 1}}
	if !reflect.DeepEqual(report.Remitentes, want) {
		t.Errorf("remitentes = %+v, want %+v", report.Remitentes, want)
	}
}
