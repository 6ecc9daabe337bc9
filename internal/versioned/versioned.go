// Package versioned is optimistic locking on DynamoDB: "write these create-once records,
// rewrite those if they still say what I read, and move these items from version v to
// v+1 — all or nothing", in one TransactWriteItems, so a record (say, a ledger movement)
// exists if and only if the change it caused was made. It knows nothing of accounts or
// movements; SDK types stay here and in the storage adapters that call it.
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

// Policy bounds the optimistic-locking loop. MaxAttempts counts the commits one Update
// tries (version and transaction conflicts alike); the wait before retry n is drawn
// uniformly from [0, min(MaxDelay, BaseDelay·2^(n-1))] ("full jitter"), so writers racing
// for one item spread out instead of colliding again in lockstep. No wait runs past the
// context's deadline.
type Policy struct {
	MaxAttempts int
	BaseDelay   time.Duration
	MaxDelay    time.Duration
}

// DefaultPolicy suits a Lambda consumer: 8 attempts within well under a second of
// back-off, enough for a handful of concurrent writers on one account.
var DefaultPolicy = Policy{MaxAttempts: 8, BaseDelay: 5 * time.Millisecond, MaxDelay: 200 * time.Millisecond}

// Options configure a Store. A zero Policy means DefaultPolicy. CacheSize is how many
// items' last known images the store keeps in memory (least recently used first out);
// 0 keeps none.
type Options struct {
	Policy    Policy
	CacheSize int
}

// Store runs optimistic-locking transactions against one table; it is safe for
// concurrent use. With a cache, an Update of recently written or read items starts from
// their cached images: a warm item costs one call. A stale image is harmless — the
// version check refuses the write and the fresh image replaces it — so several stores
// (Lambda instances, an operator's CLI) may share items, each paying one extra round
// trip when another moved one. Cached images are shared: nothing may change an Item
// after handing it to the store or receiving it in a State.
type Store struct {
	db     Client
	table  Table
	policy Policy
	cache  *lru.Cache[itemKey, Item]
}

// New returns a Store for table.
func New(db Client, table Table, opts Options) (*Store, error) {
	if table.Name == "" || table.PartitionKey == "" || table.Version == "" {
		return nil, fmt.Errorf("versioned: table %+v needs a name, a partition key and a version attribute", table)
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
