// Package versioned is optimistic locking on DynamoDB: create-once records, conditional
// rewrites and items moved from version v to v+1, all or nothing in one
// TransactWriteItems. It knows nothing of accounts or movements.
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

// Table says where versioned items live: the table, its key attributes (SortKey empty
// for a hash-only key) and the numeric attribute holding an item's version.
type Table struct {
	Name         string
	PartitionKey string
	SortKey      string
	Version      string
}

// Policy bounds the optimistic-locking loop. MaxAttempts counts the commits one Update
// tries; the wait before retry n is drawn uniformly from [0, min(MaxDelay,
// BaseDelay·2^(n-1))] (full jitter, so racing writers spread out), never past ctx's
// deadline.
type Policy struct {
	MaxAttempts int
	BaseDelay   time.Duration
	MaxDelay    time.Duration
}

// DefaultPolicy suits a Lambda consumer: 8 attempts in well under a second of back-off,
// enough for a handful of concurrent writers on one item.
var DefaultPolicy = Policy{MaxAttempts: 8, BaseDelay: 5 * time.Millisecond, MaxDelay: 200 * time.Millisecond}

// Options configure a Store: a zero Policy means DefaultPolicy; CacheSize is how many
// items' last known images it keeps (LRU; 0: none).
type Options struct {
	Policy    Policy
	CacheSize int
}

// Store runs optimistic-locking transactions against one table; it is safe for
// concurrent use. With a cache, a warm item costs one call; a stale image costs one
// extra round trip (the version check refuses it), so several stores may share items.
// Cached images are shared: nothing may change an Item handed to or received from it.
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
		s.cache, _ = lru.New[itemKey, Item](opts.CacheSize) // fails only for a size under 1
	}
	return s, nil
}
