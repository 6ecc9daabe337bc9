// This file computes DynamoDB capacity units from item sizes, by the rules
// DynamoDB documents ("DynamoDB item sizes and formats", "read and write operations"):
// an item's size is the sum of its attribute names' and values' lengths; a write
// consumes one unit per started KB of the item, twice that inside a transaction; a
// strongly consistent read one unit per started 4 KB, half that when eventually
// consistent. The comparison harness uses it where a backend returns no
// ConsumedCapacity (the embedded store and moto return none). Number sizes follow the
// documented approximation (one byte per two significant digits, plus one), so a
// figure may differ from DynamoDB's by a byte per number; only items within a few
// bytes of a KB boundary could round differently.

package compare

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The unit sizes DynamoDB charges by.
const (
	writeUnitBytes = 1024
	readUnitBytes  = 4096
)

// itemSize is the size of item in bytes: for every attribute, the UTF-8 length of its
// name plus the size of its value.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

// valueSize is the size of one attribute value, without its name: strings and binaries
// by their bytes; numbers by one byte per two significant digits plus one; booleans
// and nulls one byte; lists and maps 3 bytes plus one byte and the size of each
// element (a map element's name counts); sets the sum of their members.
func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize is the size of a number given as DynamoDB's text form ("-12.50",
// "1E+3"): leading and trailing zeros are trimmed, then one byte per two significant
// digits, plus one.
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
	digits = strings.Trim(digits, "0")
	return (len(digits)+1)/2 + 1
}

// writeUnits is what a standard write of an item of size bytes consumes: one unit per
// started KB, at least one (a failed conditional write consumes it too).
func writeUnits(size int) float64 { return float64(max(1, ceilDiv(size, writeUnitBytes))) }

// transactWriteUnits is what one action of a TransactWriteItems consumes: twice a
// standard write (DynamoDB prepares and commits every item).
func transactWriteUnits(size int) float64 { return 2 * writeUnits(size) }

// readUnits is what a read of an item of size bytes consumes: one unit per started
// 4 KB when strongly consistent, half that when eventually consistent, and never less
// than that for an item that is not there.
func readUnits(size int, consistent bool) float64 {
	units := float64(max(1, ceilDiv(size, readUnitBytes)))
	if !consistent {
		units /= 2
	}
	return units
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
