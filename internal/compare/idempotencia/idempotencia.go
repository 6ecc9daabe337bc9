// Package idempotencia is the separate-table baseline the comparison runs beside the
// ledger: an idempotency table as AWS Lambda Powertools keeps it, with the design's
// traps kept for internal/compare to expose. It is never deployed. docs/compare.md
// describes its calls and items.
package idempotencia

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Client is the part of the DynamoDB API the baseline uses.
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
	DefaultExpiry     = time.Hour   // how long a record is kept
	DefaultInProgress = time.Minute // the in-progress window when the context has no deadline
)

// Config configures a Service; zero values pick the defaults in brackets.
type Config struct {
	Table             string        // the idempotency table
	Accounts          string        // the ledger table
	Expiry            time.Duration // [DefaultExpiry]
	InProgress        time.Duration // [DefaultInProgress]
	InsufficientFunds cuenta.FundsPolicy
	// KeyFromMessageID keys records on the SQS message id instead of (cuenta, id): the
	// trap the comparison shows, never a production setting.
	KeyFromMessageID bool
	// Hook is called at each Point; its error stops the call at once, releasing nothing,
	// as if the process died there [none].
	Hook func(ctx context.Context, p Point, m movimiento.Movimiento) error
	Now  func() time.Time // [time.Now]
}

// Service is the baseline's consumer.Applier; it is safe for concurrent use.
type Service struct {
	db  Client
	cfg Config
}

// New returns a Service writing through db.
func New(db Client, cfg Config) (*Service, error) {
	if cfg.Table == "" || cfg.Accounts == "" {
		return nil, fmt.Errorf("idempotencia: the idempotency table and the accounts table must be named")
	}
	policy, err := cuenta.ParseFundsPolicy(string(cfg.InsufficientFunds))
	if err != nil {
		return nil, err
	}
	cfg.InsufficientFunds = policy
	cfg.Expiry = cmp.Or(max(cfg.Expiry, 0), DefaultExpiry)
	cfg.InProgress = cmp.Or(max(cfg.InProgress, 0), DefaultInProgress)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Hook == nil {
		cfg.Hook = func(context.Context, Point, movimiento.Movimiento) error { return nil }
	}
	return &Service{db: db, cfg: cfg}, nil
}

// Saldo reads an account's balance and movement count; ok is false if it does not exist.
func (s *Service) Saldo(ctx context.Context, cuenta string) (saldo decimal.Decimal, movimientos int64, ok bool, err error) {
	out, err := s.db.GetItem(ctx, versioned.GetInput(s.cfg.Accounts, accountKey(cuenta)))
	if v := classify(err); v.kind != done {
		return decimal.Zero, 0, false, v.err
	}
	a, err := decodeAccount(out.Item)
	if err != nil || out.Item == nil {
		return decimal.Zero, 0, false, err
	}
	return a.Saldo.Decimal, a.Movimientos, true, nil
}

// ErrInProgress matches a delivery refused because another delivery holds its key and
// has neither marked it hecho nor let it expire: it comes back later.
var ErrInProgress = errors.New("idempotencia: the key is in progress")

// InProgressError is ErrInProgress with the key and the time its reservation expires.
type InProgressError struct {
	Key   string
	Until time.Time
}

// Error implements error.
func (e *InProgressError) Error() string {
	return fmt.Sprintf("idempotencia: key %s is in progress until %s", e.Key, e.Until.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrInProgress) true.
func (e *InProgressError) Is(target error) bool { return target == ErrInProgress }

// ErrNotMarked matches a delivery whose effect was made but whose record could not be
// marked hecho: the message comes back, and once the in-progress expiry passes a
// redelivery applies the effect again (the baseline's double application).
var ErrNotMarked = errors.New("idempotencia: effect made, record not marked")

// ErrUnsupported matches a movement the baseline does not apply: reversals and holds
// need the ledger's records, which this design does not keep.
var ErrUnsupported = errors.New("idempotencia: the separate-table strategy applies abonos, cargos and transfers only, not")
