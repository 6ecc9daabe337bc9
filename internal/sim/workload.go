// Package sim simulates production for the demo, `ledger send`, the comparison and the
// tests: seeded workloads and their at-least-once deliveries (a seed means the same
// money everywhere), an SQS queue, an embedded DynamoDB, and injected DynamoDB faults.
package sim

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Spec describes a workload. Accounts and Movements must be positive; Moneda is an ISO
// 4217 code with 2 minor units [EUR]. Prefix starts every account id, so that workloads
// can share a table without sharing accounts; it must be valid in a cuenta
// ([A-Za-z0-9._-]) and at most 55 characters.
//
// Transfers, Repartos, Reversals, Refunds and Holds are the shares of the movements
// (each 0 to 1, at most 1 together) drawn as transfers; repartos, a payer paying 2 to
// 5 other accounts (one time in ten up to movimiento.MaxPartes, as many as there are);
// reversals of earlier abonos, cargos, transfers and repartos, whole; refunds of
// abonos and cargos in parts (1 to 3 refunds of one movement, sometimes until nothing
// is left); and holds, which later movements capture (in full or in part) or release,
// or which lapse. The rest, and a kind that cannot be drawn (no funds, too few
// accounts, nothing to reverse), are abonos and cargos. All zero draws nothing for
// the other kinds, not even a random number: `ledger compare` replays such workloads
// by seed. Now is when the workload is applied, which holds expire by [Epoch].
type Spec struct {
	Accounts  int
	Movements int
	Seed      uint64
	Moneda    string
	Prefix    string
	Transfers float64
	Repartos  float64
	Reversals float64
	Refunds   float64
	Holds     float64
	Now       time.Time
}

// Workload is a generated set of movements, in generation order. They apply in any
// arrival order: debits (a reversal's debit legs on the accounts a transfer or reparto
// credited among them) only draw on what abonos brought in, a movement naming another
// (a reversal or refund, a capture or release) waits only for that one, and the
// refunds of one movement carry amounts that fit in any order.
//
// Movements are meant to apply exactly once each, leaving each account with its
// Saldos. Refused are refused by design when they arrive after all of Movements: a
// second reversal under another id, a transfer beyond any reachable balance, a capture
// of a lapsed hold, a second reversal of a reversed transfer or reparto, a refund of
// more than is left of a movement refunded in part.
//
// Holds left to lapse expire by Lapse (zero when there are none), which is their expira
// plus cuenta.ToleranciaReloj: a capture sent then is too late. The last Tail
// movements take no such hold, and the first of them writes an account with one: sent
// once the clock has passed Lapse, they show a lapsed hold dropped by the next write of
// its account; they apply before Lapse just as well.
type Workload struct {
	Movements []movimiento.Movimiento
	Refused   []movimiento.Movimiento
	Saldos    map[string]decimal.Decimal
	Lapse     time.Time
	Tail      int
}

// How long holds last: those left to lapse expire within a run's first day, the others
// long after their capture or release.
const (
	lapsingHold = 24 * time.Hour
	settledHold = 7 * 24 * time.Hour
)

var conceptos = []string{"Nómina", "Transferencia recibida", "Bizum", "Compra con tarjeta", "Recibo luz", "Alquiler", "Devolución", "Cajero", "Suscripción", "Pedido"}

// MaxMovements and MaxAccounts bound a workload, which is built in memory before any of
// it is delivered (about a kilobyte a movement, with its schedule).
const (
	MaxMovements = 1_000_000
	MaxAccounts  = 100_000
)

// Generate builds the workload for spec: 1–MaxAccounts accounts, 1–MaxMovements
// movements.
func Generate(spec Spec) (Workload, error) {
	if spec.Accounts < 1 || spec.Movements < 1 || spec.Accounts > MaxAccounts || spec.Movements > MaxMovements {
		return Workload{}, fmt.Errorf("sim: want 1–%d accounts and 1–%d movements, got %d and %d", MaxAccounts, MaxMovements, spec.Accounts, spec.Movements)
	}
	shares := []float64{spec.Transfers, spec.Repartos, spec.Reversals, spec.Refunds, spec.Holds}
	sum := 0.0
	for _, f := range shares {
		if !(f >= 0 && f <= 1) {
			return Workload{}, fmt.Errorf("sim: shares of transfers, repartos, reversals, refunds and holds must be within 0–1, got %v", f)
		}
		sum += f
	}
	if sum > 1 {
		return Workload{}, fmt.Errorf("sim: transfers, repartos, reversals, refunds and holds add up to more than all movements (%v)", sum)
	}
	if spec.Moneda == "" {
		spec.Moneda = "EUR"
	}
	if units, ok := movimiento.MinorUnits(spec.Moneda); !ok || units != 2 {
		return Workload{}, fmt.Errorf("sim: currency %q: want one with 2 minor units", spec.Moneda)
	}
	if spec.Now.IsZero() {
		spec.Now = Epoch
	}
	g := newGenerator(spec)
	for i := range spec.Movements {
		g.step(i)
	}
	g.refusals()
	if g.err != nil {
		return Workload{}, fmt.Errorf("sim: generated an invalid movement: %w", g.err)
	}
	return g.w, nil
}
