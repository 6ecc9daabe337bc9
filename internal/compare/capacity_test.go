package compare

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/migrations"
)

func sv(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func nv(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

func TestItemSize(t *testing.T) {
	cases := []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		// A string: the name's bytes plus the value's UTF-8 bytes (é is two).
		{"string", map[string]types.AttributeValue{"pk": sv("café")}, 2 + 5},
		// A number: 1 byte per two significant digits, plus 1; zeros at either end trimmed.
		{"number 12345", map[string]types.AttributeValue{"n": nv("12345")}, 1 + 3 + 1},
		{"number 1000 is one digit", map[string]types.AttributeValue{"n": nv("1000")}, 1 + 1 + 1},
		{"number 0.0050", map[string]types.AttributeValue{"n": nv("0.0050")}, 1 + 1 + 1},
		{"negative decimal", map[string]types.AttributeValue{"saldo": nv("-123.45")}, 5 + 3 + 1},
		{"boolean and null", map[string]types.AttributeValue{"b": &types.AttributeValueMemberBOOL{Value: true}, "z": &types.AttributeValueMemberNULL{Value: true}}, 2 + 2},
		{"binary counts raw bytes", map[string]types.AttributeValue{"b": &types.AttributeValueMemberB{Value: []byte{1, 2, 3}}}, 1 + 3},
		// Lists and maps: 3 bytes, plus 1 byte and the size of each element.
		{"empty map", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}, 1 + 3},
		{"list of two", map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{sv("ab"), nv("7")}}}, 1 + 3 + (1 + 2) + (1 + 2)},
		{"map element names count", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": sv("v")}}}, 1 + 3 + 1 + 1 + 1},
		// The documented rules applied to an eight-attribute item: 141 bytes.
		{"eight attributes", map[string]types.AttributeValue{
			"itemType": sv("SLOT"), "id": sv("abc1231"), "hostName": sv("Harry Mason"), "timeSlot": sv("February 23, 1999"),
			"slotStatus": sv("OPEN"), "createdAt": sv("February 1, 1999"), "updatedAt": sv("February 1, 1999"), "expiresAt": nv("2099"),
		}, 141},
	}
	for _, tc := range cases {
		if got := itemSize(tc.item); got != tc.want {
			t.Errorf("%s: %d bytes, want %d", tc.name, got, tc.want)
		}
	}
}

func TestUnits(t *testing.T) {
	kb := 1024
	read := func(consistent bool) float64 {
		rcu, _ := (&meter{}).units(&dynamodb.GetItemInput{ConsistentRead: aws.Bool(consistent)}, true)
		return rcu
	}
	cases := []struct {
		name string
		got  float64
		want float64
	}{
		// Examples from DynamoDB's "read and write operations" page.
		{"read under 4 KB, strongly consistent", read(true), 1},
		{"read under 4 KB, eventually consistent", read(false), 0.5},
		{"write 2 KB", writeUnits(2 * kb), 2},
		{"write 2 KB in a transaction", transactWriteUnits(2 * kb), 4},
		{"write 1.5 KB rounds up", writeUnits(1536), 2},
		{"write 100 bytes", writeUnits(100), 1},
		{"failed conditional write of a new item", writeUnits(0), 1},
		{"write exactly 1 KB", writeUnits(kb), 1},
		{"write 1 KB and a byte", writeUnits(kb + 1), 2},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: %v units, want %v", tc.name, tc.got, tc.want)
		}
	}
	big := map[string]types.AttributeValue{"pk": sv(strings.Repeat("x", 1022))}
	if got := writeUnits(itemSize(big)); got != 1 {
		t.Errorf("a 1,024-byte item: %v write units, want 1", got)
	}
}

// The meter charges each index the table has now (each migration states the whole
// table: the last one's indexes, once each), and a keys-only index only for the put
// that creates its item: a record's mark rewrites it with the same keys.
func TestUnitsChargeEachIndexAnItemEnters(t *testing.T) {
	s, err := newStore(context.Background(), "http://127.0.0.1:1", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &meter{indexes: s.indexes}
	var names []string
	for _, ix := range m.indexes[s.tables[migrations.Ledger]] {
		names = append(names, ix.Name)
	}
	if !slices.Equal(names, []string{"por_seq", "por_aplicado"}) {
		t.Fatalf("the ledger table's indexes = %v, want por_seq and por_aplicado once each", names)
	}
	table := s.tables[migrations.Ledger]
	posted := map[string]types.AttributeValue{"pk": sv("CUENTA#A"), "sk": sv("MOV#m"), "seq": nv("3"), "aplicado_seq": sv("2026-12-02T10:15:00.000000000Z#0000000000000000003")}
	put := func(cond string, names map[string]string, committed bool) float64 {
		in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(table), Item: posted,
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: names}}}}
		_, wcu := m.units(in, committed)
		return wcu
	}
	for _, tc := range []struct {
		name      string
		cond      string
		names     map[string]string
		committed bool
		want      float64
	}{
		{"a posted movement written", "attribute_not_exists(#pk)", map[string]string{"#pk": "pk"}, true, 2 + 1 + 1},
		{"the movement marked reversed", "attribute_not_exists(#c0)", map[string]string{"#c0": "anulado_por"}, true, 2 + 1},
		{"marked again", "#c0 = :c0", map[string]string{"#c0": "estado"}, true, 2 + 1},
		{"a cancelled write", "attribute_not_exists(#pk)", map[string]string{"#pk": "pk"}, false, 2},
	} {
		if got := put(tc.cond, tc.names, tc.committed); got != tc.want {
			t.Errorf("%s: %v WCU, want %v", tc.name, got, tc.want)
		}
	}
}
