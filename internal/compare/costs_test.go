package compare

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/migrations"
)

// costRig applies movements one at a time through a ledger whose DynamoDB client goes
// through the comparison's meter, and tells what each one cost.
type costRig struct {
	svc   *store.Ledger
	meter *meter
	calls *sim.Transport
	now   time.Time
}

// newCostRig opens the test backend's store (the embedded one, or moto's when
// LEDGER_TEST_DYNAMODB_ENDPOINT is set) and a ledger on it through a meter that sizes
// every write by DynamoDB's rules.
func newCostRig(t *testing.T) *costRig {
	t.Helper()
	s, err := openStore(context.Background(), os.Getenv(testenv.DynamoDBEndpointEnv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	r := &costRig{now: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)}
	r.meter = newMeter(s, false)
	r.calls = sim.NewTransport(r.meter)
	r.svc, err = store.New(s.client(r.calls), store.Config{Table: s.tables[migrations.Ledger], Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// cost applies d, which must apply, and returns the calls and write units it took.
func (r *costRig) cost(t *testing.T, d movimiento.Datos) (calls int, wcu float64) {
	t.Helper()
	if d.Concepto == "" {
		d.Concepto = "Pedido 1234"
	}
	m := testenv.Movement(t, d)
	calls0, wcu0 := r.calls.TotalCalls(), r.meter.usage().wcu
	if res, err := testenv.One(r.svc.Apply(context.Background(), []store.Entrega{{Mov: m, Origen: "msg-" + d.ID}})); err != nil || res.Outcome != store.Applied {
		t.Fatalf("%s %s: %+v, %v", d.Tipo, d.ID, res, err)
	}
	return r.calls.TotalCalls() - calls0, r.meter.usage().wcu - wcu0
}

// iban is the i-th account, named as long as a Spanish IBAN (24 characters).
func iban(i int) string { return fmt.Sprintf("ES76207700240031%08d", i) }

// partes are n parts of 1.00 to accounts from+1 to from+n.
func partes(from, n int) []movimiento.ParteDatos {
	out := make([]movimiento.ParteDatos, n)
	for i := range out {
		out[i] = movimiento.ParteDatos{Cuenta: iban(from + i + 1), Importe: "1.00"}
	}
	return out
}

// TestCostPerMovement measures what each kind of movement costs on warm accounts, one
// delivery per transaction: the calls that reached DynamoDB, and the write units the
// comparison's meter computes from each request's items by DynamoDB's sizing rules. It
// holds the cost table of docs/design.md and of docs/movements.md to those figures.
func TestCostPerMovement(t *testing.T) {
	r := newCostRig(t)
	payer, eur := iban(0), "EUR"
	for i := range movimiento.MaxPartes + 1 { // every account warm: in the ledger's cache
		r.cost(t, movimiento.Datos{ID: "nomina", Cuenta: iban(i), Tipo: movimiento.Abono, Importe: "1000.00", Moneda: eur})
	}
	expira := r.now.Add(24 * time.Hour).Format(time.RFC3339)
	for _, c := range []struct {
		name  string
		d     movimiento.Datos
		calls int
		wcu   float64
	}{
		{"abono", movimiento.Datos{ID: "a1", Cuenta: payer, Tipo: movimiento.Abono, Importe: "50.00", Moneda: eur}, 1, 6},
		{"cargo", movimiento.Datos{ID: "c1", Cuenta: payer, Tipo: movimiento.Cargo, Importe: "60.00", Moneda: eur}, 1, 6},
		{"traspaso", movimiento.Datos{ID: "t1", Cuenta: payer, Destino: iban(1), Tipo: movimiento.Traspaso, Importe: "70.00", Moneda: eur}, 1, 12},
		{"reparto of 3", movimiento.Datos{ID: "r3", Cuenta: payer, Tipo: movimiento.Reparto, Importe: "3.00", Moneda: eur, Partes: partes(0, 3)}, 1, 24},
		{"reparto of 48", movimiento.Datos{ID: "r48", Cuenta: payer, Tipo: movimiento.Reparto, Importe: "48.00", Moneda: eur, Partes: partes(0, movimiento.MaxPartes)}, 1, 302},
		{"reparto of 48 to new accounts", movimiento.Datos{ID: "r48-new", Cuenta: payer, Tipo: movimiento.Reparto, Importe: "48.00", Moneda: eur,
			Partes: partes(100, movimiento.MaxPartes)}, 1 + movimiento.MaxPartes, 302},
		{"anulacion, whole", movimiento.Datos{ID: "dev-a1", Cuenta: payer, Tipo: movimiento.Anulacion, Anula: "a1"}, 2, 9},
		{"anulacion, a refund of part", movimiento.Datos{ID: "dev-c1-1", Cuenta: payer, Tipo: movimiento.Anulacion, Anula: "c1", Importe: "10.00"}, 2, 9},
		{"anulacion, a refund of what is left", movimiento.Datos{ID: "dev-c1-2", Cuenta: payer, Tipo: movimiento.Anulacion, Anula: "c1"}, 2, 9},
		{"anulacion of a traspaso", movimiento.Datos{ID: "dev-t1", Cuenta: payer, Tipo: movimiento.Anulacion, Anula: "t1"}, 2, 15},
		{"anulacion of a reparto of 3", movimiento.Datos{ID: "dev-r3", Cuenta: payer, Tipo: movimiento.Anulacion, Anula: "r3"}, 2, 27},
		{"anulacion of a reparto of 48", movimiento.Datos{ID: "dev-r48", Cuenta: payer, Tipo: movimiento.Anulacion, Anula: "r48"}, 2, 311},
		{"retencion", movimiento.Datos{ID: "h1", Cuenta: payer, Tipo: movimiento.Retencion, Importe: "80.00", Moneda: eur, Expira: expira}, 1, 4},
		{"captura", movimiento.Datos{ID: "cap-h1", Cuenta: payer, Tipo: movimiento.Captura, Retencion: "h1", Importe: "64.90"}, 2, 8},
		{"retencion to release", movimiento.Datos{ID: "h2", Cuenta: payer, Tipo: movimiento.Retencion, Importe: "120.00", Moneda: eur, Expira: expira}, 1, 4},
		{"liberacion", movimiento.Datos{ID: "lib-h2", Cuenta: payer, Tipo: movimiento.Liberacion, Retencion: "h2"}, 2, 6},
	} {
		calls, wcu := r.cost(t, c.d)
		t.Logf("%-36s %d calls, %4.0f WCU", c.name, calls, wcu)
		if calls != c.calls || wcu != c.wcu {
			t.Errorf("%s: %d calls and %v WCU, want %d and %v", c.name, calls, wcu, c.calls, c.wcu)
		}
	}
}
