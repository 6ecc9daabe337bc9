package store

import (
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Every record a transaction creates carries its account's version once the
// transaction commits, so that the events announcing records order with those
// announcing the account: one more than the version read when the transaction writes
// the account, the version read when it only checks it (a rejection alone), and each
// transfer leg its own account's.
func TestRecordsCarryTheirAccountsVersion(t *testing.T) {
	at := func(id string, version int64) stored {
		return storedAt(cuenta.Cuenta{ID: id, Moneda: "EUR", Saldo: decimal.RequireFromString("30"), Movimientos: 4, Creada: t0, Actualizada: t0}, version)
	}
	transfer := must(movimiento.New(movimiento.Datos{ID: "tr", Cuenta: "ES76", Destino: "ES91", Tipo: movimiento.Traspaso, Importe: "5.00", Moneda: "EUR"}))
	cases := []struct {
		name     string
		state    []stored
		policy   cuenta.FundsPolicy
		movs     []movimiento.Movimiento
		versions []int64
	}{
		{name: "the first movement opens the account at 1", policy: cuenta.Retry,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Abono, "10.00")}, versions: []int64{1}},
		{name: "coalesced movements share the new version", state: []stored{at("ES76", 6)}, policy: cuenta.Retry,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "3.00"), testMov(t, "b", movimiento.Abono, "5.00")}, versions: []int64{7, 7}},
		{name: "a rejection alone leaves the version as read", state: []stored{at("ES76", 6)}, policy: cuenta.Reject,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "30.01")}, versions: []int64{6}},
		{name: "a rejection beside a write takes the new version", state: []stored{at("ES76", 6)}, policy: cuenta.Reject,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "31.00"), testMov(t, "b", movimiento.Abono, "1.00")}, versions: []int64{7, 7}},
		{name: "each transfer leg carries its own account's", state: []stored{at("ES76", 2), at("ES91", 9)}, policy: cuenta.Retry,
			movs: []movimiento.Movimiento{transfer}, versions: []int64{3, 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := plannedRequest(t, tc.state, tc.policy, tc.movs...)
			if !slices.Equal(r.versions, tc.versions) {
				t.Errorf("record versions = %v, want %v (request %s)", r.versions, tc.versions, r.shape)
			}
		})
	}
}
