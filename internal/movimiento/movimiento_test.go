package movimiento

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// datos is the movement of docs/design.md's example; tests change one field at a time.
func datos() Datos {
	return Datos{
		ID: "pago-8f2c", Cuenta: "ES7620770024003102575766", Tipo: Cargo,
		Importe: "50.00", Moneda: "EUR", Concepto: "Pedido 1234", Fecha: "2026-12-02T10:15:00Z",
	}
}

func mustNew(t *testing.T, d Datos) Movimiento {
	t.Helper()
	m, err := New(d)
	if err != nil {
		t.Fatalf("New(%+v): %v", d, err)
	}
	return m
}

func TestNewKeepsFields(t *testing.T) {
	m := mustNew(t, datos())
	if m.ID != "pago-8f2c" || m.Cuenta != "ES7620770024003102575766" || m.Tipo != Cargo ||
		m.Moneda != "EUR" || m.Concepto != "Pedido 1234" || m.Fecha != "2026-12-02T10:15:00Z" {
		t.Errorf("fields changed: %+v", m)
	}
	if !m.Importe.Equal(decimal.RequireFromString("50")) {
		t.Errorf("Importe = %s, want 50", m.Importe)
	}
}

func TestNewAcceptsLimits(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Datos)
	}{
		{"128-char id with every allowed symbol", func(d *Datos) { d.ID = "aZ09._:/@+=-" + strings.Repeat("x", 116) }},
		{"64-char cuenta", func(d *Datos) { d.Cuenta = "aZ09._-" + strings.Repeat("y", 57) }},
		{"abono", func(d *Datos) { d.Tipo = Abono }},
		{"20 significant digits", func(d *Datos) { d.Importe = "123456789012345678.90" }},
		{"leading zeros after the point do not count", func(d *Datos) { d.Importe = "0.01" }},
		{"trailing zeros of the integer part count but fit", func(d *Datos) { d.Importe = "10000000000000000000" }},
		{"JPY without decimals", func(d *Datos) { d.Importe, d.Moneda = "1000", "JPY" }},
		{"KWD with 3 decimals", func(d *Datos) { d.Importe, d.Moneda = "1.500", "KWD" }},
		{"CLF with 4 decimals", func(d *Datos) { d.Importe, d.Moneda = "0.0001", "CLF" }},
		{"256-rune concepto", func(d *Datos) { d.Concepto = strings.Repeat("ñ", 256) }},
		{"no concepto or fecha", func(d *Datos) { d.Concepto, d.Fecha = "", "" }},
		{"fecha with fraction and offset", func(d *Datos) { d.Fecha = "2026-12-02T10:15:00.123456+01:00" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := datos()
			tt.edit(&d)
			mustNew(t, d)
		})
	}
}

// fecha is RFC 3339's grammar (a "t" or "z" taken as upper case), kept as sent in upper
// case, which the API's date-time promises; any other spelling is refused.
func TestFechaIsKeptInRFC3339(t *testing.T) {
	for fecha, kept := range map[string]string{
		"2026-12-02T10:15:00Z":              "2026-12-02T10:15:00Z",
		"2026-12-02t10:15:00z":              "2026-12-02T10:15:00Z", // RFC 3339 allows lower case
		"2026-12-02T10:15:00.5-23:59":       "2026-12-02T10:15:00.5-23:59",
		"2026-12-02T10:15:00.123456789123Z": "2026-12-02T10:15:00.123456789123Z",
		"2026-12-02T10:15:00,50+01:00":      "", // ISO 8601's comma is not RFC 3339
		"2026-12-02T10:15:00+24:00":         "", // nor an offset of 24 hours
		"2026-12-02T1:15:00Z":               "", // nor a one-digit hour
		"2026-12-02T10:15:00+01":            "",
		"2026-12-02 10:15:00Z":              "",
		"2026-12-02T10:15:00.Z":             "",
		"2026-02-30T10:15:00Z":              "",
		"2016-12-31T23:59:60Z":              "", // a leap second: time.Time cannot hold it
		"2026-12-02T10:15:00Z\n":            "",
		"+2026-12-02T10:15:00Z":             "",
	} {
		d := datos()
		d.Fecha = fecha
		m, err := New(d)
		if (err == nil) != (kept != "") || (err != nil && fieldOf(err) != "fecha") {
			t.Errorf("fecha %q: %v, want accepted %v", fecha, err, kept != "")
		}
		if m.Fecha != kept {
			t.Errorf("fecha %q kept as %q, want %q", fecha, m.Fecha, kept)
		}
	}
}

