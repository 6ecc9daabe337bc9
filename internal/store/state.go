package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// maxParallelReads bounds the reads one round makes at once when its accounts are
// cold: a batch of 10 messages touches at most 20 accounts.
const maxParallelReads = 8

// unreadableError is an account item no retry can read: its version or the rest of it.
type unreadableError struct {
	cuenta string
	err    error
}

func (e *unreadableError) Error() string {
	return fmt.Sprintf("store: account %s: %v", e.cuenta, e.err)
}
func (e *unreadableError) Unwrap() error { return e.err }

// accounts reads what a chunk is decided against: its accounts, from the cache or read
// strongly consistent (at most maxParallelReads at once); the SDK's retries spend r.
func (l *Ledger) accounts(ctx context.Context, r *retries, cuentas []string) ([]stored, error) {
	accounts := make([]stored, len(cuentas))
	eg, egctx := errgroup.WithContext(ctx)
	eg.SetLimit(maxParallelReads)
	for i, id := range cuentas {
		if s, ok := l.cached(id); ok {
			accounts[i] = s
			continue
		}
		eg.Go(func() (err error) {
			accounts[i], err = l.account(egctx, r, id)
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return accounts, nil
}

// referredRecords reads, strongly consistent, the records deliveries idx refer to that
// no earlier round of the group read: a reversal's original (which names the accounts
// a transfer or reparto credited), a settlement's hold.
func (l *Ledger) referredRecords(ctx context.Context, g *group, idx []int) error {
	for _, i := range idx {
		k := referred(g.es[i].Mov)
		if _, seen := g.records[k]; k.id == "" || seen {
			continue
		}
		item, err := l.get(ctx, g.retries, items.MovKey(k.cuenta, k.id))
		if err != nil {
			return err
		}
		g.keepRecord(k, item) // nil: not recorded (yet)
	}
	return nil
}

// record is a record deliveries refer to, as last read: its item (nil: not recorded)
// and the Apunte decoded from it, once, on first use by a footprint or a decision.
type record struct {
	item    versioned.Item
	decoded bool
	a       movimiento.Apunte
	err     error
}

// apunte is the record's item decoded; it is not called for a record not recorded.
func (r *record) apunte() (movimiento.Apunte, error) {
	if !r.decoded {
		r.a, r.err = items.DecodeApunte(r.item)
		r.decoded = true
	}
	return r.a, r.err
}

// keepRecord keeps item as the record at k, as last read (nil: not recorded).
func (g *group) keepRecord(k movKey, item versioned.Item) {
	if g.records == nil {
		g.records = map[movKey]*record{}
	}
	g.records[k] = &record{item: item}
}

// account reads account id strongly consistently and keeps it in the cache; the SDK's
// retries spend r.
func (l *Ledger) account(ctx context.Context, r *retries, id string) (stored, error) {
	item, err := l.get(ctx, r, items.CuentaKey(id))
	if err != nil {
		return stored{}, err
	}
	s, err := decoded(id, item)
	if err == nil {
		l.keep(id, s)
	}
	return s, err
}

// decoded is account id's stored item read, or an *unreadableError.
func decoded(id string, item versioned.Item) (stored, error) {
	c, _, err := items.DecodeCuenta(item)
	if err != nil {
		return stored{}, &unreadableError{cuenta: id, err: err}
	}
	return stored{c: c, item: item}, nil
}

// get reads the item at key strongly consistently: a decision must see the last write.
// It is nil when there is none. The SDK's retries spend r.
func (l *Ledger) get(ctx context.Context, r *retries, key versioned.Item) (versioned.Item, error) {
	out, err := l.db.GetItem(ctx, versioned.GetInput(l.table.Name, key), r.sdk)
	if err != nil {
		return nil, fmt.Errorf("store: read: %w", err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	return out.Item, nil
}

// fill reads the stored item of each record an answer named without one (the embedded
// store returns none); key gives a record's key by its index. The SDK's retries spend r.
func (l *Ledger) fill(ctx context.Context, r *retries, found []versioned.Found, key func(int) versioned.Item) error {
	for i, f := range found {
		if f.Item == nil {
			item, err := l.get(ctx, r, l.table.KeyOf(key(f.Index)))
			if err != nil {
				return err
			}
			found[i].Item = item
		}
	}
	return nil
}

// commit sends txn over the accounts at keys, at versions, in one TransactWriteItems
// and classifies the answer; a transaction DynamoDB would refuse is Rejected unsent.
// The SDK's retries spend r.
func (l *Ledger) commit(ctx context.Context, r *retries, keys []versioned.Item, versions []int64, txn versioned.Txn) versioned.Verdict {
	in, err := versioned.BuildInput(l.table, keys, versions, txn)
	if err != nil {
		return versioned.Verdict{Kind: versioned.Rejected, Err: err}
	}
	_, err = l.db.TransactWriteItems(ctx, in, r.sdk)
	return versioned.Classify(err, txn)
}

// backoff waits before commit attempt+1 with full jitter (Config.Wait); it refuses a
// wait that would outlast ctx's deadline, so the caller can still report in time.
func (l *Ledger) backoff(ctx context.Context, attempt int) error {
	ceiling := l.budget.BaseDelay << min(attempt-1, 20)
	if ceiling > l.budget.MaxDelay || ceiling <= 0 {
		ceiling = l.budget.MaxDelay
	}
	return l.wait(ctx, ceiling)
}

// jitter waits a random time in [0, ceiling] on a timer, unless that would outlast
// ctx's deadline, or until ctx ends: Config.Wait's default.
func jitter(ctx context.Context, ceiling time.Duration) error {
	d := time.Duration(rand.Int64N(int64(ceiling) + 1))
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return context.DeadlineExceeded
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// cached is account id's state as this Ledger last knew it.
func (l *Ledger) cached(id string) (stored, bool) {
	if l.cache == nil {
		return stored{}, false
	}
	return l.cache.Get(id)
}

// keep caches s as account id's state. Cached states are shared: nothing may change
// one's item.
func (l *Ledger) keep(id string, s stored) {
	if l.cache != nil {
		l.cache.Add(id, s)
	}
}

// forget drops the accounts' cached states, so the next round reads them.
func (l *Ledger) forget(ids ...string) {
	if l.cache != nil {
		for _, id := range ids {
			l.cache.Remove(id)
		}
	}
}

// remember keeps the states a committed write made, by account (zero: unchanged).
func (l *Ledger) remember(cuentas []string, written []stored) {
	for i, s := range written {
		if s.item != nil {
			l.keep(cuentas[i], s)
		}
	}
}

// learn keeps the images of accounts whose version check failed, so the next round
// decides on them without a read; one the answer did not carry is read again.
func (l *Ledger) learn(cuentas []string, moved map[int]versioned.Item) {
	for i, item := range moved {
		s, err := decoded(cuentas[i], item)
		if item == nil || err != nil {
			l.forget(cuentas[i])
			continue
		}
		l.keep(cuentas[i], s)
	}
}
