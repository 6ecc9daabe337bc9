package store

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// BackfillClient is the part of the DynamoDB API Backfill uses.
type BackfillClient interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// Backfilled is what Backfill did: Keyed movements it gave aplicado_seq, and Unreadable
// ones it could not, whose aplicado or seq does not read (a hand edit); those stay out
// of por_aplicado.
type Backfilled struct {
	Keyed, Unreadable int
}

// backfillWrites bounds the updates in flight at once: one scan page's worth of
// movements is written concurrently, within what one process sends comfortably.
const backfillWrites = 16

// Backfill gives aplicado_seq to every posted movement of table that has none: those a
// release before the index por_aplicado posted, which the index cannot hold without it.
// It scans the table once, and each update is conditional, so a movement keyed since
// (by a consumer, another run) is left alone and a second run keys only what the first
// missed: the movements that releases still running then posted. It writes no account,
// and no other attribute. The scan ends with the table; ctx bounds it.
func Backfill(ctx context.Context, db BackfillClient, table string) (Backfilled, error) {
	var keyed, unreadable atomic.Int64
	var start versioned.Item
	for {
		out, err := db.Scan(ctx, items.UnkeyedScan(table, start))
		if err != nil {
			return backfilled(&keyed, &unreadable), fmt.Errorf("store: scan %s for movements without aplicado_seq: %w", table, err)
		}
		eg, egctx := errgroup.WithContext(ctx)
		eg.SetLimit(backfillWrites)
		for _, item := range out.Items {
			in, ok := items.AplicadoSeqUpdate(table, item)
			if !ok {
				unreadable.Add(1)
				continue
			}
			eg.Go(func() error {
				_, err := db.UpdateItem(egctx, in)
				if _, keyedSince := versioned.ConditionFailed(err); err != nil && !keyedSince {
					return fmt.Errorf("store: give a movement of %s its aplicado_seq: %w", table, err)
				}
				if err == nil {
					keyed.Add(1)
				}
				return nil
			})
		}
		if err := eg.Wait(); err != nil {
			return backfilled(&keyed, &unreadable), err
		}
		if start = out.LastEvaluatedKey; len(start) == 0 {
			return backfilled(&keyed, &unreadable), nil
		}
	}
}

// backfilled is the counts so far.
func backfilled(keyed, unreadable *atomic.Int64) Backfilled {
	return Backfilled{Keyed: int(keyed.Load()), Unreadable: int(unreadable.Load())}
}
