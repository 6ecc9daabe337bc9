package versioned

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxActions is DynamoDB's limit of actions in one TransactWriteItems: at most
// MaxActions-1 create-once records fit beside the versioned item.
const MaxActions = 100

// Txn is what a plan wants written atomically. Creates are records that must not exist
// yet (each a Put guarded by attribute_not_exists on the partition key). Absent are keys
// of records that must not exist either but are not written (a ConditionCheck each): a
// plan that declines to write a record can so learn, in the same call, whether it was
// there all along. Next is the versioned item's new image, key included and version
// excluded: it is written as a Put guarded by the version the plan saw, and its version
// becomes that plus one. A nil Next changes nothing but still guards the rest with a
// ConditionCheck on that version, so a decision based on the item's state (say, "reject:
// insufficient funds") is recorded only if the state was still current. A Txn with
// nothing in it writes nothing and costs no call.
//
// Writing the whole image (a Put, not an UpdateItem with arithmetic) keeps numbers
// exactly as the plan computed them, whatever the backend's number handling. The maps
// belong to the request once the plan returns them: BuildInput sets Next's version.
type Txn struct {
	Creates []Item
	Absent  []Item
	Next    Item
}

func (t Txn) empty() bool { return len(t.Creates) == 0 && len(t.Absent) == 0 && t.Next == nil }

// guarded counts the actions guarded by attribute_not_exists, which come first in the
// request: Creates, then Absent.
func (t Txn) guarded() int { return len(t.Creates) + len(t.Absent) }

// guardedKey is the item (Creates) or key (Absent) of guarded action i.
func (t Txn) guardedKey(i int) Item {
	if i < len(t.Creates) {
		return t.Creates[i]
	}
	return t.Absent[i-len(t.Creates)]
}

// BuildInput returns the TransactWriteItems request Update sends for txn against the
// item key at version expected (0: the item must not exist). Creates come first, then
// Absent checks, the versioned action last, and every action asks for the stored item
// (ALL_OLD) when its condition fails, so one failed call says both "which records
// exist" and "what the item looks like now". It does no I/O, so callers can table-test
// their plans' requests.
func BuildInput(t Table, key Item, expected int64, txn Txn) (*dynamodb.TransactWriteItemsInput, error) {
	n := txn.guarded() + 1
	if n > MaxActions {
		return nil, fmt.Errorf("%w: %d actions, at most %d", ErrInvalidTxn, n, MaxActions)
	}
	target, err := t.keyOf(key)
	if err != nil {
		return nil, err
	}
	// At most 100 keys: a linear scan finds repeats without hashing.
	var stack [8]itemKey
	named := append(stack[:0], target)
	table := tableName(t.Name)
	pkName := names("#pk", t.PartitionKey)
	items := make([]types.TransactWriteItem, 0, n)
	for i := range txn.guarded() {
		rec := txn.guardedKey(i)
		k, err := t.keyOf(rec)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		if slices.Contains(named, k) {
			return nil, fmt.Errorf("%w: record %d targets an item the transaction already names", ErrInvalidTxn, i)
		}
		named = append(named, k)
		if i < len(txn.Creates) {
			items = append(items, types.TransactWriteItem{Put: &types.Put{
				TableName:                           table,
				Item:                                rec,
				ConditionExpression:                 condNotExists,
				ExpressionAttributeNames:            pkName,
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			}})
			continue
		}
		items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName:                           table,
			Key:                                 t.key(rec),
			ConditionExpression:                 condNotExists,
			ExpressionAttributeNames:            pkName,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}})
	}

	cond, names, values := t.versionCondition(expected)
	if txn.Next == nil {
		items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName:                           table,
			Key:                                 key,
			ConditionExpression:                 cond,
			ExpressionAttributeNames:            names,
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}})
	} else {
		if k, err := t.keyOf(txn.Next); err != nil || k != target {
			return nil, fmt.Errorf("%w: the new image's key is not the versioned item's", ErrInvalidTxn)
		}
		txn.Next[t.Version] = &types.AttributeValueMemberN{Value: strconv.FormatInt(expected+1, 10)}
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName:                           table,
			Item:                                txn.Next,
			ConditionExpression:                 cond,
			ExpressionAttributeNames:            names,
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}})
	}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: items}
	in.ClientRequestToken = aws.String(token(in))
	return in, nil
}

// Condition expressions shared by every request; the SDK only reads them.
var (
	condNotExists = aws.String("attribute_not_exists(#pk)")
	condVersion   = aws.String("#v = :v")
)

// nameMaps caches ExpressionAttributeNames maps, which depend only on the table's
// attribute names: shared read-only by every request instead of built per request.
var nameMaps sync.Map // placeholder + "=" + attribute → map[string]string

// tableNames interns table names as the *string requests point to, for the same reason.
var tableNames sync.Map // name → *string

func tableName(name string) *string {
	if p, ok := tableNames.Load(name); ok {
		return p.(*string)
	}
	p, _ := tableNames.LoadOrStore(name, aws.String(name))
	return p.(*string)
}

