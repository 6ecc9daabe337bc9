// Package ledger applies account movements exactly once. A movement is written as its
// own item in the same DynamoDB transaction that moves its account from version v to
// v+1 (internal/versioned), so the movement item is both the ledger line and the
// idempotency record: no separate table, no TTL, and a duplicate arriving a year later
// is still recognised. The package owns the outcomes (applied, duplicate, conflicting
// duplicate, rejected, failed), the insufficient-funds policy, and the mapping between
// domain values and table items.
package ledger

import (
	"fmt"
	"time"

	"github.com/ledger-dev/ledger/internal/versioned"
)

// FundsPolicy says what to do with a cargo the balance cannot cover.
type FundsPolicy string

// The insufficient-funds policies (env LEDGER_INSUFFICIENT_FUNDS).
const (
	// Retry reports a transient failure: the message comes back, because a credit may
	// still be on its way out of order; after maxReceiveCount it lands in the DLQ.
	Retry FundsPolicy = "retry"
	// Reject records the movement with estado "rechazado" and leaves the balance alone;
	// every redelivery gets the same answer.
	Reject FundsPolicy = "reject"
)

// ParseFundsPolicy reads a policy name; the empty string means Retry.
func ParseFundsPolicy(s string) (FundsPolicy, error) {
	switch FundsPolicy(s) {
	case "", Retry:
		return Retry, nil
	case Reject:
		return Reject, nil
	}
	return "", fmt.Errorf("ledger: insufficient-funds policy %q: want %q or %q", s, Retry, Reject)
}

// Config configures a Service. Table is the ledger table's name. Locking bounds the
// optimistic-locking retries (zero: versioned.DefaultPolicy). CacheSize is the number of
// accounts whose last known state is kept in memory, so a warm account costs one call
// per transaction (0: DefaultCacheSize; negative: no cache). Now is the clock for the
// aplicado/actualizada timestamps (nil: time.Now).
type Config struct {
	Table             string
	InsufficientFunds FundsPolicy
	Locking           versioned.Policy
	CacheSize         int
	Now               func() time.Time
}

// DefaultCacheSize keeps the state of the 10,000 most recently used accounts: about
// 10 MB, a small part of a Lambda's memory.
const DefaultCacheSize = 10_000

// Service applies movements to accounts. It is safe for concurrent use; concurrent
// writers to one account are serialised by the account's version, not by a lock.
type Service struct {
	store  *versioned.Store
	policy FundsPolicy
	now    func() time.Time
}

// New returns a Service writing through db.
func New(db versioned.Client, cfg Config) (*Service, error) {
	policy, err := ParseFundsPolicy(string(cfg.InsufficientFunds))
	if err != nil {
		return nil, err
	}
	cacheSize := cfg.CacheSize
	if cacheSize == 0 {
		cacheSize = DefaultCacheSize
	}
	store, err := versioned.New(db, Table(cfg.Table), versioned.Options{Policy: cfg.Locking, CacheSize: max(cacheSize, 0)})
	if err != nil {
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, policy: policy, now: now}, nil
}
