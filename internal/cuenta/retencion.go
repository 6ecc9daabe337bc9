package cuenta

import (
	"cmp"
	"fmt"
	"maps"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Limits of holds: an account keeps at most MaxRetenciones active holds in its item (at
// most 400 KB, and every write carries them); a hold lapses at most MaxExpira ahead.
const (
	MaxRetenciones = 200
	MaxExpira      = 30 * 24 * time.Hour
)

// A capture is judged at when it was sent (Input.Enviado), not when it is applied: a
// capture sent before expira and delayed by retries is honoured. ToleranciaReloj is how
// far the transport's clock and the ledger's may differ: a capture stamped less than
// that after expira was sent in time. GraciaCaptura is how late is too late: a capture
// applied GraciaCaptura or more after expira is refused, however early it was sent.
const (
	ToleranciaReloj = 5 * time.Second
	GraciaCaptura   = 24 * time.Hour
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
// (a freeze, the funds), expira after now (ExpiraPasada) and at most MaxExpira ahead
// (ExpiraLejana), and at most MaxRetenciones active (DemasiadasRetenciones). Saldo does
// not move.
func (c Cuenta) Retener(id string, importe decimal.Decimal, moneda string, expira, now time.Time) (Cuenta, error) {
	if err := c.enMoneda(moneda); err != nil {
		return c, err
	}
	switch {
	case !expira.After(now):
		return c, broke(ExpiraPasada, c.ID, "hold %s expires at or before it is taken (%s)", id, expira.UTC().Format(time.RFC3339))
	case expira.Sub(now) > MaxExpira:
		return c, broke(ExpiraLejana, c.ID, "hold %s expires more than %d days ahead", id, MaxExpira/(24*time.Hour))
	case len(c.Retenciones) >= MaxRetenciones:
		return c, broke(DemasiadasRetenciones, c.ID, "hold %s cannot be taken: too many active holds (at most %d)", id, MaxRetenciones)
	}
	if err := c.debitable(importe); err != nil {
		return c, err
	}
	c.Retenciones = maps.Collect(maps.All(c.Retenciones)) // a copy, never nil
	c.Retenciones[id] = Retencion{Importe: importe, Expira: expira}
	return c, nil
}

// Capturar returns the account with the hold id, of held, posted as a debit of importe
// (the rest is released) and gone from its active holds. importe may be at most held
// (CapturaExcesiva), in the account's currency's decimals (DecimalesRetencion). The
// amount was reserved, so neither the funds nor a later freeze can refuse it; a hold
// the account does not hold reserves nothing (RetencionInactiva).
func (c Cuenta) Capturar(id string, held, importe decimal.Decimal) (Cuenta, error) {
	if _, active := c.Retenciones[id]; !active {
		return c, broke(RetencionInactiva, c.ID, "does not hold %s, although its record holds it: settled since it was read, or lapsed by another writer's clock", id)
	}
	if err := c.capturable(id, held, importe); err != nil {
		return c, err
	}
	return c.Liberar(id).post(importe.Neg())
}

// CapturarVencida returns the account with a capture of the lapsed hold id, of held,
// posted as a debit of importe. The hold no longer reserves anything, so the debit's
// rules apply (a freeze, the funds); importe may be at most held (CapturaExcesiva), in
// the account's currency's decimals (DecimalesRetencion).
func (c Cuenta) CapturarVencida(id string, held, importe decimal.Decimal) (Cuenta, error) {
	if err := c.capturable(id, held, importe); err != nil {
		return c, err
	}
	if err := c.debitable(importe); err != nil {
		return c, err
	}
	return c.post(importe.Neg())
}

// capturable checks a capture of importe from the hold id, of held: at most held, in
// the account's currency's decimals.
func (c Cuenta) capturable(id string, held, importe decimal.Decimal) error {
	switch {
	case importe.GreaterThan(held):
		return broke(CapturaExcesiva, c.ID, "hold %s holds %s; a capture of %s is more", id, held, importe)
	case tooPrecise(importe, c.Moneda):
		return broke(DecimalesRetencion, c.ID, "hold %s is in %s, which has fewer decimals than the capture's %s", id, c.Moneda, importe)
	}
	return nil
}

// enTiempo reports whether a capture of a hold that lapses at expira, sent at enviado
// (zero: unknown, now) and applied at now, is in time: sent before expira (give or take
// ToleranciaReloj) and applied before expira + GraciaCaptura. A transport's time after
// now reads as now.
func enTiempo(expira, enviado, now time.Time) bool {
	if enviado.IsZero() || enviado.After(now) {
		enviado = now
	}
	return enviado.Before(expira.Add(ToleranciaReloj)) && now.Before(expira.Add(GraciaCaptura))
}

// Liberar returns the account without the active hold id, if it has it.
func (c Cuenta) Liberar(id string) Cuenta {
	if _, ok := c.Retenciones[id]; ok {
		c.Retenciones = maps.Clone(c.Retenciones)
		delete(c.Retenciones, id)
	}
	return c
}

// settleHold decides a captura or a liberacion of the hold its record names. A capture
// posts a cargo of its importe (all the hold when it names none) and frees the rest; one
// sent in time but applied after expira, when the hold has lapsed, posts it by a
// debit's rules. A release frees it all and records the importe it freed. The hold's
// record is marked settled by it, so a hold is settled at most once.
func (in Input) settleHold(rec movimiento.Apunte, c Cuenta) Decision {
	m := in.Mov
	hold, err := in.referido("hold", "settles")
	if err == nil {
		err = in.checkSettlement(hold)
	}
	if err != nil {
		return Decision{Err: err}
	}
	h := hold.Movimiento
	rec.Movimiento.Moneda = h.Moneda
	var next Cuenta
	if m.Tipo == movimiento.Liberacion {
		rec.Movimiento.Importe = h.Importe
		next = c.Liberar(h.ID)
		hold.Estado, hold.LiberadaPor = movimiento.Liberada, m.ID
	} else {
		importe := m.Importe
		if importe.IsZero() { // omitted: all of it
			importe = h.Importe
		}
		rec.Movimiento.Tipo, rec.Movimiento.Importe = movimiento.Cargo, importe
		if h.Expira.After(in.Now) {
			next, err = c.Capturar(h.ID, h.Importe, importe)
		} else { // lapsed: nothing is reserved for it any more
			next, err = c.CapturarVencida(h.ID, h.Importe, importe)
		}
		hold.Estado, hold.CapturadaPor = movimiento.Capturada, m.ID
	}
	d := in.settle(rec, next, err)
	if len(d.Cuentas) > 0 {
		d.Marca = &hold
	}
	return d
}

// checkSettlement checks that in's movement (a captura or a liberacion) may settle
// hold, as recorded: a hold still held, in the moneda the movement names (if any), and
// for a capture in time (enTiempo). An expired hold may be released (it frees nothing).
// When hold names the movement as its settlement, it is recorded already and its record
// answers: nothing is checked.
func (in Input) checkSettlement(hold movimiento.Apunte) error {
	m, h := in.Mov, hold.Movimiento
	var rule Rule
	var why string
	switch {
	case hold.CapturadaPor == m.ID || hold.LiberadaPor == m.ID:
		return nil
	case h.Tipo != movimiento.Retencion:
		rule, why = NoEsRetencion, "is a "+string(h.Tipo)+", not a hold"
	case hold.Estado == movimiento.Capturada:
		rule, why = YaCapturada, "is already captured by "+hold.CapturadaPor
	case hold.Estado == movimiento.Liberada:
		rule, why = YaLiberada, "is already released by "+hold.LiberadaPor
	case hold.Estado != movimiento.Retenida:
		rule, why = NoRetenida, "was not held (estado "+string(hold.Estado)+")"
	case m.Tipo == movimiento.Captura && !enTiempo(h.Expira, in.Enviado, in.Now):
		rule, why = Vencida, late(h.Expira, in.Enviado, in.Now)
	case m.Moneda != "" && m.Moneda != h.Moneda:
		rule, why = MonedaRetencion, fmt.Sprintf("is in %s, not the %s the %s says", h.Moneda, m.Moneda, m.Tipo)
	default: // an importe without its moneda is in the hold's
		return movimiento.CheckDecimals(m.Importe, h.Moneda)
	}
	return broke(rule, m.Cuenta, "hold %s %s", h.ID, why)
}

// late says why a capture sent at enviado and applied at now is too late for a hold
// that lapsed at expira.
func late(expira, enviado, now time.Time) string {
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	if now.Before(expira.Add(GraciaCaptura)) {
		return "expired at " + at(expira) + "; a capture sent at " + at(cmp.Or(enviado, now)) + " is too late"
	}
	return fmt.Sprintf("expired at %s; a capture applied %d hours or more after it is too late, whenever it was sent", at(expira), GraciaCaptura/time.Hour)
}
