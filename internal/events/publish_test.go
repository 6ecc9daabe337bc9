package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"

	"github.com/ledger-dev/ledger/internal/events"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// bus is a scripted EventBridge: answer decides, call by call (numbered from 1), which
// entries of a PutEvents it fails and with which error code ("" takes it), or fails the
// call whole. It records what each call carried and what it took, in order. moto
// cannot fail entries on request, so the publisher's retries are tested against this;
// the end-to-end test (cmd/ledger-events) runs them against moto through a proxy.
type bus struct {
	mu     sync.Mutex
	answer func(call int, details []string) (codes []string, err error)
	calls  [][]string
	taken  []string
	types  []string // the detail-type of each taken
}

func (b *bus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var details []string
	for _, e := range in.Entries {
		details = append(details, aws.ToString(e.Detail))
	}
	b.calls = append(b.calls, details)
	var codes []string
	var err error
	if b.answer != nil {
		codes, err = b.answer(len(b.calls), details)
	}
	if err != nil {
		return nil, err
	}
	out := &eventbridge.PutEventsOutput{}
	for i, d := range details {
		if i < len(codes) && codes[i] != "" {
			out.Entries = append(out.Entries, types.PutEventsResultEntry{ErrorCode: aws.String(codes[i]), ErrorMessage: aws.String("scripted")})
			out.FailedEntryCount++
			continue
		}
		b.taken, b.types = append(b.taken, d), append(b.types, aws.ToString(in.Entries[i].DetailType))
		out.Entries = append(out.Entries, types.PutEventsResultEntry{EventId: aws.String(fmt.Sprintf("eb-%d", len(b.taken)))})
	}
	return out, nil
}

// entries are n entries whose details are "0" … "n-1".
func entries(n int) []types.PutEventsRequestEntry {
	out := make([]types.PutEventsRequestEntry, n)
	for i := range out {
		out[i] = types.PutEventsRequestEntry{Source: aws.String("ledger"), DetailType: aws.String("movimiento"), Detail: aws.String(fmt.Sprint(i))}
	}
	return out
}

// fast retries without waiting long, as a test needs.
var fast = events.PublishOptions{MinBackoff: time.Microsecond, MaxBackoff: time.Millisecond}

// A call with some entries failed sends those again, and only those, in their order;
// every entry reaches the bus once.
func TestPartialFailuresRetryTheFailedEntriesOnly(t *testing.T) {
	b := &bus{answer: func(call int, details []string) ([]string, error) {
		if call == 1 {
			return []string{"", "", "ThrottlingException", "", "", "InternalFailure"}, nil
		}
		return nil, nil
	}}
	s := events.NewPublisher(b, fast).Publish(context.Background(), entries(13))
	if s.Err != nil || slices.Contains(s.Published, false) {
		t.Fatalf("sent = %+v", s)
	}
	want := [][]string{{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, {"2", "5"}, {"10", "11", "12"}}
	if !slices.EqualFunc(b.calls, want, slices.Equal) {
		t.Errorf("calls = %v, want %v", b.calls, want)
	}
	if s.Calls != 3 || s.Retried != 2 || len(b.taken) != 13 {
		t.Errorf("calls %d, retried %d, taken %d; want 3, 2, 13", s.Calls, s.Retried, len(b.taken))
	}
}

// A call that fails whole for a while (the service, throttling) is made again.
func TestFailedCallsAreMadeAgain(t *testing.T) {
	unavailable := &smithy.GenericAPIError{Code: "InternalException", Message: "scripted", Fault: smithy.FaultServer}
	b := &bus{answer: func(call int, _ []string) ([]string, error) {
		if call <= 2 {
			return nil, unavailable
		}
		return nil, nil
	}}
	s := events.NewPublisher(b, fast).Publish(context.Background(), entries(3))
	if s.Err != nil || slices.Contains(s.Published, false) || s.Calls != 3 || len(b.taken) != 3 {
		t.Errorf("sent = %+v, taken %v; want all three taken on the third call", s, b.taken)
	}
}

// Retries are bounded: entries that keep failing end the publication after MaxAttempts
// calls, unsent entries after them are not sent at all, and the reason is transient.
func TestRetriesAreBounded(t *testing.T) {
	b := &bus{answer: func(_ int, details []string) ([]string, error) {
		if strings.HasPrefix(details[0], "3:") { // the first entry of the second call, whenever it is sent
			return []string{"ThrottlingException"}, nil
		}
		return nil, nil
	}}
	opts := fast
	opts.MaxAttempts = 4
	s := events.NewPublisher(b, opts).Publish(context.Background(), entriesInCalls(t, 12, 3))
	if !errors.Is(s.Err, events.ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", s.Err)
	}
	wantPublished := []bool{true, true, true, false, true, true, false, false, false, false, false, false}
	if !slices.Equal(s.Published, wantPublished) {
		t.Errorf("published = %v, want %v", s.Published, wantPublished)
	}
	if s.Calls != 5 {
		t.Errorf("%d calls, want 5: the first, then the second and its three retries", s.Calls)
	}
}

// An entry refused for good is not retried: its error is ErrRefused.
func TestRefusedEntriesAreNotRetried(t *testing.T) {
	b := &bus{answer: func(int, []string) ([]string, error) { return []string{"", "NotAuthorizedForSourceException"}, nil }}
	s := events.NewPublisher(b, fast).Publish(context.Background(), entries(2))
	if !errors.Is(s.Err, events.ErrRefused) || s.Calls != 1 || !slices.Equal(s.Published, []bool{true, false}) {
		t.Errorf("sent = %+v, want the second entry refused after one call", s)
	}
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "scripted", Fault: smithy.FaultClient}
	b = &bus{answer: func(int, []string) ([]string, error) { return nil, denied }}
	if s := events.NewPublisher(b, fast).Publish(context.Background(), entries(2)); !errors.Is(s.Err, events.ErrRefused) || s.Calls != 1 {
		t.Errorf("access denied: sent = %+v, want one call, refused", s)
	}
}

// No call starts with less than the reserve left before the deadline: what is unsent
// is reported, not lost with a timed-out invocation.
func TestNoCallNearTheDeadline(t *testing.T) {
	b := &bus{}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	s := events.NewPublisher(b, events.PublishOptions{Reserve: time.Second}).Publish(ctx, entries(2))
	if s.Err == nil || s.Calls != 0 || len(b.calls) != 0 || slices.Contains(s.Published, true) {
		t.Errorf("sent = %+v with %d calls made; want none made and an error", s, len(b.calls))
	}
}

// entriesInCalls are n entries whose details are "0:" … "n-1:" and padding, large
// enough that PutEvents takes perCall of them in one call.
func entriesInCalls(t *testing.T, n, perCall int) []types.PutEventsRequestEntry {
	t.Helper()
	out := entries(n)
	pad := strings.Repeat(" ", events.MaxRequestBytes/perCall-100)
	for i := range out {
		out[i].Detail = aws.String(fmt.Sprintf("%d:%s", i, pad))
	}
	calls, err := events.Calls(out)
	if err != nil || len(calls[0].Entries) != perCall {
		t.Fatalf("%d entries a call, want %d (%v)", len(calls[0].Entries), perCall, err)
	}
	return out
}

// takenDetails are the details the bus took, in order, each checked against the
// contract with its detail-type.
func takenDetails(t *testing.T, b *bus) []events.Detail {
	t.Helper()
	schema := testenv.LoadEventSchema(t)
	out := make([]events.Detail, len(b.taken))
	for i, raw := range b.taken {
		schema.Check(t, b.types[i], []byte(raw))
		if err := json.Unmarshal([]byte(raw), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
