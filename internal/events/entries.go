package events

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

// PutEvents' limits: at most MaxEntries entries in one call, and at most
// MaxRequestBytes in all, counted as EventBridge counts an entry's size (entrySize).
const (
	MaxEntries      = 10
	MaxRequestBytes = 256 * 1024
)

// timeBytes is what an entry's Time adds to its size, by EventBridge's rule.
const timeBytes = 14

// Entry is ev as a PutEvents entry on bus (a name or an ARN), concerning resources
// (the table's ARN, when known).
func Entry(ev Event, bus string, resources []string) (types.PutEventsRequestEntry, error) {
	detail, err := json.Marshal(ev.Detail)
	if err != nil {
		return types.PutEventsRequestEntry{}, fmt.Errorf("events: detail of %s: %w", ev.Detail.EventID, err)
	}
	return types.PutEventsRequestEntry{
		EventBusName: aws.String(bus),
		Source:       aws.String(Source),
		DetailType:   aws.String(ev.DetailType),
		Detail:       aws.String(string(detail)),
		Time:         aws.Time(ev.Time),
		Resources:    resources,
	}, nil
}

// Calls are the PutEvents requests that carry entries in their order: each fills up to
// MaxEntries entries and MaxRequestBytes, and the next starts where it stopped. An
// entry over MaxRequestBytes on its own is an error (EventBridge would refuse it in
// any call); the ledger's events are a few hundred bytes.
func Calls(entries []types.PutEventsRequestEntry) ([]*eventbridge.PutEventsInput, error) {
	var calls []*eventbridge.PutEventsInput
	var call *eventbridge.PutEventsInput
	size := 0
	for i, e := range entries {
		n := entrySize(e)
		if n > MaxRequestBytes {
			return nil, fmt.Errorf("events: entry %d is %d bytes, over PutEvents' %d", i, n, MaxRequestBytes)
		}
		if call == nil || len(call.Entries) == MaxEntries || size+n > MaxRequestBytes {
			call, size = &eventbridge.PutEventsInput{}, 0
			calls = append(calls, call)
		}
		call.Entries, size = append(call.Entries, e), size+n
	}
	return calls, nil
}

// entrySize is an entry's size as EventBridge counts it towards a call's limit: the
// UTF-8 bytes of its source, detail-type, detail and resources, and 14 for a time.
func entrySize(e types.PutEventsRequestEntry) int {
	n := len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	for _, r := range e.Resources {
		n += len(r)
	}
	if e.Time != nil {
		n += timeBytes
	}
	return n
}
