// Package idempotencia is the classic design this service is compared against
// (LEDGER_STRATEGY=separate-table): a separate idempotency table, as AWS Lambda
// Powertools' idempotency utility does it. Per delivery it reserves the key with a
// conditional put (en-curso, an in-progress expiry tied to the invocation's deadline,
// the fingerprint), applies the effect with UpdateItem ADD on the account, then marks
// the record hecho, or releases it when the effect fails.
//
// It keeps the design's inherent traps, which internal/compare exposes: an effect
// applied and not marked is applied again once the in-progress expiry passes; an expired
// (TTL) record no longer recognises a late duplicate; a lost response to the effect is
// retried by the SDK and applied twice (UpdateItem has no idempotency token); deliveries
// meeting a reservation in progress come back until it is marked or expires; keyed on
// the SQS message id it cannot see SNS redeliveries as one fact.
//
// Accounts live in the ledger table under pk "SALDO#<cuenta>", sk "CUENTA": the ledger
// account's attributes but version, plus ultimo (the last movement applied), and no
// statement. They never share an item with the version-checked accounts
// ("CUENTA#<cuenta>"): ADD would move a balance without moving its version.
package idempotencia

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Client is the part of the DynamoDB API the baseline uses; *dynamodb.Client
// implements it.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Point names a moment between the baseline's steps, where Config.Hook is called.
type Point string

// The points between the steps.
const (
	AfterReserve Point = "after-reserve" // the key is en-curso; the effect is not made
	BetweenLegs  Point = "between-legs"  // a transfer's debit is made, its credit is not
	AfterEffect  Point = "after-effect"  // the balance moved; the record is still en-curso
	AfterMark    Point = "after-mark"    // the record is hecho
)

// Defaults, as Powertools has them.
const (
	// DefaultExpiry is how long a record is kept (expires_after_seconds: 1 hour).
	DefaultExpiry = time.Hour
	// DefaultInProgress is the in-progress window when the context has no deadline
	// (Powertools has none without a registered Lambda context: the record would then
	// block its key until it expired).
	DefaultInProgress = time.Minute
)

// Config configures a Service. Table is the idempotency table, Accounts the ledger table.
// Expiry and InProgress default to DefaultExpiry and DefaultInProgress.
// KeyFromMessageID keys records on the SQS message id instead of (cuenta, id): the trap
// the comparison shows, never a production setting. Hook, when set, is called at each
// Point; its error stops the call at once, releasing nothing, as if the process died
// there (the comparison's crash points). Now is the clock (nil: time.Now).
type Config struct {
	Table             string
	Accounts          string
	Expiry            time.Duration
	InProgress        time.Duration
	InsufficientFunds ledger.FundsPolicy
	KeyFromMessageID  bool
	Hook              func(ctx context.Context, p Point, m movimiento.Movimiento) error
	Now               func() time.Time
}

// Service applies movements with a separate idempotency table. It implements
// consumer.Applier. It is safe for concurrent use.
type Service struct {
	db  Client
	cfg Config
}

// New returns a Service writing through db.
func New(db Client, cfg Config) (*Service, error) {
	if cfg.Table == "" || cfg.Accounts == "" {
		return nil, fmt.Errorf("idempotencia: the idempotency table and the accounts table must be named")
	}
	policy, err := ledger.ParseFundsPolicy(string(cfg.InsufficientFunds))
	if err != nil {
		return nil, err
	}
	cfg.InsufficientFunds = policy
	if cfg.Expiry <= 0 {
		cfg.Expiry = DefaultExpiry
	}
	if cfg.InProgress <= 0 {
		cfg.InProgress = DefaultInProgress
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Hook == nil {
		cfg.Hook = func(context.Context, Point, movimiento.Movimiento) error { return nil }
	}
	return &Service{db: db, cfg: cfg}, nil
}
