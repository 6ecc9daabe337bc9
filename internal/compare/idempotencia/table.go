package idempotencia

import (
	_ "embed"

	"github.com/ledger-dev/ledger/migrations"
)

// Table is the logical name of the baseline's idempotency table (table.json), which a
// caller maps to a physical one.
const Table = "idempotencia"

//go:embed table.json
var tableJSON []byte

// Migration is the idempotency table's definition, for migrate.Options.Extra: the
// ledger's own migrations do not create it, as the ledger never uses it.
func Migration() (migrations.Migration, error) {
	return migrations.Parse("idempotencia", tableJSON)
}
