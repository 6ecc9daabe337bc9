// Package versioned is optimistic locking on DynamoDB as a reusable mechanism: "write
// these create-once records, rewrite those records if they still say what I read, and
// move these items from version v to v+1 — all or nothing". One TransactWriteItems
// carries it all, so a record (say, a ledger movement) exists if and only if the change
// it caused (the accounts' new balances) was made. Nothing here knows about accounts or
// movements.
//
// Every DynamoDB failure is classified in one place (classify.go), version conflicts are
// retried with the fresh state and a bounded, jittered backoff (update.go), and the
// request is built by a pure function (txn.go). SDK types stay inside this package and
// the storage adapters that call it.
package versioned

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Item is a DynamoDB item in the SDK's representation.
type Item = map[string]types.AttributeValue

// Client is the part of the DynamoDB API the store uses; *dynamodb.Client implements it.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Table says where versioned items live: the table name, its key attributes (SortKey is
// empty for a hash-only key) and the numeric attribute that holds an item's version.
type Table struct {
	Name         string
	PartitionKey string
	SortKey      string
	Version      string
}

func (t Table) validate() error {
	if t.Name == "" || t.PartitionKey == "" || t.Version == "" {
		return fmt.Errorf("versioned: table %+v needs a name, a partition key and a version attribute", t)
	}
	return nil
}

// Policy bounds the optimistic-locking loop. MaxAttempts counts commits tried by one
// Update (version conflicts and transaction conflicts share it); the wait before retry n
// is drawn uniformly from [0, min(MaxDelay, BaseDelay·2^(n-1))] ("full jitter"), so that
// writers racing for one item spread out instead of colliding again in lockstep. The
// context's deadline always wins: no wait runs past it.
type Policy struct {
	MaxAttempts int
	BaseDelay   time.Duration
	MaxDelay    time.Duration
}

// DefaultPolicy suits a Lambda consumer: 8 attempts within well under a second of
// back-off, enough for a handful of concurrent writers on one account.
var DefaultPolicy = Policy{MaxAttempts: 8, BaseDelay: 5 * time.Millisecond, MaxDelay: 200 * time.Millisecond}

// Options configure a Store. A zero Policy means DefaultPolicy. CacheSize is the
// number of items whose last known image the store keeps in memory (least recently
// used first out); 0 keeps none.
type Options struct {
	Policy    Policy
	CacheSize int
}

// Store runs optimistic-locking transactions against one table. It is safe for
// concurrent use.
//
// With a cache, an Update of items this store wrote or read recently starts from the
// cached images instead of reading them: warm items cost one call per Update. A stale
// image is harmless — the version check refuses the write and the cancellation's
// ALL_OLD image (or a read) replaces it — so several stores (Lambda instances, an
// operator's CLI) may write the same items, each paying one extra round trip when
// another moved an item. Cached images are shared: nothing may change an Item after
// handing it to the store or receiving it in a State.
type Store struct {
	db     Client
	table  Table
	policy Policy
	cache  *lru.Cache[itemKey, Item]
}

// New returns a Store for table.
func New(db Client, table Table, opts Options) (*Store, error) {
	if err := table.validate(); err != nil {
		return nil, err
	}
	if opts.Policy.MaxAttempts <= 0 {
		opts.Policy = DefaultPolicy
	}
	s := &Store{db: db, table: table, policy: opts.Policy}
	if opts.CacheSize > 0 {
		c, err := lru.New[itemKey, Item](opts.CacheSize)
		if err != nil {
			return nil, fmt.Errorf("versioned: cache: %w", err)
		}
		s.cache = c
	}
	return s, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
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
