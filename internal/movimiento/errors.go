package movimiento

import (
	"errors"
	"strconv"
)

// ErrInvalid is matched, with errors.Is, by every error New and Parse return: an invalid
// movement is a permanent error, so callers can park it without looking further.
var ErrInvalid = errors.New("movimiento: invalid movement")

// FieldError is the one error New, Parse, ValidateID and ValidateCuenta return:
// which field broke which rule. It matches ErrInvalid.
type FieldError struct {
	// Field is the JSON member name ("importe"); inside an envelope, a path
	// ("Message.importe", "detail.importe"); "" for the body as a whole.
	Field string
	// Value is the offending value as received (a JSON number's literal), or "".
	Value string
	// Rule is the rule broken, worded to follow the field: "is required".
	Rule string
}

// Error reads like `movimiento: importe "1e3": must be plain decimal notation…`;
// the value is cut to 40 characters, so a huge field never floods a log line.
func (e *FieldError) Error() string {
	field := e.Field
	if field == "" {
		field = "body"
	}
	if e.Value != "" {
		field += " " + quote(e.Value)
	}
	return "movimiento: " + field + ": " + e.Rule
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// quote returns s quoted, cut to 40 characters plus "…".
func quote(s string) string {
	n := 0
	for i := range s {
		if n++; n > 40 {
			s = s[:i] + "…"
			break
		}
	}
	return strconv.Quote(s)
}
