// Package store is the ledger on one DynamoDB table: each movement's record is written
// in the same transaction as its account's version-checked new image, so it is both the
// ledger line and the idempotency record (no TTL: a duplicate a year later is still
// recognised). Ledger.Apply is the write path; Reader serves the balance API.
package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Client is the part of the DynamoDB API a Ledger uses; *dynamodb.Client implements it.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// DefaultCacheSize keeps the state of the 10,000 most recently used accounts: about
// 10 MB, a small part of a Lambda's memory.
const DefaultCacheSize = 10_000

// Config configures a Ledger; zero values pick the defaults in brackets.
type Config struct {
	Table             string             // the ledger table's name
	InsufficientFunds cuenta.FundsPolicy // what becomes of a debit an account refuses [cuenta.Retry]
	Budget            Budget             // the retries of one Apply [DefaultBudget]
	// CacheSize is how many accounts' last known state is kept, so a warm account costs
	// one call per transaction [DefaultCacheSize; negative: none].
	CacheSize int
	Now       func() time.Time // the clock of timestamps and hold expiry [time.Now]
	// Wait waits out a back-off of at most ceiling: a wait drawn from [0, ceiling] (full
	// jitter), refused with context.DeadlineExceeded when it would outlast ctx's
	// deadline, cut short with ctx's error [a random draw and a timer]. A simulation
	// passes its own seeded draws and clock.
	Wait func(ctx context.Context, ceiling time.Duration) error
}

// Validate reports the first problem with c.
func (c Config) Validate() error {
	if c.Table == "" {
		return errors.New("store: no table name")
	}
	if _, err := cuenta.ParseFundsPolicy(string(c.InsufficientFunds)); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if b := c.Budget; b.Retries < 0 || b.Time < 0 || b.BaseDelay < 0 || b.MaxDelay < 0 {
		return fmt.Errorf("store: budget %+v: no negative values", b)
	}
	return nil
}

// Ledger applies movements to accounts. It is safe for concurrent use; writers to one
// account are serialised by its version, not by a lock, so several Ledgers (Lambda
// instances) may share a table.
type Ledger struct {
	db     Client
	table  versioned.Table
	funds  cuenta.FundsPolicy
	budget Budget
	now    func() time.Time
	wait   func(ctx context.Context, ceiling time.Duration) error
	// cache keeps the accounts' last known states, decoded and as stored: a warm
	// account costs no read, and a stale one one version conflict (nil: no cache).
	cache *lru.Cache[string, stored]
}

// New returns a Ledger writing through db, once cfg is valid.
func New(db Client, cfg Config) (*Ledger, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	funds, _ := cuenta.ParseFundsPolicy(string(cfg.InsufficientFunds))
	l := &Ledger{db: db, table: items.Table(cfg.Table), funds: funds, budget: cfg.Budget, now: cfg.Now}
	if l.now == nil {
		l.now = time.Now
	}
	if l.wait = cfg.Wait; l.wait == nil {
		l.wait = jitter
	}
	if l.budget == (Budget{}) {
		l.budget = DefaultBudget
	}
	if size := cmp.Or(cfg.CacheSize, DefaultCacheSize); size > 0 {
		l.cache, _ = lru.New[string, stored](size) // fails only for a size under 1
	}
	return l, nil
}
