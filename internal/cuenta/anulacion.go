package cuenta

import (
	"fmt"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// reverse decides an anulacion: the opposite abono or cargo of the original's importe
// and moneda, by a debit's rules when it takes money back, with the original marked
// reversed by it, so a movement is reversed at most once.
func (in Input) reverse(rec movimiento.Apunte, c Cuenta) Decision {
	original, err := in.referido("movement", "reverses")
	if err == nil {
		err = checkReversal(in.Mov, original)
	}
	if err != nil {
		return Decision{Err: err}
	}
	o := original.Movimiento
	rec.Movimiento.Tipo, rec.Movimiento.Importe, rec.Movimiento.Moneda = movimiento.Cargo, o.Importe, o.Moneda
	if o.Tipo == movimiento.Cargo {
		rec.Movimiento.Tipo = movimiento.Abono
	}
	next, err := c.Mover(o.Delta().Neg(), o.Moneda)
	d := in.settle(rec, next, err)
	if len(d.Cuentas) > 0 {
		original.AnuladoPor = in.Mov.ID
		d.Marca = &original
	}
	return d
}

// checkReversal checks that m may reverse original, as recorded: only an applied abono
// or cargo that is no transfer leg and no reversal itself, not reversed yet, of the
// importe and moneda m names (if any). When original names m as its reversal, m is
// recorded already and its record answers: nothing is checked.
func checkReversal(m movimiento.Movimiento, original movimiento.Apunte) error {
	o := original.Movimiento
	var rule Rule
	var why string
	switch {
	case original.AnuladoPor == m.ID:
		return nil
	case original.AnuladoPor != "":
		rule, why = YaAnulado, "is already reversed by "+original.AnuladoPor
	case original.Estado != movimiento.Aplicado:
		rule, why = NoAplicado, "was not applied (estado "+string(original.Estado)+"): there is nothing to reverse"
	case o.Anula != "":
		rule, why = AnulaAnulacion, "is itself the reversal of "+o.Anula
	case original.Contrapartida != "":
		rule, why = AnulaTraspaso, "is a leg of a transfer with "+original.Contrapartida+", which a reversal does not undo"
	case o.Tipo != movimiento.Abono && o.Tipo != movimiento.Cargo:
		rule, why = TipoNoAnulable, "is a "+string(o.Tipo)+", which a reversal does not undo"
	case !m.Importe.IsZero() && !m.Importe.Equal(o.Importe):
		rule, why = ImporteAnulacion, fmt.Sprintf("has importe %s, not the %s the reversal says", o.Importe, m.Importe)
	case m.Moneda != "" && m.Moneda != o.Moneda:
		rule, why = MonedaAnulacion, fmt.Sprintf("is in %s, not the %s the reversal says", o.Moneda, m.Moneda)
	default: // an importe without its moneda is in the original's
		return movimiento.CheckDecimals(m.Importe, o.Moneda)
	}
	return broke(rule, m.Cuenta, "movement %s %s", o.ID, why)
}
