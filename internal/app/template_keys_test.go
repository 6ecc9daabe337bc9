package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/api"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/migrations"
)

// Which partition keys the code reads and writes, found by running it on the embedded
// DynamoDB, so that each role's dynamodb:LeadingKeys condition is what the code needs:
// a new kind of key fails these tests until the template allows it.

// keyedCall is one item-level DynamoDB call as IAM authorises it: the action, the
// table, the index ("" for the table itself) and the partition key value it names.
type keyedCall struct {
	Action, Table, Index, Key string
}

// recorder passes every call to db and records it as keyedCalls: a TransactWriteItems
// as one call per action in it, as IAM authorises them. pk is the partition key
// attribute. It implements versioned.Client and store.ReadClient.
type recorder struct {
	db    *dynamodb.Client
	pk    string
	mu    sync.Mutex
	calls []keyedCall
}

func (r *recorder) note(action string, table *string, index *string, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, keyedCall{action, aws.ToString(table), aws.ToString(index), key})
}

// value is the string value of attribute name in item, or "" when it has none.
func value(item map[string]types.AttributeValue, name string) string {
	s, _ := item[name].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

func (r *recorder) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r.note("dynamodb:GetItem", in.TableName, nil, value(in.Key, r.pk))
	return r.db.GetItem(ctx, in, opts...)
}

func (r *recorder) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	for _, it := range in.TransactItems {
		switch {
		case it.Put != nil:
			r.note("dynamodb:PutItem", it.Put.TableName, nil, value(it.Put.Item, r.pk))
		case it.Update != nil:
			r.note("dynamodb:UpdateItem", it.Update.TableName, nil, value(it.Update.Key, r.pk))
		case it.Delete != nil:
			r.note("dynamodb:DeleteItem", it.Delete.TableName, nil, value(it.Delete.Key, r.pk))
		case it.ConditionCheck != nil:
			r.note("dynamodb:ConditionCheckItem", it.ConditionCheck.TableName, nil, value(it.ConditionCheck.Key, r.pk))
		}
	}
	return r.db.TransactWriteItems(ctx, in, opts...)
}

// equality is one "name = :value" comparison of a key condition expression.
var equality = regexp.MustCompile(`(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)`)

func (r *recorder) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	key := ""
	for _, m := range equality.FindAllStringSubmatch(aws.ToString(in.KeyConditionExpression), -1) {
		name := m[1]
		if alias, ok := in.ExpressionAttributeNames[name]; ok {
			name = alias
		}
		if name == r.pk {
			s, _ := in.ExpressionAttributeValues[m[2]].(*types.AttributeValueMemberS)
			if s != nil {
				key = s.Value
			}
		}
	}
	r.note("dynamodb:Query", in.TableName, in.IndexName, key)
	return r.db.Query(ctx, in, opts...)
}

// partitionKey is the partition key attribute of the logical table (config.DefaultTable),
// per its last migration.
func partitionKey(t *testing.T, logical string) string {
	t.Helper()
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	pk := ""
	for _, m := range all {
		if m.Table == logical {
			pk = m.Key.Partition
		}
	}
	if pk == "" {
		t.Fatalf("no migration for table %q", logical)
	}
	return pk
}

// keyPattern is the dynamodb:LeadingKeys pattern that admits key and every key of its
// kind: its prefix up to the first '#', then "*" ("CUENTA#ES76…" → "CUENTA#*").
func keyPattern(t *testing.T, key string) string {
	t.Helper()
	prefix, _, found := strings.Cut(key, "#")
	if !found || prefix == "" {
		t.Fatalf("partition key %q has no prefix ending in '#' for a dynamodb:LeadingKeys condition", key)
	}
	return prefix + "#*"
}

// keyPatterns are the patterns of keys, sorted, without repeats, as Grant.LeadingKeys
// holds them.
func keyPatterns(t *testing.T, keys []string) string {
	t.Helper()
	var out []string
	for _, k := range keys {
		out = append(out, keyPattern(t, k))
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ",")
}

