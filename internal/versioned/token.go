package versioned

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// tokenBytes of the request's SHA-256 make its ClientRequestToken: 36 hex characters,
// DynamoDB's maximum.
const tokenBytes = 18

// token derives the ClientRequestToken from the request's whole content: an SDK retry
// of the same request is not applied twice, and a different request never reuses a
// token (no IdempotentParameterMismatch).
func token(in *dynamodb.TransactWriteItemsInput) string {
	b := make([]byte, 0, 1<<10) // a one-movement request takes about 600 bytes
	for _, it := range in.TransactItems {
		switch {
		case it.Put != nil:
			p := it.Put
			b = appendAction(append(b, 'P'), aws.ToString(p.TableName), p.Item, aws.ToString(p.ConditionExpression), p.ExpressionAttributeNames, p.ExpressionAttributeValues)
		case it.ConditionCheck != nil:
			c := it.ConditionCheck
			b = appendAction(append(b, 'C'), aws.ToString(c.TableName), c.Key, aws.ToString(c.ConditionExpression), c.ExpressionAttributeNames, c.ExpressionAttributeValues)
		}
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:tokenBytes])
}

func appendAction(b []byte, table string, item Item, cond string, names map[string]string, values Item) []byte {
	b = appendString(b, table)
	b = appendMap(b, item)
	b = appendString(b, cond)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, k := range sortedKeys(names) {
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
	b = binary.AppendUvarint(append(b, 'M'), uint64(len(m)))
	for _, k := range sortedKeys(m) {
		b = appendValue(appendString(b, k), m[k])
	}
	return b
}

// appendValue encodes v canonically (a type tag, then the value, length-prefixed): two
// values encode alike exactly when DynamoDB stores the same (modulo number spelling).
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
		members := make([]string, len(v.Value))
		for i, e := range v.Value {
			members[i] = string(e)
		}
		return appendSet(append(b, 'b'), members)
	}
	return append(b, '?')
}

func appendSet(b []byte, members []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(members)))
	for _, m := range slices.Sorted(slices.Values(members)) {
		b = appendString(b, m)
	}
	return b
}

// sortedKeys is m's keys in order, in one right-sized slice (on every request's path).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
