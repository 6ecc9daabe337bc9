// Package sim simulates production for the demo, `ledger send`, the comparison and the
// tests: seeded, reproducible movement workloads and the at-least-once deliveries that
// carry them (so a seed means the same money everywhere), an in-memory SQS standard
// queue, and DynamoDB faults injected into the real SDK's HTTP traffic.
//
// A generated workload applies whatever order its movements arrive in. Debits (cargos,
// transfers, reversals of abonos, holds) only ever draw on what abonos brought in: the
// money a transfer, a reversal of a cargo, a capture or release gives back is never
// drawn on again, and a hold keeps what it reserved for good. So once the abonos of an
// account are in, each of its debits has the funds whatever else came first, and a
// movement naming another (a reversal, a capture or release) waits only for that one.
// An account takes at most cuenta.MaxRetenciones holds. In generation order every
// movement applies as it comes.
package sim

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Spec describes a workload. Accounts and Movements must be positive; Moneda is an ISO
// 4217 code with 2 minor units (EUR by default). Prefix starts every account id, so
// that workloads can share a table without sharing accounts (the reliability tests
// give each case its own); it must itself be valid in a cuenta ([A-Za-z0-9._-]) and at
// most 55 characters, leaving room for the generated part.
//
// Transfers, Reversals and Holds are the shares of the movements (each 0 to 1, at most
// 1 together) drawn as transfers between the workload's accounts, reversals of earlier
// abonos and cargos, and holds, which later movements capture (in full or in part) or
// release, or which are left to lapse; the rest are abonos and cargos. A kind that
// cannot be drawn (no funds, nothing to reverse) gives way to an abono or cargo. All
// zero is a workload of abonos and cargos only, from which the other kinds take nothing,
// not even a random draw: `ledger compare` replays such workloads by seed. Now is when
// the workload is applied, which holds expire by [Epoch].
type Spec struct {
	Accounts  int
	Movements int
	Seed      uint64
	Moneda    string
	Prefix    string
	Transfers float64
	Reversals float64
	Holds     float64
	Now       time.Time
}

// Workload is a generated set of movements, in generation order.
//
// Movements are meant to apply exactly once each; Saldos is the balance each account
// must end with once they have: the sum of their posted effects (abonos, cargos, both
// legs of every transfer, reversals, captures). Refused are built to be refused by
// design whenever they arrive after all of Movements: a second reversal of a reversed
// movement under another id, a transfer beyond any balance its account can reach, a
// capture of a hold that lapsed.
//
// Holds left to lapse expire at Lapse (zero when there are none); the movements
// before the last Tail apply before it. The last Tail movements hold no hold left to
// lapse, and the first of them writes an account with one, so a run that sends them
// once its clock has passed Lapse shows a lapsed hold dropped by the next write of its
// account; they apply before Lapse just as well.
type Workload struct {
	Movements []movimiento.Movimiento
	Refused   []movimiento.Movimiento
	Saldos    map[string]decimal.Decimal
	Lapse     time.Time
	Tail      int
}

// How long holds last: those left to lapse expire within any run's first day, the
// others a week after Now, long after their capture or release.
const (
	lapsingHold = 24 * time.Hour
	settledHold = 7 * 24 * time.Hour
)

var conceptos = []string{"Nómina", "Transferencia recibida", "Bizum", "Compra con tarjeta", "Recibo luz", "Alquiler", "Devolución", "Cajero", "Suscripción", "Pedido"}

// Generate builds the workload for spec.
func Generate(spec Spec) (Workload, error) {
	if spec.Accounts < 1 || spec.Movements < 1 {
		return Workload{}, fmt.Errorf("sim: need at least one account and one movement, got %d and %d", spec.Accounts, spec.Movements)
	}
	for _, f := range []float64{spec.Transfers, spec.Reversals, spec.Holds} {
		if !(f >= 0 && f <= 1) {
			return Workload{}, fmt.Errorf("sim: shares of transfers, reversals and holds must be within 0–1, got %v", f)
		}
	}
	if spec.Transfers+spec.Reversals+spec.Holds > 1 {
		return Workload{}, fmt.Errorf("sim: transfers, reversals and holds add up to more than all movements (%v)", spec.Transfers+spec.Reversals+spec.Holds)
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
