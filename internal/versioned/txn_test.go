package versioned

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var tbl = Table{Name: "ledger", PartitionKey: "pk", SortKey: "sk", Version: "version"}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

func key(pk, sk string) Item { return Item{"pk": s(pk), "sk": s(sk)} }

// one is the single versioned item most requests here are about.
var one = []Item{key("A", "HEAD")}

func record(pk, sk, val string) Item {
	it := key(pk, sk)
	it["val"] = n(val)
	return it
}

func TestBuildInputWritesRecordsAndTheVersionedItem(t *testing.T) {
	k := key("A", "HEAD")
	next := record("A", "HEAD", "10")
	in, err := BuildInput(tbl, []Item{k}, []int64{4}, Txn{Creates: []Item{record("A", "R#1", "3"), record("A", "R#2", "7")}, Next: []Item{next}})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.TransactItems) != 3 {
		t.Fatalf("%d actions, want 2 creates + 1 versioned put", len(in.TransactItems))
	}
	for i, it := range in.TransactItems[:2] {
		p := it.Put
		if p == nil || aws.ToString(p.ConditionExpression) != "attribute_not_exists(#pk)" || p.ExpressionAttributeNames["#pk"] != "pk" ||
			p.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld || aws.ToString(p.TableName) != "ledger" {
			t.Errorf("create %d = %+v, want a guarded Put returning ALL_OLD", i, p)
		}
	}
	p := in.TransactItems[2].Put
	if p == nil || aws.ToString(p.ConditionExpression) != "#v = :v" || p.ExpressionAttributeNames["#v"] != "version" ||
		p.ExpressionAttributeValues[":v"].(*types.AttributeValueMemberN).Value != "4" ||
		p.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
		t.Fatalf("versioned action = %+v, want Put guarded by version = 4", p)
	}
	if got := p.Item["version"].(*types.AttributeValueMemberN).Value; got != "5" {
		t.Errorf("new version = %s, want 5", got)
	}
	if p.Item["val"].(*types.AttributeValueMemberN).Value != "10" {
		t.Errorf("image lost its attributes: %v", p.Item)
	}
}

func TestBuildInputForANewItem(t *testing.T) {
	in, err := BuildInput(tbl, one, []int64{0}, Txn{Next: []Item{record("A", "HEAD", "1")}})
	if err != nil {
		t.Fatal(err)
	}
	p := in.TransactItems[0].Put
	if aws.ToString(p.ConditionExpression) != "attribute_not_exists(#pk)" || p.ExpressionAttributeValues != nil {
		t.Errorf("condition for a new item = %q %v, want attribute_not_exists", aws.ToString(p.ConditionExpression), p.ExpressionAttributeValues)
	}
	if p.Item["version"].(*types.AttributeValueMemberN).Value != "1" {
		t.Errorf("first version = %v, want 1", p.Item["version"])
	}
}

func TestBuildInputGuardsCheckOnlyDecisions(t *testing.T) {
	for _, expected := range []int64{0, 7} {
		in, err := BuildInput(tbl, one, []int64{expected}, Txn{Creates: []Item{record("A", "R#1", "3")}, Next: []Item{nil}})
		if err != nil {
			t.Fatal(err)
		}
		cc := in.TransactItems[1].ConditionCheck
		if cc == nil || cc.Key["pk"].(*types.AttributeValueMemberS).Value != "A" || cc.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
			t.Fatalf("expected %d: second action = %+v, want a ConditionCheck on the versioned item", expected, in.TransactItems[1])
		}
		want := "#v = :v"
		if expected == 0 {
			want = "attribute_not_exists(#pk)"
		}
		if aws.ToString(cc.ConditionExpression) != want {
			t.Errorf("expected %d: condition %q, want %q", expected, aws.ToString(cc.ConditionExpression), want)
		}
	}
}

