package movimiento

import (
	"strings"
	"testing"
	"time"
)

// Bases for the tipos beyond abono and cargo, from docs/design.md's examples.
func traspaso() Datos {
	return Datos{ID: "tr-91", Cuenta: "ES76", Tipo: Traspaso, Destino: "ES12", Importe: "25.00", Moneda: "EUR", Concepto: "Alquiler"}
}

func anulacion() Datos {
	return Datos{ID: "an-7", Cuenta: "ES76", Tipo: Anulacion, Anula: "pago-8f2c", Concepto: "Devolución"}
}

func retencion() Datos {
	return Datos{ID: "aut-1", Cuenta: "ES76", Tipo: Retencion, Importe: "30.00", Moneda: "EUR", Expira: "2026-12-10T00:00:00Z"}
}

func captura() Datos {
	return Datos{ID: "cap-1", Cuenta: "ES76", Tipo: Captura, Retencion: "aut-1", Importe: "25.00"}
}

func liberacion() Datos {
	return Datos{ID: "lib-1", Cuenta: "ES76", Tipo: Liberacion, Retencion: "aut-1"}
}

func TestTiposAccepted(t *testing.T) {
	tests := []struct {
		name string
		d    Datos
		edit func(*Datos)
	}{
		{"traspaso", traspaso(), nil},
		{"anulacion without importe or moneda", anulacion(), nil},
		{"anulacion with importe and moneda", anulacion(), func(d *Datos) { d.Importe, d.Moneda = "50.00", "EUR" }},
		{"anulacion with moneda only", anulacion(), func(d *Datos) { d.Moneda = "EUR" }},
		// Without moneda the scale is the ledger's to check, against the account's currency.
		{"anulacion with importe only, any scale", anulacion(), func(d *Datos) { d.Importe = "50.12345" }},
		{"retencion", retencion(), nil},
		{"retencion with an offset and fraction in expira", retencion(), func(d *Datos) { d.Expira = "2026-12-10T01:00:00.5+01:00" }},
		// Past or far-off expiries need a clock: the ledger refuses them.
		{"retencion already expired", retencion(), func(d *Datos) { d.Expira = "2001-01-01T00:00:00Z" }},
		{"captura with importe, no moneda", captura(), nil},
		{"captura without importe", captura(), func(d *Datos) { d.Importe = "" }},
		{"captura with importe and moneda", captura(), func(d *Datos) { d.Moneda = "EUR" }},
		{"liberacion", liberacion(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.d
			if tt.edit != nil {
				tt.edit(&d)
			}
			m := mustNew(t, d)
			if !m.Delta().IsZero() {
				t.Errorf("Delta = %s, want 0: the ledger resolves %s", m.Delta(), m.Tipo)
			}
			again, err := New(datosOf(m))
			if err != nil || !sameMovement(m, again) || m.Huella() != again.Huella() {
				t.Errorf("New(datosOf(m)) = %+v, %v; want %+v", again, err, m)
			}
		})
	}
}

