package movimiento

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// The fingerprints below were computed with the shell, not with this package:
// printf '<text>' | sha256sum, <text> given above each one.
const (
	// v1\nES7620770024003102575766\npago-8f2c\ncargo\n50.00\nEUR
	v1Example = "8e4573ba81a508d97f68450c39e563f00f13f69a81c194957434e960199df6e0"
	// v2\nES7620770024003102575766\npago-8f2c\ncargo\n50\nEUR\n\n\n\n
	v2Example = "6e6c2389af92c751c183e48b7fec19669c80ca3c79abfcae1334da24a1349400"
	// v1\nacc-1\nx-1\nabono\n1000\nJPY
	v1JPY = "45c05e7a9d03c60b8f5e41d3a280e515b76a93c9c8feaba31a479c12c4d437ba"
	// v2\nacc-1\nx-1\nabono\n1000\nJPY\n\n\n\n
	v2JPY = "9d59f1d9dad30c4ae4a19a91736ad1670b9761dce8c0472fff1aec3e321605ee"
	// v1\nES76\nold-1\nabono\n12.30\nHRK (HRK has since been withdrawn)
	v1HRK = "4e6cf850f2dba1ef704186c88e086e7611fb5cfb1204435ec6a832d6350b064a"
	// v1\nES7620770024003102575766\npago-8f2c\ncargo\n50.01\nEUR
	v1OtherAmount = "f3e1814905745054ad51c96fbff686801af02ffd5abc70e223ac0982a81d51cb"
	// v1\nES76\ntr-91\ntraspaso\n25.50\nEUR
	v1Traspaso = "2789681352d8b5184d3718b4c028abda9de57e49239379ae38bb1e999b0fcbab"
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

func TestMatchesHuella(t *testing.T) {
	example := mustNew(t, datos())
	d := datos()
	d.Importe = "50.01"
	otherAmount := mustNew(t, d)
	jpy := mustNew(t, Datos{ID: "x-1", Cuenta: "acc-1", Tipo: Abono, Importe: "1000", Moneda: "JPY"})
	// As the ledger reads a movement stored under a currency since withdrawn.
	hrk := Movimiento{ID: "old-1", Cuenta: "ES76", Tipo: Abono, Importe: decimal.RequireFromString("12.3"), Moneda: "HRK"}
	traspaso := mustNew(t, Datos{ID: "tr-91", Cuenta: "ES76", Tipo: Traspaso, Destino: "ES12", Importe: "25.50", Moneda: "EUR"})
	tests := []struct {
		name   string
		m      Movimiento
		stored string
		want   bool
	}{
		{"v2", example, v2Example, true},
		{"v1", example, v1Example, true},
		{"v1 of JPY", jpy, v1JPY, true},
		{"v1 of a withdrawn currency", hrk, v1HRK, true},
		{"v1 of another amount", example, v1OtherAmount, false},
		{"another amount against v1", otherAmount, v1Example, false},
		{"another amount against v2", otherAmount, v2Example, false},
		{"v1 of another movement", jpy, v1Example, false},
		{"v1 for a tipo v1 never had", traspaso, v1Traspaso, false},
		{"empty", example, "", false},
		{"upper-case hex", example, strings.ToUpper(v2Example), false},
	}
	for _, tt := range tests {
		if got := tt.m.MatchesHuella(tt.stored); got != tt.want {
			t.Errorf("%s: MatchesHuella = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestMatchesHuellaEveryPadding: a v1 fingerprint padded to any scale from 0 to
// 4 that keeps the amount's digits matches; one that loses them does not.
func TestMatchesHuellaEveryPadding(t *testing.T) {
	m := Movimiento{ID: "p", Cuenta: "c", Tipo: Cargo, Importe: decimal.RequireFromString("7.5"), Moneda: "EUR"}
	for text, want := range map[string]bool{"8": false, "7.5": true, "7.50": true, "7.500": true, "7.5000": true, "7.50000": false} {
		if got := m.MatchesHuella(hash("v1", "c", "p", "cargo", text, "EUR")); got != want {
			t.Errorf("v1 with importe %q: MatchesHuella = %v, want %v", text, got, want)
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
