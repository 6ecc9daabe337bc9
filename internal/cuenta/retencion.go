package cuenta

import (
	"fmt"
	"maps"
	"time"

	"github.com/shopspring/decimal"
)

// Limits of holds: an account keeps at most MaxRetenciones active holds in its item (at
// most 400 KB, and every write carries them); a hold lapses at most MaxExpira ahead.
const (
	MaxRetenciones = 200
	MaxExpira      = 30 * 24 * time.Hour
)

// Retencion is an active hold: funds reserved until Expira.
type Retencion struct {
	Importe decimal.Decimal
	Expira  time.Time
}

// Retenido is the sum of the account's active holds.
func (c Cuenta) Retenido() decimal.Decimal {
	sum := decimal.Zero
	for _, r := range c.Retenciones {
		sum = sum.Add(r.Importe)
	}
	return sum
}

// Disponible is what a debit may take: Saldo − Retenido + Limite.
func (c Cuenta) Disponible() decimal.Decimal {
	return c.Saldo.Sub(c.Retenido()).Add(c.Limite)
}

// Vigente returns the account without the holds lapsed by now: every write and read
// drops them alike, so an expired hold needs no timer.
func (c Cuenta) Vigente(now time.Time) Cuenta {
	lapsed := func(_ string, r Retencion) bool { return !r.Expira.After(now) }
	for id, r := range c.Retenciones {
		if lapsed(id, r) {
			c.Retenciones = maps.Clone(c.Retenciones)
			maps.DeleteFunc(c.Retenciones, lapsed)
			break
		}
	}
	return c
}

// Retener returns the account holding importe until expira under id, by a debit's rules
// (a freeze, the funds), expira after now and at most MaxExpira ahead, and at most
// MaxRetenciones active. Saldo does not move.
func (c Cuenta) Retener(id string, importe decimal.Decimal, moneda string, expira, now time.Time) (Cuenta, error) {
	if moneda != c.Moneda {
		return c, &MonedaDistintaError{Cuenta: c.ID, Moneda: c.Moneda, MonedaMovimiento: moneda}
	}
	switch {
	case !expira.After(now):
		return c, &RetencionError{Cuenta: c.ID, Retencion: id, Regla: ExpiraPasada, Reason: "expires at or before it is taken (" + expira.UTC().Format(time.RFC3339) + ")"}
	case expira.Sub(now) > MaxExpira:
		return c, &RetencionError{Cuenta: c.ID, Retencion: id, Regla: ExpiraLejana, Reason: fmt.Sprintf("expires more than %d days ahead", MaxExpira/(24*time.Hour))}
	case len(c.Retenciones) >= MaxRetenciones:
		return c, &RetencionError{Cuenta: c.ID, Retencion: id, Regla: DemasiadasRetenciones, Reason: fmt.Sprintf("cannot be taken: too many active holds (at most %d)", MaxRetenciones)}
	}
	if err := c.debitable(importe); err != nil {
		return c, err
	}
	c.Retenciones = maps.Collect(maps.All(c.Retenciones)) // a copy, never nil
	c.Retenciones[id] = Retencion{Importe: importe, Expira: expira}
	return c, nil
}

// Capturar returns the account with the hold id, of held, posted as a debit of importe
// (the rest is released) and gone from its active holds. importe may be at most held,
// in the account's currency's decimals; else a *RetencionError. The amount was
// reserved, so neither the funds nor a later freeze can refuse it; a hold the account
// does not hold reserves nothing, and is refused with ErrRetencionInactiva.
func (c Cuenta) Capturar(id string, held, importe decimal.Decimal) (Cuenta, error) {
	if _, active := c.Retenciones[id]; !active {
		return c, fmt.Errorf("%w: cuenta %s does not hold %s", ErrRetencionInactiva, c.ID, id)
	}
	switch {
	case importe.GreaterThan(held):
		return c, &RetencionError{Cuenta: c.ID, Retencion: id, Regla: CapturaExcesiva, Reason: fmt.Sprintf("holds %s; a capture of %s is more", held, importe)}
	case tooPrecise(importe, c.Moneda):
		return c, &RetencionError{Cuenta: c.ID, Retencion: id, Regla: DecimalesRetencion, Reason: fmt.Sprintf("is in %s, which has fewer decimals than the capture's %s", c.Moneda, importe)}
	}
	return c.Liberar(id).post(importe.Neg())
}

// Liberar returns the account without the active hold id, if it has it.
func (c Cuenta) Liberar(id string) Cuenta {
	if _, ok := c.Retenciones[id]; ok {
		c.Retenciones = maps.Clone(c.Retenciones)
		delete(c.Retenciones, id)
	}
	return c
}
