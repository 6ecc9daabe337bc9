// Package sim simulates production for the demo, `ledger send`, the comparison and the
// tests: seeded, reproducible movement workloads and the at-least-once deliveries that
// carry them (so a seed means the same money everywhere), an in-memory SQS standard
// queue, and DynamoDB faults injected into the real SDK's HTTP traffic. Generated
// balances never go below zero in generation order, so every movement is applicable
// once the ones before it on its account have arrived, whatever order they arrive in.
package sim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Spec describes a workload. Accounts and Movements must be positive; Moneda is an ISO
// 4217 code with 2 minor units (EUR by default). Prefix starts every account id, so
// that workloads can share a table without sharing accounts (the reliability tests
// give each case its own); it must itself be valid in a cuenta ([A-Za-z0-9._-]) and at
// most 55 characters, leaving room for the generated part.
type Spec struct {
	Accounts  int
	Movements int
	Seed      uint64
	Moneda    string
	Prefix    string
}

// Workload is a generated set of movements, in generation order, with the balance
// each account must end with once all of them are applied.
type Workload struct {
	Movements []movimiento.Movimiento
	Saldos    map[string]decimal.Decimal
}

var conceptos = []string{"Nómina", "Transferencia recibida", "Bizum", "Compra con tarjeta", "Recibo luz", "Alquiler", "Devolución", "Cajero", "Suscripción", "Pedido"}

// Generate builds the workload for spec.
func Generate(spec Spec) (Workload, error) {
	if spec.Accounts < 1 || spec.Movements < 1 {
		return Workload{}, fmt.Errorf("sim: need at least one account and one movement, got %d and %d", spec.Accounts, spec.Movements)
	}
	moneda := spec.Moneda
	if moneda == "" {
		moneda = "EUR"
	}
	if units, ok := movimiento.MinorUnits(moneda); !ok || units != 2 {
		return Workload{}, fmt.Errorf("sim: currency %q: want one with 2 minor units", moneda)
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x6c6564676572)) // "ledger"
	w := Workload{Saldos: make(map[string]decimal.Decimal, spec.Accounts)}
	cuentas := make([]string, spec.Accounts)
	for i := range cuentas {
		cuentas[i] = fmt.Sprintf("%sES%02d-%04d", spec.Prefix, spec.Seed%100, i)
		w.Saldos[cuentas[i]] = decimal.Zero
	}
	for i := range spec.Movements {
		c := cuentas[rng.IntN(len(cuentas))]
		saldo := w.Saldos[c]
		tipo := movimiento.Abono
		cents := 100 + rng.Int64N(99_900) // 1.00 … 999.99
		if rng.IntN(10) < 4 && saldo.GreaterThan(decimal.New(100, -2)) {
			tipo = movimiento.Cargo
			cents = 1 + rng.Int64N(saldo.Shift(2).IntPart()) // never below zero
		}
		m, err := movimiento.New(movimiento.Datos{
			ID:       fmt.Sprintf("mov-%d-%06d", spec.Seed, i),
			Cuenta:   c,
			Tipo:     tipo,
			Importe:  decimal.New(cents, -2).StringFixed(2),
			Moneda:   moneda,
			Concepto: conceptos[rng.IntN(len(conceptos))],
		})
		if err != nil {
			return Workload{}, fmt.Errorf("sim: generated an invalid movement: %w", err)
		}
		w.Movements = append(w.Movements, m)
		w.Saldos[c] = saldo.Add(m.Delta())
	}
	return w, nil
}

// Body is m as a queue message body, in the wire format movimiento.Parse reads.
func Body(m movimiento.Movimiento) string {
	return mustJSON(wire(m, m.ImporteTexto()))
}

func wire(m movimiento.Movimiento, importe string) map[string]string {
	out := map[string]string{"id": m.ID, "cuenta": m.Cuenta, "tipo": string(m.Tipo), "importe": importe, "moneda": m.Moneda}
	if m.Concepto != "" {
		out["concepto"] = m.Concepto
	}
	if m.Fecha != "" {
		out["fecha"] = m.Fecha
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return string(b)
}
