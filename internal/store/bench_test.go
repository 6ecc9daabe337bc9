package store

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// BenchmarkCPUPath measures the per-movement work that is not I/O: parse and validate
// the body, fingerprint it, plan the account's change and build the TransactWriteItems
// request (with its ClientRequestToken). Its budget is 20 µs per movement.
func BenchmarkCPUPath(b *testing.B) {
	body := []byte(`{"id": "pago-8f2c", "cuenta": "ES7620770024003102575766", "tipo": "cargo",
 "importe": "50.00", "moneda": "EUR", "concepto": "Pedido 1234", "fecha": "2026-12-02T10:15:00Z"}`)
	acct, err := encodeCuenta(cuenta.Cuenta{ID: "ES7620770024003102575766", Moneda: "EUR", Saldo: decimal.RequireFromString("1000"), Movimientos: 41, Creada: t0, Actualizada: t0}, nil)
	if err != nil {
		b.Fatal(err)
	}
	acct["version"] = &types.AttributeValueMemberN{Value: "41"}
	st := versioned.State{Items: []versioned.Item{acct}, Versions: []int64{41}}
	table := Table("ledger")
	for b.Loop() {
		m, err := movimiento.Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		es := []ledger.Entrega{{Mov: m, Origen: "msg-1"}}
		chunk, cuentas := nextChunk(es, []int{0})
		p := planner{entregas: es, chunk: chunk, cuentas: cuentas, policy: ledger.Retry, now: t0}
		txn, err := p.plan(st)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := versioned.BuildInput(table, []versioned.Item{cuentaKey(m.Cuenta)}, st.Versions, txn); err != nil {
			b.Fatal(err)
		}
	}
}
