// Package movimiento is an account movement as it arrives on the queue: it reads
// the message body (plain, or inside an SNS or EventBridge envelope), validates
// every field, and computes the fingerprint that tells a redelivery of the same
// fact from a conflicting reuse of its idempotency key. It does no I/O.
package movimiento

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Tipo says which way a movement moves the balance. The values are the wire
// values, compared case-sensitively.
type Tipo string

const (
	// Abono is a credit: it adds Importe to the balance.
	Abono Tipo = "abono"
	// Cargo is a debit: it subtracts Importe from the balance.
	Cargo Tipo = "cargo"
)

// Movimiento is a validated movement. Its zero value is not valid: build it with
// New or Parse, which guarantee every field rule below. The idempotency key is
// (Cuenta, ID), never the transport's message id.
type Movimiento struct {
	ID       string          // business fact id, 1–128 chars of [A-Za-z0-9._:/@+=-]
	Cuenta   string          // account id, 1–64 chars of [A-Za-z0-9._-]
	Tipo     Tipo            // Abono or Cargo
	Importe  decimal.Decimal // > 0, scale ≤ currency minor units, ≤ 20 significant digits
	Moneda   string          // ISO 4217 alpha-3, active code with minor units
	Concepto string          // optional, ≤ 256 characters (runes), no control characters
	Fecha    string          // optional, RFC 3339 exactly as received (informational only)
}

// Datos holds the unvalidated fields New checks, as text: Importe is the decimal
// literal ("50.00"), so no precision is lost before validation. Empty optional
// fields (Concepto, Fecha) mean absent.
type Datos struct {
	ID       string // business fact id
	Cuenta   string // account id
	Tipo     Tipo   // Abono or Cargo
	Importe  string // plain decimal text, such as "50.00"
	Moneda   string // ISO 4217 code
	Concepto string // optional description
	Fecha    string // optional RFC 3339 timestamp
}

// Field limits from the message contract.
const (
	maxID          = 128
	maxCuenta      = 64
	maxConcepto    = 256
	maxSignificant = 20 // keeps sums far inside DynamoDB's 38-digit numbers
)

// Indices of the movement's fields, in the order validation reports problems.
const (
	fID = iota
	fCuenta
	fTipo
	fImporte
	fMoneda
	fConcepto
	fFecha
	numFields
)

// New validates d and returns the movement it describes, or the first problem
// found in field order (id, cuenta, tipo, importe, moneda, importe's scale against
// moneda, concepto, fecha) as a typed error that matches ErrInvalid.
func New(d Datos) (Movimiento, error) {
	return validate(&d, nil)
}

// validate checks d field by field. typeErrs, when not nil, holds JSON type errors
// Parse found per field; each is reported in its field's turn, so a body's first
// problem in field order wins whatever its kind.
func validate(d *Datos, typeErrs *[numFields]error) (Movimiento, error) {
	for f := range numFields {
		if typeErrs != nil && typeErrs[f] != nil {
			return Movimiento{}, typeErrs[f]
		}
		if err := checkField(f, d); err != nil {
			return Movimiento{}, err
		}
	}
	importe, err := decimal.NewFromString(d.Importe)
	if err != nil { // checkImporte accepted it, so only a change in decimal could get here
		return Movimiento{}, &ImporteError{Importe: d.Importe, Reason: err.Error()}
	}
	return Movimiento{
		ID:       d.ID,
		Cuenta:   d.Cuenta,
		Tipo:     d.Tipo,
		Importe:  importe,
		Moneda:   d.Moneda,
		Concepto: d.Concepto,
		Fecha:    d.Fecha,
	}, nil
}

