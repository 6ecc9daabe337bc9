package idempotencia

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// ApplyAll applies deliveries one after the other, each with at least three calls
// (reserve, effect, mark): every movement needs its own reservation. After Config.Hook
// stops one, the rest fail transiently, as if the process had died.
func (s *Service) ApplyAll(ctx context.Context, entregas []ledger.Entrega) []ledger.Result {
	results := make([]ledger.Result, len(entregas))
	var stop error
	for i, e := range entregas {
		if stop != nil {
			results[i] = transient(stop)
			continue
		}
		results[i], stop = s.apply(ctx, e)
	}
	return results
}

// apply runs one delivery through reserve, effect and mark; stop is the hook's error.
func (s *Service) apply(ctx context.Context, e ledger.Entrega) (r ledger.Result, stop error) {
	if e.Refused != nil { // the baseline does not answer older releases' records
		return ledger.Result{Outcome: ledger.Failed, Err: &ledger.PermanentError{Err: e.Refused}}, nil
	}
	switch e.Mov.Tipo {
	case movimiento.Abono, movimiento.Cargo, movimiento.Traspaso:
	default:
		return ledger.Result{Outcome: ledger.Failed, Err: &ledger.PermanentError{Err: fmt.Errorf("%w: %s", ErrUnsupported, e.Mov.Tipo)}}, nil
	}
	now := s.cfg.Now()
	until := now.Add(s.cfg.InProgress)
	if deadline, ok := ctx.Deadline(); ok {
		until = now.Add(time.Until(deadline))
	}
	res := reservation{key: recordKey(e, s.cfg.KeyFromMessageID), huella: e.Mov.Huella(), origen: e.Origen,
		now: now, until: until, expira: now.Add(s.cfg.Expiry)}
	_, err := s.db.PutItem(ctx, reserveInput(s.cfg.Table, res))
	switch v := classify(err); v.kind {
	case done:
	case refused:
		return s.taken(ctx, res, e.Mov, v.item), nil
	default:
		return fail(v), nil
	}
	if err := s.cfg.Hook(ctx, AfterReserve, e.Mov); err != nil {
		return transient(err), err
	}

	debit := e.Mov // a transfer's first effect is the debit of cuenta
	if debit.Tipo == movimiento.Traspaso {
		debit.Tipo = movimiento.Cargo
	}
	_, err = s.db.UpdateItem(ctx, effectInput(s.cfg.Accounts, debit, now))
	switch v := classify(err); v.kind {
	case done:
	case refused:
		return s.ruleBroken(ctx, res, debit, v.item), nil
	default:
		return s.release(ctx, res.key, fail(v)), nil
	}
	if e.Mov.Tipo == movimiento.Traspaso {
		if err := s.cfg.Hook(ctx, BetweenLegs, e.Mov); err != nil {
			return transient(err), err
		}
		credit := e.Mov
		credit.Tipo, credit.Cuenta = movimiento.Abono, e.Mov.Destino
		if r, ok := s.credit(ctx, res, debit, credit, now); !ok {
			return r, nil
		}
	}
	if err := s.cfg.Hook(ctx, AfterEffect, e.Mov); err != nil {
		return transient(err), err
	}

	// Unmarked, the record stays en-curso: once its in-progress expiry passes, a
	// redelivery applies the effect again.
	if _, err := s.db.UpdateItem(ctx, markInput(s.cfg.Table, res.key, ledger.Aplicado, "", s.cfg.Now().Add(s.cfg.Expiry))); err != nil {
		return transient(fmt.Errorf("%w: %w", ErrNotMarked, classify(err).err)), nil
	}
	return ledger.Result{Outcome: ledger.Applied, Estado: ledger.Aplicado, Attempts: 1}, s.cfg.Hook(ctx, AfterMark, e.Mov)
}

// credit makes a transfer's credit, a second ADD not atomic with the debit. When it
// fails, the debit is undone by a third ADD and the reservation released; ok is false.
func (s *Service) credit(ctx context.Context, res reservation, debit, credit movimiento.Movimiento, now time.Time) (r ledger.Result, ok bool) {
	_, err := s.db.UpdateItem(ctx, effectInput(s.cfg.Accounts, credit, now))
	v := classify(err)
	if v.kind == done {
		return ledger.Result{}, true
	}
	undo := debit
	undo.Tipo = movimiento.Abono
	if _, err := s.db.UpdateItem(ctx, effectInput(s.cfg.Accounts, undo, now)); err != nil {
		return transient(fmt.Errorf("idempotencia: transfer %s: the credit failed (%w) and the debit stands: %w", debit.ID, v.err, err)), false
	}
	if v.kind != refused {
		return s.release(ctx, res.key, fail(v)), false
	}
	a, err := decodeAccount(v.item)
	if err != nil {
		return s.release(ctx, res.key, transient(err)), false
	}
	return s.release(ctx, res.key, permanent(&cuenta.MonedaDistintaError{Cuenta: credit.Cuenta, Moneda: a.Moneda, MonedaMovimiento: credit.Moneda})), false
}