func TestBuildInputChecksAbsentRecordsWithoutWritingThem(t *testing.T) {
	in, err := BuildInput(tbl, one, []int64{3}, Txn{Creates: []Item{record("A", "R#1", "3")}, Absent: []Item{record("A", "R#2", "5")}, Next: []Item{nil}})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.TransactItems) != 3 || in.TransactItems[0].Put == nil || in.TransactItems[2].ConditionCheck == nil {
		t.Fatalf("actions = %+v, want Put, ConditionCheck (absent), ConditionCheck (version)", in.TransactItems)
	}
	cc := in.TransactItems[1].ConditionCheck
	if cc == nil || aws.ToString(cc.ConditionExpression) != "attribute_not_exists(#pk)" || len(cc.Key) != 2 ||
		cc.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
		t.Fatalf("absent check = %+v, want attribute_not_exists on the key alone, ALL_OLD", cc)
	}
}

func TestBuildInputRefusesWhatDynamoDBWould(t *testing.T) {
	many := make([]Item, MaxActions)
	for i := range many {
		many[i] = record("A", fmt.Sprintf("R#%d", i), "1")
	}
	cases := map[string]Txn{
		"over 100 actions":            {Creates: many, Next: []Item{record("A", "HEAD", "1")}},
		"a record twice":              {Creates: []Item{record("A", "R#1", "1"), record("A", "R#1", "2")}, Next: []Item{nil}},
		"a record on the item":        {Creates: []Item{record("A", "HEAD", "1")}, Next: []Item{nil}},
		"a record without its key":    {Creates: []Item{{"pk": s("A")}}, Next: []Item{nil}},
		"an absent key also created":  {Creates: []Item{record("A", "R#1", "1")}, Absent: []Item{key("A", "R#1")}, Next: []Item{nil}},
		"an absent item versioned":    {Absent: []Item{key("A", "HEAD")}, Next: []Item{nil}},
		"a replaced record created":   {Creates: []Item{record("A", "R#1", "1")}, Replaces: []Replace{{Item: record("A", "R#1", "2"), If: []Cond{Missing("x")}}}, Next: []Item{nil}},
		"a replace without condition": {Replaces: []Replace{{Item: record("A", "R#1", "2")}}, Next: []Item{nil}},
		"an image of another item":    {Next: []Item{record("B", "HEAD", "1")}},
		"no image slot for the item":  {Creates: []Item{record("A", "R#1", "1")}},
		"two slots for one item":      {Next: []Item{nil, nil}},
	}
	for name, txn := range cases {
		if _, err := BuildInput(tbl, one, []int64{1}, txn); !errors.Is(err, ErrInvalidTxn) {
			t.Errorf("%s: err = %v, want ErrInvalidTxn", name, err)
		}
	}
	if _, err := BuildInput(tbl, []Item{key("A", "HEAD"), key("A", "HEAD")}, []int64{1, 1}, Txn{Next: []Item{nil, nil}}); !errors.Is(err, ErrInvalidTxn) {
		t.Errorf("one item versioned twice: err = %v, want ErrInvalidTxn", err)
	}
	if _, err := BuildInput(tbl, one, []int64{1}, Txn{Creates: many[:MaxActions-1], Next: []Item{record("A", "HEAD", "1")}}); err != nil {
		t.Errorf("exactly 100 actions: %v", err)
	}
}

