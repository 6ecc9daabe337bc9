package idempotencia

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Apply applies deliveries one after the other, each with at least three calls
// (reserve, effect, mark): every movement needs its own reservation. After Config.Hook
// stops one, the rest fail transiently, as if the process had died. A FIFO message
// group (store.Entrega.Grupo) stops at its first failure, as the ledger's does.
func (s *Service) Apply(ctx context.Context, entregas []store.Entrega) []store.Result {
	results := make([]store.Result, len(entregas))
	var stop error
	stopped := map[string]bool{} // message groups with a failure so far
	for i, e := range entregas {
		switch {
		case stop != nil:
			results[i] = transient(stop)
			continue
		case stopped[e.Grupo]:
			results[i] = store.Result{Outcome: store.Failed, Attempts: 1, Err: store.NotAttempted(e.Grupo)}
			continue
		}
		results[i], stop = s.apply(ctx, e)
		if results[i].Err != nil && e.Grupo != "" {
			stopped[e.Grupo] = true
		}
	}
	return results
}

// apply runs one delivery through reserve, effect and mark; stop is the hook's error.
func (s *Service) apply(ctx context.Context, e store.Entrega) (r store.Result, stop error) {
	switch e.Mov.Tipo {
	case movimiento.Abono, movimiento.Cargo, movimiento.Traspaso:
	default:
		return store.Result{Outcome: store.Failed, Err: store.Permanent(fmt.Errorf("%w: %s", ErrUnsupported, e.Mov.Tipo))}, nil
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
	if _, err := s.db.UpdateItem(ctx, markInput(s.cfg.Table, res.key, movimiento.Aplicado, "", s.cfg.Now().Add(s.cfg.Expiry))); err != nil {
		return transient(fmt.Errorf("%w: %w", ErrNotMarked, classify(err).err)), nil
	}
	return store.Result{Outcome: store.Applied, Estado: movimiento.Aplicado, Attempts: 1}, s.cfg.Hook(ctx, AfterMark, e.Mov)
}

// credit makes a transfer's credit, a second ADD not atomic with the debit. When it
// fails, the debit is undone by a third ADD and the reservation released; ok is false.
func (s *Service) credit(ctx context.Context, res reservation, debit, credit movimiento.Movimiento, now time.Time) (r store.Result, ok bool) {
	_, err := s.db.UpdateItem(ctx, effectInput(s.cfg.Accounts, credit, now))
	v := classify(err)
	if v.kind == done {
		return store.Result{}, true
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
	return s.release(ctx, res.key, permanent(refusal(credit, a))), false
}

// taken decides a delivery whose key was reserved, by the record (ALL_OLD or read back).
func (s *Service) taken(ctx context.Context, res reservation, m movimiento.Movimiento, item versioned.Item) store.Result {
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
	if rec.Huella != res.huella {
		return store.Result{Outcome: store.ConflictingDuplicate, Attempts: 1,
			Err: &store.ConflictingDuplicateError{Cuenta: m.Cuenta, ID: m.ID, Stored: rec.Huella, Received: res.huella}}
	}
	if rec.Estado == hecho {
		return store.Result{Outcome: store.Duplicate, Estado: movimiento.Estado(rec.Resultado), Motivo: rec.Motivo, Attempts: 1}
	}
	return transient(&InProgressError{Key: res.key, Until: time.UnixMilli(rec.Hasta)})
}

// ruleBroken decides a delivery whose effect the account's condition refused: another
// currency (permanent), or a balance short of a cargo (the funds policy).
func (s *Service) ruleBroken(ctx context.Context, res reservation, m movimiento.Movimiento, item versioned.Item) store.Result {
	a, err := decodeAccount(item)
	if err != nil {
		return s.release(ctx, res.key, transient(err))
	}
	if len(item) > 0 && a.Moneda != m.Moneda {
		return s.release(ctx, res.key, permanent(refusal(m, a)))
	}
	insuf := refusal(m, a)
	if s.cfg.InsufficientFunds != cuenta.Reject {
		return s.release(ctx, res.key, transient(insuf))
	}
	mark := markInput(s.cfg.Table, res.key, movimiento.Rechazado, insuf.Error(), s.cfg.Now().Add(s.cfg.Expiry))
	if _, err := s.db.UpdateItem(ctx, mark); err != nil {
		return s.release(ctx, res.key, transient(classify(err).err))
	}
	return store.Result{Outcome: store.Rejected, Estado: movimiento.Rechazado, Motivo: insuf.Error(), Attempts: 1}
}

// release deletes the reservation after a failed effect and returns r.
func (s *Service) release(ctx context.Context, key string, r store.Result) store.Result {
	if _, err := s.db.DeleteItem(ctx, releaseInput(s.cfg.Table, key)); err != nil {
		r.Err = errors.Join(r.Err, fmt.Errorf("idempotencia: release %s: %w", key, classify(err).err))
	}
	return r
}

func permanent(err error) store.Result {
	return store.Result{Outcome: store.Failed, Attempts: 1, Err: store.Permanent(err)}
}

func transient(err error) store.Result {
	return store.Result{Outcome: store.Failed, Attempts: 1, Err: store.Transient(err)}
}

// fail is the result of a call that neither succeeded nor was refused by a condition.
func fail(v verdict) store.Result {
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

// refusal is the rule the account a, as stored, breaks for m by the ledger's own rules:
// another currency, or the funds of a debit.
func refusal(m movimiento.Movimiento, a account) error {
	c := cuenta.Cuenta{ID: m.Cuenta, Moneda: a.Moneda, Saldo: a.Saldo.Decimal, Limite: a.Limite.Decimal}
	if c.Moneda == "" { // no account yet: it would open in the movement's currency
		c.Moneda = m.Moneda
	}
	if _, err := c.Mover(m.Delta(), m.Moneda); err != nil {
		return err
	}
	return fmt.Errorf("idempotencia: account %s refused %s", m.Cuenta, m.ID)
}