func checkField(f int, d *Datos) error {
	switch f {
	case fID:
		return ValidateID(d.ID)
	case fCuenta:
		return ValidateCuenta(d.Cuenta)
	case fTipo:
		switch d.Tipo {
		case "":
			return &MissingFieldError{Field: "tipo"}
		case Abono, Cargo:
			return nil
		}
		return &TipoError{Tipo: string(d.Tipo)}
	case fImporte:
		return checkImporte(d.Importe)
	case fMoneda:
		if d.Moneda == "" {
			return &MissingFieldError{Field: "moneda"}
		}
		units, ok := MinorUnits(d.Moneda)
		if !ok {
			return &MonedaError{Moneda: d.Moneda}
		}
		if written := decimals(d.Importe); written > int(units) {
			return &ScaleError{Importe: d.Importe, Moneda: d.Moneda, MinorUnits: units}
		}
		return nil
	case fConcepto:
		return checkConcepto(d.Concepto)
	default: // fFecha
		if d.Fecha == "" {
			return nil
		}
		if _, err := time.Parse(time.RFC3339, d.Fecha); err != nil {
			return &FechaError{Fecha: d.Fecha}
		}
		return nil
	}
}

// ValidateID checks a movement id on its own, by the message's rules (1–128 characters
// of [A-Za-z0-9._:/@+=-]), for callers that get an id without a message, such as the
// balance API's path. Errors are *IDError or *MissingFieldError and match ErrInvalid.
func ValidateID(s string) error { return checkID("id", s, maxID, &idChars) }

// ValidateCuenta checks an account id on its own, by the message's rules (1–64
// characters of [A-Za-z0-9._-]); errors as for ValidateID.
func ValidateCuenta(s string) error { return checkID("cuenta", s, maxCuenta, &cuentaChars) }

// idChars and cuentaChars are the ASCII charsets of id and cuenta, as lookup
// tables: a byte loop is much cheaper than a regexp on the per-message path.
var (
	idChars     = charset("._:/@+=-")
	cuentaChars = charset("._-")
)

func charset(extra string) [256]bool {
	var t [256]bool
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
		t[c+'a'-'A'] = true
	}
	for i := range len(extra) {
		t[extra[i]] = true
	}
	return t
}

func checkID(field, s string, maxLen int, allowed *[256]bool) error {
	if s == "" {
		return &MissingFieldError{Field: field}
	}
	for i := range len(s) {
		if allowed[s[i]] {
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		what := fmt.Sprintf("%q (%U)", r, r)
		if r == utf8.RuneError && size == 1 {
			what = fmt.Sprintf("the invalid UTF-8 byte 0x%02x", s[i])
		}
		return &IDError{Field: field, Value: s, Reason: "contains " + what + "; allowed are A-Z a-z 0-9 and " + allowedExtras(allowed)}
	}
	if len(s) > maxLen {
		return &IDError{Field: field, Value: s, Reason: fmt.Sprintf("is %d characters long; at most %d are allowed", len(s), maxLen)}
	}
	return nil
}

// allowedExtras lists the punctuation a charset allows, for error messages.
func allowedExtras(allowed *[256]bool) string {
	var b strings.Builder
	for c := range 128 {
		if allowed[c] && !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteByte(byte(c))
		}
	}
	return b.String()
}

const notationReason = `must be plain decimal notation such as "50.00" (no sign, exponent, spaces or leading zeros)`

// checkImporte checks s against (0|[1-9][0-9]*)(\.[0-9]+)?, > 0 and the
// significant-digit limit. A leading minus on an otherwise valid number is
// reported as "not greater than zero", which is what the producer got wrong.
func checkImporte(s string) error {
	if s == "" {
		return &MissingFieldError{Field: "importe"}
	}
	neg := s[0] == '-'
	intPart, frac, ok := splitDecimal(strings.TrimPrefix(s, "-"))
	if !ok {
		return &ImporteError{Importe: s, Reason: notationReason}
	}
	n := significant(intPart, frac)
	if neg || n == 0 {
		return &ImporteError{Importe: s, Reason: "must be greater than zero"}
	}
	if n > maxSignificant {
		return &ImporteError{Importe: s, Reason: fmt.Sprintf("has %d significant digits; at most %d are allowed", n, maxSignificant)}
	}
	return nil
}

