package demo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/worker"
)

// Balance is one account's final balance next to what the workload says it must be.
type Balance struct {
	Cuenta   string
	Saldo    decimal.Decimal
	Expected decimal.Decimal
}

// check reads back what the ledger recorded for w at now: each movement applied (every
// leg of a transfer or reparto and of a reversal of one, each refund named by its
// original, a hold in the fate w gives it) and, when answers is not nil, answered as
// its record says it was applied; none refused by design recorded; each movement
// refunded showing what its refunds gave back; every balance w's. It returns the
// balances, sorted, and what is wrong.
func check(ctx context.Context, r *store.Reader, w sim.Workload, now time.Time, answers *watch) ([]Balance, []string, error) {
	rec, err := readRecords(ctx, r, w)
	if err != nil {
		return nil, nil, err
	}
	fate := fates(w)
	var wrong []string
	for _, m := range w.Movements {
		wrong = append(wrong, checkRecorded(ctx, r, rec, m, fate, now, answers)...)
	}
	for _, m := range w.Refused {
		switch _, err := r.Apunte(ctx, m.Cuenta, m.ID); {
		case err == nil:
			wrong = append(wrong, fmt.Sprintf("%s %s of %s is recorded, but built to be refused", m.Tipo, m.ID, m.Cuenta))
		case !errors.Is(err, store.ErrNotFound):
			return nil, nil, err
		}
	}
	refunded, err := checkRefunded(ctx, r, rec, w)
	if err != nil {
		return nil, nil, err
	}
	balances, off, err := checkBalances(ctx, r, w)
	return balances, slices.Concat(wrong, refunded, off), err
}

// fates is what the workload does with each hold, by cuenta/id: captured, released, or
// left to expire.
func fates(w sim.Workload) map[string]movimiento.Estado {
	fate := map[string]movimiento.Estado{}
	for _, m := range w.Movements {
		switch m.Tipo {
		case movimiento.Retencion:
			fate[key(m.Cuenta, m.ID)] = movimiento.Expirada
		case movimiento.Captura:
			fate[key(m.Cuenta, m.Retencion)] = movimiento.Capturada
		case movimiento.Liberacion:
			fate[key(m.Cuenta, m.Retencion)] = movimiento.Liberada
		}
	}
	return fate
}

// records is what the ledger recorded for a workload's movements, by key: each read
// once, and what the checks look up.
type records map[string]movimiento.Apunte

