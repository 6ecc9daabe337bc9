package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Apply applies one delivery and returns its result; the error is Result.Err.
func (l *Ledger) Apply(ctx context.Context, e ledger.Entrega) (ledger.Result, error) {
	r := l.ApplyAll(ctx, []ledger.Entrega{e})[0]
	return r, r.Err
}

// ApplyAll applies deliveries and returns one result per delivery, in the same order.
// Within each group of deliveries sharing accounts (ledger.Groups) they are checked in
// arrival order and written in as few transactions as possible (100 actions each). A
// duplicate drops out and the rest is retried; a rule failure excludes only its own
// movement; later deliveries of the same (cuenta, id) follow the first. Groups run one
// after the other; run ApplyAll per group concurrently to spread them.
func (l *Ledger) ApplyAll(ctx context.Context, entregas []ledger.Entrega) []ledger.Result {
	results := make([]ledger.Result, len(entregas))
	// One timestamp per call: a transaction rebuilt for the same state keeps its token.
	now := l.now()
	for _, g := range ledger.Groups(entregas) {
		l.applyGroup(ctx, entregas, g, results, now)
	}
	return results
}

// movID is a movement's idempotency key.
type movID struct{ cuenta, id string }

// applyGroup applies the deliveries idx (one group, in arrival order).
func (l *Ledger) applyGroup(ctx context.Context, es []ledger.Entrega, idx []int, res []ledger.Result, now time.Time) {
	leaderOf := map[movID]int{} // the first delivery of each movement
	var pending, followers, refused []int
	for _, i := range idx {
		if es[i].Refused != nil {
			refused = append(refused, i)
			continue
		}
		k := movID{es[i].Mov.Cuenta, es[i].Mov.ID}
		if _, ok := leaderOf[k]; ok {
			followers = append(followers, i)
			continue
		}
		leaderOf[k] = i
		pending = append(pending, i)
	}
	records := map[movID]versioned.Item{} // the records deliveries refer to, as last read
	reread := map[movID]bool{}            // records read again after a capture found its hold gone
	// Every round decides a delivery, ends them all, or refreshes a record lost in a
	// race, so this bound only guards against a bug looping forever.
	for round := 0; len(pending) > 0; round++ {
		if round > 2*len(idx) {
			for _, i := range pending {
				res[i] = failed(&ledger.TransientError{Err: errors.New("store: no progress applying the batch")}, res[i].Attempts)
			}
			break
		}
		pending = l.round(ctx, es, pending, records, reread, res, now)
	}
	for _, i := range followers {
		first := leaderOf[movID{es[i].Mov.Cuenta, es[i].Mov.ID}]
		res[i] = follow(es[i].Mov, es[first].Mov, res[first])
	}
	for _, i := range refused {
		res[i] = l.answerRefused(ctx, es[i])
	}
}

// unreadableAccount is an account item the plan could not decode (its index among
// the Update's keys): like an unreadable version, no retry reads it.
type unreadableAccount struct {
	index int
	err   error
}

func (e *unreadableAccount) Error() string { return e.err.Error() }

func (e *unreadableAccount) Unwrap() error { return e.err }

// unreadableAt is the index among the Update's keys of the account err says no retry
// can read: its version (versioned.UnreadableError) or the rest of its item.
func unreadableAt(err error) (int, bool) {
	var version *versioned.UnreadableError
	var item *unreadableAccount
	switch {
	case errors.As(err, &version):
		return version.Index, true
	case errors.As(err, &item):
		return item.index, true
	}
	return 0, false
}

// answerRefused answers a delivery today's rules refuse (ledger.Entrega.Refused) by its
// record alone, read once the rest of its group is applied: a duplicate (or a
// conflicting one) when its key is recorded, else today's refusal, permanent. It reads
// nothing else and writes nothing, so it never decides for another delivery.
func (l *Ledger) answerRefused(ctx context.Context, e ledger.Entrega) ledger.Result {
	m := e.Mov
	item, err := l.movement(ctx, movID{m.Cuenta, m.ID})
	switch {
	case err != nil:
		return failed(&ledger.TransientError{Err: err}, 0)
	case len(item) == 0:
		return failed(&ledger.PermanentError{Err: e.Refused}, 0)
	}
	return existing(m, item, 0)
}

