package movimiento

import (
	"errors"
	"strconv"
)

// ErrInvalid is matched by every error New and Parse return: an invalid movement is a
// permanent error, so callers can park it without looking further.
var ErrInvalid = errors.New("movimiento: invalid movement")

// FieldError is the one error New and Parse return: which field broke which rule. It
// matches ErrInvalid.
type FieldError struct {
	Field string // the JSON member ("importe"), a path inside an envelope ("Message.importe"), "" for the body
	Value string // the offending value as received (a JSON number's literal), or ""
	Rule  string // worded to follow the field: "is required"
}

// Error reads like `movimiento: importe "1e3": must be plain decimal notation…`; the
// value is cut to 40 characters, so a huge field never floods a log line.
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
