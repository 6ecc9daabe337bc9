// Package ledger is the domain contract every layer shares, with no storage in it: a
// delivery (Entrega), what became of it (Result, Outcome), the two classes of failure,
// the funds policy, the idempotency strategies, and a movement as recorded (Apunte).
// internal/store and internal/idempotencia produce these values; the consumer, the API
// and the CLI read them.
package ledger

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Entrega is one delivery of a movement: the movement, and the id of the message that
// carried it (recorded as the movement's origen, for tracing; never part of the key).
type Entrega struct {
	Mov    movimiento.Movimiento
	Origen string
}

// FundsPolicy says what to do with a debit the account cannot cover.
type FundsPolicy string

// The insufficient-funds policies (env LEDGER_INSUFFICIENT_FUNDS).
const (
	// Retry reports a transient failure: the message comes back, because a credit may
	// still be on its way out of order; after maxReceiveCount it lands in the DLQ.
	Retry FundsPolicy = "retry"
	// Reject records the movement with estado "rechazado" and leaves the balance alone;
	// every redelivery gets the same answer.
	Reject FundsPolicy = "reject"
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

// The strategies.
const (
	// Transaction is this service's design: the movement item, written in the same
	// transaction as the account, is the idempotency record (internal/store).
	Transaction Strategy = "transaction"
	// SeparateTable is the classic design it is compared against: a separate
	// idempotency table, reserve → effect → mark (internal/idempotencia).
	SeparateTable Strategy = "separate-table"
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
