package versioned

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// State is what a plan sees: the versioned item as last known (nil when it does not
// exist; possibly a cached image another store has since moved on from, which the
// version check catches), its version (0 when absent), and which attempt this is
// (1-based).
type State struct {
	Item    Item
	Version int64
	Attempt int
}

// Plan decides what to write given the item's current state. Update may call it again
// with a fresher state after a version conflict, so it must be a pure function of its
// input (no side effects it cannot repeat). An error from the plan stops Update and is
// returned as is.
type Plan func(State) (Txn, error)

// Result describes a committed Update. Item is the versioned item as written (nil when
// the plan wrote no new image), Version its version now, Attempts the commits tried.
// Written is false when the plan asked for nothing.
type Result struct {
	Item     Item
	Version  int64
	Attempts int
	Written  bool
}

// Update takes the item at key from the cache or reads it (strongly consistent), asks
// plan what to write, and commits it in one TransactWriteItems. On a version conflict it
// plans again on the fresh state, taken from the cancellation's ALL_OLD image, or re-read
// where the backend returned none; on transaction conflicts and throttling it backs off. Both are bounded
// by Policy and by ctx's deadline, after which it returns an *AttemptsError. When a
// create-once or Absent record exists it stops at once with an *ExistsError whose
// records carry their stored items, so the caller can tell a duplicate from a
// conflicting one.
func (s *Store) Update(ctx context.Context, key Item, plan Plan) (Result, error) {
	k, err := s.table.keyOf(key)
	if err != nil {
		return Result{}, err
	}
	st, err := s.start(ctx, k, key)
	if err != nil {
		return Result{}, err
	}
	var last error
	for attempt := 1; attempt <= s.policy.MaxAttempts; attempt++ {
		if attempt > 1 {
			if err := s.backoff(ctx, attempt); err != nil {
				return Result{}, &AttemptsError{Attempts: attempt - 1, Err: last}
			}
		}
		st.Attempt = attempt
		txn, err := plan(st)
		if err != nil {
			return Result{Attempts: attempt - 1}, err
		}
		if txn.empty() {
			return Result{Item: st.Item, Version: st.Version, Attempts: attempt - 1}, nil
		}
		in, err := BuildInput(s.table, key, st.Version, txn)
		if err != nil {
			return Result{}, err
		}
		_, err = s.db.TransactWriteItems(ctx, in)
		v := classify(err, txn.guarded())
		switch v.kind {
		case committed:
			res := Result{Version: st.Version, Attempts: attempt, Written: txn.Next != nil}
			if txn.Next != nil {
				res.Item = in.TransactItems[len(in.TransactItems)-1].Put.Item
				res.Version++
				s.remember(k, res.Item)
			}
			return res, nil
		case exists:
			if v.current != nil {
				s.remember(k, v.current)
			}
			if err := s.fillExisting(ctx, txn, v.existing); err != nil {
				return Result{}, err
			}
			return Result{Attempts: attempt}, v.err
		case conflict:
			if v.current != nil {
				s.remember(k, v.current)
				st, err = s.state(v.current)
			} else {
				st, err = s.read(ctx, k, key)
			}
			if err != nil {
				return Result{}, err
			}
		case contention:
		case giveUp:
			// The write may have committed unseen (a lost response): forget the image
			// rather than pay a certain conflict next time.
			s.forget(k)
			return Result{Attempts: attempt}, &AttemptsError{Attempts: attempt, Err: v.err}
		}
		last = v.err
	}
	return Result{Attempts: s.policy.MaxAttempts}, &AttemptsError{Attempts: s.policy.MaxAttempts, Err: last}
}

// backoff waits before attempt n with full jitter. It refuses to start a wait that
// would outlast ctx's deadline, so the caller can still report in time.
func (s *Store) backoff(ctx context.Context, attempt int) error {
	ceiling := s.policy.BaseDelay << min(attempt-2, 20)
	if ceiling > s.policy.MaxDelay || ceiling <= 0 {
		ceiling = s.policy.MaxDelay
	}
	d := time.Duration(rand.Int64N(int64(ceiling) + 1))
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return context.DeadlineExceeded
	}
	return sleepCtx(ctx, d)
}

// start is the state an Update begins from: the cached image, or a read.
func (s *Store) start(ctx context.Context, k itemKey, key Item) (State, error) {
	if s.cache != nil {
		if item, ok := s.cache.Get(k); ok {
			return s.state(item)
		}
	}
	return s.read(ctx, k, key)
}

// read fetches the item with a strongly consistent GetItem (a plan must never be based
// on a replica that has not seen the last write) and remembers it.
func (s *Store) read(ctx context.Context, k itemKey, key Item) (State, error) {
	item, err := s.get(ctx, key)
	if err != nil {
		return State{}, err
	}
	if item != nil {
		s.remember(k, item)
	} else {
		s.forget(k)
	}
	return s.state(item)
}

func (s *Store) remember(k itemKey, item Item) {
	if s.cache != nil {
		s.cache.Add(k, item)
	}
}

func (s *Store) forget(k itemKey) {
	if s.cache != nil {
		s.cache.Remove(k)
	}
}

func (s *Store) get(ctx context.Context, key Item) (Item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table.Name),
		Key:            key,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("versioned: read: %w", err)
	}
	return nonEmpty(out.Item), nil
}

func (s *Store) state(item Item) (State, error) {
	if item == nil {
		return State{}, nil
	}
	n, ok := item[s.table.Version].(*types.AttributeValueMemberN)
	if !ok {
		return State{}, fmt.Errorf("versioned: stored item has no numeric %q attribute", s.table.Version)
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil || v < 1 {
		return State{}, fmt.Errorf("versioned: stored item has version %q, want a positive integer", n.Value)
	}
	return State{Item: item, Version: v}, nil
}

// fillExisting reads back the stored records a backend did not return with ALL_OLD.
func (s *Store) fillExisting(ctx context.Context, txn Txn, existing []Existing) error {
	for i := range existing {
		if existing[i].Item != nil {
			continue
		}
		item, err := s.get(ctx, s.table.key(txn.guardedKey(existing[i].Index)))
		if err != nil {
			return err
		}
		existing[i].Item = item
	}
	return nil
}
