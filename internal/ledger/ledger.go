// Package ledger is the domain contract every layer shares, with no storage in it: a
// delivery (Entrega), what became of it (Result), the failure classes, the policies,
// and a movement as recorded (Apunte).
package ledger

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Entrega is one delivery of a movement, with the id of the message that carried it
// (recorded as origen, for tracing; never part of the key).
type Entrega struct {
	Mov    movimiento.Movimiento
	Origen string
	// Refused, when set, is why today's rules refuse the body Mov was read from by older
	// ones (movimiento.ParseRecorded): its record alone may answer it, as a duplicate (or
	// a conflicting one); anything else fails permanently with Refused. It is never
	// applied.
	Refused error
}

// FundsPolicy says what to do with a debit the account cannot cover.
type FundsPolicy string

// The insufficient-funds policies (env LEDGER_INSUFFICIENT_FUNDS).
const (
	Retry  FundsPolicy = "retry"  // fail transiently, as a credit may be on its way; the DLQ after maxReceiveCount
	Reject FundsPolicy = "reject" // recorded "rechazado", balance untouched: the answer to every redelivery
)

// ParseFundsPolicy reads a policy name; the empty string means Retry.
func ParseFundsPolicy(s string) (FundsPolicy, error) {
	switch p := cmp.Or(FundsPolicy(s), Retry); p {
	case Retry, Reject:
		return p, nil
	}
	return "", fmt.Errorf("ledger: insufficient-funds policy %q: want %q or %q", s, Retry, Reject)
}

// Strategy names how movements are made idempotent (env LEDGER_STRATEGY).
type Strategy string

// The strategies: this service's design, and the classic one it is compared against.
const (
	Transaction   Strategy = "transaction"    // the movement item, written with the account, is the record (internal/store)
	SeparateTable Strategy = "separate-table" // reserve → effect → mark in an idempotency table (internal/idempotencia)
)

// Strategies lists the strategies, the default first.
var Strategies = []Strategy{Transaction, SeparateTable}

// ParseStrategy reads a strategy name; the empty string means Transaction.
func ParseStrategy(s string) (Strategy, error) {
	st := cmp.Or(Strategy(s), Transaction)
	if !slices.Contains(Strategies, st) {
		return "", fmt.Errorf("ledger: strategy %q: want one of %v", s, Strategies)
	}
	return st, nil
}
