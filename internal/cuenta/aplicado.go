package cuenta

import "time"

// AplicadoEn is the time a movement decided at now is applied at (its aplicado): now,
// or the latest Aplicado of the accounts it writes when that is later. A consumer whose
// clock runs behind another's thus never stamps an account's movement earlier than the
// one before it, so an account's stamps never go back in seq order and "its balance at
// an instant" names one point of its statement. The price: a writer whose clock runs
// ahead pulls the account's later stamps forward, until the others' clocks catch up.
func AplicadoEn(now time.Time, cuentas ...Cuenta) time.Time {
	t := now
	for _, c := range cuentas {
		if c.Aplicado.After(t) {
			t = c.Aplicado
		}
	}
	return t
}

// stamped is d with every record it creates stamped at the time AplicadoEn gives for
// now, and each account it writes (and stored, which it may leave unchanged) remembering
// it: the next movement of any of them is never stamped earlier.
func stamped(d Decision, now time.Time, stored *Cuenta) Decision {
	if stored != nil {
		now = AplicadoEn(now, *stored)
	}
	t := AplicadoEn(now, d.Cuentas...)
	for i := range d.Apuntes {
		d.Apuntes[i].Aplicado = t
	}
	for i := range d.Cuentas {
		d.Cuentas[i].Aplicado = t
	}
	return d
}
