package cuenta

import (
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// reverse decides an anulacion: a refund of the original it names, recorded as the
// opposite abono or cargo of what it gives back, by a debit's rules when it takes money
// back. An abono or cargo may be refunded in parts (each its own anulacion, at most
// MaxReembolsos) until nothing is left; a transfer or reparto, named on its payer, is
// reversed whole, every leg at once. The original is marked with what was refunded.
func (in Input) reverse(rec movimiento.Apunte) Decision {
	original, err := in.referido("movement", "reverses")
	if err == nil {
		err = checkReversal(in.Mov, original)
	}
	if err != nil {
		return Decision{Err: err}
	}
	o := original.Movimiento
	importe := in.Mov.Importe
	if importe.IsZero() { // omitted: all that is left
		importe = original.Restante()
	}
	rec.Movimiento.Importe, rec.Movimiento.Moneda = importe, o.Moneda
	rec.Contrapartida, rec.Partes = original.Contrapartida, original.Partes
	d := in.apply(refund(rec, original), o.Moneda)
	if len(d.Cuentas) > 0 && !isRecorded(in.Mov, original) { // recorded: its own record answers
		marked := refunded(original, in.Mov.ID, importe)
		d.Marca = &marked
	}
	return d
}

// refund is the records of refunding original, whose refund's record is rec (of the
// importe refunded): the opposite of what original did to its account and, for a
// transfer or reparto, a debit leg on each account it credited, naming the payer.
func refund(rec movimiento.Apunte, original movimiento.Apunte) []movimiento.Apunte {
	rec.Movimiento.Tipo = movimiento.Cargo
	if original.Movimiento.Tipo == movimiento.Cargo {
		rec.Movimiento.Tipo = movimiento.Abono
	}
	return withLegs(rec, movimiento.Cargo, credited(original))
}

// credited is the accounts a transfer or reparto, recorded on its payer as original,
// credited, and what each received; none for other movements (a credit leg names its
// payer, which it did not credit).
func credited(original movimiento.Apunte) []movimiento.Parte {
	if len(original.Partes) == 0 && original.Movimiento.Tipo != movimiento.Cargo {
		return nil
	}
	return original.Contrapartidas()
}

// refunded is original as it reads once refund id gave back importe of it.
func refunded(original movimiento.Apunte, id string, importe decimal.Decimal) movimiento.Apunte {
	original.Reembolsado = original.Reembolsado.Add(importe)
	original.Anulaciones = append(slices.Clip(original.Anulaciones), id)
	if original.Restante().Sign() <= 0 {
		original.AnuladoPor = id
	}
	return original
}

// isRecorded reports whether original names m as one of its refunds: m is recorded
// already, and its record answers.
func isRecorded(m movimiento.Movimiento, original movimiento.Apunte) bool {
	return original.AnuladoPor == m.ID || slices.Contains(original.Anulaciones, m.ID)
}

// checkReversal checks that m may refund original, as recorded: an applied abono or
// cargo with something left to refund, or a transfer or reparto named on its payer and
// reversed whole; no reversal itself; at most what is left, and in the moneda m names
// (if any). When original names m as one of its refunds, m is recorded already and its
// record answers: nothing is checked.
func checkReversal(m movimiento.Movimiento, original movimiento.Apunte) error {
	o := original.Movimiento
	var rule Rule
	var why string
	switch left := original.Restante(); {
	case isRecorded(m, original):
		return nil
	case original.AnuladoPor != "" || (original.Estado == movimiento.Aplicado && left.Sign() <= 0):
		rule, why = YaAnulado, "is already reversed by "+lastRefund(original)
	case original.Estado != movimiento.Aplicado:
		rule, why = NoAplicado, "was not applied (estado "+string(original.Estado)+"): there is nothing to reverse"
	case o.Anula != "":
		rule, why = AnulaAnulacion, "is itself the reversal of "+o.Anula
	case original.Contrapartida != "" && o.Tipo == movimiento.Abono:
		rule, why = AnulaTraspaso, "is the credit leg of a transfer or reparto from "+original.Contrapartida+": a reversal names it on that account"
	case o.Tipo != movimiento.Abono && o.Tipo != movimiento.Cargo:
		rule, why = TipoNoAnulable, "is a "+string(o.Tipo)+", which a reversal does not undo"
	case len(credited(original)) > 0 && !m.Importe.IsZero() && !m.Importe.Equal(o.Importe):
		rule, why = ImporteAnulacion, fmt.Sprintf("moves %s between accounts and is reversed whole, not the %s the reversal says", o.Importe, m.Importe)
	case m.Importe.GreaterThan(left):
		rule, why = ImporteAnulacion, fmt.Sprintf("has %s left to refund; a refund of %s is more", left, m.Importe)
	case len(original.Anulaciones) >= movimiento.MaxReembolsos:
		rule, why = DemasiadosReembolsos, fmt.Sprintf("has %d refunds, the most one movement takes", len(original.Anulaciones))
	case m.Moneda != "" && m.Moneda != o.Moneda:
		rule, why = MonedaAnulacion, fmt.Sprintf("is in %s, not the %s the reversal says", o.Moneda, m.Moneda)
	default: // an importe without its moneda is in the original's
		return movimiento.CheckDecimals(m.Importe, o.Moneda)
	}
	return broke(rule, m.Cuenta, "movement %s %s", o.ID, why)
}

// lastRefund names the refund that completed original's, or its last one.
func lastRefund(original movimiento.Apunte) string {
	if original.AnuladoPor != "" || len(original.Anulaciones) == 0 {
		return original.AnuladoPor
	}
	return original.Anulaciones[len(original.Anulaciones)-1]
}
