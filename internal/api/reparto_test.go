package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// A reparto's record lists its parts and each leg names its payer; a refunded movement
// shows what was refunded and by which refunds: every answer within the contract.
func TestRepartosAndRefundsShowInTheAPI(t *testing.T) {
	f := newFixture(t)
	f.apply(t, testenv.Mov(t, "a", "COMPRADOR", movimiento.Abono, "200.00"),
		testenv.Reparto(t, "pedido", "COMPRADOR", "100.00", "VENDEDOR:90.00", "PLATAFORMA:10.00"),
		testenv.Mov(t, "compra", "COMPRADOR", movimiento.Cargo, "40.00"))
	f.apply(t, testenv.Anulacion(t, "dev-1", "COMPRADOR", "compra", "15.00", ""))
	for path, want := range map[string][]string{
		"/cuentas/COMPRADOR/movimientos/pedido": {`"tipo":"cargo"`, `"partes":[{"cuenta":"VENDEDOR","importe":"90.00"},{"cuenta":"PLATAFORMA","importe":"10.00"}]`},
		"/cuentas/VENDEDOR/movimientos/pedido":  {`"tipo":"abono"`, `"importe":"90.00"`, `"contrapartida":"COMPRADOR"`},
		"/cuentas/COMPRADOR/movimientos/compra": {`"reembolsado":"15.00"`, `"anulaciones":["dev-1"]`},
		"/cuentas/COMPRADOR/movimientos/dev-1":  {`"tipo":"abono"`, `"importe":"15.00"`, `"anula":"compra"`},
	} {
		r := f.get(t, path)
		for _, w := range want {
			if r.status != http.StatusOK || !strings.Contains(string(r.body), w) {
				t.Errorf("GET %s = %d %s, want %s", path, r.status, r.body, w)
			}
		}
	}
}
