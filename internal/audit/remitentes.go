package audit

import (
	"cmp"
	"maps"
	"slices"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Remitente counts the records one sender wrote, as the transports stated it, so an
// operator sees which principals moved money. Remitente is the SQS SenderId: empty when
// no transport stated one (the operator's CLI, a direct caller). Via is what the
// message's SNS or EventBridge envelope claimed, if it had one.
type Remitente struct {
	Remitente string `json:"remitente"`
	Via       string `json:"via,omitempty"`
	Registros int    `json:"registros"`
}

// remitentes counts the records of accounts by sender and envelope, most first.
func remitentes(accounts map[string]*books) []Remitente {
	counts := map[Remitente]int{}
	for _, b := range accounts {
		for _, records := range []map[string]movimiento.Apunte{b.applied, b.holds, b.others} {
			for _, a := range records {
				counts[Remitente{Remitente: a.Remitente, Via: a.Via}]++
			}
		}
	}
	out := make([]Remitente, 0, len(counts))
	for _, k := range slices.Collect(maps.Keys(counts)) {
		k.Registros = counts[k]
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Remitente) int {
		return cmp.Or(cmp.Compare(b.Registros, a.Registros), cmp.Compare(a.Remitente, b.Remitente), cmp.Compare(a.Via, b.Via))
	})
	return out
}
