package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// ReadClient is the read-only part of the DynamoDB API a Reader uses, so the balance
// API can run under an IAM policy granting only dynamodb:GetItem and dynamodb:Query.
type ReadClient interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// MaxExtracto is the most movements one Extracto call returns, bounding one request's
// memory and reads.
const MaxExtracto = 1000

// Reader answers queries about accounts and their movements, and never writes. It is
// safe for concurrent use. Ids are not held to the message rules, so any stored id is
// found; one no DynamoDB key can hold is simply not found.
type Reader struct {
	db    ReadClient
	table string
}

// NewReader returns a Reader of the ledger table named table.
func NewReader(db ReadClient, table string) *Reader {
	return &Reader{db: db, table: table}
}

// Cuenta returns the account's current state, read strongly consistently. An unknown
// account is ErrNotFound.
func (r *Reader) Cuenta(ctx context.Context, id string) (cuenta.Cuenta, error) {
	if !items.Storable(id, "") {
		return cuenta.Cuenta{}, fmt.Errorf("account %s %w", id, ErrNotFound)
	}
	out, err := r.db.GetItem(ctx, versioned.GetInput(r.table, items.CuentaKey(id)))
	if err != nil {
		return cuenta.Cuenta{}, fmt.Errorf("store: read account %s: %w", id, err)
	}
	if len(out.Item) == 0 {
		return cuenta.Cuenta{}, fmt.Errorf("account %s %w", id, ErrNotFound)
	}
	c, _, err := items.DecodeCuenta(out.Item)
	return c, err
}

// Apunte returns the recorded movement (cuentaID, id), applied or rejected, read
// strongly consistently. A movement never recorded is ErrNotFound.
func (r *Reader) Apunte(ctx context.Context, cuentaID, id string) (movimiento.Apunte, error) {
	if !items.Storable(cuentaID, id) {
		return movimiento.Apunte{}, fmt.Errorf("movement %s of account %s %w", id, cuentaID, ErrNotFound)
	}
	out, err := r.db.GetItem(ctx, versioned.GetInput(r.table, items.MovKey(cuentaID, id)))
	if err != nil {
		return movimiento.Apunte{}, fmt.Errorf("store: read movement %s of account %s: %w", id, cuentaID, err)
	}
	if len(out.Item) == 0 {
		return movimiento.Apunte{}, fmt.Errorf("movement %s of account %s %w", id, cuentaID, ErrNotFound)
	}
	return items.DecodeApunte(out.Item)
}

// Extracto returns up to limit (1..MaxExtracto) of the account's applied movements,
// newest first by seq, below beforeSeq when it is positive. more reports exactly
// whether older movements remain. Rejected movements carry no seq and are not in it; an
// unknown account has an empty statement.
//
// The index por_seq is eventually consistent: a movement applied in the last moments
// (usually well under a second) may be missing while Cuenta counts it. Paging down
// with beforeSeq never repeats nor skips a settled movement, as seq never changes.
func (r *Reader) Extracto(ctx context.Context, cuentaID string, limit int, beforeSeq int64) (movs []movimiento.Apunte, more bool, err error) {
	return r.ExtractoRango(ctx, cuentaID, limit, SeqRange{}.Below(beforeSeq), NewestFirst)
}

// Order is the order a statement is read in.
type Order int

// The orders of a statement: by seq, newest first as the API pages it, or oldest first
// as an export writes it.
const (
	NewestFirst Order = iota
	OldestFirst
)

// ExtractoRango returns up to limit (1..MaxExtracto) of the account's applied movements
// within rango (Rango turns dates into one), in order, as Extracto does; more reports
// exactly whether others remain in rango past them.
func (r *Reader) ExtractoRango(ctx context.Context, cuentaID string, limit int, rango SeqRange, order Order) (movs []movimiento.Apunte, more bool, err error) {
	if limit < 1 || limit > MaxExtracto {
		return nil, false, fmt.Errorf("store: statement limit %d: want 1 to %d", limit, MaxExtracto)
	}
	if !items.Storable(cuentaID, "") || rango.Empty() {
		return nil, false, nil
	}
	// One more than asked for tells whether there are more.
	want := limit + 1
	movs = make([]movimiento.Apunte, 0, want)
	var start versioned.Item
	// Without a filter every page but the last holds an item, so want pages suffice;
	// the bound only stops a misbehaving backend.
	for page := 1; ; page++ {
		out, err := r.db.Query(ctx, extractoInput(r.table, cuentaID, rango, order, int32(want-len(movs)), start))
		if err != nil {
			return nil, false, fmt.Errorf("store: read the statement of account %s: %w", cuentaID, err)
		}
		for _, item := range out.Items {
			a, err := items.DecodeApunte(item)
			if err != nil {
				return nil, false, err
			}
			movs = append(movs, a)
		}
		if len(movs) >= want || len(out.LastEvaluatedKey) == 0 {
			break
		}
		if page >= want {
			return nil, false, fmt.Errorf("store: statement of account %s: %d items after %d pages, still not done", cuentaID, len(movs), page)
		}
		start = out.LastEvaluatedKey
	}
	if len(movs) > limit {
		return movs[:limit], true, nil
	}
	return movs, false, nil
}

// extractoInput is one page of an account's statement on por_seq, in order, with seq
// within rango (not empty), at most limit, continuing after start.
func extractoInput(table, cuentaID string, rango SeqRange, order Order, limit int32, start versioned.Item) *dynamodb.QueryInput {
	in := items.PartitionQuery(table, cuentaID)
	in.IndexName, in.ScanIndexForward, in.Limit, in.ExclusiveStartKey = aws.String(items.IndexPorSeq), aws.Bool(order == OldestFirst), aws.Int32(limit), start
	cond := ""
	switch {
	case rango.After > 0 && rango.Before > 0:
		cond = " AND #seq BETWEEN :first AND :last"
		in.ExpressionAttributeValues[":first"], in.ExpressionAttributeValues[":last"] = versioned.Int(rango.After+1), versioned.Int(rango.Before-1)
	case rango.Before > 0:
		cond = " AND #seq < :before"
		in.ExpressionAttributeValues[":before"] = versioned.Int(rango.Before)
	case rango.After > 0:
		cond = " AND #seq > :after"
		in.ExpressionAttributeValues[":after"] = versioned.Int(rango.After)
	}
	if cond != "" {
		in.KeyConditionExpression = aws.String(aws.ToString(in.KeyConditionExpression) + cond)
		in.ExpressionAttributeNames["#seq"] = items.AttrSeq
	}
	return in
}
