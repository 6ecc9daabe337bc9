package events

import (
	"cmp"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// compare orders two events' details as they are published: by account, then by the
// account's version (the write that recorded them), then within one write the holds it
// dropped as lapsed first (the write drops them before it decides), then the posted
// movements by seq, then the rest by id. So each account's events leave in the order
// its writes happened, and its posted movements in seq order.
func compare(x, y Detail) int {
	return cmp.Or(
		cmp.Compare(x.Cuenta, y.Cuenta),
		cmp.Compare(x.Version, y.Version),
		cmp.Compare(rank(x), rank(y)),
		cmp.Compare(x.Seq, y.Seq),
		cmp.Compare(x.ID, y.ID),
		cmp.Compare(x.Estado, y.Estado),
	)
}

// rank orders the events of one write: lapsed holds, posted movements, then the rest.
func rank(d Detail) int {
	switch {
	case d.Estado == string(movimiento.Expirada):
		return 0
	case d.Seq > 0:
		return 1
	}
	return 2
}
