package items

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Text order of the keys is the order of aplicado, then of seq, whatever fraction of a
// second each instant has (RFC 3339 as Go writes it trims trailing zeros, and would not
// sort so).
func TestAplicadoSeqSortsByTimeThenSeq(t *testing.T) {
	type posted struct {
		at  time.Time
		seq int64
	}
	base := time.Date(2026, 11, 30, 23, 59, 59, 0, time.FixedZone("CET", 3600))
	ps := []posted{
		{base.Add(500 * time.Millisecond), 4}, {base, 2}, {base.Add(time.Second), 9}, {base, 10},
		{base.Add(time.Nanosecond), 3}, {base.Add(-time.Hour), 11}, {base.Add(500*time.Millisecond + time.Microsecond), 5},
	}
	byKey := slices.SortedFunc(slices.Values(ps), func(a, b posted) int {
		return cmp.Compare(AplicadoSeq(a.at, a.seq), AplicadoSeq(b.at, b.seq))
	})
	byTime := slices.SortedFunc(slices.Values(ps), func(a, b posted) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.seq, b.seq))
	})
	if !slices.Equal(byKey, byTime) {
		t.Errorf("in key order %v, want %v", byKey, byTime)
	}
}

func TestUltimoHastaInputAsksForOneKeyNewestFirst(t *testing.T) {
	at := time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)
	in := UltimoHastaInput("ledger-prod", "ES76", at.In(time.FixedZone("CET", 3600)))
	if aws.ToString(in.TableName) != "ledger-prod" || aws.ToString(in.IndexName) != "por_aplicado" {
		t.Errorf("table/index = %s/%s, want ledger-prod/por_aplicado", aws.ToString(in.TableName), aws.ToString(in.IndexName))
	}
	if aws.ToString(in.KeyConditionExpression) != "#pk = :pk AND #k <= :k" || in.ExpressionAttributeNames["#k"] != "aplicado_seq" || in.ExpressionAttributeNames["#pk"] != "pk" {
		t.Errorf("key condition %q with names %v", aws.ToString(in.KeyConditionExpression), in.ExpressionAttributeNames)
	}
	if got := slices.Sorted(maps.Keys(in.ExpressionAttributeValues)); !slices.Equal(got, []string{":k", ":pk"}) {
		t.Errorf("values = %v, want :k and :pk alone (DynamoDB rejects unused ones)", got)
	}
	if aws.ToInt32(in.Limit) != 1 || in.ScanIndexForward == nil || *in.ScanIndexForward {
		t.Errorf("limit %d, forward %v: want one item, newest first", aws.ToInt32(in.Limit), in.ScanIndexForward)
	}
	if in.ConsistentRead != nil || in.FilterExpression != nil {
		t.Error("ConsistentRead or a filter is set: DynamoDB rejects the first on an index, and Limit counts before the second")
	}
	k := in.ExpressionAttributeValues[":k"].(*types.AttributeValueMemberS).Value
	for _, tc := range []struct {
		key  string
		want bool // at or before the instant asked about
	}{
		{AplicadoSeq(at, 1), true},
		{AplicadoSeq(at, 1<<62), true},
		{AplicadoSeq(at.Add(-time.Nanosecond), 1<<62), true},
		{AplicadoSeq(at.Add(time.Nanosecond), 1), false},
	} {
		if got := tc.key <= k; got != tc.want {
			t.Errorf("%s <= %s is %v, want %v", tc.key, k, got, tc.want)
		}
	}
}

func TestSeqOfAplicadoReadsTheKeysSeq(t *testing.T) {
	for _, tc := range []struct {
		v    types.AttributeValue
		want int64 // 0: not a key
	}{
		{s(AplicadoSeq(t0, 42)), 42},
		{s(AplicadoSeq(t0, 1<<62)), 1 << 62},
		{s("2026-12-02T10:15:00.123456789Z#42"), 0},
		{s("2026-12-02T10:15:00.123456789Z"), 0},
		{s(AplicadoSeq(t0, 0)), 0},
		{&types.AttributeValueMemberN{Value: "42"}, 0},
		{nil, 0},
	} {
		item := map[string]types.AttributeValue{}
		if tc.v != nil {
			item["aplicado_seq"] = tc.v
		}
		seq, ok := SeqOfAplicado(item)
		if seq != tc.want || ok != (tc.want != 0) {
			t.Errorf("%v: %d, %v; want %d", tc.v, seq, ok, tc.want)
		}
	}
}

