package versioned

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"golang.org/x/sync/errgroup"
)

// State is what a plan sees: the versioned items as last known, in Update's key order
// (nil: absent; a stale cached image is caught by the version check), their versions (0:
// absent), and the attempt (1-based).
type State struct {
	Items    []Item
	Versions []int64
	Attempt  int
}

// Plan decides what to write given the items' state. Update calls it again after a
// version conflict, so it must be a pure function of its input. Its error stops Update
// and is returned as is.
type Plan func(State) (Txn, error)

// Result describes a committed Update: the items as written (or as known, where the plan
// wrote none), their versions now, the commits tried, and whether any image was written.
type Result struct {
	Items    []Item
	Versions []int64
	Attempts int
	Written  bool
}

// maxParallelReads bounds the reads Update makes at once when it starts cold.
const maxParallelReads = 8

// Update takes the items at keys from the cache or reads them, asks plan what to write,
// and commits it in one TransactWriteItems. On a version conflict it plans again on the
// fresh state; on contention it backs off; past Policy or ctx's deadline it returns an
// *AttemptsError. An existing create-once or Absent record ends it with an
// *ExistsError, a changed record to replace with a *ChangedError, both carrying the
// stored items. A request DynamoDB can never accept matches ErrRejected or
// ErrInvalidTxn.
func (s *Store) Update(ctx context.Context, keys []Item, plan Plan) (Result, error) {
	ks := make([]itemKey, len(keys))
	for i, key := range keys {
		k, err := s.table.keyOf(key)
		if err != nil {
			return Result{}, err
		}
		ks[i] = k
	}
	st, err := s.start(ctx, ks, keys)
	if err != nil {
		return Result{}, err
	}
	var last error
	for attempt := 1; attempt <= s.policy.MaxAttempts; attempt++ {
		if attempt > 1 {
			if err := s.backoff(ctx, attempt); err != nil {
				return Result{Attempts: attempt - 1}, &AttemptsError{Attempts: attempt - 1, Err: last}
			}
		}
		st.Attempt = attempt
		txn, err := plan(st)
		if err != nil {
			return Result{Attempts: attempt - 1}, err
		}
		if txn.empty() {
			return Result{Items: st.Items, Versions: st.Versions, Attempts: attempt - 1}, nil
		}
		in, err := BuildInput(s.table, keys, st.Versions, txn)
		if err != nil {
			return Result{}, err
		}
		_, err = s.db.TransactWriteItems(ctx, in)
		v := classify(err, txn.guarded(), len(txn.Replaces), len(in.TransactItems))
		switch v.kind {
		case committed:
			return s.committed(txn, ks, st, attempt), nil
		case refused:
			for i, item := range v.moved {
				s.remember(ks[i], item)
			}
			// Read back the stored records the backend did not return.
			err := s.fill(ctx, v.existing, txn.guardedKey)
			if err == nil {
				err = s.fill(ctx, v.changed, func(i int) Item { return txn.Replaces[i].Item })
			}
			return Result{Attempts: attempt}, cmp.Or(err, v.err)
		case conflict:
			if st, err = s.fresh(ctx, ks, keys, st, v.moved); err != nil {
				return Result{Attempts: attempt}, err
			}
		case giveUp:
			// The write may have committed unseen (a lost response): forget the images
			// rather than pay a certain conflict next time.
			for _, k := range ks {
				s.remember(k, nil)
			}
			if errors.Is(v.err, ErrRejected) {
				return Result{Attempts: attempt}, v.err
			}
			return Result{Attempts: attempt}, &AttemptsError{Attempts: attempt, Err: v.err}
		}
		last = v.err
	}
	return Result{Attempts: s.policy.MaxAttempts}, &AttemptsError{Attempts: s.policy.MaxAttempts, Err: last}
}

// committed is the Result of a committed txn, and remembers the images it wrote.
func (s *Store) committed(txn Txn, ks []itemKey, st State, attempt int) Result {
	res := Result{Items: slices.Clone(st.Items), Versions: slices.Clone(st.Versions), Attempts: attempt}
	for i, next := range txn.Next {
		if next != nil { // BuildInput set its version: it is the image written
			res.Items[i], res.Written = next, true
			res.Versions[i]++
			s.remember(ks[i], next)
		}
	}
	return res
}

