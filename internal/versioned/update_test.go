package versioned_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// These tests use a counter, not an account: the mechanism knows nothing of ledgers.
// Each increment is a create-once record R#<id> plus the head item's new count.

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

var head = versioned.Item{"pk": s("C#1"), "sk": s("HEAD")}

// heads is the one versioned item most tests update.
var heads = []versioned.Item{head}

func count(st versioned.State) int64 {
	if st.Items[0] == nil {
		return 0
	}
	c, _ := strconv.ParseInt(st.Items[0]["count"].(*types.AttributeValueMemberN).Value, 10, 64)
	return c
}

// increment is a plan: record id once, and count it.
func increment(id, note string) versioned.Plan {
	return func(st versioned.State) (versioned.Txn, error) {
		return versioned.Txn{
			Creates: []versioned.Item{{"pk": s("C#1"), "sk": s("R#" + id), "note": s(note)}},
			Next:    []versioned.Item{{"pk": s("C#1"), "sk": s("HEAD"), "count": n(count(st) + 1)}},
		}, nil
	}
}

func newStore(t *testing.T, db versioned.Client, env *testenv.DynamoDB, p versioned.Policy) *versioned.Store {
	t.Helper()
	st, err := versioned.New(db, versioned.Table{Name: env.Table(), PartitionKey: "pk", SortKey: "sk", Version: "version"}, versioned.Options{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func get(t *testing.T, env *testenv.DynamoDB, sk string) versioned.Item {
	t.Helper()
	out, err := env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(env.Table()), ConsistentRead: aws.Bool(true),
		Key: versioned.Item{"pk": s("C#1"), "sk": s(sk)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
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

func TestUpdateCreatesThenAdvancesTheVersion(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	store := newStore(t, env.Client, env, versioned.Policy{})
	ctx := context.Background()

	for i, id := range []string{"a", "b", "c"} {
		res, err := store.Update(ctx, heads, increment(id, ""))
		if err != nil {
			t.Fatal(err)
		}
		want := int64(i + 1)
		if res.Versions[0] != want || res.Attempts != 1 || !res.Written || num(t, res.Items[0], "version") != want {
			t.Errorf("increment %s: %+v, want version %d in 1 attempt", id, res, want)
		}
	}
	h := get(t, env, "HEAD")
	if num(t, h, "version") != 3 || num(t, h, "count") != 3 {
		t.Errorf("head = %v, want version 3 count 3", h)
	}
	if get(t, env, "R#b") == nil {
		t.Error("record R#b was not written")
	}
}

func TestConcurrentWritersAllLandWithFreshState(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	store := newStore(t, env.Client, env, versioned.Policy{MaxAttempts: 60, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond})
	const writers = 12
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := store.Update(context.Background(), heads, increment(strconv.Itoa(i), ""))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	h := get(t, env, "HEAD")
	if num(t, h, "count") != writers || num(t, h, "version") != writers {
		t.Errorf("head = %v, want count and version %d: a lost update", h, writers)
	}
}

func TestExistingRecordStopsTheWriteAndComesBackWithItsItem(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	store := newStore(t, env.Client, env, versioned.Policy{})
	ctx := context.Background()
	if _, err := store.Update(ctx, heads, increment("a", "first")); err != nil {
		t.Fatal(err)
	}
	_, err := store.Update(ctx, heads, increment("a", "second"))
	var ex *versioned.ExistsError
	if !errors.As(err, &ex) || !errors.Is(err, versioned.ErrExists) {
		t.Fatalf("err = %v, want ExistsError", err)
	}
	if len(ex.Records) != 1 || ex.Records[0].Index != 0 || ex.Records[0].Item == nil {
		t.Fatalf("records = %+v, want record 0 with its stored item", ex.Records)
	}
	if note := ex.Records[0].Item["note"].(*types.AttributeValueMemberS).Value; note != "first" {
		t.Errorf("stored record says %q, want the first write's", note)
	}
	if h := get(t, env, "HEAD"); num(t, h, "version") != 1 || num(t, h, "count") != 1 {
		t.Errorf("head = %v: the refused transaction changed it", h)
	}
}

func TestAbsentRecordsAreCheckedInTheSameCall(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	store := newStore(t, env.Client, env, versioned.Policy{})
	ctx := context.Background()
	if _, err := store.Update(ctx, heads, increment("a", "stored")); err != nil {
		t.Fatal(err)
	}
	absent := func(ids ...string) versioned.Plan {
		return func(versioned.State) (versioned.Txn, error) {
			txn := versioned.Txn{Creates: []versioned.Item{{"pk": s("C#1"), "sk": s("R#new")}}, Next: []versioned.Item{nil}}
			for _, id := range ids {
				txn.Absent = append(txn.Absent, versioned.Item{"pk": s("C#1"), "sk": s("R#" + id)})
			}
			return txn, nil
		}
	}
	_, err := store.Update(ctx, heads, absent("x", "a"))
	var ex *versioned.ExistsError
	if !errors.As(err, &ex) || len(ex.Records) != 1 || ex.Records[0].Index != 2 {
		t.Fatalf("err = %v, want R#a reported at index 2 (1 create + 2nd absent)", err)
	}
	if note := ex.Records[0].Item["note"].(*types.AttributeValueMemberS).Value; note != "stored" {
		t.Errorf("stored item note = %q", note)
	}
	if get(t, env, "R#new") != nil {
		t.Error("the create was written although the transaction was refused")
	}
	res, err := store.Update(ctx, heads, absent("x", "y"))
	if err != nil || res.Attempts != 1 || get(t, env, "R#x") != nil || get(t, env, "R#new") == nil {
		t.Fatalf("absent records: %+v %v; want the create written, the absent ones still absent", res, err)
	}
}

func TestCheckOnlyDecisionIsReplannedWhenTheItemMoved(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	store := newStore(t, env.Client, env, versioned.Policy{})
	ctx := context.Background()
	if _, err := store.Update(ctx, heads, increment("a", "")); err != nil {
		t.Fatal(err)
	}
	var seen []int64
	res, err := store.Update(ctx, heads, func(st versioned.State) (versioned.Txn, error) {
		seen = append(seen, st.Versions[0])
		if st.Attempt == 1 { // someone else moves the item between our read and our write
			if _, err := store.Update(ctx, heads, increment("b", "")); err != nil {
				return versioned.Txn{}, err
			}
		}
		return versioned.Txn{Creates: []versioned.Item{{"pk": s("C#1"), "sk": s("DECISION"), "based_on": n(st.Versions[0])}}, Next: []versioned.Item{nil}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[1 2]" || res.Attempts != 2 || res.Written {
		t.Errorf("plans saw versions %v, result %+v; want [1 2] in 2 attempts and no new image", seen, res)
	}
	if d := get(t, env, "DECISION"); num(t, d, "based_on") != 2 {
		t.Errorf("decision recorded against version %d, want the current 2", num(t, d, "based_on"))
	}
	if h := get(t, env, "HEAD"); num(t, h, "version") != 2 {
		t.Errorf("a check-only transaction changed the item: %v", h)
	}
}

func TestContentionIsRetriedThenGivenUp(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	store := newStore(t, env.ClientVia(ft), env, versioned.Policy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})
	ctx := context.Background()

	ft.Inject("TransactWriteItems", sim.TransactionConflict, sim.TransactionConflict)
	res, err := store.Update(ctx, heads, increment("a", ""))
	if err != nil || res.Attempts != 3 {
		t.Fatalf("two conflicts then success: %+v, %v; want success on attempt 3", res, err)
	}

	ft.SetChooser(func(op string) sim.Fault {
		if op == "TransactWriteItems" {
			return sim.TransactionConflict
		}
		return 0
	})
	_, err = store.Update(ctx, heads, increment("b", ""))
	var ae *versioned.AttemptsError
	if !errors.As(err, &ae) || ae.Attempts != 4 || !errors.Is(err, versioned.ErrContention) {
		t.Fatalf("err = %v, want AttemptsError after 4 attempts wrapping ErrContention", err)
	}
	if calls := ft.Calls("TransactWriteItems"); calls != 3+4 { // the attempts counted are the attempts made
		t.Errorf("%d TransactWriteItems calls, want 3 then 4", calls)
	}
	if get(t, env, "R#b") != nil {
		t.Error("a transaction that never committed left its record behind")
	}
}

// MaxDelay caps every wait, however large BaseDelay grows it.
func TestBackoffIsCappedAtMaxDelay(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	store := newStore(t, env.ClientVia(ft), env, versioned.Policy{MaxAttempts: 4, BaseDelay: time.Hour, MaxDelay: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ft.Inject("TransactWriteItems", sim.TransactionConflict, sim.TransactionConflict)
	if res, err := store.Update(ctx, heads, increment("a", "")); err != nil || res.Attempts != 3 {
		t.Fatalf("two conflicts then success: %+v, %v; want success on attempt 3, after waits of at most 1 ms", res, err)
	}
}

func TestBackoffNeverOutlivesTheDeadline(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	ft.SetChooser(func(op string) sim.Fault {
		if op == "TransactWriteItems" {
			return sim.TransactionConflict
		}
		return 0
	})
	store := newStore(t, env.ClientVia(ft), env, versioned.Policy{MaxAttempts: 100, BaseDelay: time.Hour, MaxDelay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := store.Update(ctx, heads, increment("a", ""))
	var ae *versioned.AttemptsError
	if !errors.As(err, &ae) || ae.Attempts >= 100 {
		t.Fatalf("err = %v, want an early AttemptsError instead of sleeping past the deadline", err)
	}
	if ctx.Err() != nil {
		t.Error("Update returned only after its deadline passed")
	}
}

func TestLostResponseNeverAppliesTwice(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ft := sim.NewTransport(nil)
	store := newStore(t, env.ClientVia(ft), env, versioned.Policy{})
	ft.Inject("TransactWriteItems", sim.LostResponse)

	_, err := store.Update(context.Background(), heads, increment("a", "once"))
	// DynamoDB answers the SDK's retry from the ClientRequestToken (success); emulators
	// that ignore tokens refuse it because the record exists. Either way: applied once.
	var ex *versioned.ExistsError
	if err != nil && !(errors.As(err, &ex) && ex.Records[0].Item["note"].(*types.AttributeValueMemberS).Value == "once") {
		t.Fatalf("err = %v, want success or the record we wrote", err)
	}
	if ft.Calls("TransactWriteItems") < 2 {
		t.Errorf("the SDK did not retry the lost call (%d calls)", ft.Calls("TransactWriteItems"))
	}
	if h := get(t, env, "HEAD"); num(t, h, "count") != 1 || num(t, h, "version") != 1 {
		t.Errorf("head = %v, want one increment", h)
	}
}

func TestReplaceWritesOnlyWhileItsConditionsHold(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	store := newStore(t, env.Client, env, versioned.Policy{})
	ctx := context.Background()
	if _, err := store.Update(ctx, heads, increment("a", "open")); err != nil {
		t.Fatal(err)
	}
	closeBy := func(by string) versioned.Plan {
		return func(st versioned.State) (versioned.Txn, error) {
			closed := versioned.Item{"pk": s("C#1"), "sk": s("R#a"), "note": s("closed"), "closed_by": s(by)}
			return versioned.Txn{
				Creates:  []versioned.Item{{"pk": s("C#1"), "sk": s("R#" + by)}},
				Replaces: []versioned.Replace{{Item: closed, If: []versioned.Cond{versioned.Equals("note", "open"), versioned.Missing("closed_by")}}},
				Next:     []versioned.Item{{"pk": s("C#1"), "sk": s("HEAD"), "count": n(count(st) + 1)}},
			}, nil
		}
	}
	if _, err := store.Update(ctx, heads, closeBy("x")); err != nil {
		t.Fatal(err)
	}
	if r := get(t, env, "R#a"); r["closed_by"].(*types.AttributeValueMemberS).Value != "x" {
		t.Fatalf("R#a = %v, want closed by x", r)
	}
	_, err := store.Update(ctx, heads, closeBy("y"))
	var ch *versioned.ChangedError
	if !errors.As(err, &ch) || !errors.Is(err, versioned.ErrChanged) || len(ch.Records) != 1 || ch.Records[0].Index != 0 {
		t.Fatalf("err = %v, want a ChangedError for replace 0", err)
	}
	if by := ch.Records[0].Item["closed_by"].(*types.AttributeValueMemberS).Value; by != "x" {
		t.Errorf("the refusal carries closed_by %q, want the winner x", by)
	}
	if get(t, env, "R#y") != nil || num(t, get(t, env, "HEAD"), "count") != 2 {
		t.Error("the refused transaction wrote something")
	}
}

func TestSeveralItemsMoveTogetherAndConflictsReplanEach(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	store := newStore(t, env.Client, env, versioned.Policy{})
	ctx := context.Background()
	other := versioned.Item{"pk": s("C#2"), "sk": s("HEAD")}
	both := []versioned.Item{head, other}
	counts := func(st versioned.State) [2]int64 {
		var c [2]int64
		for i, item := range st.Items {
			if item != nil {
				c[i], _ = strconv.ParseInt(item["count"].(*types.AttributeValueMemberN).Value, 10, 64)
			}
		}
		return c
	}
	var seen [][]int64
	res, err := store.Update(ctx, both, func(st versioned.State) (versioned.Txn, error) {
		seen = append(seen, st.Versions)
		if st.Attempt == 1 { // another writer moves the second item first
			if _, err := store.Update(ctx, []versioned.Item{other}, func(st versioned.State) (versioned.Txn, error) {
				return versioned.Txn{Next: []versioned.Item{{"pk": s("C#2"), "sk": s("HEAD"), "count": n(10)}}}, nil
			}); err != nil {
				return versioned.Txn{}, err
			}
		}
		c := counts(st)
		return versioned.Txn{
			Creates: []versioned.Item{{"pk": s("C#1"), "sk": s("T#1")}, {"pk": s("C#2"), "sk": s("T#1")}},
			Next:    []versioned.Item{{"pk": s("C#1"), "sk": s("HEAD"), "count": n(c[0] - 1)}, {"pk": s("C#2"), "sk": s("HEAD"), "count": n(c[1] + 1)}},
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[[0 0] [0 1]]" || res.Attempts != 2 || fmt.Sprint(res.Versions) != "[1 2]" {
		t.Errorf("plans saw versions %v, result %+v; want [[0 0] [0 1]], 2 attempts, versions [1 2]", seen, res)
	}
	if a, b := num(t, get(t, env, "HEAD"), "count"), num(t, getPK(t, env, "C#2", "HEAD"), "count"); a != -1 || b != 11 {
		t.Errorf("counts = %d, %d; want -1 and 11 (the other writer's 10, plus one)", a, b)
	}
}

func getPK(t *testing.T, env *testenv.DynamoDB, pk, sk string) versioned.Item {
	t.Helper()
	out, err := env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(env.Table()), ConsistentRead: aws.Bool(true),
		Key: versioned.Item{"pk": s(pk), "sk": s(sk)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}
