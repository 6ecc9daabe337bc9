package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

func TestExtractoInputAsksForOnePageInOrder(t *testing.T) {
	start := items.MovKey("ES76", "pago-9")
	cases := []struct {
		name   string
		rango  SeqRange
		order  Order
		start  versioned.Item
		cond   string
		names  []string
		values map[string]string // the seq bounds by placeholder
	}{
		{"first page", SeqRange{}, NewestFirst, nil, "#pk = :pk", []string{"#pk"}, nil},
		{"after a cursor", SeqRange{Before: 51}, NewestFirst, nil, "#pk = :pk AND #seq < :before", []string{"#pk", "#seq"}, map[string]string{":before": "51"}},
		{"continuing a short page", SeqRange{Before: 51}, NewestFirst, start, "#pk = :pk AND #seq < :before", []string{"#pk", "#seq"}, map[string]string{":before": "51"}},
		{"from a date on", SeqRange{After: 7}, NewestFirst, nil, "#pk = :pk AND #seq > :after", []string{"#pk", "#seq"}, map[string]string{":after": "7"}},
		{"between two dates", SeqRange{After: 7, Before: 51}, NewestFirst, nil, "#pk = :pk AND #seq BETWEEN :first AND :last", []string{"#pk", "#seq"}, map[string]string{":first": "8", ":last": "50"}},
		{"oldest first, as an export reads", SeqRange{After: 7, Before: 9}, OldestFirst, nil, "#pk = :pk AND #seq BETWEEN :first AND :last", []string{"#pk", "#seq"}, map[string]string{":first": "8", ":last": "8"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := extractoInput("ledger-prod", "ES76", tc.rango, tc.order, 51, tc.start)
			if aws.ToString(in.TableName) != "ledger-prod" || aws.ToString(in.IndexName) != "por_seq" {
				t.Errorf("table/index = %s/%s, want ledger-prod/por_seq", aws.ToString(in.TableName), aws.ToString(in.IndexName))
			}
			if aws.ToString(in.KeyConditionExpression) != tc.cond {
				t.Errorf("key condition = %q, want %q", aws.ToString(in.KeyConditionExpression), tc.cond)
			}
			// DynamoDB rejects names or values the expression does not use.
			if got := slices.Sorted(maps.Keys(in.ExpressionAttributeNames)); !slices.Equal(got, tc.names) {
				t.Errorf("names = %v, want %v", got, tc.names)
			}
			if in.ExpressionAttributeNames["#pk"] != "pk" || (tc.values != nil && in.ExpressionAttributeNames["#seq"] != "seq") {
				t.Errorf("names = %v, want #pk=pk, #seq=seq", in.ExpressionAttributeNames)
			}
			if pk, _ := in.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS); pk == nil || pk.Value != "CUENTA#ES76" {
				t.Errorf(":pk = %v, want CUENTA#ES76", in.ExpressionAttributeValues[":pk"])
			}
			if len(in.ExpressionAttributeValues) != len(tc.values)+1 {
				t.Errorf("values = %v, want :pk and %v alone", in.ExpressionAttributeValues, tc.values)
			}
			for name, want := range tc.values {
				if n, _ := in.ExpressionAttributeValues[name].(*types.AttributeValueMemberN); n == nil || n.Value != want {
					t.Errorf("%s = %v, want %s as a number", name, in.ExpressionAttributeValues[name], want)
				}
			}
			if in.ScanIndexForward == nil || *in.ScanIndexForward != (tc.order == OldestFirst) {
				t.Errorf("ScanIndexForward = %v for order %v: the statement would start at the wrong end", in.ScanIndexForward, tc.order)
			}
			if aws.ToInt32(in.Limit) != 51 {
				t.Errorf("limit = %d, want 51", aws.ToInt32(in.Limit))
			}
			if in.ConsistentRead != nil {
				t.Error("ConsistentRead is set: DynamoDB rejects it on a global secondary index")
			}
			if !maps.Equal(keyStrings(in.ExclusiveStartKey), keyStrings(tc.start)) {
				t.Errorf("start key = %v, want %v", in.ExclusiveStartKey, tc.start)
			}
		})
	}
}

func keyStrings(item versioned.Item) map[string]string {
	out := map[string]string{}
	for k, v := range item {
		out[k] = v.(*types.AttributeValueMemberS).Value
	}
	return out
}