// readRecords reads the record of each of w's movements; one not recorded is left out.
func readRecords(ctx context.Context, r *store.Reader, w sim.Workload) (records, error) {
	rec := make(records, len(w.Movements))
	for _, m := range w.Movements {
		switch a, err := r.Apunte(ctx, m.Cuenta, m.ID); {
		case err == nil:
			rec[key(m.Cuenta, m.ID)] = a
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	return rec, nil
}

// apunte is the record of id on cuenta: the one read, or else read now (one outside
// the workload, or not recorded, whose error says so).
func (rec records) apunte(ctx context.Context, r *store.Reader, cuenta, id string) (movimiento.Apunte, error) {
	if a, ok := rec[key(cuenta, id)]; ok {
		return a, nil
	}
	return r.Apunte(ctx, cuenta, id)
}

// checkRecorded says what is wrong with m's record at now: not recorded, in another
// state than its fate, answered otherwise than its record says (answers), a leg
// missing (checkLinks).
func checkRecorded(ctx context.Context, r *store.Reader, rec records, m movimiento.Movimiento, fate map[string]movimiento.Estado, now time.Time, answers *watch) []string {
	a, ok := rec[key(m.Cuenta, m.ID)]
	if !ok {
		return []string{fmt.Sprintf("%s %s of %s is not recorded", m.Tipo, m.ID, m.Cuenta)}
	}
	var wrong []string
	want := movimiento.Aplicado
	if m.Tipo == movimiento.Retencion {
		want = fate[key(m.Cuenta, m.ID)]
	}
	if got := a.EstadoAt(now); got != want {
		wrong = append(wrong, fmt.Sprintf("%s %s of %s is %s, not %s", m.Tipo, m.ID, m.Cuenta, got, want))
	}
	if answers != nil {
		if why := answers.origin(m, a.Origen); why != "" {
			wrong = append(wrong, why)
		}
	}
	if err := checkLinks(ctx, r, rec, m); err != nil {
		wrong = append(wrong, fmt.Sprintf("%s %s of %s: %v", m.Tipo, m.ID, m.Cuenta, err))
	}
	return wrong
}

// checkLinks says what is wrong with the records m links to: each leg of a transfer or
// reparto; for a refund, its original naming it and, for a reversal of a transfer or
// reparto, each leg taken back.
func checkLinks(ctx context.Context, r *store.Reader, rec records, m movimiento.Movimiento) error {
	if m.Tipo != movimiento.Anulacion {
		return legsRecorded(ctx, r, m.ID, m.Cuenta, sim.Credited(m))
	}
	o, err := rec.apunte(ctx, r, m.Cuenta, m.Anula)
	switch {
	case err != nil:
		return err
	case !slices.Contains(o.Anulaciones, m.ID):
		return fmt.Errorf("%s does not name it among its refunds %v", m.Anula, o.Anulaciones)
	}
	return legsRecorded(ctx, r, m.ID, m.Cuenta, o.Contrapartidas())
}

// legsRecorded says which leg of the movement id of payer is not recorded applied on
// its account, of its part, naming the payer.
func legsRecorded(ctx context.Context, r *store.Reader, id, payer string, legs []movimiento.Parte) error {
	for _, p := range legs {
		leg, err := r.Apunte(ctx, p.Cuenta, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("its leg on %s is not recorded", p.Cuenta)
		case err != nil:
			return err
		case leg.Estado != movimiento.Aplicado || leg.Contrapartida != payer || !leg.Movimiento.Importe.Equal(p.Importe):
			return fmt.Errorf("its leg on %s is %s of %s naming %q, not applied of %s naming %s",
				p.Cuenta, leg.Estado, leg.Movimiento.Importe, leg.Contrapartida, p.Importe, payer)
		}
	}
	return nil
}

// checkRefunded looks up every movement w refunds and says which does not show what w's
// refunds of it gave back: reembolsado their sum, anulado_por set once nothing is left.
func checkRefunded(ctx context.Context, r *store.Reader, rec records, w sim.Workload) ([]string, error) {
	mov := byKey(w)
	given := map[string]decimal.Decimal{}
	for _, m := range w.Movements {
		if m.Tipo == movimiento.Anulacion {
			o, importe := mov[key(m.Cuenta, m.Anula)], m.Importe
			if importe.IsZero() { // all of it
				importe = o.Importe
			}
			given[key(o.Cuenta, o.ID)] = given[key(o.Cuenta, o.ID)].Add(importe)
		}
	}
	var wrong []string
	for _, k := range slices.Sorted(maps.Keys(given)) {
		o := mov[k]
		a, err := rec.apunte(ctx, r, o.Cuenta, o.ID)
		switch {
		case errors.Is(err, store.ErrNotFound): // check says so
		case err != nil:
			return nil, err
		case !a.Reembolsado.Equal(given[k]):
			wrong = append(wrong, fmt.Sprintf("%s %s of %s shows %s refunded; its refunds gave back %s", o.Tipo, o.ID, o.Cuenta, a.Reembolsado, given[k]))
		case (a.AnuladoPor != "") != given[k].Equal(o.Importe):
			wrong = append(wrong, fmt.Sprintf("%s %s of %s is refunded %s of %s, yet anulado_por is %q", o.Tipo, o.ID, o.Cuenta, given[k], o.Importe, a.AnuladoPor))
		}
	}
	return wrong, nil
}

// checkBalances reads every account's balance, sorted, and says which is not w's.
func checkBalances(ctx context.Context, r *store.Reader, w sim.Workload) ([]Balance, []string, error) {
	var balances []Balance
	var wrong []string
	for _, c := range slices.Sorted(maps.Keys(w.Saldos)) {
		saldo := decimal.Zero // an account that received no movement has no item yet
		switch got, err := r.Cuenta(ctx, c); {
		case err == nil:
			saldo = got.Saldo
		case !errors.Is(err, store.ErrNotFound):
			return nil, nil, err
		}
		balances = append(balances, Balance{Cuenta: c, Saldo: saldo, Expected: w.Saldos[c]})
		if !saldo.Equal(w.Saldos[c]) {
			wrong = append(wrong, fmt.Sprintf("%s has %s, not %s", c, saldo, w.Saldos[c]))
		}
	}
	return balances, wrong, nil
}

// checkOutcomes compares what the consumer answered each message with what the schedule
// sent: one application per movement, every duplicate recognised as one, every
// conflicting replay refused as one, every malformed and refused-by-design message
// failed, nothing rejected (the demo's policy is retry). A delivery whose answer was
// lost after its commit (a deadline passed on a loaded machine) is recognised as a
// duplicate when it comes back, so a movement may be answered applied or duplicate: only
// their sum is exact here; check judges each movement's answers against its record.
func checkOutcomes(o worker.Outcomes, w sim.Workload, s sim.Schedule) []string {
	var wrong []string
	if o.Applied > len(w.Movements) {
		wrong = append(wrong, fmt.Sprintf("%d messages ended applied, more than the %d movements", o.Applied, len(w.Movements)))
	}
	for _, c := range []struct {
		outcome   store.Outcome
		got, want int
	}{
		{store.Applied + " or " + store.Duplicate, o.Applied + o.Duplicate, len(w.Movements) + s.Duplicates},
		{store.ConflictingDuplicate, o.ConflictingDuplicate, s.Conflicting},
		{store.Failed, o.Failed, s.Malformed + len(w.Refused)},
		{store.Rejected, o.Rejected, 0},
	} {
		if c.got != c.want {
			wrong = append(wrong, fmt.Sprintf("%d messages ended %s, not the %d sent to", c.got, c.outcome, c.want))
		}
	}
	return wrong
}

// checkFreeze checks that the freeze held the frozen account's debits back: some came
// back while it was frozen, and none was applied before it was unfrozen.
func checkFreeze(ctx context.Context, r *store.Reader, w sim.Workload, f Freeze) ([]string, error) {
	if f.Cuenta == "" {
		return nil, nil
	}
	var wrong []string
	if f.Waited == 0 {
		wrong = append(wrong, fmt.Sprintf("the freeze of %s held back none of its debits", f.Cuenta))
	}
	isDebit := debits(w)
	for _, m := range w.Movements {
		if m.Cuenta != f.Cuenta || !isDebit[key(m.Cuenta, m.ID)] {
			continue
		}
		a, err := r.Apunte(ctx, m.Cuenta, m.ID)
		switch {
		case errors.Is(err, store.ErrNotFound): // check says so
			continue
		case err != nil:
			return nil, err
		}
		// A writer stamps a batch when it starts, so a debit applied just after the
		// unfreeze may carry a time up to one invocation earlier.
		if !a.Aplicado.Before(f.Desde) && a.Aplicado.Before(f.Desde.Add(f.Frozen-invocation)) {
			wrong = append(wrong, fmt.Sprintf("%s %s of %s was applied at %s, while it was frozen", m.Tipo, m.ID, m.Cuenta, a.Aplicado.UTC().Format(time.RFC3339)))
		}
	}
	return wrong, nil
}

// checkHeld audits the table at now, while the holds left to lapse are still held: each
// must be reserved in its account, which the audit at the end, once they have lapsed,
// can no longer see. It returns what the audit found wrong.
func checkHeld(ctx context.Context, db audit.Client, table string, now time.Time) ([]string, error) {
	report, err := audit.Run(ctx, db, table, audit.Options{Now: func() time.Time { return now }})
	if err != nil {
		return nil, err
	}
	var wrong []string
	for _, b := range report.Broken {
		wrong = append(wrong, fmt.Sprintf("before the holds lapsed, account %s: %s", b.Cuenta, b.Reason))
	}
	for _, b := range report.Unverified {
		wrong = append(wrong, fmt.Sprintf("before the holds lapsed, account %s could not be verified: %s", b.Cuenta, b.Reason))
	}
	return wrong, nil
}