// TestNewReportsFirstProblemInFieldOrder: with several problems, the earliest
// field in id, cuenta, tipo, importe, moneda, scale, concepto, fecha wins.
func TestNewReportsFirstProblemInFieldOrder(t *testing.T) {
	d := Datos{ID: "a#", Cuenta: "", Tipo: "x", Importe: "0", Moneda: "eur", Fecha: "ayer"}
	if _, err := New(d); fieldOf(err) != "id" {
		t.Fatalf("got %v, want the id's error", err)
	}

	d = datos()
	d.Importe, d.Moneda = "1.234", "eur"
	if _, err := New(d); fieldOf(err) != "moneda" {
		t.Errorf("bad scale and bad moneda: got %v, want moneda's error (scale needs a moneda)", err)
	}

	d = datos()
	d.Importe, d.Concepto = "1.234", "a\x00b"
	if _, err := New(d); fieldOf(err) != "importe" || !strings.Contains(err.Error(), "EUR") {
		t.Errorf("bad scale and bad concepto: got %v, want importe's scale error", err)
	}
}

func TestNewRejectsInvalidUTF8Concepto(t *testing.T) {
	d := datos()
	d.Concepto = "caf\xe9"
	if _, err := New(d); fieldOf(err) != "concepto" || !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v, want concepto's error", err)
	}
}

func TestNewRejectsInvalidUTF8ID(t *testing.T) {
	d := datos()
	d.ID = "pago\xff"
	_, err := New(d)
	if fieldOf(err) != "id" || !strings.Contains(err.Error(), "0xff") {
		t.Fatalf("got %v, want id's error naming the byte", err)
	}
}

// TestZeroValues: the zero Movimiento and zero error are misuse, but must not
// panic or move money.
func TestZeroValues(t *testing.T) {
	var m Movimiento
	if !m.Delta().IsZero() || len(m.Huella()) != 64 || m.ImporteTexto() != "" {
		t.Errorf("zero Movimiento: Delta %s, Huella %q, ImporteTexto %q", m.Delta(), m.Huella(), m.ImporteTexto())
	}
	if err := (&FieldError{}); err.Error() != "movimiento: body: " || !errors.Is(err, ErrInvalid) {
		t.Errorf("zero FieldError: message %q, errors.Is(ErrInvalid) = %v", err, errors.Is(err, ErrInvalid))
	}
}

