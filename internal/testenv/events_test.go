package testenv

import "testing"

// The schema is no formality: it takes the events the contract describes and refuses
// each way of breaking it.
func TestEventSchemaHoldsTheContract(t *testing.T) {
	s := LoadEventSchema(t)
	const aplicado = `{"event_id":"0123456789abcdef0123456789abcdef","cuenta":"ES76","estado":"aplicado","version":3,"aplicado":"2026-12-02T10:15:00Z","moneda":"EUR","id":"pago-1","tipo":"cargo","importe":"50.00","seq":2,"saldo_tras":"-10.00"}`
	const administrada = `{"event_id":"0123456789abcdef0123456789abcdef","cuenta":"ES76","estado":"administrada","version":4,"aplicado":"2026-12-02T10:15:00Z","moneda":"EUR","limite":"500.00","bloqueada":false}`
	const retenida = `{"event_id":"0123456789abcdef0123456789abcdef","cuenta":"ES76","estado":"retenida","version":5,"aplicado":"2026-12-02T10:15:00Z","moneda":"EUR","id":"aut-1","tipo":"retencion","importe":"80.00","expira":"2026-12-09T10:15:00Z"}`
	for _, ok := range []struct{ detailType, detail string }{{"movimiento", aplicado}, {"cuenta", administrada}, {"retencion", retenida}} {
		if err := s.Validate(ok.detailType, []byte(ok.detail)); err != nil {
			t.Errorf("%s refused: %v", ok.detail, err)
		}
	}
	for name, bad := range map[string]struct{ detailType, detail string }{
		"aplicado without seq":      {"movimiento", `{"event_id":"0123456789abcdef0123456789abcdef","cuenta":"ES76","estado":"aplicado","version":3,"aplicado":"2026-12-02T10:15:00Z","moneda":"EUR","id":"pago-1","tipo":"cargo","importe":"50.00","saldo_tras":"-10.00"}`},
		"another detail-type":       {"retencion", aplicado},
		"an amount as a number":     {"movimiento", `{"event_id":"0123456789abcdef0123456789abcdef","cuenta":"ES76","estado":"aplicado","version":3,"aplicado":"2026-12-02T10:15:00Z","moneda":"EUR","id":"pago-1","tipo":"cargo","importe":50,"seq":2,"saldo_tras":"-10.00"}`},
		"a time that is none":       {"cuenta", `{"event_id":"0123456789abcdef0123456789abcdef","cuenta":"ES76","estado":"administrada","version":4,"aplicado":"ayer","moneda":"EUR","limite":"500.00","bloqueada":false}`},
		"an administration with id": {"cuenta", `{"event_id":"0123456789abcdef0123456789abcdef","cuenta":"ES76","estado":"administrada","version":4,"aplicado":"2026-12-02T10:15:00Z","moneda":"EUR","limite":"500.00","bloqueada":false,"id":"x"}`},
		"a hold without expira":     {"retencion", `{"event_id":"0123456789abcdef0123456789abcdef","cuenta":"ES76","estado":"retenida","version":5,"aplicado":"2026-12-02T10:15:00Z","moneda":"EUR","id":"aut-1","tipo":"retencion","importe":"80.00"}`},
		"an unknown field":          {"cuenta", `{"event_id":"0123456789abcdef0123456789abcdef","cuenta":"ES76","estado":"administrada","version":4,"aplicado":"2026-12-02T10:15:00Z","moneda":"EUR","limite":"500.00","bloqueada":false,"saldo":"1"}`},
	} {
		if err := s.Validate(bad.detailType, []byte(bad.detail)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
