package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// metered is a ReadClient that counts a Reader's requests and the read units they cost
// by DynamoDB's rules: items rounded up to 4 KB per request, a unit for a strongly
// consistent read, half of one for an eventually consistent one (every index query).
// It also asks for the backend's own figure (ConsumedCapacity), which only DynamoDB
// itself reports faithfully.
type metered struct {
	db                   *dynamodb.Client
	requests, items      int
	units, reportedUnits float64
}

func (m *metered) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := m.db.GetItem(ctx, in, opts...)
	if err == nil {
		var read []map[string]types.AttributeValue
		if len(out.Item) > 0 {
			read = append(read, out.Item)
		}
		m.count(read, aws.ToBool(in.ConsistentRead), out.ConsumedCapacity)
	}
	return out, err
}

func (m *metered) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := m.db.Query(ctx, in, opts...)
	if err == nil {
		m.count(out.Items, aws.ToBool(in.ConsistentRead), out.ConsumedCapacity)
	}
	return out, err
}

func (m *metered) count(read []map[string]types.AttributeValue, consistent bool, reported *types.ConsumedCapacity) {
	size := 0
	for _, it := range read {
		size += itemBytes(it)
	}
	units := math.Max(1, math.Ceil(float64(size)/4096))
	if !consistent {
		units /= 2
	}
	m.requests, m.items, m.units = m.requests+1, m.items+len(read), m.units+units
	if reported != nil {
		m.reportedUnits += aws.ToFloat64(reported.CapacityUnits)
	}
}

// itemBytes is an item's size as DynamoDB counts it: names and values; a number takes
// a byte per two digits and one more.
func itemBytes(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += len(v.Value)/2 + 1
		case *types.AttributeValueMemberM:
			n += 3 + itemBytes(v.Value)
		default:
			n++
		}
	}
	return n
}

// postedAccount writes an account of n posted abonos of 1.00, one a second from
// fixedNow, as the consumer writes them, in batches of 25 items.
func postedAccount(t *testing.T, env *testenv.DynamoDB, id string, n int) {
	t.Helper()
	ctx := context.Background()
	var batch []types.WriteRequest
	flush := func() {
		if len(batch) == 0 {
			return
		}
		out, err := env.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{env.Table(): batch}})
		if err != nil || len(out.UnprocessedItems) > 0 {
			t.Fatalf("filling %s: %v, %d unprocessed", id, err, len(out.UnprocessedItems))
		}
		batch = batch[:0]
	}
	for seq := 1; seq <= n; seq++ {
		m := testenv.Movement(t, movimiento.Datos{ID: fmt.Sprintf("m-%06d", seq), Cuenta: id, Tipo: movimiento.Abono, Importe: "1.00", Moneda: "EUR", Concepto: "Nómina"})
		item, err := items.EncodeApunte(movimiento.Apunte{Movimiento: m, Huella: m.Huella(), Estado: movimiento.Aplicado, Seq: int64(seq),
			SaldoTras: decimal.NewFromInt(int64(seq)), Aplicado: fixedNow.Add(time.Duration(seq-1) * time.Second), Origen: "msg", Version: int64(seq)})
		if err != nil {
			t.Fatal(err)
		}
		if batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}); len(batch) == 25 {
			flush()
		}
	}
	c := cuenta.Nueva(id, "EUR")
	c.Saldo, c.Movimientos, c.Creada, c.Actualizada = decimal.NewFromInt(int64(n)), int64(n), fixedNow, fixedNow.Add(time.Duration(n)*time.Second)
	item, err := items.EncodeCuenta(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	item[items.AttrVersion] = &types.AttributeValueMemberN{Value: fmt.Sprint(n)}
	batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	flush()
}

// The balance at an instant costs at most two requests and the same read units for an
// account of 10 movements as for one of 10,000: one key from por_aplicado, then the
// movement it names (or the account).
func TestSaldoEnCostsTheSameWhateverTheAccountsSize(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	sizes := []int{10, 10_000}
	for _, n := range sizes {
		postedAccount(t, env, fmt.Sprintf("N%d", n), n)
	}
	type cost struct {
		requests, items int
		units           float64
	}
	var first map[string]cost
	for _, n := range sizes {
		got := map[string]cost{}
		for _, tc := range []struct {
			name string
			en   time.Time
			seq  int64 // 0: ErrNotYetOpen
		}{
			{"before it was opened", fixedNow.Add(-time.Second), 0},
			{"at its fifth movement", fixedNow.Add(4 * time.Second), 5},
			{"after its last", fixedNow.Add(time.Duration(n) * time.Second), int64(n)},
		} {
			m := &metered{db: env.Client}
			s, err := store.NewReader(m, env.Table()).SaldoEn(ctx, fmt.Sprintf("N%d", n), tc.en)
			if tc.seq == 0 && !errors.Is(err, store.ErrNotYetOpen) || tc.seq != 0 && (err != nil || s.Seq != tc.seq || s.Version != tc.seq || !s.Saldo.Equal(decimal.NewFromInt(tc.seq))) {
				t.Fatalf("%d movements, %s: %+v, %v; want seq %d", n, tc.name, s, err, tc.seq)
			}
			if m.requests > 2 || m.items > 2 {
				t.Errorf("%d movements, %s: %d requests reading %d items; want at most 2 of each", n, tc.name, m.requests, m.items)
			}
			got[tc.name] = cost{m.requests, m.items, m.units}
			t.Logf("%s, %d movements, %s: %d requests, %d items, %.1f RCU by DynamoDB's rules (%s reported %.1f)", env.Backend, n, tc.name, m.requests, m.items, m.units, env.Backend, m.reportedUnits)
		}
		if first == nil {
			first = got
		} else if fmt.Sprint(got) != fmt.Sprint(first) {
			t.Errorf("%d movements cost %v, %d cost %v: want the same", n, got, sizes[0], first)
		}
	}
}
