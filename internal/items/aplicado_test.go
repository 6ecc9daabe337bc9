package items

import (
	"cmp"
	"maps"
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