// ledgerCalls runs the transaction strategy's consumer path (store.Ledger.Apply, what
// the consumer calls) on the embedded DynamoDB through every tipo and outcome: new and
// warm accounts, credits and debits, a transfer to a new account, a reversal, a hold
// captured and one released, a duplicate, a conflicting duplicate, debits refused under
// both funds policies, and with cold stores the reads of accounts and of the movements a
// refused transaction names. Then it runs the API's handler over the result, every
// route, found and not found, a statement page by page. It returns the table and the
// calls each path made.
func ledgerCalls(t *testing.T) (table string, consumer, reads []keyedCall) {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	pk := partitionKey(t, config.DefaultTable)
	rec := &recorder{db: env.Client, pk: pk}
	expira := time.Now().UTC().Add(24 * time.Hour).Format(time.RFC3339)
	const a, b = "ES0000000000000000000001", "ES0000000000000000000002"
	// A step's outcome is want: else the workload no longer explores what it claims.
	type step struct {
		d    movimiento.Datos
		want store.Outcome
	}
	batches := []struct {
		policy cuenta.FundsPolicy
		cold   bool // a store of its own, without a cache
		steps  []step
	}{
		{cuenta.Retry, false, []step{
			{movimiento.Datos{ID: "ab-1", Cuenta: a, Tipo: movimiento.Abono, Importe: "100.00"}, store.Applied},
			{movimiento.Datos{ID: "ca-1", Cuenta: a, Tipo: movimiento.Cargo, Importe: "30.00"}, store.Applied},
		}},
		{cuenta.Retry, false, []step{
			{movimiento.Datos{ID: "tr-1", Cuenta: a, Destino: b, Tipo: movimiento.Traspaso, Importe: "20.00"}, store.Applied},
			{movimiento.Datos{ID: "an-1", Cuenta: a, Tipo: movimiento.Anulacion, Anula: "ca-1"}, store.Applied},
			{movimiento.Datos{ID: "re-1", Cuenta: a, Tipo: movimiento.Retencion, Importe: "10.00", Expira: expira}, store.Applied},
			{movimiento.Datos{ID: "re-2", Cuenta: a, Tipo: movimiento.Retencion, Importe: "5.00", Expira: expira}, store.Applied},
		}},
		{cuenta.Retry, false, []step{
			{movimiento.Datos{ID: "cp-1", Cuenta: a, Tipo: movimiento.Captura, Retencion: "re-1", Importe: "8.00"}, store.Applied},
			{movimiento.Datos{ID: "li-1", Cuenta: a, Tipo: movimiento.Liberacion, Retencion: "re-2"}, store.Applied},
			{movimiento.Datos{ID: "ca-2", Cuenta: b, Tipo: movimiento.Cargo, Importe: "900.00"}, store.Failed},
		}},
		{cuenta.Reject, true, []step{
			{movimiento.Datos{ID: "ab-1", Cuenta: a, Tipo: movimiento.Abono, Importe: "100.00"}, store.Duplicate},
			{movimiento.Datos{ID: "ca-1", Cuenta: a, Tipo: movimiento.Cargo, Importe: "31.00"}, store.ConflictingDuplicate},
			{movimiento.Datos{ID: "ca-3", Cuenta: b, Tipo: movimiento.Cargo, Importe: "900.00"}, store.Rejected},
		}},
		{cuenta.Reject, true, []step{
			{movimiento.Datos{ID: "ca-3", Cuenta: b, Tipo: movimiento.Cargo, Importe: "900.00"}, store.Duplicate},
		}},
	}
	var warm *store.Ledger
	for _, batch := range batches {
		l := warm
		if l == nil || batch.cold {
			cacheSize := 0 // the default cache
			if batch.cold {
				cacheSize = -1
			}
			var err error
			l, err = store.New(rec, store.Config{Table: env.Table(), InsufficientFunds: batch.policy, CacheSize: cacheSize})
			if err != nil {
				t.Fatal(err)
			}
			if !batch.cold {
				warm = l
			}
		}
		es := make([]store.Entrega, len(batch.steps))
		for i, st := range batch.steps {
			if st.d.Moneda == "" && st.d.Importe != "" {
				st.d.Moneda = "EUR"
			}
			m, err := movimiento.New(st.d)
			if err != nil {
				t.Fatalf("%+v: %v", st.d, err)
			}
			es[i] = store.Entrega{Mov: m, Origen: "msg-" + st.d.ID}
		}
		for i, r := range l.Apply(context.Background(), es) {
			if st := batch.steps[i]; r.Outcome != st.want {
				t.Errorf("%s %s: %s (%v), want %s: the workload no longer explores what it claims", st.d.Tipo, st.d.ID, r.Outcome, r.Err, st.want)
			}
		}
	}

	apiRec := &recorder{db: env.Client, pk: pk}
	h := api.New(store.NewReader(apiRec, env.Table()), nil)
	get := func(path string, want int) []byte {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != want {
			t.Errorf("GET %s: %d %s, want %d", path, w.Code, w.Body, want)
		}
		return w.Body.Bytes()
	}
	get("/cuentas/"+a, http.StatusOK)
	get("/cuentas/ES0000000000000000000009", http.StatusNotFound)
	get("/cuentas/"+a+"/movimientos/ab-1", http.StatusOK)
	get("/cuentas/"+a+"/movimientos/nada", http.StatusNotFound)
	get("/cuentas/"+a+"?en="+time.Now().UTC().Format(time.RFC3339Nano), http.StatusOK)
	get("/cuentas/"+a+"?en=2000-01-01T00:00:00Z", http.StatusNotFound) // not open yet: the account is read
	get("/cuentas/"+a+"/movimientos?desde=2000-01-01&hasta="+url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)), http.StatusOK)
	pages, cursor := 0, ""
	for {
		var page struct{ Cursor string }
		if err := json.Unmarshal(get("/cuentas/"+a+"/movimientos?limit=2"+cursor, http.StatusOK), &page); err != nil {
			t.Fatal(err)
		}
		if pages++; page.Cursor == "" || pages > 10 {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(page.Cursor)
	}
	if pages < 2 {
		t.Errorf("the statement came in %d page(s), want more: the workload no longer pages", pages)
	}
	return env.Table(), rec.calls, apiRec.calls
}
