package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// group is one Apply: its deliveries, their results, and what is known between rounds.
type group struct {
	es        []Entrega
	res       []Result
	now       time.Time // one timestamp per Apply: a transaction rebuilt for the same state keeps its token
	pending   []int     // first deliveries of their keys not decided yet, in arrival order
	followers []int     // later deliveries of a key, answered by its first
	leaderOf  map[movKey]int
	records   map[movKey]*record // the records deliveries refer to, as last read; made on first use (keepRecord)
	reread    map[movKey]bool    // records read again after a capture found its hold inactive; made on first use
	limit     int                // the most deliveries a chunk may hold, halved by each refused whole
	conflicts int                // commits in a row refused by a version conflict or contention
	retries   *retries           // what is left of the budget's retries
}

func newGroup(es []Entrega, now time.Time) *group {
	g := &group{es: es, res: make([]Result, len(es)), now: now, leaderOf: make(map[movKey]int, len(es)),
		pending: make([]int, 0, len(es)), limit: len(es)}
	for i, e := range es {
		k := movKey{e.Mov.Cuenta, e.Mov.ID}
		if _, ok := g.leaderOf[k]; ok {
			g.followers = append(g.followers, i)
			continue
		}
		g.leaderOf[k] = i
		g.pending = append(g.pending, i)
	}
	return g
}

// Apply applies one group of deliveries (consumer.Groups: deliveries that share an
// account, transitively) in arrival order and returns one result per delivery, in the
// same order. They are written in as few transactions as fit DynamoDB's 100 actions; a
// later delivery of a (cuenta, id) follows the first. Each round reads the accounts (a
// warm one from the cache) and the records the movements refer to, decides each
// movement by cuenta.Decide, and commits. A version conflict decides again on the fresh
// state; a duplicate drops out and the rest is retried; a request DynamoDB refuses whole
// is split until the one movement causing it is found and failed alone. Its retries,
// the SDK's and its own, spend one Budget.
func (l *Ledger) Apply(ctx context.Context, es []Entrega) []Result {
	ctx, cancel := l.budget.bound(ctx)
	defer cancel()
	g := newGroup(es, l.now())
	g.retries = newRetries(l.budget.Retries)
	// Every round decides a delivery, halves the chunk, refreshes a record lost in a
	// race, or spends a retry, so this bound only guards against a bug looping forever.
	maxRounds := 4*len(es) + l.budget.Retries + 8
	for round := 0; len(g.pending) > 0; round++ {
		if round == maxRounds {
			g.fail(g.pending, Transient(errors.New("store: no progress applying the group")))
			break
		}
		l.round(ctx, g)
	}
	for _, i := range g.followers {
		first := g.leaderOf[movKey{es[i].Mov.Cuenta, es[i].Mov.ID}]
		g.res[i] = follow(es[i].Mov, es[first].Mov, g.res[first])
	}
	return g.res
}

// round decides the next chunk of pending deliveries and commits it, then settles what
// the answer means for each.
func (l *Ledger) round(ctx context.Context, g *group) {
	if g.halt(); len(g.pending) == 0 {
		return
	}
	if err := l.referredRecords(ctx, g, g.pending[:min(len(g.pending), g.limit, versioned.MaxActions)]); err != nil {
		g.fail(g.pending, Transient(err))
		return
	}
	c := g.nextChunk(g.pending, g.limit)
	accounts, err := l.accounts(ctx, g.retries, c.cuentas)
	if err != nil {
		g.unreadable(err)
		return
	}
	p, err := g.plan(c, accounts, l.funds)
	if cut := g.stopAt(p); err == nil && cut < len(c.entregas) { // the chunk's prefix touches a prefix of its accounts
		c = c.prefix(cut)
		p, err = g.plan(c, accounts[:len(c.cuentas)], l.funds)
	}
	chunk, cuentas := c.entregas, c.cuentas
	if err != nil {
		g.fail(g.pending, Permanent(err))
		return
	}
	v := l.commit(ctx, g.retries, p.keys, p.versions, p.txn)
	for _, i := range chunk {
		g.res[i].Attempts++
	}
	l.learn(cuentas, v.Moved)
	switch v.Kind {
	case versioned.Committed:
		l.committed(g, chunk, cuentas, p)
	case versioned.Exists:
		l.answered(ctx, g, p, v)
	case versioned.Changed:
		if err := l.fill(ctx, g.retries, v.Found, func(i int) versioned.Item { return p.txn.Replaces[i].Item }); err != nil {
			g.fail(g.pending, Transient(err))
			return
		}
		for _, f := range v.Found { // a record to mark changed since it was read (g.records holds it: it was marked)
			g.keepRecord(referred(g.es[p.decisions[p.replaced[f.Index]].entrega].Mov), f.Item)
		}
	case versioned.Conflict, versioned.Contention:
		l.conflicted(ctx, g, v)
	case versioned.Rejected:
		g.rejected(chunk, v.Err)
	default:
		l.forget(cuentas...) // the write may have committed unseen: read them again
		g.fail(g.pending, Transient(v.Err))
	}
}

// committed settles a committed chunk: each decision is its delivery's result, but a
// capture that found its hold inactive reads the hold's record again, once, as another
// writer may have settled it since it was read.
func (l *Ledger) committed(g *group, chunk []int, cuentas []string, p plan) {
	g.conflicts = 0
	l.remember(cuentas, p.written)
	// A record read as missing may be among those just written: read it again.
	maps.DeleteFunc(g.records, func(_ movKey, r *record) bool { return r.item == nil })
	var again []int
	for _, d := range p.decisions {
		k := referred(g.es[d.entrega].Mov)
		if errors.Is(d.Err, cuenta.RetencionInactiva) && !g.reread[k] {
			delete(g.records, k)
			if g.reread == nil {
				g.reread = map[movKey]bool{}
			}
			g.reread[k] = true
			again = append(again, d.entrega)
			continue
		}
		g.res[d.entrega] = decided(d, g.res[d.entrega].Attempts)
		if d.mark != nil { // what the record says now, for the next round
			g.keepRecord(k, d.mark.Item)
		}
	}
	g.pending = append(again, g.pending[len(chunk):]...) // the chunk is a prefix of pending
}

