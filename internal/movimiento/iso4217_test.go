package movimiento

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestAmountsUseTheCurrencysMinorUnits(t *testing.T) {
	for _, tc := range []struct{ value, moneda, want string }{
		{"50", "EUR", "50.00"},
		{"0", "EUR", "0.00"},
		{"-12.5", "EUR", "-12.50"},
		{"5000", "JPY", "5000"},
		{"1.5", "KWD", "1.500"},
		{"12345678901234567890.12", "USD", "12345678901234567890.12"},
		// More decimals than the currency has: written exactly, never rounded away.
		{"1.005", "EUR", "1.005"},
		// A currency ISO 4217 no longer lists: exactly as stored.
		{"7.5", "HRK", "7.5"},
	} {
		if got := Texto(decimal.RequireFromString(tc.value), tc.moneda); got != tc.want {
			t.Errorf("Texto(%s %s) = %q, want %q", tc.value, tc.moneda, got, tc.want)
		}
	}
}
