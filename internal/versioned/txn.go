package versioned

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"slices"
	"strconv"

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
// exactly as the plan computed them, whatever the backend's number handling.
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

// buildInput is the TransactWriteItems request for txn against the item key at version
// expected (0: the item must not exist). Creates come first, then Absent checks, the
// versioned action last,
// and every action asks for the stored item (ALL_OLD) when its condition fails, so one
// failed call says both "which records exist" and "what the item looks like now".
func BuildInput(t Table, key Item, expected int64, txn Txn) (*dynamodb.TransactWriteItemsInput, error) {
	if n := txn.guarded() + 1; n > MaxActions {
		return nil, fmt.Errorf("%w: %d actions, at most %d", ErrInvalidTxn, n, MaxActions)
	}
	target, err := t.keyString(key)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{target: true}
	items := make([]types.TransactWriteItem, 0, txn.guarded()+1)
	notExists := aws.String("attribute_not_exists(#pk)")
	pkName := map[string]string{"#pk": t.PartitionKey}
	for i := range txn.guarded() {
		rec := txn.guardedKey(i)
		k, err := t.keyString(rec)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		if seen[k] {
			return nil, fmt.Errorf("%w: record %d targets an item the transaction already names", ErrInvalidTxn, i)
		}
		seen[k] = true
		if i < len(txn.Creates) {
			items = append(items, types.TransactWriteItem{Put: &types.Put{
				TableName:                           aws.String(t.Name),
				Item:                                rec,
				ConditionExpression:                 notExists,
				ExpressionAttributeNames:            pkName,
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			}})
			continue
		}
		items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName:                           aws.String(t.Name),
			Key:                                 t.key(rec),
			ConditionExpression:                 notExists,
			ExpressionAttributeNames:            pkName,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}})
	}

	cond, names, values := t.versionCondition(expected)
	if txn.Next == nil {
		items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName:                           aws.String(t.Name),
			Key:                                 key,
			ConditionExpression:                 cond,
			ExpressionAttributeNames:            names,
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}})
	} else {
		next, err := t.nextImage(key, target, txn.Next, expected+1)
		if err != nil {
			return nil, err
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName:                           aws.String(t.Name),
			Item:                                next,
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

func (t Table) versionCondition(expected int64) (*string, map[string]string, map[string]types.AttributeValue) {
	if expected == 0 {
		return aws.String("attribute_not_exists(#pk)"), map[string]string{"#pk": t.PartitionKey}, nil
	}
	return aws.String("#v = :v"), map[string]string{"#v": t.Version},
		map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(expected, 10)}}
}

// nextImage copies the plan's image (the caller's map is left alone) and sets the
// version, after checking that the image is of the item being versioned.
func (t Table) nextImage(key Item, target string, next Item, version int64) (Item, error) {
	if k, err := t.keyString(next); err != nil || k != target {
		return nil, fmt.Errorf("%w: the new image's key is not the versioned item's", ErrInvalidTxn)
	}
	if _, ok := next[t.Version]; ok {
		return nil, fmt.Errorf("%w: the new image sets the version attribute %q itself", ErrInvalidTxn, t.Version)
	}
	out := make(Item, len(next)+1)
	for k, v := range next {
		out[k] = v
	}
	out[t.Version] = &types.AttributeValueMemberN{Value: strconv.FormatInt(version, 10)}
	return out, nil
}

// key returns item's key attributes alone.
func (t Table) key(item Item) Item {
	k := Item{t.PartitionKey: item[t.PartitionKey]}
	if t.SortKey != "" {
		k[t.SortKey] = item[t.SortKey]
	}
	return k
}

// keyString identifies an item by its key attributes, for spotting two actions on one
// item and for comparing keys. It fails when a key attribute is missing.
func (t Table) keyString(item Item) (string, error) {
	var b []byte
	for _, name := range []string{t.PartitionKey, t.SortKey} {
		if name == "" {
			continue
		}
		v, ok := item[name]
		if !ok {
			return "", fmt.Errorf("%w: item without key attribute %q", ErrInvalidTxn, name)
		}
		b = appendValue(b, v)
	}
	return string(b), nil
}

// token derives the ClientRequestToken from the request's whole content: an SDK retry
// of the same attempt (say, after a lost response) sends the same token and DynamoDB
// answers it without applying it twice; a different request, even for the same key and
// version, never reuses a token, so DynamoDB never answers IdempotentParameterMismatch.
// Tokens are 36 characters, DynamoDB's maximum.
func token(in *dynamodb.TransactWriteItemsInput) string {
	h := sha256.New()
	var buf []byte
	for _, it := range in.TransactItems {
		switch {
		case it.Put != nil:
			buf = append(buf[:0], 'P')
			buf = appendAction(buf, aws.ToString(it.Put.TableName), it.Put.Item, it.Put.ConditionExpression, it.Put.ExpressionAttributeNames, it.Put.ExpressionAttributeValues)
		case it.ConditionCheck != nil:
			buf = append(buf[:0], 'C')
			buf = appendAction(buf, aws.ToString(it.ConditionCheck.TableName), it.ConditionCheck.Key, it.ConditionCheck.ConditionExpression, it.ConditionCheck.ExpressionAttributeNames, it.ConditionCheck.ExpressionAttributeValues)
		}
		writeFrame(h, buf)
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:18])
}

func appendAction(b []byte, table string, item Item, cond *string, names map[string]string, values Item) []byte {
	b = appendString(b, table)
	b = appendValue(b, &types.AttributeValueMemberM{Value: item})
	b = appendString(b, aws.ToString(cond))
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = appendString(appendString(b, k), names[k])
	}
	return appendValue(b, &types.AttributeValueMemberM{Value: values})
}

func writeFrame(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendValue encodes v canonically: a type tag, then the value, length-prefixed; map
// entries sorted by name. Two values encode alike exactly when DynamoDB would store the
// same thing (modulo number spelling, which the callers keep canonical).
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
		keys := make([]string, 0, len(v.Value))
		for k := range v.Value {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = binary.AppendUvarint(append(b, 'M'), uint64(len(keys)))
		for _, k := range keys {
			b = appendValue(appendString(b, k), v.Value[k])
		}
		return b
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