func TestUnkeyedScanFindsPostedMovementsWithoutAplicadoSeq(t *testing.T) {
	start := MovKey("ES76", "m-9")
	in := UnkeyedScan("ledger-prod", start)
	if aws.ToString(in.TableName) != "ledger-prod" || in.IndexName != nil || aws.ToString(in.FilterExpression) != "attribute_exists(#seq) AND attribute_not_exists(#k)" {
		t.Errorf("scan of %s/%v filtered by %q", aws.ToString(in.TableName), in.IndexName, aws.ToString(in.FilterExpression))
	}
	want := map[string]string{"#pk": "pk", "#sk": "sk", "#seq": "seq", "#k": "aplicado_seq", "#aplicado": "aplicado"}
	if !maps.Equal(in.ExpressionAttributeNames, want) || aws.ToString(in.ProjectionExpression) != "#pk, #sk, #seq, #aplicado" {
		t.Errorf("names %v, projection %q; want %v and what the update reads", in.ExpressionAttributeNames, aws.ToString(in.ProjectionExpression), want)
	}
	if in.ConsistentRead != nil || len(in.ExclusiveStartKey) != 2 {
		t.Errorf("consistent %v, start %v; want an eventually consistent scan from start", in.ConsistentRead, in.ExclusiveStartKey)
	}
}

func TestAplicadoSeqUpdateKeysOnlyWhatItCanRead(t *testing.T) {
	posted := func(aplicado, seq types.AttributeValue) map[string]types.AttributeValue {
		item := map[string]types.AttributeValue{"pk": s("CUENTA#ES76"), "sk": s("MOV#m-1")}
		if aplicado != nil {
			item["aplicado"] = aplicado
		}
		if seq != nil {
			item["seq"] = seq
		}
		return item
	}
	seven := &types.AttributeValueMemberN{Value: "7"}
	in, ok := AplicadoSeqUpdate("ledger-prod", posted(s("2026-12-02T10:15:00.5+01:00"), seven))
	if !ok {
		t.Fatal("a posted movement with aplicado and seq was not keyed")
	}
	if aws.ToString(in.TableName) != "ledger-prod" || !reflect.DeepEqual(in.Key, map[string]types.AttributeValue{"pk": s("CUENTA#ES76"), "sk": s("MOV#m-1")}) {
		t.Errorf("update of %s %v", aws.ToString(in.TableName), in.Key)
	}
	if aws.ToString(in.UpdateExpression) != "SET #k = :k" || aws.ToString(in.ConditionExpression) != "attribute_exists(#seq) AND attribute_not_exists(#k)" {
		t.Errorf("update %q if %q: want aplicado_seq set once, on a posted movement", aws.ToString(in.UpdateExpression), aws.ToString(in.ConditionExpression))
	}
	if k := in.ExpressionAttributeValues[":k"].(*types.AttributeValueMemberS).Value; k != "2026-12-02T09:15:00.500000000Z#0000000000000000007" {
		t.Errorf(":k = %s, want its aplicado in UTC and its seq", k)
	}
	for name, item := range map[string]map[string]types.AttributeValue{
		"no aplicado":           posted(nil, seven),
		"an unreadable one":     posted(s("ayer"), seven),
		"a number for aplicado": posted(&types.AttributeValueMemberN{Value: "1"}, seven),
		"no seq":                posted(s("2026-12-02T10:15:00Z"), nil),
	} {
		if _, ok := AplicadoSeqUpdate("ledger-prod", item); ok {
			t.Errorf("%s: keyed, want it left out", name)
		}
	}
}
