package sim

import "github.com/ledger-dev/ledger/internal/movimiento"

// Kinds counts a workload's movements by what they do. Every hold is captured (in full
// or in part), released, or left to lapse.
type Kinds struct {
	Abonos, Cargos, Transfers, Reversals int
	Holds, Captured, PartlyCaptured      int
	Released, Lapsed                     int
}

// Kinds counts w's movements (those built to be refused aside).
func (w Workload) Kinds() Kinds {
	var k Kinds
	held := map[string]movimiento.Movimiento{}
	for _, m := range w.Movements {
		switch m.Tipo {
		case movimiento.Abono:
			k.Abonos++
		case movimiento.Cargo:
			k.Cargos++
		case movimiento.Traspaso:
			k.Transfers++
		case movimiento.Anulacion:
			k.Reversals++
		case movimiento.Retencion:
			k.Holds++
			held[m.Cuenta+"/"+m.ID] = m
		case movimiento.Captura:
			k.Captured++
			if h := held[m.Cuenta+"/"+m.Retencion]; !m.Importe.IsZero() && m.Importe.LessThan(h.Importe) {
				k.PartlyCaptured++
			}
		case movimiento.Liberacion:
			k.Released++
		}
	}
	k.Lapsed = k.Holds - k.Captured - k.Released
	return k
}

// Posted counts the movements the workload posts to statements: abonos, cargos, both
// legs of every transfer, reversals and captures.
func (k Kinds) Posted() int {
	return k.Abonos + k.Cargos + 2*k.Transfers + k.Reversals + k.Captured
}
