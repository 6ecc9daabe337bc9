// This file computes capacity units by DynamoDB's documented rules, for backends whose
// ConsumedCapacity is not DynamoDB's. Number sizes may be off by a byte per number.

package compare

import (
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// writeUnitBytes is the unit size DynamoDB charges writes by.
const writeUnitBytes = 1024

// units is the capacity a call consumes, from its request; committed says whether its
// writes took effect. A failed condition is charged, and a cancelled transaction counted
// in full (which errs against this design). An update or delete is sized by its key and
// new values, a read as of an item under 4 KB (Result.MaxItemBytes tells if one is not).
func (m *meter) units(in any, committed bool) (rcu, wcu float64) {
	switch p := in.(type) {
	case *dynamodb.GetItemInput: // one unit, half if eventually consistent
		if aws.ToBool(p.ConsistentRead) {
			return 1, 0
		}
		return 0.5, 0
	case *dynamodb.PutItemInput:
		return 0, m.put(*p.TableName, p.Item, p.ConditionExpression, p.ExpressionAttributeNames, writeUnits, committed)
	case *dynamodb.UpdateItemInput:
		return 0, writeUnits(itemSize(p.Key) + valuesSize(p.ExpressionAttributeValues))
	case *dynamodb.DeleteItemInput:
		return 0, writeUnits(itemSize(p.Key))
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range p.TransactItems {
			switch {
			case it.Put != nil:
				wcu += m.put(*it.Put.TableName, it.Put.Item, it.Put.ConditionExpression, it.Put.ExpressionAttributeNames, transactWriteUnits, committed)
			case it.Update != nil:
				wcu += transactWriteUnits(itemSize(it.Update.Key) + valuesSize(it.Update.ExpressionAttributeValues))
			case it.Delete != nil:
				wcu += transactWriteUnits(itemSize(it.Delete.Key))
			case it.ConditionCheck != nil:
				wcu += transactWriteUnits(itemSize(it.ConditionCheck.Key))
			}
		}
	}
	return rcu, wcu
}

// put is a put's writes: the item, plus, once committed, one per index the item is in.
// A keys-only index is written only by a put whose condition wants the index's
// partition attribute absent (a new item): a put over a stored item keeps its keys (no
// writer here changes one), so it changes nothing such an index holds.
func (m *meter) put(table string, item map[string]types.AttributeValue, cond *string, names map[string]string, units func(int) float64, committed bool) float64 {
	size := itemSize(item)
	w := units(size)
	for _, ix := range m.indexes[table] {
		_, hasPartition := item[ix.Partition]
		_, hasSort := item[ix.Sort]
		keysOnly := ix.Projection == string(types.ProjectionTypeKeysOnly)
		if committed && hasPartition && (hasSort || ix.Sort == "") && (!keysOnly || absent(cond, names) == ix.Partition) {
			w += writeUnits(size)
		}
	}
	return w
}

// absent is the attribute a condition wants absent when it is one
// attribute_not_exists alone, its name resolved; "" otherwise.
func absent(cond *string, names map[string]string) string {
	inner, ok := strings.CutPrefix(aws.ToString(cond), "attribute_not_exists(")
	name, closed := strings.CutSuffix(inner, ")")
	if !ok || !closed || strings.ContainsAny(name, " ()") {
		return ""
	}
	if resolved, placeholder := names[name]; placeholder {
		return resolved
	}
	return name
}

// itemSize is the size of item in bytes: its names' and values' sizes.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valuesSize(values map[string]types.AttributeValue) int {
	return sum(slices.Collect(maps.Values(values)), valueSize)
}

// valueSize is the size of one attribute value, without its name.
func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberSS:
		return sum(v.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberNS:
		return sum(v.Value, numberSize)
	case *types.AttributeValueMemberBS:
		return sum(v.Value, func(b []byte) int { return len(b) })
	case *types.AttributeValueMemberL:
		return 3 + sum(v.Value, func(e types.AttributeValue) int { return 1 + valueSize(e) })
	case *types.AttributeValueMemberM:
		return 3 + len(v.Value) + itemSize(v.Value)
	}
	return 1 // BOOL and NULL
}

func sum[T any](xs []T, size func(T) int) int {
	n := 0
	for _, x := range xs {
		n += size(x)
	}
	return n
}

// numberSize is a number's size: a byte per two significant digits, plus one.
func numberSize(s string) int {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i] // the exponent moves the point, not the digits
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
	return (len(strings.Trim(digits, "0"))+1)/2 + 1
}

// writeUnits is what a write of size bytes consumes: a unit per started KB, at least one.
func writeUnits(size int) float64 { return float64(max(1, (size+writeUnitBytes-1)/writeUnitBytes)) }

// transactWriteUnits is a transaction action's units: DynamoDB prepares and commits each.
func transactWriteUnits(size int) float64 { return 2 * writeUnits(size) }
