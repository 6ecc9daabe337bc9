package compare

import (
	"fmt"
	"math/rand/v2"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
)

// maxTransferCents bounds a generated transfer: 1.00 … 99.99.
const maxTransferCents = 9_999

// transfers is the workload of crash-between-legs: spec.Accounts accounts (at least two,
// at most half the movements), each funded by one abono, then traspasos between two of
// them for the rest of spec.Movements. Each account is funded with twice what all the
// transfers could take from it, so no debit bounces for funds even when the baseline
// applies every one twice: the run shows what the crashes do, and nothing that follows
// from a bounce.
func transfers(spec sim.Spec) (sim.Workload, error) {
	if spec.Movements < 3 {
		return sim.Workload{}, fmt.Errorf("transfers need at least 3 movements (two accounts funded, one transfer), got %d", spec.Movements)
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x74726173706173)) // "traspas"
	w := sim.Workload{Saldos: map[string]decimal.Decimal{}}
	cuentas := make([]string, max(2, min(spec.Accounts, spec.Movements/2)))
	n := spec.Movements - len(cuentas)
	fondo := decimal.New(int64(2*n*maxTransferCents), -2)
	add := func(d movimiento.Datos) error {
		d.ID, d.Moneda = fmt.Sprintf("mov-%d-%06d", spec.Seed, len(w.Movements)), "EUR"
		m, err := movimiento.New(d)
		if err != nil {
			return fmt.Errorf("generated an invalid movement: %w", err)
		}
		w.Movements = append(w.Movements, m)
		return nil
	}
	for i := range cuentas {
		cuentas[i] = fmt.Sprintf("TR%02d-%04d", spec.Seed%100, i)
		w.Saldos[cuentas[i]] = fondo
		if err := add(movimiento.Datos{Cuenta: cuentas[i], Tipo: movimiento.Abono, Importe: fondo.StringFixed(2), Concepto: "Fondos"}); err != nil {
			return sim.Workload{}, err
		}
	}
	for range n {
		from := rng.IntN(len(cuentas))
		to := (from + 1 + rng.IntN(len(cuentas)-1)) % len(cuentas)
		importe := decimal.New(100+rng.Int64N(maxTransferCents-99), -2)
		c, d := cuentas[from], cuentas[to]
		w.Saldos[c], w.Saldos[d] = w.Saldos[c].Sub(importe), w.Saldos[d].Add(importe)
		if err := add(movimiento.Datos{Cuenta: c, Destino: d, Tipo: movimiento.Traspaso, Importe: importe.StringFixed(2), Concepto: "Traspaso"}); err != nil {
			return sim.Workload{}, err
		}
	}
	return w, nil
}
