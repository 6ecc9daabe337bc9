package compare

import "github.com/ledger-dev/ledger/internal/consumer"

// Strategy names how movements are made idempotent.
type Strategy string

// The strategies compared: this ledger's design, and the classic one.
const (
	Transaction   Strategy = consumer.Transaction // the movement's record, written with the account, is the idempotency record (internal/store)
	SeparateTable Strategy = "separate-table"     // reserve → effect → mark in an idempotency table (idempotencia)
)

// Strategies lists the strategies, this ledger's first.
var Strategies = []Strategy{Transaction, SeparateTable}
