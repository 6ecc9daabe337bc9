package store

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// BenchmarkCPUPath measures the per-movement work that is not I/O: parse and validate
// the body, fingerprint it, plan the account's change and build the TransactWriteItems
// request (with its ClientRequestToken), one movement per transaction. Its budget is
// 20 µs per movement. "warm" is a consumer that wrote the account last (its decoded
// state is cached); "cold" decodes the account item first.
func BenchmarkCPUPath(b *testing.B) {
	body := []byte(`{"id": "pago-8f2c", "cuenta": "ES7620770024003102575766", "tipo": "cargo",
 "importe": "50.00", "moneda": "EUR", "concepto": "Pedido 1234", "fecha": "2026-12-02T10:15:00Z"}`)
	acct := storedAt(cuenta.Cuenta{ID: "ES7620770024003102575766", Moneda: "EUR", Saldo: decimal.RequireFromString("1000"), Movimientos: 41, Creada: t0, Actualizada: t0}, 41)
	table := items.Table("ledger")
	for _, warm := range []bool{true, false} {
		name := map[bool]string{true: "warm", false: "cold"}[warm]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				m, err := movimiento.Parse(body)
				if err != nil {
					b.Fatal(err)
				}
				st := acct
				if !warm { // a cold account is decoded from its item first
					if st, err = decoded(m.Cuenta, acct.item); err != nil {
						b.Fatal(err)
					}
				}
				es := []Entrega{{Mov: m, Origen: "msg-1"}}
				g := &group{es: es, now: t0}
				p, err := g.plan(g.nextChunk([]int{0}, len(es)), []stored{st}, cuenta.Retry)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := versioned.BuildInput(table, p.keys, p.versions, p.txn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
