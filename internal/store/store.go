// Package store is the ledger on one DynamoDB table: each movement item is written in
// the same transaction as its account's version-checked new image, so it is both the
// ledger line and the idempotency record (no TTL: a duplicate a year later is still
// recognised). It also serves the balance API's reads and the audit.
package store

import (
	"cmp"
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Config configures a Ledger. Locking bounds the optimistic-locking retries (zero:
// versioned.DefaultPolicy). CacheSize is how many accounts' last known state is kept, so
// a warm account costs one call per transaction (0: DefaultCacheSize; negative: none).
// Now is the clock for the timestamps (nil: time.Now).
type Config struct {
	Table             string
	InsufficientFunds ledger.FundsPolicy
	Locking           versioned.Policy
	CacheSize         int
	Now               func() time.Time
}

// DefaultCacheSize keeps the state of the 10,000 most recently used accounts: about
// 10 MB, a small part of a Lambda's memory.
const DefaultCacheSize = 10_000

// Ledger applies movements to accounts. It is safe for concurrent use; writers to one
// account are serialised by its version, not by a lock.
type Ledger struct {
	db     versioned.Client
	table  string
	store  *versioned.Store
	policy ledger.FundsPolicy
	now    func() time.Time
	// decoded keeps the accounts' last written states, so a warm account is not decoded
	// again on every transaction (nil without a cache).
	decoded *lru.Cache[string, cuenta.Cuenta]
}

// New returns a Ledger writing through db.
func New(db versioned.Client, cfg Config) (*Ledger, error) {
	policy, err := ledger.ParseFundsPolicy(string(cfg.InsufficientFunds))
	if err != nil {
		return nil, err
	}
	cacheSize := cmp.Or(cfg.CacheSize, DefaultCacheSize)
	store, err := versioned.New(db, Table(cfg.Table), versioned.Options{Policy: cfg.Locking, CacheSize: max(cacheSize, 0)})
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	l := &Ledger{db: db, table: cfg.Table, store: store, policy: policy, now: now}
	if cacheSize > 0 {
		if l.decoded, err = lru.New[string, cuenta.Cuenta](cacheSize); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	return l, nil
}

// known is the last state this Ledger wrote for account id, if it remembers one.
func (l *Ledger) known(id string) (cuenta.Cuenta, bool) {
	if l.decoded == nil {
		return cuenta.Cuenta{}, false
	}
	return l.decoded.Get(id)
}

// remember keeps the states a committed write made (ID "": unchanged), at their new
// versions.
func (l *Ledger) remember(written []cuenta.Cuenta, versions []int64) {
	if l.decoded == nil {
		return
	}
	for i, c := range written {
		if c.ID != "" {
			c.Version = versions[i]
			l.decoded.Add(c.ID, c)
		}
	}
}
