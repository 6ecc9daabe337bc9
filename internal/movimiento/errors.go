package movimiento

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrInvalid is matched, with errors.Is, by every error New and Parse return: a
// movement that fails validation is a permanent error, so callers can route it to
// the dead-letter queue without inspecting which typed error it is.
var ErrInvalid = errors.New("movimiento: invalid movement")

// SyntaxError reports a body that cannot be read as one JSON object: too large,
// not UTF-8, not JSON, not an object, trailing data after the object, or a key
// repeated at the top level (repeated keys are ambiguous, so they are rejected
// rather than letting the last one win).
type SyntaxError struct {
	Err error // what is wrong; a *json.SyntaxError when the JSON grammar is broken
}

// Error says why the body is not one readable JSON object.
func (e *SyntaxError) Error() string {
	if e.Err == nil {
		return "movimiento: malformed JSON"
	}
	return "movimiento: malformed JSON: " + e.Err.Error()
}

// Unwrap returns the cause, so errors.As finds a *json.SyntaxError and its offset.
func (e *SyntaxError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalid.
func (e *SyntaxError) Is(target error) bool { return target == ErrInvalid }

// EnvelopeError reports an SNS notification or EventBridge event that does not
// carry a movement the way it should. When the envelope itself is fine but the
// movement inside it is not, Err holds the movement's own typed error (for example
// a *MissingFieldError), which errors.As finds through Unwrap, and Reason says
// where the movement was ("in Message", "in detail").
type EnvelopeError struct {
	Kind   string // "SNS" or "EventBridge"
	Reason string // what is wrong with the envelope, or where its invalid movement is
	Err    error  // the inner movement's error, when the envelope was readable; else nil
}

// Error names the envelope and what is wrong; for an invalid inner movement it
// continues with that movement's own message.
func (e *EnvelopeError) Error() string {
	msg := "movimiento: " + e.Kind + " envelope: " + e.Reason
	if e.Err != nil {
		msg += ": " + strings.TrimPrefix(e.Err.Error(), "movimiento: ")
	}
	return msg
}

// Unwrap returns the inner movement's error, or nil.
func (e *EnvelopeError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalid.
func (e *EnvelopeError) Is(target error) bool { return target == ErrInvalid }

// MissingFieldError reports a required field that is absent, null or the empty
// string: all three mean the producer did not say it.
type MissingFieldError struct {
	Field string // JSON name: "id", "cuenta", "tipo", "importe" or "moneda"
}

// Error names the missing field.
func (e *MissingFieldError) Error() string {
	return fmt.Sprintf("movimiento: missing required field %q", e.Field)
}

// Is reports whether target is ErrInvalid.
func (e *MissingFieldError) Is(target error) bool { return target == ErrInvalid }

// FieldTypeError reports a field whose JSON type is wrong, such as "id": 5. Every
// field is a JSON string; importe may also be a JSON number, read from its literal.
type FieldTypeError struct {
	Field string // JSON name of the field
	Got   string // JSON type found: "number", "boolean", "object" or "array"
}

// Error names the field, the JSON type it needs and the one it got.
func (e *FieldTypeError) Error() string {
	want := "a JSON string"
	if e.Field == "importe" {
		want = "a JSON string or number"
	}
	return fmt.Sprintf("movimiento: field %q must be %s, got %s", e.Field, want, e.Got)
}

// Is reports whether target is ErrInvalid.
func (e *FieldTypeError) Is(target error) bool { return target == ErrInvalid }

// IDError reports an id or cuenta of the wrong length or with a character outside
// its charset. The charsets are ASCII on purpose: a Unicode look-alike would make
// a different idempotency key that reads the same.
type IDError struct {
	Field  string // "id" or "cuenta"
	Value  string // the value as received
	Reason string // which rule it breaks
}

// Error quotes the value (cut to 40 characters) and the rule it breaks.
func (e *IDError) Error() string {
	return fmt.Sprintf("movimiento: %s %s: %s", e.Field, quote(e.Value), e.Reason)
}

// Is reports whether target is ErrInvalid.
func (e *IDError) Is(target error) bool { return target == ErrInvalid }

// TipoError reports a tipo other than "abono" or "cargo" (case-sensitive).
type TipoError struct {
	Tipo string // the value as received
}

// Error quotes the tipo and lists the accepted ones.
func (e *TipoError) Error() string {
	return fmt.Sprintf("movimiento: tipo %s: must be %q or %q", quote(e.Tipo), Abono, Cargo)
}

// Is reports whether target is ErrInvalid.
func (e *TipoError) Is(target error) bool { return target == ErrInvalid }

// ImporteError reports an importe that is not a plain positive decimal of at most
// 20 significant digits. Scale against the currency is ScaleError's job.
type ImporteError struct {
	Importe string // the text as received (a JSON number's literal)
	Reason  string // which rule it breaks
}

// Error quotes the importe (cut to 40 characters) and the rule it breaks.
func (e *ImporteError) Error() string {
	return fmt.Sprintf("movimiento: importe %s: %s", quote(e.Importe), e.Reason)
}

// Is reports whether target is ErrInvalid.
func (e *ImporteError) Is(target error) bool { return target == ErrInvalid }

// ScaleError reports an importe written with more decimal places than its
// currency's minor units. Written trailing zeros count ("1.230" is too precise for
// EUR): the rule is about the text, so it never depends on rounding.
type ScaleError struct {
	Importe    string // the text as received
	Moneda     string // the currency
	MinorUnits int32  // the decimals the currency allows
}

// Error quotes the importe and says how many decimals the currency allows.
func (e *ScaleError) Error() string {
	if e.MinorUnits == 0 {
		return fmt.Sprintf("movimiento: importe %s: %s allows no decimals", quote(e.Importe), e.Moneda)
	}
	return fmt.Sprintf("movimiento: importe %s: %s allows at most %d decimals", quote(e.Importe), e.Moneda, e.MinorUnits)
}

// Is reports whether target is ErrInvalid.
func (e *ScaleError) Is(target error) bool { return target == ErrInvalid }

// MonedaError reports a moneda that is not an active ISO 4217 code with minor
// units: unknown, withdrawn, not upper case, or a unit such as XAU or XXX.
type MonedaError struct {
	Moneda string // the value as received
}

// Error quotes the moneda, hinting at upper case when that is the problem.
func (e *MonedaError) Error() string {
	msg := fmt.Sprintf("movimiento: moneda %s: not an active ISO 4217 currency code with minor units", quote(e.Moneda))
	if _, ok := MinorUnits(strings.ToUpper(e.Moneda)); ok {
		msg += " (codes are upper case)"
	}
	return msg
}

// Is reports whether target is ErrInvalid.
func (e *MonedaError) Is(target error) bool { return target == ErrInvalid }

// ConceptoError reports a concepto that is too long, not UTF-8, or contains
// control characters (which would corrupt statements and logs).
type ConceptoError struct {
	Length int    // length in characters (runes), or in bytes when not UTF-8
	Reason string // which rule it breaks
}

// Error says what is wrong with the concepto, without repeating its text.
func (e *ConceptoError) Error() string {
	return "movimiento: concepto: " + e.Reason
}

// Is reports whether target is ErrInvalid.
func (e *ConceptoError) Is(target error) bool { return target == ErrInvalid }

// FechaError reports a fecha that is not an RFC 3339 timestamp, as time.Parse
// with time.RFC3339 reads it (fractional seconds allowed).
type FechaError struct {
	Fecha string // the value as received
}

// Error quotes the fecha and shows the expected form.
func (e *FechaError) Error() string {
	return fmt.Sprintf("movimiento: fecha %s: not an RFC 3339 timestamp such as \"2026-12-02T10:15:00Z\"", quote(e.Fecha))
}

// Is reports whether target is ErrInvalid.
func (e *FechaError) Is(target error) bool { return target == ErrInvalid }

// maxQuoted is how many characters of an offending value a message shows: enough
// to recognise it, without copying a 256 KiB field into every log line.
const maxQuoted = 40

// quote returns s quoted for a message, cut to maxQuoted characters plus "…".
func quote(s string) string {
	if utf8.RuneCountInString(s) > maxQuoted {
		cut := 0
		for range maxQuoted {
			_, size := utf8.DecodeRuneInString(s[cut:])
			cut += size
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}