func TestTiposRejected(t *testing.T) {
	tests := []struct {
		name  string
		d     Datos
		edit  func(*Datos)
		field string
		rule  string // a substring of the rule
	}{
		{"traspaso without destino", traspaso(), func(d *Datos) { d.Destino = "" }, "destino", "is required for tipo traspaso"},
		{"traspaso to its own account", traspaso(), func(d *Datos) { d.Destino = d.Cuenta }, "destino", "must differ from cuenta"},
		{"traspaso to a bad account", traspaso(), func(d *Datos) { d.Destino = "CUENTA#x" }, "destino", "contains '#'"},
		{"traspaso to a 65-char account", traspaso(), func(d *Datos) { d.Destino = strings.Repeat("a", 65) }, "destino", "at most 64"},
		{"traspaso without importe", traspaso(), func(d *Datos) { d.Importe = "" }, "importe", "is required"},
		{"traspaso without moneda", traspaso(), func(d *Datos) { d.Moneda = "" }, "moneda", "is required"},
		{"traspaso bad concepto before missing destino", traspaso(), func(d *Datos) { d.Destino, d.Concepto = "", "a\x07" }, "concepto", "control character"},
		{"anulacion without anula", anulacion(), func(d *Datos) { d.Anula = "" }, "anula", "is required for tipo anulacion"},
		{"anulacion of itself", anulacion(), func(d *Datos) { d.Anula = d.ID }, "anula", "must differ from id"},
		{"anulacion of a bad id", anulacion(), func(d *Datos) { d.Anula = "MOV#x" }, "anula", "contains '#'"},
		{"anulacion with a bad scale", anulacion(), func(d *Datos) { d.Importe, d.Moneda = "1.234", "EUR" }, "importe", "EUR allows at most 2"},
		{"anulacion of importe 0", anulacion(), func(d *Datos) { d.Importe = "0" }, "importe", "greater than zero"},
		{"anulacion with a bad moneda", anulacion(), func(d *Datos) { d.Moneda = "XAU" }, "moneda", "ISO 4217"},
		{"retencion without expira", retencion(), func(d *Datos) { d.Expira = "" }, "expira", "is required for tipo retencion"},
		{"retencion with a bad expira", retencion(), func(d *Datos) { d.Expira = "mañana" }, "expira", "RFC 3339"},
		{"retencion with expira without zone", retencion(), func(d *Datos) { d.Expira = "2026-12-10T00:00:00" }, "expira", "RFC 3339"},
		{"retencion without importe", retencion(), func(d *Datos) { d.Importe = "" }, "importe", "is required"},
		{"retencion without moneda", retencion(), func(d *Datos) { d.Moneda = "" }, "moneda", "is required"},
		{"captura without retencion", captura(), func(d *Datos) { d.Retencion = "" }, "retencion", "is required for tipo captura"},
		{"captura of itself", captura(), func(d *Datos) { d.Retencion = d.ID }, "retencion", "must differ from id"},
		{"captura with importe -1", captura(), func(d *Datos) { d.Importe = "-1" }, "importe", "greater than zero"},
		{"liberacion with importe", liberacion(), func(d *Datos) { d.Importe = "30.00" }, "importe", "not allowed for tipo liberacion"},
		{"liberacion without retencion", liberacion(), func(d *Datos) { d.Retencion = "" }, "retencion", "is required for tipo liberacion"},
		{"cargo with destino", datos(), func(d *Datos) { d.Destino = "ES12" }, "destino", "not allowed for tipo cargo"},
		{"abono with anula", datos(), func(d *Datos) { d.Tipo, d.Anula = Abono, "x" }, "anula", "not allowed for tipo abono"},
		{"cargo with expira", datos(), func(d *Datos) { d.Expira = "2026-12-10T00:00:00Z" }, "expira", "not allowed for tipo cargo"},
		{"traspaso with retencion", traspaso(), func(d *Datos) { d.Retencion = "aut-1" }, "retencion", "not allowed for tipo traspaso"},
		{"captura with expira", captura(), func(d *Datos) { d.Expira = "2026-12-10T00:00:00Z" }, "expira", "not allowed for tipo captura"},
		{"anulacion with destino", anulacion(), func(d *Datos) { d.Destino = "ES12" }, "destino", "not allowed for tipo anulacion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.d
			tt.edit(&d)
			_, err := New(d)
			if fieldOf(err) != tt.field || !strings.Contains(err.Error(), tt.rule) {
				t.Errorf("got %v, want field %q and a rule with %q", err, tt.field, tt.rule)
			}
		})
	}
}

func TestParseTipos(t *testing.T) {
	m, err := Parse([]byte(`{"id":"aut-1","tipo":"retencion","cuenta":"ES76","importe":30.00,"moneda":"EUR","expira":"2026-12-10T01:00:00+01:00"}`))
	if err != nil || m.Tipo != Retencion || !m.Expira.Equal(time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)) || m.ImporteTexto() != "30.00" {
		t.Fatalf("retencion: %+v, %v", m, err)
	}
	m, err = Parse([]byte(sns(`{"id":"tr-91","tipo":"traspaso","cuenta":"ES76","destino":"ES12","importe":"25.00","moneda":"EUR"}`)))
	if err != nil || m.Destino != "ES12" || m.Anula != "" || m.Retencion != "" || !m.Expira.IsZero() {
		t.Fatalf("traspaso in SNS: %+v, %v", m, err)
	}
	m, err = Parse([]byte(`{"id":"cap-1","tipo":"captura","cuenta":"ES76","retencion":"aut-1","importe":null}`))
	if err != nil || m.Retencion != "aut-1" || !m.Importe.IsZero() || m.ImporteTexto() != "" || m.Moneda != "" {
		t.Fatalf("captura without importe: %+v, %v", m, err)
	}
	for body, field := range map[string]string{
		`{"id":"tr-91","tipo":"traspaso","cuenta":"ES76","destino":12,"importe":"25.00","moneda":"EUR"}`:     "destino",
		eventBridge(`{"id":"an-7","tipo":"anulacion","cuenta":"ES76","anula":"an-7"}`):                       "detail.anula",
		sns(`{"id":"lib-1","tipo":"liberacion","cuenta":"ES76","retencion":"aut-1","importe":"1"}`):          "Message.importe",
		`{"id":"aut-1","tipo":"retencion","cuenta":"ES76","importe":"1","moneda":"EUR","expira":1765324800}`: "expira",
	} {
		if _, err := Parse([]byte(body)); fieldOf(err) != field {
			t.Errorf("%s: got %v, want field %q", body, err, field)
		}
	}
}