func names(placeholder, attr string) map[string]string {
	if m, ok := nameMaps.Load(placeholder + "=" + attr); ok {
		return m.(map[string]string)
	}
	m, _ := nameMaps.LoadOrStore(placeholder+"="+attr, map[string]string{placeholder: attr})
	return m.(map[string]string)
}

func (t Table) versionCondition(expected int64) (*string, map[string]string, map[string]types.AttributeValue) {
	if expected == 0 {
		return condNotExists, names("#pk", t.PartitionKey), nil
	}
	return condVersion, names("#v", t.Version),
		map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(expected, 10)}}
}

// key returns item's key attributes alone.
func (t Table) key(item Item) Item {
	k := Item{t.PartitionKey: item[t.PartitionKey]}
	if t.SortKey != "" {
		k[t.SortKey] = item[t.SortKey]
	}
	return k
}

// itemKey identifies an item by its key attributes, each as type tag and text.
type itemKey struct {
	typ  [2]byte
	text [2]string
}

// keyOf reads item's key; it fails when a key attribute is missing or not a scalar.
func (t Table) keyOf(item Item) (itemKey, error) {
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

// token derives the ClientRequestToken from the request's whole content: an SDK retry
// of the same attempt (say, after a lost response) sends the same token and DynamoDB
// answers it without applying it twice; a different request, even for the same key and
// version, never reuses a token, so DynamoDB never answers IdempotentParameterMismatch.
// Tokens are 36 characters, DynamoDB's maximum.
func token(in *dynamodb.TransactWriteItemsInput) string {
	bp := canonBufs.Get().(*[]byte)
	b := (*bp)[:0]
	for _, it := range in.TransactItems {
		switch {
		case it.Put != nil:
			b = appendAction(append(b, 'P'), aws.ToString(it.Put.TableName), it.Put.Item, it.Put.ConditionExpression, it.Put.ExpressionAttributeNames, it.Put.ExpressionAttributeValues)
		case it.ConditionCheck != nil:
			b = appendAction(append(b, 'C'), aws.ToString(it.ConditionCheck.TableName), it.ConditionCheck.Key, it.ConditionCheck.ConditionExpression, it.ConditionCheck.ExpressionAttributeNames, it.ConditionCheck.ExpressionAttributeValues)
		}
	}
	sum := sha256.Sum256(b)
	*bp = b
	canonBufs.Put(bp)
	return hex.EncodeToString(sum[:18])
}

// canonBufs recycles the buffers requests are encoded into for hashing.
var canonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func appendAction(b []byte, table string, item Item, cond *string, names map[string]string, values Item) []byte {
	b = appendString(b, table)
	b = appendMap(b, item)
	b = appendString(b, aws.ToString(cond))
	var stack [4]string
	keys := stack[:0]
	for k := range names {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendString(appendString(b, k), names[k])
	}
	return appendMap(b, values)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendMap encodes a map's entries sorted by name, after their count.
func appendMap(b []byte, m map[string]types.AttributeValue) []byte {
	var stack [32]string
	keys := stack[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(append(b, 'M'), uint64(len(keys)))
	for _, k := range keys {
		b = appendValue(appendString(b, k), m[k])
	}
	return b
}

// appendValue encodes v canonically: a type tag, then the value, length-prefixed.
// Two values encode alike exactly when DynamoDB would store the same thing (modulo
// number spelling, which the callers keep canonical).
func appendValue(b []byte, v types.AttributeValue) []byte {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return appendString(append(b, 'S'), v.Value)
	case *types.AttributeValueMemberN:
		return appendString(append(b, 'N'), v.Value)
	case *types.AttributeValueMemberB:
		return appendString(append(b, 'B'), string(v.Value))
	case *types.AttributeValueMemberBOOL:
		if v.Value {
			return append(b, 'T')
		}
		return append(b, 'F')
	case *types.AttributeValueMemberNULL:
		return append(b, '0')
	case *types.AttributeValueMemberL:
		b = binary.AppendUvarint(append(b, 'L'), uint64(len(v.Value)))
		for _, e := range v.Value {
			b = appendValue(b, e)
		}
		return b
	case *types.AttributeValueMemberM:
		return appendMap(b, v.Value)
	case *types.AttributeValueMemberSS:
		return appendSet(append(b, 's'), v.Value)
	case *types.AttributeValueMemberNS:
		return appendSet(append(b, 'n'), v.Value)
	case *types.AttributeValueMemberBS:
		ss := make([]string, len(v.Value))
		for i, e := range v.Value {
			ss[i] = string(e)
		}
		return appendSet(append(b, 'b'), ss)
	default:
		return append(b, '?')
	}
}

func appendSet(b []byte, members []string) []byte {
	sorted := slices.Clone(members)
	slices.Sort(sorted)
	b = binary.AppendUvarint(b, uint64(len(sorted)))
	for _, m := range sorted {
		b = appendString(b, m)
	}
	return b
}