func TestBuildInputReplacesARecordUnderItsConditions(t *testing.T) {
	in, err := BuildInput(tbl, one, []int64{2}, Txn{
		Creates:  []Item{record("A", "R#2", "1")},
		Replaces: []Replace{{Item: record("A", "R#1", "9"), If: []Cond{Holds("estado", s("open")), Missing("closed_by")}}},
		Next:     []Item{record("A", "HEAD", "3")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.TransactItems) != 3 || in.TransactItems[1].Put == nil {
		t.Fatalf("actions = %+v, want create, replace, versioned put", in.TransactItems)
	}
	p := in.TransactItems[1].Put
	if aws.ToString(p.ConditionExpression) != "#c0 = :c0 AND attribute_not_exists(#c1)" ||
		p.ExpressionAttributeNames["#c0"] != "estado" || p.ExpressionAttributeNames["#c1"] != "closed_by" ||
		p.ExpressionAttributeValues[":c0"].(*types.AttributeValueMemberS).Value != "open" || len(p.ExpressionAttributeValues) != 1 ||
		p.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
		t.Errorf("replace = %q %v %v, want both conditions, returning ALL_OLD", aws.ToString(p.ConditionExpression), p.ExpressionAttributeNames, p.ExpressionAttributeValues)
	}
	if p.Item["val"].(*types.AttributeValueMemberN).Value != "9" {
		t.Errorf("replace writes %v, want the new image", p.Item)
	}
}

func TestBuildInputVersionsSeveralItems(t *testing.T) {
	in, err := BuildInput(tbl, []Item{key("A", "HEAD"), key("B", "HEAD")}, []int64{3, 0}, Txn{
		Creates: []Item{record("A", "R#1", "1"), record("B", "R#1", "1")},
		Next:    []Item{record("A", "HEAD", "5"), record("B", "HEAD", "7")},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b := in.TransactItems[2].Put, in.TransactItems[3].Put
	if aws.ToString(a.ConditionExpression) != "#v = :v" || a.Item["version"].(*types.AttributeValueMemberN).Value != "4" {
		t.Errorf("first item: %q version %v, want guarded by version 3, written at 4", aws.ToString(a.ConditionExpression), a.Item["version"])
	}
	if aws.ToString(b.ConditionExpression) != "attribute_not_exists(#pk)" || b.Item["version"].(*types.AttributeValueMemberN).Value != "1" {
		t.Errorf("second, new item: %q version %v, want attribute_not_exists and version 1", aws.ToString(b.ConditionExpression), b.Item["version"])
	}
}

func TestTokenIsDeterministicAndFollowsContent(t *testing.T) {
	build := func(expected int64, val string) string {
		t.Helper()
		in, err := BuildInput(tbl, one, []int64{expected}, Txn{Creates: []Item{record("A", "R#1", "3")}, Next: []Item{record("A", "HEAD", val)}})
		if err != nil {
			t.Fatal(err)
		}
		tok := aws.ToString(in.ClientRequestToken)
		if len(tok) != 36 {
			t.Fatalf("token %q has %d characters; DynamoDB takes 1 to 36", tok, len(tok))
		}
		return tok
	}
	a := build(4, "10")
	if b := build(4, "10"); a != b {
		t.Errorf("same request, different tokens: %s %s", a, b)
	}
	if b := build(5, "10"); a == b {
		t.Error("another expected version reused the token")
	}
	if b := build(4, "11"); a == b {
		t.Error("another image reused the token (DynamoDB would answer IdempotentParameterMismatch)")
	}
}

// A request of checks alone (every movement refused, no account changed) carries no
// token of its content (the SDK sets a random one): a redelivery planned on the same
// state would repeat it, and DynamoDB would answer success from memory without checking
// the version again.
func TestAChecksOnlyRequestHasNoToken(t *testing.T) {
	in, err := BuildInput(tbl, one, []int64{4}, Txn{Absent: []Item{tbl.Key("A", "R#1")}, Next: []Item{nil}})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.TransactItems) != 2 || in.TransactItems[0].ConditionCheck == nil || in.TransactItems[1].ConditionCheck == nil {
		t.Fatalf("items = %+v, want two condition checks", in.TransactItems)
	}
	if in.ClientRequestToken != nil {
		t.Errorf("token = %q, want none", *in.ClientRequestToken)
	}
}

func TestAppendValueTellsTypesApart(t *testing.T) {
	pairs := [][2]types.AttributeValue{
		{s("5"), n("5")},
		{&types.AttributeValueMemberM{Value: Item{"a": s("bc")}}, &types.AttributeValueMemberM{Value: Item{"ab": s("c")}}},
		{&types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), s("b")}}, &types.AttributeValueMemberL{Value: []types.AttributeValue{s("ab")}}},
		{&types.AttributeValueMemberBOOL{Value: true}, &types.AttributeValueMemberBOOL{Value: false}},
	}
	for _, p := range pairs {
		if string(appendValue(nil, p[0])) == string(appendValue(nil, p[1])) {
			t.Errorf("%#v and %#v encode alike", p[0], p[1])
		}
	}
	m1 := &types.AttributeValueMemberM{Value: Item{"x": s("1"), "y": s("2"), "z": s("3")}}
	m2 := &types.AttributeValueMemberM{Value: Item{"z": s("3"), "x": s("1"), "y": s("2")}}
	if string(appendValue(nil, m1)) != string(appendValue(nil, m2)) {
		t.Error("map encoding depends on insertion order")
	}
}