// answered settles a chunk refused for records that exist: each delivery whose record
// (or transfer leg) is there is answered by it; the rest is decided again.
func (l *Ledger) answered(ctx context.Context, g *group, p plan, v versioned.Verdict) {
	g.conflicts = 0
	if err := l.fill(ctx, g.retries, v.Found, p.txn.Guarded); err != nil {
		g.fail(g.pending, Transient(err))
		return
	}
	resolved := map[int]bool{}
	for _, f := range v.Found {
		i := p.decisions[p.guarded[f.Index]].entrega
		if resolved[i] { // a transfer's credit leg, after its own record: that one answers
			continue
		}
		resolved[i] = true
		g.res[i] = g.recorded(i, f.Item)
	}
	g.pending = slices.DeleteFunc(g.pending, func(i int) bool { return resolved[i] })
}

// recorded is delivery i's result when item, the record under one of its keys, exists.
func (g *group) recorded(i int, item versioned.Item) Result {
	attempts := g.res[i].Attempts
	if item == nil { // cannot happen while nothing deletes movements
		return failed(Transient(fmt.Errorf("store: movement %s/%s reported existing but not found", g.es[i].Mov.Cuenta, g.es[i].Mov.ID)), attempts)
	}
	a, err := items.DecodeApunte(item)
	if err != nil {
		return failed(Permanent(err), attempts)
	}
	return existing(g.es[i].Mov, a, attempts)
}

// conflicted backs off before the chunk is decided again on the fresh state, or gives
// up when the budget has no retry left, or the deadline no time.
func (l *Ledger) conflicted(ctx context.Context, g *group, v versioned.Verdict) {
	g.conflicts++
	if !g.retries.take() {
		g.fail(g.pending, Transient(fmt.Errorf("%w after %d commits in a row: %w", errBudgetSpent, g.conflicts, v.Err)))
		return
	}
	if err := l.backoff(ctx, g.conflicts); err != nil {
		g.fail(g.pending, Transient(fmt.Errorf("store: %w after %d commits: %w", err, g.conflicts, v.Err)))
	}
}

// rejected handles a request DynamoDB refused whole (or that would be refused): the
// chunk is halved, until the one delivery that causes it fails alone, for good; the
// rest of the group then goes on in whole chunks again. Each refusal halves the chunk
// or fails a delivery, so at most log2(100)+1 refusals find one cause.
func (g *group) rejected(chunk []int, err error) {
	if len(chunk) > 1 {
		g.limit = len(chunk) / 2
		return
	}
	g.res[chunk[0]] = failed(Permanent(err), g.res[chunk[0]].Attempts)
	g.pending, g.limit = g.pending[1:], len(g.es)
}

// stopAt is where chunk p must end so that no delivery follows a failed one of its
// FIFO message group: just after the first failed decision with a later delivery of
// its group in the chunk, or at its end. That failure is committed alone; halt then
// fails the rest of its group untried.
func (g *group) stopAt(p plan) int {
	for n, d := range p.decisions {
		grupo := g.es[d.entrega].Grupo
		if d.Err == nil || grupo == "" {
			continue
		}
		for _, later := range p.decisions[n+1:] {
			if g.es[later.entrega].Grupo == grupo {
				return n + 1
			}
		}
	}
	return len(p.decisions)
}

// halt fails, untried, every pending delivery that follows a failed delivery of its FIFO
// message group (ErrNotAttempted): a group is applied in order and stops at its first
// failure, so the later ones come back after it.
func (g *group) halt() {
	first := map[string]int{} // message group → its first failed delivery
	for i, e := range g.es {
		if _, seen := first[e.Grupo]; e.Grupo != "" && g.res[i].Err != nil && !seen {
			first[e.Grupo] = i
		}
	}
	if len(first) == 0 {
		return
	}
	g.pending = slices.DeleteFunc(g.pending, func(i int) bool {
		f, stopped := first[g.es[i].Grupo]
		if !stopped || f > i {
			return false
		}
		g.res[i] = failed(NotAttempted(g.es[i].Grupo), g.res[i].Attempts)
		return true
	})
}

// fail fails the deliveries idx with err and leaves none pending: nothing after a
// failure may be applied either, as that would break the arrival order.
func (g *group) fail(idx []int, err error) {
	for _, i := range idx {
		g.res[i] = failed(err, g.res[i].Attempts)
	}
	g.pending = nil
}

// unreadable fails the pending deliveries when the state could not be read: for good
// those that touch an account no retry can read, transiently the rest, which come back
// to apply in a batch without it.
func (g *group) unreadable(err error) {
	var bad *unreadableError
	if !errors.As(err, &bad) {
		g.fail(g.pending, Transient(err))
		return
	}
	for _, i := range g.pending {
		if slices.Contains(g.footprint(i).cuentas, bad.cuenta) {
			g.res[i] = failed(Permanent(err), g.res[i].Attempts)
		} else {
			g.res[i] = failed(Transient(fmt.Errorf("store: the batch touches account %s, which cannot be read: %w", bad.cuenta, err)), g.res[i].Attempts)
		}
	}
	g.pending = nil
}
