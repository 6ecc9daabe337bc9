package ledger

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// BenchmarkCPUPath measures the per-movement work that is not I/O: parse and validate
// the body, fingerprint it, plan the account's change and build the TransactWriteItems
// request (with its ClientRequestToken).
func BenchmarkCPUPath(b *testing.B) {
	body := []byte(`{"id": "pago-8f2c", "cuenta": "ES7620770024003102575766", "tipo": "cargo",
 "importe": "50.00", "moneda": "EUR", "concepto": "Pedido 1234", "fecha": "2026-12-02T10:15:00Z"}`)
	acct := cuentaItem(cuenta.Cuenta{ID: "ES7620770024003102575766", Moneda: "EUR", Saldo: decimal.RequireFromString("1000"), Movimientos: 41, Creada: t0, Actualizada: t0}, nil, stamp(t0))
	acct["version"] = &types.AttributeValueMemberN{Value: "41"}
	st := versioned.State{Item: acct, Version: 41}
	table := Table("ledger")
	b.ReportAllocs()
	for b.Loop() {
		m, err := movimiento.Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		p := planner{cuenta: m.Cuenta, entregas: []Entrega{{Mov: m, Origen: "msg-1"}}, pending: []int{0}, policy: Retry, now: t0}
		txn, err := p.plan(st)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := versioned.BuildInput(table, cuentaKey(m.Cuenta), st.Version, txn); err != nil {
			b.Fatal(err)
		}
	}
}
