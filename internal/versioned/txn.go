package versioned

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxActions is DynamoDB's limit of actions in one TransactWriteItems; a transaction
// over k versioned items has room for 100−k records.
const MaxActions = 100

// ErrInvalidTxn reports a transaction DynamoDB would refuse (over 100 actions, an item
// twice, a record without its key); BuildInput builds no request for it.
var ErrInvalidTxn = errors.New("versioned: invalid transaction")

// Txn is what a caller wants written atomically. Creates are records that must not
// exist yet. Absent are keys of records that must not exist but are not written: a
// caller that declines to write a record learns in the same call whether it was there
// all along. Replaces rewrite existing records if they still meet their conditions.
// Next has one entry per versioned key, in BuildInput's key order: the new image
// (version excluded: BuildInput sets it in the image), or nil to only check the
// version, so a decision based on the item's state is recorded only if that state was
// current. Whole images, not UpdateItem arithmetic, keep numbers exactly as the caller
// computed them.
type Txn struct {
	Creates  []Item
	Absent   []Item
	Replaces []Replace
	Next     []Item
}

// Replace rewrites a stored record with Item (its whole new image) if every condition
// in If holds; else the transaction fails (Classify: Changed).
type Replace struct {
	Item Item
	If   []Cond
}

// Cond is a condition on one attribute of a stored record: it equals Value, or is
// Missing.
type Cond struct {
	Name    string
	Value   types.AttributeValue
	Missing bool
}

// Holds is the condition "attribute name holds v", a scalar (a string or a number).
func Holds(name string, v types.AttributeValue) Cond { return Cond{Name: name, Value: v} }

// Missing is the condition "attribute name is not set".
func Missing(name string) Cond { return Cond{Name: name, Missing: true} }

// guarded counts the actions first in the request: Creates, then Absent.
func (t Txn) guarded() int { return len(t.Creates) + len(t.Absent) }

// Guarded is the item (Creates) or key (Absent) of guarded action i: Creates, then
// Absent, as Classify's Found indexes them.
func (t Txn) Guarded(i int) Item {
	if i < len(t.Creates) {
		return t.Creates[i]
	}
	return t.Absent[i-len(t.Creates)]
}

// BuildInput returns the TransactWriteItems request for txn over the versioned items at
// keys, each at the version in versions (0: absent): Creates, Absent, Replaces, then the
// versioned items, each asking for the stored item (ALL_OLD) when its condition fails.
// It sets each new image's version. What DynamoDB would refuse is an ErrInvalidTxn. It
// does no I/O, so callers can table-test their requests.
func BuildInput(t Table, keys []Item, versions []int64, txn Txn) (*dynamodb.TransactWriteItemsInput, error) {
	if len(keys) == 0 || len(versions) != len(keys) || len(txn.Next) != len(keys) {
		return nil, fmt.Errorf("%w: %d keys, %d versions and %d new images", ErrInvalidTxn, len(keys), len(versions), len(txn.Next))
	}
	n := txn.guarded() + len(txn.Replaces) + len(keys)
	if n > MaxActions {
		return nil, fmt.Errorf("%w: %d actions, at most %d", ErrInvalidTxn, n, MaxActions)
	}
	b := builder{table: t, named: make([]itemKey, 0, n), items: make([]types.TransactWriteItem, 0, n)}
	notExists := t.notExists() // shared by every guarded action; the SDK only reads it
	for i := range txn.guarded() {
		if err := b.add("record", i, notExists, txn.Guarded(i), i >= len(txn.Creates)); err != nil {
			return nil, err
		}
	}
	for i, r := range txn.Replaces {
		if len(r.If) == 0 {
			return nil, fmt.Errorf("%w: replaced record %d has no condition", ErrInvalidTxn, i)
		}
		if err := b.add("replaced record", i, conditions(r.If), r.Item, false); err != nil {
			return nil, err
		}
	}
	for i, key := range keys {
		next := txn.Next[i]
		if next == nil {
			next = key
		} else if nk, err := t.identify(next); err != nil || !sameKey(t, key, nk) {
			return nil, fmt.Errorf("%w: new image %d is not the versioned item's", ErrInvalidTxn, i)
		} else {
			next[t.Version] = Int(versions[i] + 1)
		}
		if err := b.add("versioned item", i, t.atVersion(versions[i]), next, txn.Next[i] == nil); err != nil {
			return nil, err
		}
	}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: b.items}
	// Only a write gets a token of its content. A request of checks alone has nothing to
	// apply twice, and such a token would repeat across redeliveries planned on the same
	// state: for 10 minutes DynamoDB would answer success unchecked, hiding that the state
	// moved on. Without one the SDK sets a random token per call, which its retries reuse.
	if slices.ContainsFunc(b.items, func(it types.TransactWriteItem) bool { return it.Put != nil }) {
		in.ClientRequestToken = aws.String(token(in))
	}
	return in, nil
}

