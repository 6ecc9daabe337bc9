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
// request (with its ClientRequestToken), one movement per transaction. Its budget is
// 20 µs per movement. "warm" is a consumer that wrote the account last (its decoded
// state is remembered); "cold" decodes the account item first.
func BenchmarkCPUPath(b *testing.B) {
	body := []byte(`{"id": "pago-8f2c", "cuenta": "ES7620770024003102575766", "tipo": "cargo",
 "importe": "50.00", "moneda": "EUR", "concepto": "Pedido 1234", "fecha": "2026-12-02T10:15:00Z"}`)
	acct := cuenta.Cuenta{ID: "ES7620770024003102575766", Moneda: "EUR", Saldo: decimal.RequireFromString("1000"), Movimientos: 41, Version: 41, Creada: t0, Actualizada: t0}
	item, err := encodeCuenta(acct, nil)
	if err != nil {
		b.Fatal(err)
	}
	item["version"] = &types.AttributeValueMemberN{Value: "41"}
	st := versioned.State{Items: []versioned.Item{item}, Versions: []int64{41}}
	table := Table("ledger")
	for _, warm := range []bool{true, false} {
		name := map[bool]string{true: "warm", false: "cold"}[warm]
		known := func(string) (cuenta.Cuenta, bool) { return acct, warm }
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				m, err := movimiento.Parse(body)
				if err != nil {
					b.Fatal(err)
				}
				es := []ledger.Entrega{{Mov: m, Origen: "msg-1"}}
				chunk, cuentas := nextChunk(es, []int{0})
				p := planner{entregas: es, chunk: chunk, cuentas: cuentas, policy: ledger.Retry, now: t0, known: known}
				txn, err := p.plan(st)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := versioned.BuildInput(table, []versioned.Item{cuentaKey(m.Cuenta)}, st.Versions, txn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
