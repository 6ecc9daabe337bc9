package events

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

// PutEventsAPI is the one EventBridge call the publisher makes (*eventbridge.Client).
type PutEventsAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// PublishOptions tune a Publisher. Zero values pick the defaults in brackets.
type PublishOptions struct {
	// MaxAttempts bounds the calls one request takes, its first included [5]: the
	// entries EventBridge failed are sent again, and only those, until none is left or
	// the attempts are spent.
	MaxAttempts int
	// MinBackoff and MaxBackoff bound the full-jitter wait before each retry, doubled
	// from MinBackoff up to MaxBackoff [20ms, 1s].
	MinBackoff, MaxBackoff time.Duration
	// Reserve is the time kept back before the invocation's deadline [1s]: no call
	// starts with less left, and a call in flight is cut off Reserve/2 before it, so
	// the handler can still answer which records must come back.
	Reserve time.Duration
}

// Publisher sends entries to EventBridge in their order. It is safe for concurrent use.
type Publisher struct {
	client PutEventsAPI
	opts   PublishOptions
}

// NewPublisher returns a Publisher calling client.
func NewPublisher(client PutEventsAPI, opts PublishOptions) *Publisher {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 5
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 20 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = time.Second
	}
	if opts.Reserve <= 0 {
		opts.Reserve = time.Second
	}
	return &Publisher{client: client, opts: opts}
}

// Sent is what Publish did. Published reports, by entry, whether it reached the bus;
// Calls counts the PutEvents calls made and Retried the entries sent again. Err is why
// the first entry that did not reach the bus failed (ErrUnavailable or ErrRefused), or
// nil when all did.
type Sent struct {
	Published []bool
	Calls     int
	Retried   int
	Err       error
}

// published counts the entries that reached the bus.
func (s Sent) published() int {
	n := 0
	for _, ok := range s.Published {
		if ok {
			n++
		}
	}
	return n
}

// errDeadline is the failure of entries left unsent near the invocation's deadline.
var errDeadline = errors.New("events: not sent, the invocation's deadline was near")

// Publish sends entries in order, in the calls Calls builds, one call at a time. A
// call's failed entries are sent again (only they, in their order) with a full-jitter
// backoff, up to MaxAttempts calls and within ctx's deadline. Once a call still has
// entries failed, Publish stops: the entries after them are not sent, as their records
// come back anyway and sending them now would only repeat them.
func (p *Publisher) Publish(ctx context.Context, entries []types.PutEventsRequestEntry) Sent {
	s := Sent{Published: make([]bool, len(entries))}
	calls, err := Calls(entries)
	if err != nil {
		s.Err = errors.Join(ErrRefused, err)
		return s
	}
	first := 0 // the index in entries of the call's first entry
	for _, call := range calls {
		if s.Err = p.send(ctx, call.Entries, first, &s); s.Err != nil {
			return s
		}
		first += len(call.Entries)
	}
	return s
}

// send makes one request of entries (entries[i] is Published[first+i]) and retries
// its failed entries, marking each that reached the bus. It returns why the first
// failed entry left failed, or nil.
func (p *Publisher) send(ctx context.Context, entries []types.PutEventsRequestEntry, first int, s *Sent) error {
	pending := make([]int, len(entries)) // indices into entries still to send
	for i := range pending {
		pending[i] = i
	}
	for attempt := 1; ; attempt++ {
		if !p.timeLeft(ctx) {
			return errDeadline
		}
		in := &eventbridge.PutEventsInput{Entries: make([]types.PutEventsRequestEntry, len(pending))}
		for k, i := range pending {
			in.Entries[k] = entries[i]
		}
		s.Calls++
		failed, why := p.call(ctx, in)
		var retry []int
		var refused error
		for k, i := range pending {
			switch {
			case failed[k] == nil:
				s.Published[first+i] = true
			case errors.Is(failed[k], ErrUnavailable):
				retry = append(retry, i)
			default:
				refused = cmp.Or(refused, failed[k])
			}
		}
		switch {
		case refused != nil:
			return refused // refused for good: no retry helps
		case len(retry) == 0:
			return nil
		case attempt == p.opts.MaxAttempts:
			return why
		}
		s.Retried += len(retry)
		pending = retry
		if err := p.backoff(ctx, attempt); err != nil {
			return why
		}
	}
}

// call makes one PutEvents call of in and returns, by entry, why it failed (nil for an
// entry that reached the bus), and the first of those reasons. A call failed as a
// whole fails every entry; so does an answer that does not account for each entry.
func (p *Publisher) call(ctx context.Context, in *eventbridge.PutEventsInput) ([]error, error) {
	callCtx, cancel := context.WithCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		callCtx, cancel = context.WithDeadline(ctx, deadline.Add(-p.opts.Reserve/2))
	}
	defer cancel()
	out, err := p.client.PutEvents(callCtx, in)
	if err == nil && len(out.Entries) != len(in.Entries) {
		err = errors.New("events: PutEvents answered for another number of entries")
	}
	failed := make([]error, len(in.Entries))
	if err != nil {
		err = callError(err)
		for k := range failed {
			failed[k] = err
		}
		return failed, err
	}
	var first error
	for k, e := range out.Entries {
		if e.ErrorCode == nil && e.EventId != nil {
			continue
		}
		failed[k] = entryError(aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
		first = cmp.Or(first, failed[k])
	}
	return failed, first
}

// backoff waits before retry attempt+1: a full-jitter delay up to MinBackoff doubled
// attempt−1 times, at most MaxBackoff, or until ctx ends (its error).
func (p *Publisher) backoff(ctx context.Context, attempt int) error {
	ceiling := min(p.opts.MaxBackoff, p.opts.MinBackoff<<min(attempt-1, 20))
	t := time.NewTimer(rand.N(ceiling) + 1)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// timeLeft reports whether a call may start: ctx is live with at least Reserve before
// its deadline, if it has one.
func (p *Publisher) timeLeft(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) >= p.opts.Reserve
}
