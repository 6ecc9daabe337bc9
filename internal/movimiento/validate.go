package movimiento

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Limits of the message contract. Ids and accounts are ASCII letters, digits and this
// punctuation: a Unicode look-alike would make a different key that reads the same.
const (
	maxID, maxCuenta, maxConcepto = 128, 64, 256
	maxSignificant                = 20 // keeps sums far inside DynamoDB's 38 digits
	maxDecimals                   = 38 // DynamoDB's precision, far above any currency's minor units
	idPunct, cuentaPunct          = "._:/@+=-", "._-"
)

// MaxPartes bounds a reparto's credited accounts: one TransactWriteItems of at most 100
// actions holds the payer's record and account and, for each part, its record and
// account (98 at 48 parts), and the reversal of every part at once (99).
const MaxPartes = 48

// plainDecimal is importe's notation; a sign is matched only to report "-5" as not
// greater than zero, which is what the producer got wrong.
var plainDecimal = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)

// fields is the order in which problems are reported: the first one wins.
var fields = [...]string{"id", "cuenta", "tipo", "importe", "moneda", "concepto", "fecha", "destino", "partes", "anula", "retencion", "expira"}

// members are d's text fields in the order of fields; partes, a list, has none.
func (d *Datos) members() [len(fields)]*string {
	return [...]*string{&d.ID, &d.Cuenta, (*string)(&d.Tipo), &d.Importe, &d.Moneda, &d.Concepto, &d.Fecha, &d.Destino, nil, &d.Anula, &d.Retencion, &d.Expira}
}

// own maps each tipo to the member it requires and no other tipo may carry.
var own = map[Tipo]string{
	Abono: "", Cargo: "", Traspaso: "destino", Reparto: "partes", Anulacion: "anula",
	Retencion: "expira", Captura: "retencion", Liberacion: "retencion",
}

// New validates d and returns its movement, or the first problem in field order as a
// *FieldError. Importe and moneda are required for abono, cargo, traspaso and
// retencion; moneda is optional for anulacion, captura and liberacion, importe for
// anulacion and captura, and liberacion takes no importe. Without moneda, importe's
// scale is the ledger's to check, as is whether expira lies ahead.
func New(d Datos) (Movimiento, error) { return validate(&d, nil) }

// validate is New; wrongType, when not nil, is a JSON type problem Parse found,
// reported in its field's turn.
func validate(d *Datos, wrongType *FieldError) (Movimiento, error) {
	m := Movimiento{
		ID: d.ID, Cuenta: d.Cuenta, Tipo: d.Tipo, Moneda: d.Moneda, Concepto: d.Concepto,
		Fecha: d.Fecha, Destino: d.Destino, Anula: d.Anula, Retencion: d.Retencion,
	}
	for _, f := range fields {
		err := d.check(f, &m)
		if wrongType != nil && (wrongType.Field == f || strings.HasPrefix(wrongType.Field, f+"[")) {
			err = wrongType
		}
		if err != nil {
			return Movimiento{}, err
		}
	}
	return m, nil
}

// check checks d's field f, setting what it reads into m.
func (d *Datos) check(f string, m *Movimiento) error {
	amount := d.Tipo == Abono || d.Tipo == Cargo || d.Tipo == Traspaso || d.Tipo == Reparto || d.Tipo == Retencion
	var err error
	switch f {
	case "id":
		return checkKey(f, d.ID, maxID, idPunct)
	case "cuenta":
		return checkKey(f, d.Cuenta, maxCuenta, cuentaPunct)
	case "tipo":
		if _, ok := own[d.Tipo]; !ok {
			return requiredOr(f, string(d.Tipo), `must be "abono", "cargo", "traspaso", "reparto", "anulacion", "retencion", "captura" or "liberacion"`)
		}
	case "importe":
		if d.Tipo == Liberacion && d.Importe != "" {
			return &FieldError{f, d.Importe, "is not allowed for tipo liberacion: a release frees the whole hold"}
		} else if amount || d.Importe != "" {
			m.Importe, err = checkImporte(f, d.Importe)
		}
	case "moneda":
		if amount || d.Moneda != "" {
			return checkMoneda(d.Moneda, m.Importe)
		}
	case "concepto":
		return checkConcepto(d.Concepto)
	case "fecha":
		if d.Fecha != "" {
			m.Fecha, err = checkFecha(d.Fecha)
		}
	case "destino":
		if err = ownMember(d, f, d.Destino, maxCuenta, cuentaPunct); err == nil && d.Destino == d.Cuenta {
			return &FieldError{f, d.Destino, "must differ from cuenta"}
		}
	case "partes":
		m.Partes, err = d.checkPartes(m.Importe)
	case "anula", "retencion":
		v := d.Anula
		if f == "retencion" {
			v = d.Retencion
		}
		if err = ownMember(d, f, v, maxID, idPunct); err == nil && v == d.ID {
			return &FieldError{f, v, "must differ from id: it names another movement"}
		}
	case "expira":
		if err = ownMember(d, f, d.Expira, 0, ""); err == nil && d.Expira != "" {
			m.Expira, err = checkTime(f, d.Expira)
		}
	}
	return err
}

