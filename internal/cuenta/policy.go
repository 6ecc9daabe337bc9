package cuenta

import (
	"cmp"
	"fmt"
)

// FundsPolicy says what becomes of a debit the account refuses now
// (SaldoInsuficiente, CuentaBloqueada).
type FundsPolicy string

// The funds policies (LEDGER_INSUFFICIENT_FUNDS).
const (
	Retry  FundsPolicy = "retry"  // fail transiently, as a credit may be on its way; the DLQ after maxReceiveCount
	Reject FundsPolicy = "reject" // recorded rechazado, balance untouched: the answer to every redelivery
)

// ParseFundsPolicy reads a policy name; the empty string means Retry.
func ParseFundsPolicy(s string) (FundsPolicy, error) {
	switch p := cmp.Or(FundsPolicy(s), Retry); p {
	case Retry, Reject:
		return p, nil
	}
	return "", fmt.Errorf("cuenta: insufficient-funds policy %q: want %q or %q", s, Retry, Reject)
}
