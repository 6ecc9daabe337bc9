package events_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/ledger-dev/ledger/internal/events"
)

// An event becomes one entry: on the bus given, from the ledger, its detail-type, its
// detail as JSON, the time it was recorded and the table it concerns.
func TestEntryCarriesTheEvent(t *testing.T) {
	ev := events.Event{DetailType: events.DetailMovimiento, Time: t0, Detail: events.Detail{EventID: "e1", Cuenta: "ES76", Estado: "aplicado", Seq: 3}}
	const bus, table = "arn:aws:events:eu-west-1:123456789012:event-bus/ledger", "arn:aws:dynamodb:eu-west-1:123456789012:table/ledger"
	e, err := events.Entry(ev, bus, []string{table})
	if err != nil {
		t.Fatal(err)
	}
	var detail events.Detail
	if err := json.Unmarshal([]byte(aws.ToString(e.Detail)), &detail); err != nil || detail.EventID != "e1" || detail.Seq != 3 {
		t.Errorf("detail = %s (%v), want the event's", aws.ToString(e.Detail), err)
	}
	if aws.ToString(e.EventBusName) != bus || aws.ToString(e.Source) != "ledger" || aws.ToString(e.DetailType) != "movimiento" ||
		!aws.ToTime(e.Time).Equal(t0) || len(e.Resources) != 1 || e.Resources[0] != table {
		t.Errorf("entry = %+v", e)
	}
}

// Calls fills each PutEvents call up to ten entries or 256 KiB, as EventBridge counts
// them, keeping the entries' order; an entry over the limit on its own is refused.
func TestCallsRespectPutEventsLimits(t *testing.T) {
	entry := func(i, detailBytes int) types.PutEventsRequestEntry {
		return types.PutEventsRequestEntry{Source: aws.String("ledger"), DetailType: aws.String("movimiento"),
			Detail: aws.String(string(rune('a'+i%26)) + strings.Repeat("x", detailBytes-1)), Time: aws.Time(t0)}
	}
	cases := []struct {
		name    string
		details []int // each entry's detail size
		want    []int // entries per call
	}{
		{"none", nil, nil},
		{"one", []int{300}, []int{1}},
		{"ten fill one call", slices.Repeat([]int{300}, 10), []int{10}},
		{"twenty-three", slices.Repeat([]int{300}, 23), []int{10, 10, 3}},
		{"large ones fill a call by size", slices.Repeat([]int{60_000}, 9), []int{4, 4, 1}},
		// 262,144 bytes exactly, each entry counting its source (6), detail-type (10) and
		// time (14) besides its detail.
		{"exactly the limit", []int{131_040, 131_044}, []int{2}},
		{"one byte over", []int{131_040, 131_045}, []int{1, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var entries []types.PutEventsRequestEntry
			for i, n := range tc.details {
				entries = append(entries, entry(i, n))
			}
			calls, err := events.Calls(entries)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			k := 0
			for _, c := range calls {
				sizes = append(sizes, len(c.Entries))
				for _, e := range c.Entries {
					if aws.ToString(e.Detail) != aws.ToString(entries[k].Detail) {
						t.Fatalf("entry %d out of order", k)
					}
					k++
				}
			}
			if !slices.Equal(sizes, tc.want) {
				t.Errorf("entries per call = %v, want %v", sizes, tc.want)
			}
		})
	}
	if _, err := events.Calls([]types.PutEventsRequestEntry{entry(0, 262_200)}); err == nil {
		t.Error("an entry over 256 KiB on its own was put in a call")
	}
}