// taken decides a delivery whose key was reserved, by the record (ALL_OLD or read back).
func (s *Service) taken(ctx context.Context, res reservation, m movimiento.Movimiento, item versioned.Item) ledger.Result {
	if len(item) == 0 {
		out, err := s.db.GetItem(ctx, versioned.GetInput(s.cfg.Table, keyOf(res.key)))
		if v := classify(err); v.kind != done {
			return fail(v)
		}
		item = out.Item
	}
	if len(item) == 0 { // released or expired and deleted since: the next delivery decides
		return transient(fmt.Errorf("idempotencia: key %s was taken and is gone", res.key))
	}
	rec, err := decodeRecord(item)
	if err != nil {
		return transient(err)
	}
	if !m.MatchesHuella(rec.Huella) {
		return ledger.Result{Outcome: ledger.ConflictingDuplicate, Attempts: 1,
			Err: &ledger.DuplicadoConflictivoError{Cuenta: m.Cuenta, ID: m.ID, HuellaGuardada: rec.Huella, HuellaNueva: res.huella}}
	}
	if rec.Estado == hecho {
		return ledger.Result{Outcome: ledger.Duplicate, Estado: ledger.Estado(rec.Resultado), Motivo: rec.Motivo, Attempts: 1}
	}
	return transient(&InProgressError{Key: res.key, Until: time.UnixMilli(rec.Hasta)})
}

// ruleBroken decides a delivery whose effect the account's condition refused: another
// currency (permanent), or a balance short of a cargo (the funds policy).
func (s *Service) ruleBroken(ctx context.Context, res reservation, m movimiento.Movimiento, item versioned.Item) ledger.Result {
	a, err := decodeAccount(item)
	if err != nil {
		return s.release(ctx, res.key, transient(err))
	}
	if len(item) > 0 && a.Moneda != m.Moneda {
		return s.release(ctx, res.key, permanent(&cuenta.MonedaDistintaError{Cuenta: m.Cuenta, Moneda: a.Moneda, MonedaMovimiento: m.Moneda}))
	}
	insuf := &cuenta.SaldoInsuficienteError{Cuenta: m.Cuenta, Moneda: m.Moneda, Saldo: a.Saldo.Decimal, Limite: a.Limite.Decimal, Importe: m.Importe}
	if s.cfg.InsufficientFunds != ledger.Reject {
		return s.release(ctx, res.key, transient(insuf))
	}
	mark := markInput(s.cfg.Table, res.key, ledger.Rechazado, insuf.Error(), s.cfg.Now().Add(s.cfg.Expiry))
	if _, err := s.db.UpdateItem(ctx, mark); err != nil {
		return s.release(ctx, res.key, transient(classify(err).err))
	}
	return ledger.Result{Outcome: ledger.Rejected, Estado: ledger.Rechazado, Motivo: insuf.Error(), Attempts: 1}
}

// release deletes the reservation after a failed effect and returns r.
func (s *Service) release(ctx context.Context, key string, r ledger.Result) ledger.Result {
	if _, err := s.db.DeleteItem(ctx, releaseInput(s.cfg.Table, key)); err != nil {
		r.Err = errors.Join(r.Err, fmt.Errorf("idempotencia: release %s: %w", key, classify(err).err))
	}
	return r
}

func permanent(err error) ledger.Result {
	return ledger.Result{Outcome: ledger.Failed, Attempts: 1, Err: &ledger.PermanentError{Err: err}}
}

func transient(err error) ledger.Result {
	return ledger.Result{Outcome: ledger.Failed, Attempts: 1, Err: &ledger.TransientError{Attempts: 1, Err: err}}
}

// fail is the result of a call that neither succeeded nor was refused by a condition.
func fail(v verdict) ledger.Result {
	if v.kind == rejected {
		return permanent(v.err)
	}
	return transient(v.err)
}

// kind is what a DynamoDB answer means for the baseline's flow.
type kind int

const (
	done     kind = iota
	refused       // the condition failed: item is the stored one, if returned
	rejected      // DynamoDB refused the request itself: retrying cannot help
	failed        // anything else, after the SDK's own retries: a retry may help
)

type verdict struct {
	kind kind
	item versioned.Item
	err  error
}

// classify reads every DynamoDB answer through versioned's classification.
func classify(err error) verdict {
	if err == nil {
		return verdict{kind: done}
	}
	if item, ok := versioned.ConditionFailed(err); ok {
		return verdict{kind: refused, item: item, err: err}
	}
	if versioned.NeverAccepted(err) {
		return verdict{kind: rejected, err: fmt.Errorf("idempotencia: request rejected: %w", err)}
	}
	return verdict{kind: failed, err: fmt.Errorf("idempotencia: %w", err)}
}