// backoff waits before attempt n with full jitter; it refuses a wait that would outlast
// ctx's deadline, so the caller can still report in time.
func (s *Store) backoff(ctx context.Context, attempt int) error {
	ceiling := s.policy.BaseDelay << min(attempt-2, 20)
	if ceiling > s.policy.MaxDelay || ceiling <= 0 {
		ceiling = s.policy.MaxDelay
	}
	d := time.Duration(rand.Int64N(int64(ceiling) + 1))
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return context.DeadlineExceeded
	}
	return Sleep(ctx, d)
}

// Sleep waits d, or until ctx ends (then it returns ctx's error): the pause between
// attempts, shared with the store's audit, which re-reads a busy account the same way.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// start is the state an Update begins from: the cached images, or reads of the rest.
func (s *Store) start(ctx context.Context, ks []itemKey, keys []Item) (State, error) {
	items := make([]Item, len(keys))
	var g errgroup.Group
	g.SetLimit(maxParallelReads)
	for i := range keys {
		if s.cache != nil {
			if item, ok := s.cache.Get(ks[i]); ok {
				items[i] = item
				continue
			}
		}
		g.Go(func() (err error) {
			if items[i], err = s.get(ctx, keys[i]); err == nil {
				s.remember(ks[i], items[i])
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return State{}, err
	}
	return s.state(items)
}

// fresh is st with the moved items' ALL_OLD images, or reads where there are none.
func (s *Store) fresh(ctx context.Context, ks []itemKey, keys []Item, st State, moved map[int]Item) (State, error) {
	items := slices.Clone(st.Items)
	for i, item := range moved {
		if item == nil {
			var err error
			if item, err = s.get(ctx, keys[i]); err != nil {
				return State{}, err
			}
		}
		s.remember(ks[i], item)
		items[i] = item
	}
	return s.state(items)
}

// Forget drops keys' cached images, so the next Update reads them: for a caller that
// must see the stored image even when it decides to write nothing, such as an
// operator's change. A key that names no item is ignored.
func (s *Store) Forget(keys ...Item) {
	for _, key := range keys {
		if k, err := s.table.keyOf(key); err == nil {
			s.remember(k, nil)
		}
	}
}

// remember caches item as the image at k, or forgets k when item is nil (unknown).
func (s *Store) remember(k itemKey, item Item) {
	switch {
	case s.cache == nil:
	case item == nil:
		s.cache.Remove(k)
	default:
		s.cache.Add(k, item)
	}
}

// get reads an item strongly consistently: a plan must see the last write.
func (s *Store) get(ctx context.Context, key Item) (Item, error) {
	out, err := s.db.GetItem(ctx, GetInput(s.table.Name, s.table.key(key)))
	if err != nil {
		return nil, fmt.Errorf("versioned: read: %w", err)
	}
	return nonEmpty(out.Item), nil
}

// GetInput is a strongly consistent GetItem of key in table: a reader sees the last write.
func GetInput(table string, key Item) *dynamodb.GetItemInput {
	return &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)}
}

// state reads the versions of items.
func (s *Store) state(items []Item) (State, error) {
	st := State{Items: items, Versions: make([]int64, len(items))}
	for i, item := range items {
		if item == nil {
			continue
		}
		var v int64
		if err := attributevalue.Unmarshal(item[s.table.Version], &v); err != nil || v < 1 {
			var stored any
			_ = attributevalue.Unmarshal(item[s.table.Version], &stored) // for the error only
			return State{}, &UnreadableError{Index: i, Version: stored}
		}
		st.Versions[i] = v
	}
	return st, nil
}

// fill reads the stored item of each record that came back without one.
func (s *Store) fill(ctx context.Context, recs []Existing, key func(int) Item) error {
	for i, e := range recs {
		if e.Item == nil {
			item, err := s.get(ctx, key(e.Index))
			if err != nil {
				return err
			}
			recs[i].Item = item
		}
	}
	return nil
}
