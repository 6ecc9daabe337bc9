package movimiento

import (
	"testing"
	"time"
)

func TestParseInstanteTakesRFC3339DateTimesAlone(t *testing.T) {
	cet := time.FixedZone("", 3600)
	for _, tc := range []struct {
		s    string
		want time.Time // zero: refused
	}{
		{"2026-11-30T23:59:59Z", time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)},
		{"2026-11-30t23:59:59.123456789z", time.Date(2026, 11, 30, 23, 59, 59, 123456789, time.UTC)},
		{"2026-12-01T00:59:59+01:00", time.Date(2026, 12, 1, 0, 59, 59, 0, cet)},
		{"2026-11-30", time.Time{}},
		{"2026-11-30 23:59:59Z", time.Time{}},
		{"2026-11-30T23:59:59 01:00", time.Time{}}, // a '+' a query string turned into a space
		{"2026-11-30T23:59:60Z", time.Time{}},
		{"2026-11-30T23:59:59", time.Time{}},
		{"", time.Time{}},
	} {
		got, ok := ParseInstante(tc.s)
		if ok != !tc.want.IsZero() || ok && !got.Equal(tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.s, got, ok, tc.want)
		}
	}
}

func TestParseDiaTakesAFullDateAsItsFirstInstantInUTC(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want time.Time // zero: refused
	}{
		{"2026-12-01", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"2024-02-29", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"2026-02-29", time.Time{}},
		{"2026-12-1", time.Time{}},
		{"2026-12-01T00:00:00Z", time.Time{}},
		{" 2026-12-01", time.Time{}},
	} {
		got, ok := ParseDia(tc.s)
		if ok != !tc.want.IsZero() || ok && !got.Equal(tc.want) || ok && got.Location() != time.UTC {
			t.Errorf("%q: %v, %v; want %v", tc.s, got, ok, tc.want)
		}
	}
}
