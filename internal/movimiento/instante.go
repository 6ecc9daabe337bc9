package movimiento

import (
	"regexp"
	"time"
)

// ParseInstante reads an instant a reader of the ledger names (the balance API's en,
// desde and hasta, ledger extracto's --desde and --hasta) by the grammar of fecha and
// expira: RFC 3339's date-time, any offset, a "t" or "z" read as upper case. ok is false
// for anything else, a leap second included.
func ParseInstante(s string) (t time.Time, ok bool) {
	t, err := checkTime("", s)
	return t, err == nil
}

// fullDate is RFC 3339's full-date.
var fullDate = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// ParseDia reads a day (RFC 3339's full-date, 2026-12-01) as its first instant in UTC,
// where a range's bound may be a day; ok is false for anything else.
func ParseDia(s string) (t time.Time, ok bool) {
	if !fullDate.MatchString(s) {
		return time.Time{}, false
	}
	t, err := time.Parse(time.DateOnly, s)
	return t, err == nil
}