// builder collects a request's actions, refusing an item named twice, as DynamoDB does.
type builder struct {
	table Table
	named []itemKey
	items []types.TransactWriteItem
}

// add appends the action on item (a Put, or a ConditionCheck of its key when check)
// guarded by c; kind and i name it in errors.
func (b *builder) add(kind string, i int, c condition, item Item, check bool) error {
	k, err := b.table.identify(item)
	if err != nil {
		return fmt.Errorf("%s %d: %w", kind, i, err)
	}
	if slices.Contains(b.named, k) {
		return fmt.Errorf("%w: %s %d targets an item the transaction already names", ErrInvalidTxn, kind, i)
	}
	b.named = append(b.named, k)
	b.items = append(b.items, b.table.action(c, item, check))
	return nil
}

// sameKey reports whether key names the item whose key is k.
func sameKey(t Table, key Item, k itemKey) bool {
	kk, err := t.identify(key)
	return err == nil && kk == k
}

// condition is one action's condition expression with its names and values.
type condition struct {
	expr   string
	names  map[string]string
	values Item
}

func (t Table) notExists() condition {
	return condition{expr: "attribute_not_exists(#pk)", names: map[string]string{"#pk": t.PartitionKey}}
}

// atVersion is the condition that the item is at version v, or does not exist for v 0.
func (t Table) atVersion(v int64) condition {
	if v == 0 {
		return t.notExists()
	}
	return condition{
		expr:   "#v = :v",
		names:  map[string]string{"#v": t.Version},
		values: Item{":v": Int(v)},
	}
}

// conditions joins cs with AND, naming each attribute #c<i> and each value :c<i>.
func conditions(cs []Cond) condition {
	c := condition{names: map[string]string{}, values: Item{}}
	terms := make([]string, len(cs))
	for i, cond := range cs {
		n, v := fmt.Sprintf("#c%d", i), fmt.Sprintf(":c%d", i)
		c.names[n] = cond.Name
		if cond.Missing {
			terms[i] = "attribute_not_exists(" + n + ")"
			continue
		}
		terms[i] = n + " = " + v
		c.values[v] = cond.Value
	}
	c.expr = strings.Join(terms, " AND ")
	if len(c.values) == 0 {
		c.values = nil
	}
	return c
}

// action is c guarding a Put of item, or (check) a ConditionCheck of item's key.
func (t Table) action(c condition, item Item, check bool) types.TransactWriteItem {
	table, expr, old := aws.String(t.Name), aws.String(c.expr), types.ReturnValuesOnConditionCheckFailureAllOld
	if check {
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: table, Key: t.KeyOf(item),
			ConditionExpression: expr, ExpressionAttributeNames: c.names, ExpressionAttributeValues: c.values, ReturnValuesOnConditionCheckFailure: old}}
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: table, Item: item,
		ConditionExpression: expr, ExpressionAttributeNames: c.names, ExpressionAttributeValues: c.values, ReturnValuesOnConditionCheckFailure: old}}
}

// Key is the key of the item whose string key attributes are pk and sk (sk ignored for a
// hash-only table).
func (t Table) Key(pk, sk string) Item {
	k := Item{t.PartitionKey: &types.AttributeValueMemberS{Value: pk}}
	if t.SortKey != "" {
		k[t.SortKey] = &types.AttributeValueMemberS{Value: sk}
	}
	return k
}

// KeyOf is item's key attributes alone: the key of a record to read back.
func (t Table) KeyOf(item Item) Item {
	k := Item{t.PartitionKey: item[t.PartitionKey]}
	if t.SortKey != "" {
		k[t.SortKey] = item[t.SortKey]
	}
	return k
}

// itemKey identifies an item by its key attributes' type tags and texts.
type itemKey struct {
	typ  [2]byte
	text [2]string
}

// identify reads item's key; it fails when a key attribute is missing or not a scalar.
func (t Table) identify(item Item) (itemKey, error) {
	var k itemKey
	for i, name := range [2]string{t.PartitionKey, t.SortKey} {
		if name == "" {
			continue
		}
		switch v := item[name].(type) {
		case *types.AttributeValueMemberS:
			k.typ[i], k.text[i] = 'S', v.Value
		case *types.AttributeValueMemberN:
			k.typ[i], k.text[i] = 'N', v.Value
		case *types.AttributeValueMemberB:
			k.typ[i], k.text[i] = 'B', string(v.Value)
		default:
			return itemKey{}, fmt.Errorf("%w: item without key attribute %q", ErrInvalidTxn, name)
		}
	}
	return k, nil
}

// Int is n as a DynamoDB number (N): a version, or a seq a query compares.
func Int(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
