package versioned_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// These tests send BuildInput's requests to every backend and hold Classify to what
// each answers. They use a counter, not an account: the primitive knows nothing of
// ledgers. An increment is a create-once record R#<id> plus the head item's new count.

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func key(pk, sk string) versioned.Item { return versioned.Item{"pk": s(pk), "sk": s(sk)} }

var head = key("C#1", "HEAD")

// counter is the table of env, as versioned sees it.
func counter(env *testenv.DynamoDB) versioned.Table {
	return versioned.Table{Name: env.Table(), PartitionKey: "pk", SortKey: "sk", Version: "version"}
}

// increment records id once (with note) and moves the head from version v to count v+1.
func increment(id, note string, v int64) versioned.Txn {
	return versioned.Txn{
		Creates: []versioned.Item{{"pk": s("C#1"), "sk": s("R#" + id), "note": s(note)}},
		Next:    []versioned.Item{{"pk": s("C#1"), "sk": s("HEAD"), "count": n(v + 1)}},
	}
}

// commit sends txn over the versioned items at keys, at versions, and classifies the
// answer, as the ledger does.
func commit(t *testing.T, db interface {
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}, tbl versioned.Table, keys []versioned.Item, versions []int64, txn versioned.Txn) versioned.Verdict {
	t.Helper()
	in, err := versioned.BuildInput(tbl, keys, versions, txn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.TransactWriteItems(context.Background(), in)
	return versioned.Classify(err, txn)
}

func num(t *testing.T, item versioned.Item, attr string) int64 {
	t.Helper()
	v, ok := item[attr].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("%s missing in %v", attr, item)
	}
	i, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func TestACommitCreatesThenAdvancesTheVersion(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	for v, id := range []string{"a", "b", "c"} {
		if got := commit(t, env.Client, counter(env), []versioned.Item{head}, []int64{int64(v)}, increment(id, "", int64(v))); got.Kind != versioned.Committed {
			t.Fatalf("increment %s: %+v", id, got)
		}
	}
	h := env.Get(t, "C#1", "HEAD")
	if num(t, h, "version") != 3 || num(t, h, "count") != 3 || env.Get(t, "C#1", "R#b") == nil {
		t.Errorf("head = %v, want version 3 count 3, and R#b written", h)
	}
}

// An existing create-once record refuses the whole transaction, found at its index
// with the stored item where the backend returns it (the embedded store does not).
func TestAnExistingRecordIsFoundAndNothingWritten(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	tbl, heads := counter(env), []versioned.Item{head}
	commit(t, env.Client, tbl, heads, []int64{0}, increment("a", "first", 0))
	v := commit(t, env.Client, tbl, heads, []int64{1}, increment("a", "second", 1))
	if v.Kind != versioned.Exists || len(v.Found) != 1 || v.Found[0].Index != 0 {
		t.Fatalf("verdict = %+v, want record 0 found", v)
	}
	if item := v.Found[0].Item; item != nil && item["note"].(*types.AttributeValueMemberS).Value != "first" {
		t.Errorf("the answer carries %v, want the first write's record", item)
	}
	if h := env.Get(t, "C#1", "HEAD"); num(t, h, "version") != 1 || num(t, h, "count") != 1 {
		t.Errorf("head = %v: the refused transaction changed it", h)
	}
}

// Absent keys are checked in the same call without being written: one that exists
// refuses the transaction at its index (after the Creates).
func TestAbsentRecordsAreCheckedInTheSameCall(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	tbl, heads := counter(env), []versioned.Item{head}
	commit(t, env.Client, tbl, heads, []int64{0}, increment("a", "stored", 0))
	absent := func(ids ...string) versioned.Txn {
		txn := versioned.Txn{Creates: []versioned.Item{key("C#1", "R#new")}, Next: []versioned.Item{nil}}
		for _, id := range ids {
			txn.Absent = append(txn.Absent, key("C#1", "R#"+id))
		}
		return txn
	}
	if v := commit(t, env.Client, tbl, heads, []int64{1}, absent("x", "a")); v.Kind != versioned.Exists || len(v.Found) != 1 || v.Found[0].Index != 2 {
		t.Fatalf("verdict = %+v, want R#a found at index 2 (1 create + 2nd absent)", v)
	}
	if env.Get(t, "C#1", "R#new") != nil {
		t.Error("the create was written although the transaction was refused")
	}
	if v := commit(t, env.Client, tbl, heads, []int64{1}, absent("x", "y")); v.Kind != versioned.Committed || env.Get(t, "C#1", "R#x") != nil || env.Get(t, "C#1", "R#new") == nil {
		t.Fatalf("verdict = %+v; want the create written, the absent ones still absent", v)
	}
}

// A decision made on a version that moved is refused as a Conflict naming the item,
// even a check-only one, and writes nothing.
func TestAMovedItemIsAConflict(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	tbl := counter(env)
	other := key("C#2", "HEAD")
	both := []versioned.Item{head, other}
	commit(t, env.Client, tbl, []versioned.Item{head}, []int64{0}, increment("a", "", 0))
	commit(t, env.Client, tbl, []versioned.Item{other}, []int64{0}, versioned.Txn{Next: []versioned.Item{{"pk": s("C#2"), "sk": s("HEAD"), "count": n(10)}}})
	decision := versioned.Txn{Creates: []versioned.Item{key("C#1", "DECISION")}, Next: []versioned.Item{nil, nil}}
	v := commit(t, env.Client, tbl, both, []int64{1, 0}, decision) // C#2 read before it was created
	if v.Kind != versioned.Conflict || len(v.Moved) != 1 {
		t.Fatalf("verdict = %+v, want a conflict on item 1", v)
	}
	if item, ok := v.Moved[1]; !ok || (item != nil && num(t, item, "count") != 10) {
		t.Errorf("moved = %v, want item 1, with its image where the backend returns it", v.Moved)
	}
	if env.Get(t, "C#1", "DECISION") != nil {
		t.Error("a decision on a stale version was recorded")
	}
	if v := commit(t, env.Client, tbl, both, []int64{1, 1}, decision); v.Kind != versioned.Committed {
		t.Fatalf("on the fresh versions: %+v", v)
	}
}

// A Replace writes only while its conditions hold; otherwise the transaction is
// refused as Changed, naming the replace.
func TestAReplaceWritesOnlyWhileItsConditionsHold(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	tbl, heads := counter(env), []versioned.Item{head}
	commit(t, env.Client, tbl, heads, []int64{0}, increment("a", "open", 0))
	closeBy := func(by string, v int64) versioned.Txn {
		txn := increment(by, "", v)
		closed := versioned.Item{"pk": s("C#1"), "sk": s("R#a"), "note": s("closed"), "closed_by": s(by)}
		txn.Replaces = []versioned.Replace{{Item: closed, If: []versioned.Cond{versioned.Holds("note", s("open")), versioned.Missing("closed_by")}}}
		return txn
	}
	if v := commit(t, env.Client, tbl, heads, []int64{1}, closeBy("x", 1)); v.Kind != versioned.Committed {
		t.Fatal(v)
	}
	v := commit(t, env.Client, tbl, heads, []int64{2}, closeBy("y", 2))
	if v.Kind != versioned.Changed || len(v.Found) != 1 || v.Found[0].Index != 0 {
		t.Fatalf("verdict = %+v, want replace 0 changed", v)
	}
	if env.Get(t, "C#1", "R#y") != nil || num(t, env.Get(t, "C#1", "HEAD"), "count") != 2 {
		t.Error("the refused transaction wrote something")
	}
}

// The token of a request's content makes the SDK's retry of a lost answer harmless:
// DynamoDB answers it from the token, so the increment is committed, once.
func TestALostAnswerNeverAppliesTwice(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	ft.Inject("TransactWriteItems", sim.LostResponse)
	v := commit(t, env.ClientVia(ft), counter(env), []versioned.Item{head}, []int64{0}, increment("a", "once", 0))
	if v.Kind != versioned.Committed {
		t.Fatalf("verdict = %+v, want committed", v)
	}
	if ft.Calls("TransactWriteItems") < 2 {
		t.Errorf("the SDK did not retry the lost call (%d calls)", ft.Calls("TransactWriteItems"))
	}
	if h := env.Get(t, "C#1", "HEAD"); num(t, h, "count") != 1 || num(t, h, "version") != 1 {
		t.Errorf("head = %v, want one increment", h)
	}
}

// A concurrent transaction on an item (TransactionConflict, throttling) is Contention:
// nothing is written, and the same request may be sent again.
func TestAConcurrentTransactionIsContention(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	ft.Inject("TransactWriteItems", sim.TransactionConflict)
	tbl, heads := counter(env), []versioned.Item{head}
	if v := commit(t, env.ClientVia(ft), tbl, heads, []int64{0}, increment("a", "", 0)); v.Kind != versioned.Contention || env.Get(t, "C#1", "R#a") != nil {
		t.Fatalf("verdict = %+v, want contention and nothing written", v)
	}
	if v := commit(t, env.ClientVia(ft), tbl, heads, []int64{0}, increment("a", "", 0)); v.Kind != versioned.Committed {
		t.Fatalf("the same request again: %+v", v)
	}
}
