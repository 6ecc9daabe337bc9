package store

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Budget bounds what one Apply (one attempt at a group of messages) or one Administrar
// spends on retries, so that the SDK's retries and the ledger's cannot multiply: at
// most Retries requests sent again in all, whether the SDK resends a throttled or failed
// request or the ledger commits again after a version conflict or contention, and at
// most Time in all. The wait before the ledger's retry n is drawn uniformly from
// [0, min(MaxDelay, BaseDelay·2^(n-1))] (full jitter, so racing writers spread out),
// never past the context's deadline; the SDK's waits are its own.
type Budget struct {
	Retries   int
	Time      time.Duration
	BaseDelay time.Duration
	MaxDelay  time.Duration
}

// DefaultBudget suits a Lambda consumer: at most 8 retries (a warm account's batch
// costs at most 9 requests) within 10 s, a third of the function's timeout, with
// back-offs well under a second.
var DefaultBudget = Budget{Retries: 8, Time: 10 * time.Second, BaseDelay: 5 * time.Millisecond, MaxDelay: 200 * time.Millisecond}

// bound is ctx ending at most b.Time from now (none when b.Time is 0).
func (b Budget) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if b.Time == 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, b.Time)
}

// errBudgetSpent is the reason a retry was not made: the Budget had none left.
var errBudgetSpent = errors.New("store: retry budget spent")

// retries is what is left of one Apply's or one Administrar's Budget.Retries: the
// ledger's retries and the SDK's spend it alike, concurrent reads included.
type retries struct{ left atomic.Int64 }

func newRetries(n int) *retries {
	r := &retries{}
	r.left.Store(int64(n))
	return r
}

// take spends one retry; it reports false when none was left.
func (r *retries) take() bool { return r.left.Add(-1) >= 0 }

// sdk is the per-call option that makes the SDK spend r for every request it sends
// again: with none left it sends none, and the call fails with the error it had.
func (r *retries) sdk(o *dynamodb.Options) {
	if v2, ok := o.Retryer.(aws.RetryerV2); ok {
		o.Retryer = budgeted{RetryerV2: v2, r: r}
	}
}

// budgeted is the SDK's retryer, asking r before each retry.
type budgeted struct {
	aws.RetryerV2
	r *retries
}

// GetRetryToken is the SDK's retry quota, after r's.
func (b budgeted) GetRetryToken(ctx context.Context, opErr error) (func(error) error, error) {
	if !b.r.take() {
		return nil, errBudgetSpent
	}
	return b.RetryerV2.GetRetryToken(ctx, opErr)
}
