package compare

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ledger-dev/ledger/internal/idempotencia"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// errCrash is how a crash point ends an invocation: the strategy stops where it is and
// the batch is never acknowledged.
var errCrash = errors.New("compare: the invocation died here")

// invocation is one batch's handling, shared through its context by the probe and
// the baseline's hook: whether it died, and what each ApplyAll call returned.
type invocation struct {
	mu    sync.Mutex
	dead  bool
	calls []applied
}

// applied is one ApplyAll call's results, the message each came from, and how long
// the call took.
type applied struct {
	origins []string
	results []ledger.Result
	took    time.Duration
}

type invocationKey struct{}

func invocationOf(ctx context.Context) *invocation {
	inv, _ := ctx.Value(invocationKey{}).(*invocation)
	return inv
}

func (inv *invocation) died() bool {
	if inv == nil {
		return false
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return inv.dead
}

func (inv *invocation) kill() {
	if inv == nil {
		return
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.dead = true
}

func (inv *invocation) record(a applied) {
	if inv == nil {
		return
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.calls = append(inv.calls, a)
}

// crashPlan says where invocations die: at point, the first time each target movement
// gets there.
type crashPlan struct {
	point   idempotencia.Point
	mu      sync.Mutex
	targets map[string]bool
}

// fire reports whether one of the movements is a target not crashed yet, and marks
// them crashed.
func (p *crashPlan) fire(at idempotencia.Point, movs ...movimiento.Movimiento) bool {
	if p.point == "" || at != p.point {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	hit := false
	for _, m := range movs {
		if p.targets[m.ID] {
			delete(p.targets, m.ID)
			hit = true
		}
	}
	return hit
}

// hook is the baseline's Config.Hook: it kills the invocation at the planned point,
// and stops every step of an invocation that is already dead.
func (p *crashPlan) hook(ctx context.Context, at idempotencia.Point, m movimiento.Movimiento) error {
	inv := invocationOf(ctx)
	if inv == nil {
		return nil
	}
	if inv.died() {
		return errCrash
	}
	if p.fire(at, m) {
		inv.kill()
		return errCrash
	}
	return nil
}

// probe wraps a strategy as the consumer sees it. It refuses work in a dead
// invocation, records every call's results and duration, and for the transaction
// strategy (around, true) is its crash point: a crash can only come before or after
// its single transaction, so "after reserve" is before the call and "after effect"
// right after it.
type probe struct {
	inner interface {
		ApplyAll(context.Context, []ledger.Entrega) []ledger.Result
	}
	plan   *crashPlan
	around bool
}

// ApplyAll implements consumer.Applier.
func (p *probe) ApplyAll(ctx context.Context, es []ledger.Entrega) []ledger.Result {
	inv := invocationOf(ctx)
	movs, origins := make([]movimiento.Movimiento, len(es)), make([]string, len(es))
	for i, e := range es {
		movs[i], origins[i] = e.Mov, e.Origen
	}
	if inv.died() || (p.around && p.plan.fire(idempotencia.AfterReserve, movs...)) {
		inv.kill()
		return deadResults(len(es))
	}
	t0 := time.Now()
	rs := p.inner.ApplyAll(ctx, es)
	took := time.Since(t0)
	if p.around && p.plan.fire(idempotencia.AfterEffect, movs...) {
		inv.kill()
	}
	inv.record(applied{origins: origins, results: rs, took: took})
	return rs
}

func deadResults(n int) []ledger.Result {
	rs := make([]ledger.Result, n)
	for i := range rs {
		rs[i] = ledger.Result{Outcome: ledger.Failed, Err: &ledger.TransientError{Err: errCrash}}
	}
	return rs
}
