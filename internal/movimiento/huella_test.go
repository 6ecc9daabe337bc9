package movimiento

import (
	"strings"
	"testing"
)

// The fingerprints below were computed with the shell, not with this package:
// printf '<text>' | sha256sum, <text> given above each one.
const (
	// v2\nES7620770024003102575766\npago-8f2c\ncargo\n50\nEUR\n\n\n\n
	v2Example = "6e6c2389af92c751c183e48b7fec19669c80ca3c79abfcae1334da24a1349400"
	// v2\nacc-1\nx-1\nabono\n1000\nJPY\n\n\n\n
	v2JPY = "9d59f1d9dad30c4ae4a19a91736ad1670b9761dce8c0472fff1aec3e321605ee"
)

func TestHuellaGolden(t *testing.T) {
	tests := []struct {
		name string
		d    Datos
		want string
	}{
		{"example", datos(), v2Example},
		{"JPY", Datos{ID: "x-1", Cuenta: "acc-1", Tipo: Abono, Importe: "1000", Moneda: "JPY"}, v2JPY},
		// v2\nES76\naut-1\nretencion\n30\nEUR\n\n\n\n2026-12-09T23:00:00Z
		{"retencion, expira in UTC", Datos{ID: "aut-1", Cuenta: "ES76", Tipo: Retencion, Importe: "30.00", Moneda: "EUR", Expira: "2026-12-10T00:00:00+01:00"},
			"2702d09a844eea237c3677a3fc5507b545ce4c227f0d9927be1773fc40e97c5b"},
		// v2\nES76\ntr-91\ntraspaso\n25.5\nEUR\nES12\n\n\n
		{"traspaso", Datos{ID: "tr-91", Cuenta: "ES76", Tipo: Traspaso, Destino: "ES12", Importe: "25.50", Moneda: "EUR"},
			"8d4f650aa653245edf6eb474038028dac9f4cb4c232affcd8e15d60cfc2fb137"},
		// v2\nES76\ncap-1\ncaptura\n\n\n\n\naut-1\n
		{"captura without importe", Datos{ID: "cap-1", Cuenta: "ES76", Tipo: Captura, Retencion: "aut-1"},
			"2f338a330cfa09fd9addbbb6e3625eced94d0356ed511c60f72e8eee6973aded"},
	}
	for _, tt := range tests {
		if got := mustNew(t, tt.d).Huella(); got != tt.want {
			t.Errorf("%s: Huella = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestHuellaSameFact(t *testing.T) {
	base := mustNew(t, datos()).Huella()
	same := []func(*Datos){
		func(d *Datos) { d.Importe = "50" },
		func(d *Datos) { d.Importe = "50.0" },
		func(d *Datos) { d.Concepto = "otro concepto" },
		func(d *Datos) { d.Concepto = "" },
		func(d *Datos) { d.Fecha = "2027-01-01T00:00:00Z" },
		func(d *Datos) { d.Fecha = "" },
	}
	for i, edit := range same {
		d := datos()
		edit(&d)
		if got := mustNew(t, d).Huella(); got != base {
			t.Errorf("case %d (%+v): Huella %s differs from %s", i, d, got, base)
		}
	}
}

func TestHuellaDifferentFact(t *testing.T) {
	seen := map[string]string{mustNew(t, datos()).Huella(): "base"}
	different := map[string]func(*Datos){
		"cuenta":         func(d *Datos) { d.Cuenta = "ES7620770024003102575767" },
		"id":             func(d *Datos) { d.ID = "pago-8f2d" },
		"tipo":           func(d *Datos) { d.Tipo = Abono },
		"importe":        func(d *Datos) { d.Importe = "50.01" },
		"moneda":         func(d *Datos) { d.Moneda = "USD" },
		"id and cuenta":  func(d *Datos) { d.ID, d.Cuenta = d.Cuenta, d.ID },
		"importe scaled": func(d *Datos) { d.Importe = "5.00" },
		"traspaso":       func(d *Datos) { d.Tipo, d.Destino = Traspaso, "ES1" },
		"destino":        func(d *Datos) { d.Tipo, d.Destino = Traspaso, "ES2" },
		"anulacion":      func(d *Datos) { d.Tipo, d.Anula = Anulacion, "pago-1" },
		"anula":          func(d *Datos) { d.Tipo, d.Anula = Anulacion, "pago-2" },
		"anula, no importe": func(d *Datos) {
			d.Tipo, d.Anula, d.Importe, d.Moneda = Anulacion, "pago-2", "", ""
		},
		"captura":   func(d *Datos) { d.Tipo, d.Retencion = Captura, "aut-1" },
		"retencion": func(d *Datos) { d.Tipo, d.Retencion = Captura, "aut-2" },
		"expira":    func(d *Datos) { d.Tipo, d.Expira = Retencion, "2026-12-10T00:00:00Z" },
		"expira a second later": func(d *Datos) {
			d.Tipo, d.Expira = Retencion, "2026-12-10T00:00:01Z"
		},
		"expira a millisecond later": func(d *Datos) {
			d.Tipo, d.Expira = Retencion, "2026-12-10T00:00:01.001Z"
		},
	}
	for name, edit := range different {
		d := datos()
		edit(&d)
		h := mustNew(t, d).Huella()
		if prev, ok := seen[h]; ok {
			t.Errorf("changing %s gives the Huella of %s", name, prev)
		}
		seen[h] = name
		if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			t.Errorf("Huella %q is not 64 lowercase hex digits", h)
		}
	}
}