// ownMember checks member f, valued v, that only some tipos carry: present exactly when
// d's tipo needs it, then (when maxLen > 0) by checkKey's rules.
func ownMember(d *Datos, f, v string, maxLen int, punct string) error {
	switch needed := own[d.Tipo] == f; {
	case needed && v == "":
		return &FieldError{Field: f, Rule: "is required for tipo " + string(d.Tipo)}
	case !needed && v != "":
		return &FieldError{f, v, "is not allowed for tipo " + string(d.Tipo)}
	case v != "" && maxLen > 0:
		return checkKey(f, v, maxLen, punct)
	}
	return nil
}

// requiredOr reports a missing field, or a present one that breaks rule.
func requiredOr(field, value, rule string) error {
	if value == "" {
		return &FieldError{Field: field, Rule: "is required"}
	}
	return &FieldError{field, value, rule}
}

// checkKey checks an id-like field: present, ASCII letters, digits and punct, ≤ maxLen.
func checkKey(field, s string, maxLen int, punct string) error {
	if s == "" {
		return &FieldError{Field: field, Rule: "is required"}
	}
	for i := range len(s) {
		if c := s[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(punct, c) >= 0 {
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		what := fmt.Sprintf("%q (%U)", r, r)
		if r == utf8.RuneError && size == 1 {
			what = fmt.Sprintf("the invalid UTF-8 byte 0x%02x", s[i])
		}
		return &FieldError{field, s, "contains " + what + "; allowed are A-Z a-z 0-9 and " + strings.Join(strings.Split(punct, ""), " ")}
	}
	if len(s) > maxLen {
		return &FieldError{field, s, fmt.Sprintf("is %d characters long; at most %d are allowed", len(s), maxLen)}
	}
	return nil
}

// IsPlainDecimal reports whether s is an amount in the notation messages use: digits,
// an optional fraction, no sign, exponent, spaces or leading zeros ("500.00", "0").
func IsPlainDecimal(s string) bool { return s != "" && s[0] != '-' && plainDecimal.MatchString(s) }

// checkImporte checks an amount's notation, sign, significant digits and decimals
// written; field names it in errors (importe, or a part's).
func checkImporte(field, s string) (decimal.Decimal, error) {
	if !plainDecimal.MatchString(s) {
		return decimal.Zero, requiredOr(field, s, `must be plain decimal notation such as "50.00" (no sign, exponent, spaces or leading zeros)`)
	}
	intPart, frac, _ := strings.Cut(strings.TrimLeft(s, "-0"), ".")
	n := len(strings.TrimLeft(intPart+strings.TrimRight(frac, "0"), "0")) // significant digits
	if s[0] == '-' || n == 0 {
		return decimal.Zero, &FieldError{field, s, "must be greater than zero"}
	}
	if n > maxSignificant {
		return decimal.Zero, &FieldError{field, s, fmt.Sprintf("has %d significant digits; at most %d are allowed", n, maxSignificant)}
	}
	if len(frac) > maxDecimals {
		return decimal.Zero, &FieldError{field, s, fmt.Sprintf("has %d decimals; at most %d are allowed", len(frac), maxDecimals)}
	}
	d, err := decimal.NewFromString(s)
	if err != nil { // the checks above leave nothing it refuses; a new refusal is the producer's
		return decimal.Zero, &FieldError{field, s, "is not a number this ledger reads: " + err.Error()}
	}
	return d, nil
}

// checkMoneda checks moneda, then the decimals written in importe against it.
func checkMoneda(moneda string, importe decimal.Decimal) error {
	_, ok := MinorUnits(moneda)
	if !ok {
		rule := "must be an active ISO 4217 currency code with minor units"
		if _, upper := MinorUnits(strings.ToUpper(moneda)); upper {
			rule += " (codes are upper case)"
		}
		return requiredOr("moneda", moneda, rule)
	}
	return CheckDecimals(importe, moneda)
}

// CheckDecimals checks importe, as written (trailing zeros count: the rule is about the
// text, never about rounding), against moneda's decimals. Parse applies it when a
// message names its moneda; the ledger, to an anulacion's or captura's importe that
// omits it, in the currency of the record it refers to. A currency no longer active
// has no rule here.
func CheckDecimals(importe decimal.Decimal, moneda string) error {
	return checkDecimals("importe", importe, moneda)
}

// checkDecimals is CheckDecimals for the amount in field.
func checkDecimals(field string, importe decimal.Decimal, moneda string) error {
	units, ok := MinorUnits(moneda)
	scale := -importe.Exponent()
	if !ok || scale <= units {
		return nil
	}
	rule := fmt.Sprintf("%s allows at most %d decimals", moneda, units)
	if units == 0 {
		rule = moneda + " allows no decimals"
	}
	return &FieldError{field, importe.StringFixed(scale), rule}
}

// checkConcepto checks concepto's length in characters, and that it has no control
// characters, which would corrupt statements and logs.
func checkConcepto(s string) error {
	if !utf8.ValidString(s) {
		return &FieldError{"concepto", s, "is not valid UTF-8"}
	}
	if i := strings.IndexFunc(s, unshown); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		what := "control"
		if !unicode.IsControl(r) {
			what = "invisible format or separator"
		}
		return &FieldError{"concepto", s, fmt.Sprintf("contains the %s character %U at position %d", what, r, utf8.RuneCountInString(s[:i])+1)}
	}
	if n := utf8.RuneCountInString(s); n > maxConcepto {
		return &FieldError{"concepto", s, fmt.Sprintf("is %d characters long; at most %d are allowed", n, maxConcepto)}
	}
	return nil
}

// unshown reports a character that corrupts a statement or a log line, or spoofs how
// it reads: a control character (Cc), a format character (Cf: bidirectional overrides
// such as U+202E, zero-width ones such as U+200B, the byte order mark U+FEFF), or a
// line or paragraph separator (U+2028, U+2029).
func unshown(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

// rfc3339 is RFC 3339's date-time in upper case, which readers of the API expect.
var rfc3339 = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`)

// timeRule is the rule a time field breaks.
const timeRule = `must be an RFC 3339 timestamp such as "2026-12-02T10:15:00Z"`

// checkTime parses a required RFC 3339 timestamp: its grammar (a "t" or "z" read as
// upper case, fractional seconds allowed), and a real instant (no leap second, which
// Go's time cannot hold).
func checkTime(field, s string) (time.Time, error) {
	u := strings.ToUpper(s)
	t, err := time.Parse(time.RFC3339, u)
	if err != nil || !rfc3339.MatchString(u) {
		return time.Time{}, &FieldError{field, s, timeRule}
	}
	return t, nil
}

// ServedFecha is a stored fecha as the API and events serve it: s itself when it is
// RFC 3339's upper-case grammar, else "". A stored fecha of any other spelling (a hand
// edit) is not served.
func ServedFecha(s string) string {
	if _, err := time.Parse(time.RFC3339, s); err != nil || !rfc3339.MatchString(s) {
		return ""
	}
	return s
}

// Timestamp is t as the API and events write times: RFC 3339 in UTC, with fractional
// seconds only when t has them.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// checkFecha checks fecha as checkTime does and returns it as stored and served: as
// sent, upper-cased.
func checkFecha(s string) (string, error) {
	if _, err := checkTime("fecha", s); err != nil {
		return "", err
	}
	return strings.ToUpper(s), nil
}