func TestGetInputIsStronglyConsistent(t *testing.T) {
	in := versioned.GetInput("ledger", items.CuentaKey("ES76"))
	if !aws.ToBool(in.ConsistentRead) || aws.ToString(in.TableName) != "ledger" {
		t.Errorf("input = %+v, want a strongly consistent read of table ledger", in)
	}
	if got := keyStrings(in.Key); got["pk"] != "CUENTA#ES76" || got["sk"] != "CUENTA" || len(got) != 2 {
		t.Errorf("key = %v, want the account item's", got)
	}
}

// shortPages is a ReadClient whose Query serves a statement (newest first) in pages of
// at most pageSize items, as DynamoDB does when a page reaches 1 MB. With pageSize 0 it
// returns empty pages that always claim more, as no well-behaved backend would.
type shortPages struct {
	items    []versioned.Item
	pageSize int
	queries  int
}

func (c *shortPages) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return nil, errors.New("not used")
}

func (c *shortPages) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.queries++
	from := 0
	if in.ExclusiveStartKey != nil {
		from, _ = strconv.Atoi(in.ExclusiveStartKey["i"].(*types.AttributeValueMemberN).Value)
	}
	n := min(int(aws.ToInt32(in.Limit)), c.pageSize, len(c.items)-from)
	out := &dynamodb.QueryOutput{Items: c.items[from : from+n]}
	if from+n < len(c.items) || c.pageSize == 0 {
		out.LastEvaluatedKey = versioned.Item{"i": &types.AttributeValueMemberN{Value: strconv.Itoa(from + n)}}
	}
	return out, nil
}

func TestExtractoFollowsShortPagesToTheLimit(t *testing.T) {
	var page []versioned.Item
	for seq := 10; seq >= 1; seq-- {
		m := testMov(t, fmt.Sprintf("m-%d", seq), movimiento.Abono, "1.00")
		page = append(page, must(items.EncodeApunte(movimiento.Apunte{Movimiento: m, Huella: m.Huella(), Estado: movimiento.Aplicado, Seq: int64(seq), SaldoTras: decimal.NewFromInt(int64(seq)), Aplicado: t0})))
	}
	for _, tc := range []struct {
		limit     int
		wantSeqs  int
		wantMore  bool
		maxPages  int
		pageLimit int
	}{
		{limit: 4, wantSeqs: 4, wantMore: true, maxPages: 2},
		{limit: 9, wantSeqs: 9, wantMore: true, maxPages: 4},
		{limit: 10, wantSeqs: 10, wantMore: false, maxPages: 4},
		{limit: 50, wantSeqs: 10, wantMore: false, maxPages: 4},
	} {
		db := &shortPages{items: page, pageSize: 3}
		got, more, err := NewReader(db, "ledger").Extracto(context.Background(), "ES76", tc.limit, 0)
		if err != nil {
			t.Fatalf("limit %d: %v", tc.limit, err)
		}
		if len(got) != tc.wantSeqs || more != tc.wantMore {
			t.Fatalf("limit %d: %d movements, more %v; want %d, %v", tc.limit, len(got), more, tc.wantSeqs, tc.wantMore)
		}
		for i, a := range got {
			if a.Seq != int64(10-i) {
				t.Fatalf("limit %d: position %d has seq %d, want %d", tc.limit, i, a.Seq, 10-i)
			}
		}
		if db.queries > tc.maxPages {
			t.Errorf("limit %d: %d queries, want at most %d", tc.limit, db.queries, tc.maxPages)
		}
	}
}

func TestExtractoStopsOnABackendThatNeverFinishes(t *testing.T) {
	db := &shortPages{pageSize: 0}
	_, _, err := NewReader(db, "ledger").Extracto(context.Background(), "ES76", 5, 0)
	if err == nil || db.queries != 6 {
		t.Fatalf("err = %v after %d queries, want an error after 6 (limit+1) pages", err, db.queries)
	}
}

func TestExtractoRejectsALimitOutOfRange(t *testing.T) {
	for _, limit := range []int{0, -1, MaxExtracto + 1} {
		if _, _, err := NewReader(&shortPages{}, "ledger").Extracto(context.Background(), "ES76", limit, 0); err == nil {
			t.Errorf("limit %d accepted", limit)
		}
	}
}
