package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/ledger"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/versioned"
)

func TestExtractoInputAsksForOnePageNewestFirst(t *testing.T) {
	start := movKey("ES76", "pago-9")
	cases := []struct {
		name      string
		beforeSeq int64
		start     versioned.Item
		cond      string
		names     []string
		before    string // ":before", "" when absent
	}{
		{"first page", 0, nil, "#pk = :pk", []string{"#pk"}, ""},
		{"after a cursor", 51, nil, "#pk = :pk AND #seq < :before", []string{"#pk", "#seq"}, "51"},
		{"continuing a short page", 51, start, "#pk = :pk AND #seq < :before", []string{"#pk", "#seq"}, "51"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := extractoInput("ledger-prod", "ES76", tc.beforeSeq, 51, tc.start)
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
			if in.ExpressionAttributeNames["#pk"] != "pk" || (tc.before != "" && in.ExpressionAttributeNames["#seq"] != "seq") {
				t.Errorf("names = %v, want #pk=pk, #seq=seq", in.ExpressionAttributeNames)
			}
			if pk, _ := in.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS); pk == nil || pk.Value != "CUENTA#ES76" {
				t.Errorf(":pk = %v, want CUENTA#ES76", in.ExpressionAttributeValues[":pk"])
			}
			before, _ := in.ExpressionAttributeValues[":before"].(*types.AttributeValueMemberN)
			if (tc.before == "") != (before == nil) || (before != nil && before.Value != tc.before) {
				t.Errorf(":before = %v, want %q as a number", in.ExpressionAttributeValues[":before"], tc.before)
			}
			if in.ScanIndexForward == nil || *in.ScanIndexForward {
				t.Error("ScanIndexForward is not false: the statement would start with the oldest movement")
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
	in := versioned.GetInput("ledger", cuentaKey("ES76"))
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
	var items []versioned.Item
	for seq := 10; seq >= 1; seq-- {
		m := testMov(t, fmt.Sprintf("m-%d", seq), movimiento.Abono, "1.00")
		items = append(items, mustItem(encodeApunte(ledger.Apunte{Movimiento: m, Huella: m.Huella(), Estado: ledger.Aplicado, Seq: int64(seq), SaldoTras: decimal.NewFromInt(int64(seq)), Aplicado: t0})))
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
		db := &shortPages{items: items, pageSize: 3}
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

// seeded is a table holding 120 applied movements on ES76 (abonos of 1.00 … 120.00)
// and one rejected cargo, applied the way the consumer does: in batches.
func seeded(t *testing.T) (*testenv.DynamoDB, *Reader) {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	svc, err := New(env.Client, Config{Table: env.Table(), InsufficientFunds: ledger.Reject, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var batch []ledger.Entrega
	for i := 1; i <= 120; i++ {
		batch = append(batch, ledger.Entrega{Mov: testMov(t, fmt.Sprintf("m-%03d", i), movimiento.Abono, fmt.Sprintf("%d.00", i)), Origen: "msg"})
		if len(batch) == 40 {
			for _, r := range svc.ApplyAll(ctx, batch) {
				if r.Outcome != ledger.Applied {
					t.Fatalf("seeding: %+v", r)
				}
			}
			batch = nil
		}
	}
	if r, err := svc.Apply(ctx, ledger.Entrega{Mov: testMov(t, "too-much", movimiento.Cargo, "1000000.00")}); r.Outcome != ledger.Rejected {
		t.Fatalf("seeding the rejected cargo: %+v, %v", r, err)
	}
	return env, NewReader(env.Client, env.Table())
}

func TestReaderOnEveryBackend(t *testing.T) {
	env, r := seeded(t)
	ctx := context.Background()
	t.Logf("backend %s", env.Backend)

	t.Run("account", func(t *testing.T) {
		c, err := r.Cuenta(ctx, "ES76")
		if err != nil {
			t.Fatal(err)
		}
		// Σ 1..120 = 7260; the rejected cargo changed nothing.
		if !c.Saldo.Equal(decimal.NewFromInt(7260)) || c.Movimientos != 120 || c.Version != 3 || c.Moneda != "EUR" || !c.Actualizada.Equal(t0) {
			t.Errorf("account = %+v, want saldo 7260 after 120 movements in 3 writes", c)
		}
	})
	t.Run("unknown account", func(t *testing.T) {
		_, err := r.Cuenta(ctx, "ES99")
		var nf *ledger.NotFoundError
		if !errors.Is(err, ledger.ErrNotFound) || !errors.As(err, &nf) || nf.Cuenta != "ES99" || nf.ID != "" {
			t.Fatalf("err = %v, want a ledger.NotFoundError for account ES99", err)
		}
	})
	t.Run("applied movement", func(t *testing.T) {
		a, err := r.Apunte(ctx, "ES76", "m-007")
		if err != nil {
			t.Fatal(err)
		}
		if a.Estado != ledger.Aplicado || a.Seq != 7 || !a.SaldoTras.Equal(decimal.NewFromInt(28)) || !a.Movimiento.Importe.Equal(decimal.NewFromInt(7)) || a.Motivo != "" {
			t.Errorf("movement = %+v, want applied as seq 7 with saldo_tras 28", a)
		}
	})
	t.Run("rejected movement", func(t *testing.T) {
		a, err := r.Apunte(ctx, "ES76", "too-much")
		if err != nil {
			t.Fatal(err)
		}
		if a.Estado != ledger.Rechazado || a.Seq != 0 || a.Motivo == "" {
			t.Errorf("movement = %+v, want rejected with a reason and no seq", a)
		}
	})
	t.Run("unknown movement", func(t *testing.T) {
		_, err := r.Apunte(ctx, "ES76", "m-999")
		var nf *ledger.NotFoundError
		if !errors.Is(err, ledger.ErrNotFound) || !errors.As(err, &nf) || nf.ID != "m-999" {
			t.Fatalf("err = %v, want a ledger.NotFoundError for movement m-999", err)
		}
	})
	t.Run("statement pages", func(t *testing.T) {
		var seqs []int64
		before := int64(0)
		var sizes []int
		for range 10 {
			page, more, err := r.Extracto(ctx, "ES76", 50, before)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(page))
			for _, a := range page {
				seqs = append(seqs, a.Seq)
			}
			if !more {
				break
			}
			before = page[len(page)-1].Seq
		}
		if !slices.Equal(sizes, []int{50, 50, 20}) {
			t.Fatalf("page sizes = %v, want [50 50 20]", sizes)
		}
		for i, seq := range seqs {
			if seq != int64(120-i) {
				t.Fatalf("position %d has seq %d, want %d (seqs %v)", i, seq, 120-i, seqs)
			}
		}
	})
	t.Run("more is exact", func(t *testing.T) {
		for _, tc := range []struct {
			limit  int
			before int64
			n      int
			more   bool
		}{{120, 0, 120, false}, {119, 0, 119, true}, {3, 4, 3, false}, {3, 5, 3, true}, {5, 1, 0, false}} {
			page, more, err := r.Extracto(ctx, "ES76", tc.limit, tc.before)
			if err != nil || len(page) != tc.n || more != tc.more {
				t.Errorf("limit %d before %d: %d movements, more %v, %v; want %d, %v", tc.limit, tc.before, len(page), more, err, tc.n, tc.more)
			}
		}
	})
	t.Run("unknown account has an empty statement", func(t *testing.T) {
		page, more, err := r.Extracto(ctx, "ES99", 50, 0)
		if err != nil || len(page) != 0 || more {
			t.Errorf("statement = %v, %v, %v; want empty", page, more, err)
		}
	})
}