func TestFieldErrorMessage(t *testing.T) {
	for _, tt := range []struct {
		err  FieldError
		want string
	}{
		{FieldError{"importe", "1e3", `must be plain decimal notation such as "50.00"`}, `movimiento: importe "1e3": must be plain decimal notation such as "50.00"`},
		{FieldError{"id", "", "is required"}, "movimiento: id: is required"},
		{FieldError{"", "", "is empty"}, "movimiento: body: is empty"},
		{FieldError{"Message.id", strings.Repeat("x", 41), "r"}, `movimiento: Message.id "` + strings.Repeat("x", 40) + `…": r`},
		{FieldError{"concepto", strings.Repeat("é", 40), "r"}, `movimiento: concepto "` + strings.Repeat("é", 40) + `": r`},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

func TestDelta(t *testing.T) {
	d := datos()
	d.Tipo, d.Importe = Abono, "12.30"
	if got := mustNew(t, d).Delta(); !got.Equal(decimal.RequireFromString("12.3")) {
		t.Errorf("abono Delta = %s, want 12.3", got)
	}
	d.Tipo = Cargo
	if got := mustNew(t, d).Delta(); !got.Equal(decimal.RequireFromString("-12.3")) {
		t.Errorf("cargo Delta = %s, want -12.3", got)
	}
	if got := (Movimiento{Importe: decimal.RequireFromString("5")}).Delta(); !got.IsZero() {
		t.Errorf("zero-value Tipo Delta = %s, want 0", got)
	}
}

func TestReferidoIsTheRecordAMovementNames(t *testing.T) {
	tests := []struct {
		m    Movimiento
		want string
	}{
		{Movimiento{Tipo: Anulacion, Anula: "pago-1"}, "pago-1"},
		{Movimiento{Tipo: Captura, Retencion: "ret-1"}, "ret-1"},
		{Movimiento{Tipo: Liberacion, Retencion: "ret-2"}, "ret-2"},
		{Movimiento{Tipo: Cargo}, ""},
	}
	for _, tt := range tests {
		if got := tt.m.Referido(); got != tt.want {
			t.Errorf("%s Referido = %q, want %q", tt.m.Tipo, got, tt.want)
		}
	}
}

func TestImporteTexto(t *testing.T) {
	tests := []struct{ importe, moneda, want string }{
		{"50", "EUR", "50.00"},
		{"50.1", "EUR", "50.10"},
		{"1000", "JPY", "1000"},
		{"1.5", "KWD", "1.500"},
		{"0.0001", "CLF", "0.0001"},
		{"123456789012345678.90", "USD", "123456789012345678.90"},
	}
	for _, tt := range tests {
		d := datos()
		d.Importe, d.Moneda = tt.importe, tt.moneda
		if got := mustNew(t, d).ImporteTexto(); got != tt.want {
			t.Errorf("ImporteTexto of %s %s = %q, want %q", tt.importe, tt.moneda, got, tt.want)
		}
	}
}

func TestMinorUnits(t *testing.T) {
	tests := []struct {
		code  string
		units int32
		ok    bool
	}{
		{"EUR", 2, true}, {"USD", 2, true}, {"JPY", 0, true}, {"KWD", 3, true},
		{"CLF", 4, true}, {"UYW", 4, true}, {"XCG", 2, true}, {"ZWG", 2, true},
		{"SLE", 2, true}, {"VED", 2, true}, {"XOF", 0, true}, {"ISK", 0, true},
		{"XAU", 0, false}, {"XXX", 0, false}, {"XTS", 0, false}, {"XDR", 0, false},
		{"HRK", 0, false}, {"ANG", 0, false}, {"ZWL", 0, false}, {"SLL", 0, false},
		{"CUC", 0, false}, {"eur", 0, false}, {"", 0, false},
	}
	for _, tt := range tests {
		units, ok := MinorUnits(tt.code)
		if units != tt.units || ok != tt.ok {
			t.Errorf("MinorUnits(%q) = %d, %v; want %d, %v", tt.code, units, ok, tt.units, tt.ok)
		}
	}
}

func TestCurrencyTableShape(t *testing.T) {
	for code, units := range minorUnits {
		if len(code) != 3 || strings.Trim(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			t.Errorf("code %q is not three upper-case letters", code)
		}
		if units != 0 && units != 2 && units != 3 && units != 4 {
			t.Errorf("%s has %d minor units; ISO 4217 uses 0, 2, 3 or 4", code, units)
		}
	}
}

// The id and cuenta rules of a message: ASCII letters, digits and a little punctuation,
// at most 128 and 64 characters.
func TestIDAndCuentaFollowTheMessageRules(t *testing.T) {
	long := strings.Repeat("a", 129)
	withID := func(id string) error {
		_, err := New(Datos{ID: id, Cuenta: "ES76", Tipo: Abono, Importe: "1.00", Moneda: "EUR"})
		return err
	}
	withCuenta := func(cuenta string) error {
		_, err := New(Datos{ID: "pago-1", Cuenta: cuenta, Tipo: Abono, Importe: "1.00", Moneda: "EUR"})
		return err
	}
	cases := []struct {
		name  string
		check func(string) error
		value string
		field string // "" when valid
	}{
		{"id with every allowed punctuation", withID, "pago._:/@+=-1", ""},
		{"128-char id", withID, long[:128], ""},
		{"129-char id", withID, long, "id"},
		{"id with #", withID, "pago#1", "id"},
		{"id with a space", withID, "pago 1", "id"},
		{"empty id", withID, "", "id"},
		{"64-char cuenta", withCuenta, long[:64], ""},
		{"65-char cuenta", withCuenta, long[:65], "cuenta"},
		{"cuenta with /", withCuenta, "ES76/2077", "cuenta"},
		{"cuenta with :", withCuenta, "ES76:2077", "cuenta"},
		{"cuenta with a Cyrillic a", withCuenta, "ES76\u0430", "cuenta"},
		{"empty cuenta", withCuenta, "", "cuenta"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.check(tc.value)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("%q: %v, want valid", tc.value, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || fieldOf(err) != tc.field {
				t.Fatalf("%q: %v, want an ErrInvalid naming %s", tc.value, err, tc.field)
			}
		})
	}
}