// splitDecimal splits plain decimal notation into its integer and fractional
// digits, reporting whether s is in that notation.
func splitDecimal(s string) (intPart, frac string, ok bool) {
	intPart = s
	if p := strings.IndexByte(s, '.'); p >= 0 {
		intPart, frac = s[:p], s[p+1:]
		if frac == "" {
			return "", "", false
		}
	}
	if intPart == "" || len(intPart) > 1 && intPart[0] == '0' || !digits(intPart) || !digits(frac) {
		return "", "", false
	}
	return intPart, frac, true
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// significant counts the digits of the value without leading zeros and without
// trailing fractional zeros: "100.00" has 3, "0.05" has 1, zero has 0.
func significant(intPart, frac string) int {
	intPart = strings.TrimLeft(intPart, "0")
	frac = strings.TrimRight(frac, "0")
	if intPart == "" {
		return len(strings.TrimLeft(frac, "0"))
	}
	return len(intPart) + len(frac)
}

// decimals is the number of decimal digits written in a checked importe.
func decimals(importe string) int {
	if p := strings.IndexByte(importe, '.'); p >= 0 {
		return len(importe) - p - 1
	}
	return 0
}

func checkConcepto(s string) error {
	if !utf8.ValidString(s) {
		return &ConceptoError{Length: len(s), Reason: "is not valid UTF-8"}
	}
	n := 0
	for _, r := range s {
		if unicode.IsControl(r) {
			return &ConceptoError{Length: utf8.RuneCountInString(s), Reason: fmt.Sprintf("contains the control character %U at position %d", r, n+1)}
		}
		n++
	}
	if n > maxConcepto {
		return &ConceptoError{Length: n, Reason: fmt.Sprintf("is %d characters long; at most %d are allowed", n, maxConcepto)}
	}
	return nil
}

// Delta is what the movement does to its account's balance: +Importe for an
// abono, −Importe for a cargo. For a Tipo that is neither (possible only for a
// Movimiento not built by New or Parse) it is zero, so it never moves money.
func (m Movimiento) Delta() decimal.Decimal {
	switch m.Tipo {
	case Abono:
		return m.Importe
	case Cargo:
		return m.Importe.Neg()
	}
	return decimal.Zero
}

// ImporteTexto is Importe written with exactly the currency's minor units
// ("50.00" for EUR, "1000" for JPY, "1.500" for KWD): the canonical text the
// fingerprint uses and the one to store, so "50" and "50.0" read the same. For a
// currency MinorUnits does not know it is Importe's exact decimal text.
func (m Movimiento) ImporteTexto() string {
	units, ok := MinorUnits(m.Moneda)
	if !ok {
		return m.Importe.String()
	}
	return m.Importe.StringFixed(units)
}

// huellaVersion prefixes the fingerprinted text, so a future change of the
// canonical form yields different fingerprints instead of silent collisions.
const huellaVersion = "v1\n"

// Huella is the movement's fingerprint: lowercase hex SHA-256 (64 characters) of
// "v1\n" + cuenta, id, tipo, ImporteTexto() and moneda joined by "\n", which none
// of them can contain. Two deliveries of one fact have the same Huella however
// importe was written; Concepto and Fecha are left out because they are
// informational. The same key with another Huella is a conflicting duplicate.
func (m Movimiento) Huella() string {
	var buf [256]byte
	b := append(buf[:0], huellaVersion...)
	b = append(b, m.Cuenta...)
	b = append(b, '\n')
	b = append(b, m.ID...)
	b = append(b, '\n')
	b = append(b, m.Tipo...)
	b = append(b, '\n')
	b = append(b, m.ImporteTexto()...)
	b = append(b, '\n')
	b = append(b, m.Moneda...)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