// round runs one optimistic-locking update over the first chunk of the pending
// deliveries and returns those still pending: beyond the chunk, or not known to be
// duplicates when a transaction was refused for others.
func (l *Ledger) round(ctx context.Context, es []ledger.Entrega, pending []int, records map[movID]versioned.Item, reread map[movID]bool, res []ledger.Result, now time.Time) []int {
	chunk, cuentas := nextChunk(es, pending)
	if err := l.read(ctx, es, chunk, records); err != nil {
		return failAll(pending, res, err, 0)
	}
	p := &planner{entregas: es, chunk: chunk, cuentas: cuentas, records: records, policy: l.policy, now: now, known: l.known}
	keys := make([]versioned.Item, len(cuentas))
	for i, c := range cuentas {
		keys[i] = cuentaKey(c)
	}
	r, err := l.store.Update(ctx, keys, p.plan)

	var exists *versioned.ExistsError
	var changed *versioned.ChangedError
	badAt, unreadable := unreadableAt(err)
	switch {
	case err == nil:
		l.remember(p.written, r.Versions)
		// A record read as missing may be among those just written: read it again.
		maps.DeleteFunc(records, func(_ movID, item versioned.Item) bool { return len(item) == 0 })
		var again []int
		for _, d := range p.decisions {
			m := es[d.entrega].Mov
			k := movID{m.Cuenta, referred(m)}
			if errors.Is(d.err, cuenta.ErrRetencionInactiva) && !reread[k] {
				// The hold's record was read before its account moved on (a capture or
				// release that won a race): read it again, once, to name the winner.
				delete(records, k)
				reread[k] = true
				res[d.entrega].Attempts += r.Attempts
				again = append(again, d.entrega)
				continue
			}
			res[d.entrega] = d.result(res[d.entrega].Attempts + r.Attempts)
			if d.replace != nil { // what the record marked says now, for the next round
				records[k] = d.replace.Item
			}
		}
		return append(again, pending[len(chunk):]...) // the chunk is a prefix of pending
	case errors.As(err, &exists):
		resolved := map[int]bool{}
		for _, rec := range exists.Records {
			d := p.decisions[p.guarded[rec.Index]]
			if resolved[d.entrega] { // a transfer's credit leg, after its own record: that one answers
				continue
			}
			res[d.entrega] = existing(es[d.entrega].Mov, rec.Item, res[d.entrega].Attempts+r.Attempts)
			resolved[d.entrega] = true
		}
		return l.still(pending, resolved, res, r.Attempts)
	case errors.As(err, &changed):
		// A record to mark changed since it was read: the next round decides on it.
		for _, rec := range changed.Records {
			m := es[p.decisions[p.replaced[rec.Index]].entrega].Mov
			records[movID{m.Cuenta, referred(m)}] = rec.Item
		}
		return l.still(pending, nil, res, r.Attempts)
	case unreadable:
		// No retry reads that account: what touches it is permanent. The rest of the
		// group comes back, to apply in a batch without it.
		bad := cuentas[badAt]
		why := err // an item's error names its account; a version's does not
		if errors.Is(err, versioned.ErrUnreadable) {
			why = fmt.Errorf("store: account %s: %w", bad, err)
		}
		for _, i := range pending {
			n := res[i].Attempts + r.Attempts
			if m := es[i].Mov; m.Cuenta == bad || m.Destino == bad {
				res[i] = failed(&ledger.PermanentError{Err: why}, n)
			} else {
				res[i] = failed(&ledger.TransientError{Attempts: n, Err: fmt.Errorf("store: the batch touches account %s, which cannot be read: %w", bad, err)}, n)
			}
		}
		return nil
	default:
		// Nothing after it may be applied either: that would break the arrival order.
		return failAll(pending, res, err, r.Attempts)
	}
}

// failAll fails the pending deliveries with err, after attempts more, and leaves none.
func failAll(pending []int, res []ledger.Result, err error, attempts int) []int {
	for _, i := range pending {
		n := res[i].Attempts + attempts
		res[i] = failed(classify(err, n), n)
	}
	return nil
}

// still is pending without the resolved deliveries, counting the attempts spent.
func (l *Ledger) still(pending []int, resolved map[int]bool, res []ledger.Result, attempts int) []int {
	var out []int
	for _, i := range pending {
		if !resolved[i] {
			res[i].Attempts += attempts
			out = append(out, i)
		}
	}
	return out
}

// referred is the id of the record m marks: the movement a reversal undoes, the hold a
// capture or release settles; "" for none.
func referred(m movimiento.Movimiento) string { return cmp.Or(m.Anula, m.Retencion) }

// read fetches, strongly consistent, the records the chunk refers to that no earlier
// round read.
func (l *Ledger) read(ctx context.Context, es []ledger.Entrega, chunk []int, records map[movID]versioned.Item) error {
	for _, i := range chunk {
		m := es[i].Mov
		k := movID{m.Cuenta, referred(m)}
		if _, seen := records[k]; k.id == "" || seen {
			continue
		}
		item, err := l.movement(ctx, k)
		if err != nil {
			return err
		}
		records[k] = item // empty: not recorded (yet)
	}
	return nil
}

// movement reads movement k's item, strongly consistent; empty when not recorded.
func (l *Ledger) movement(ctx context.Context, k movID) (versioned.Item, error) {
	out, err := l.db.GetItem(ctx, versioned.GetInput(l.table, movKey(k.cuenta, k.id)))
	if err != nil {
		return nil, fmt.Errorf("store: read movement %s of cuenta %s: %w", k.id, k.cuenta, err)
	}
	return out.Item, nil
}

