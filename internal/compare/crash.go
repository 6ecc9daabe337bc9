package compare

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ledger-dev/ledger/internal/compare/idempotencia"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
)

// errCrash ends an invocation at a crash point; its batch is never acknowledged.
var errCrash = errors.New("compare: the invocation died here")

// invocation is one batch's handling, found in its context.
type invocation struct {
	dead    atomic.Bool
	records []consumer.Record
}

type invocationKey struct{}

// crashPlan says where invocations die: at targets[id], the first time id gets there.
type crashPlan struct {
	mu      sync.Mutex
	targets map[string]idempotencia.Point
}

// planCrashes is where strategy's invocations die in sc: at sc.crash, for a
// sc.crashShare of the movements (one draw each; between legs, transfers only). The
// transaction strategy has no moment between legs: it dies before its one transaction
// for every other transfer picked, right after it for the rest.
func planCrashes(sc scenario, strategy Strategy, w sim.Workload, rng *rand.Rand) *crashPlan {
	p := &crashPlan{targets: map[string]idempotencia.Point{}}
	for _, m := range w.Movements {
		at := sc.crash
		if rng.Float64() >= sc.crashShare || at == idempotencia.BetweenLegs && m.Tipo != movimiento.Traspaso {
			continue
		}
		if at == idempotencia.BetweenLegs && strategy == Transaction {
			at = [...]idempotencia.Point{idempotencia.AfterReserve, idempotencia.AfterEffect}[len(p.targets)%2]
		}
		p.targets[m.ID] = at
	}
	return p
}

// fire reports whether one of es dies at at, the first time only.
func (p *crashPlan) fire(at idempotencia.Point, es ...store.Entrega) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	hit := false
	for _, e := range es {
		if p.targets[e.Mov.ID] == at {
			delete(p.targets, e.Mov.ID)
			hit = true
		}
	}
	return hit
}

// hook is the baseline's Config.Hook: it kills the invocation where planned, and stays dead.
func (p *crashPlan) hook(ctx context.Context, at idempotencia.Point, m movimiento.Movimiento) error {
	inv, _ := ctx.Value(invocationKey{}).(*invocation)
	if inv != nil && (inv.dead.Load() || p.fire(at, store.Entrega{Mov: m})) {
		inv.dead.Store(true)
		return errCrash
	}
	return nil
}

// probe refuses a strategy's work in a dead invocation and, around the transaction
// strategy's one transaction, crashes before it (AfterReserve) or after (AfterEffect).
type probe struct {
	inner  consumer.Applier
	plan   *crashPlan
	around bool
}

// Apply implements consumer.Applier.
func (p *probe) Apply(ctx context.Context, es []store.Entrega) []store.Result {
	if consumer := procOf(ctx); consumer != nil { // a group of a simulated consumer's batch
		return p.group(ctx, consumer, es)
	}
	inv := ctx.Value(invocationKey{}).(*invocation)
	if inv.dead.Load() || (p.around && p.plan.fire(idempotencia.AfterReserve, es...)) {
		inv.dead.Store(true)
		died := store.Result{Outcome: store.Failed, Err: store.Transient(errCrash)}
		return slices.Repeat([]store.Result{died}, len(es))
	}
	rs := p.inner.Apply(ctx, es)
	if p.around && p.plan.fire(idempotencia.AfterEffect, es...) {
		inv.dead.Store(true)
	}
	return rs
}

// group applies es as one process of the scheduler, started when its consumer's
// handler has a slot for it; a run the scheduler aborted applies nothing.
func (p *probe) group(ctx context.Context, consumer *proc, es []store.Entrega) []store.Result {
	g, err := consumer.arrive(es[0].Origen)
	if err != nil {
		return slices.Repeat([]store.Result{{Outcome: store.Failed, Err: store.Transient(err)}}, len(es))
	}
	defer consumer.exit(g)
	return p.inner.Apply(withProc(ctx, g), es)
}