// classify wraps an error that stopped a transaction as permanent (DynamoDB can never
// accept the request, or stored data cannot be read) or transient.
func classify(err error, attempts int) error {
	if errors.Is(err, ledger.ErrPermanent) {
		return err
	}
	if errors.Is(err, versioned.ErrRejected) || errors.Is(err, versioned.ErrInvalidTxn) {
		return &ledger.PermanentError{Err: err}
	}
	return &ledger.TransientError{Attempts: attempts, Err: err}
}

// nextChunk is the longest prefix of pending that fits one transaction, and the
// accounts it touches in order: at most versioned.MaxActions actions (one per record
// and per account), and no item named twice, so a movement naming an item named earlier
// in the chunk (say, a reversal of a movement written in it) waits for the next one.
func nextChunk(es []ledger.Entrega, pending []int) (chunk []int, cuentas []string) {
	named := map[movID]bool{}
	actions := 0
	for n, i := range pending {
		m := es[i].Mov
		names := []movID{{m.Cuenta, m.ID}}
		switch {
		case m.Destino != "":
			names = append(names, movID{m.Destino, m.ID})
		case referred(m) != "":
			names = append(names, movID{m.Cuenta, referred(m)})
		}
		touched := slices.DeleteFunc([]string{m.Cuenta, m.Destino}, func(c string) bool { return c == "" || slices.Contains(cuentas, c) })
		clash := slices.ContainsFunc(names, func(k movID) bool { return named[k] })
		if n > 0 && (clash || actions+len(names)+len(cuentas)+len(touched) > versioned.MaxActions) {
			return pending[:n], cuentas
		}
		actions += len(names)
		for _, k := range names {
			named[k] = true
		}
		cuentas = append(cuentas, touched...)
	}
	return pending, cuentas
}

// existing is the result for m when a movement with its key is already recorded.
func existing(m movimiento.Movimiento, stored versioned.Item, attempts int) ledger.Result {
	if stored == nil { // cannot happen while nothing deletes movements
		return failed(&ledger.TransientError{Attempts: attempts, Err: fmt.Errorf("store: movement %s/%s reported existing but not found", m.Cuenta, m.ID)}, attempts)
	}
	a, err := decodeApunte(stored)
	if err != nil {
		return failed(&ledger.PermanentError{Err: err}, attempts)
	}
	if !m.MatchesHuella(a.Huella) { // named as recorded: a transfer's may be on its destination
		return ledger.Result{Outcome: ledger.ConflictingDuplicate, Attempts: attempts,
			Err: &ledger.DuplicadoConflictivoError{Cuenta: a.Movimiento.Cuenta, ID: a.Movimiento.ID, HuellaGuardada: a.Huella, HuellaNueva: m.Huella()}}
	}
	return ledger.Result{Outcome: ledger.Duplicate, Estado: a.Estado, Seq: a.Seq, SaldoTras: a.SaldoTras, Motivo: a.Motivo, Attempts: attempts}
}

// follow is the result of a later delivery of the same (cuenta, id) within one call,
// given the first delivery m0 and its result r0.
func follow(m, m0 movimiento.Movimiento, r0 ledger.Result) ledger.Result {
	h := m.Huella()
	var conflicting *ledger.DuplicadoConflictivoError
	switch {
	case r0.Outcome == ledger.Applied || r0.Outcome == ledger.Duplicate || r0.Outcome == ledger.Rejected:
		if h != m0.Huella() {
			return ledger.Result{Outcome: ledger.ConflictingDuplicate, Err: &ledger.DuplicadoConflictivoError{Cuenta: m.Cuenta, ID: m.ID, HuellaGuardada: m0.Huella(), HuellaNueva: h}}
		}
		return ledger.Result{Outcome: ledger.Duplicate, Estado: r0.Estado, Seq: r0.Seq, SaldoTras: r0.SaldoTras, Motivo: r0.Motivo}
	case errors.As(r0.Err, &conflicting) && !m.MatchesHuella(conflicting.HuellaGuardada):
		return ledger.Result{Outcome: ledger.ConflictingDuplicate, Err: &ledger.DuplicadoConflictivoError{Cuenta: m.Cuenta, ID: m.ID, HuellaGuardada: conflicting.HuellaGuardada, HuellaNueva: h}}
	case r0.Outcome == ledger.Failed && h == m0.Huella():
		return r0 // the same fact failed: it fails alike, and comes back if that one does
	default:
		// What is recorded under this key is not known here: decide it on redelivery.
		return failed(&ledger.TransientError{Err: fmt.Errorf("store: movement %s/%s is decided on redelivery", m.Cuenta, m.ID)}, 0)
	}
}

func failed(err error, attempts int) ledger.Result {
	return ledger.Result{Outcome: ledger.Failed, Attempts: attempts, Err: err}
}
