// Package consumer turns a batch of SQS messages into ledger outcomes and says which
// messages must come back. The Lambda (cmd/ledger-consumer) and the long-polling worker
// (`ledger consume`) share it, so both behave alike: records grouped by account,
// accounts processed concurrently with a bound, arrival order kept within an account,
// one record's failure never blocking another account, nothing dropped silently.
package consumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Applier applies deliveries and returns one result per delivery, in order.
// *ledger.Service implements it; so does the separate-table baseline.
type Applier interface {
	ApplyAll(ctx context.Context, entregas []ledger.Entrega) []ledger.Result
}

// Parker moves a message that can never succeed (malformed, invalid, a conflicting
// duplicate, another currency) to the dead-letter queue at once, with its reason.
type Parker interface {
	Park(ctx context.Context, msg events.SQSMessage, reason Reason) error
}

// Reason is why a message is parked: the outcome and the error, for whoever reads the
// dead-letter queue.
type Reason struct {
	Outcome ledger.Outcome
	Error   string
}

// Options tune a Handler. Zero values pick the defaults in brackets.
type Options struct {
	// Concurrency bounds the accounts processed at once [8]. One account's records are
	// always processed in arrival order by one goroutine.
	Concurrency int
	// Reserve is the time kept back before the invocation's deadline [1s]: no account is
	// started with less than this left, and work in flight is cut off Reserve/2 before
	// the deadline, so that its records are reported (and come back) instead of being
	// lost with a timed-out invocation.
	Reserve time.Duration
	// Parker parks permanent failures at once. Without one they are reported as
	// failures, and SQS moves them to the DLQ after maxReceiveCount receives.
	Parker Parker
	// Logger receives one line per record [slog.Default()].
	Logger *slog.Logger
	// Metrics receives one CloudWatch Embedded Metric Format document per batch [none].
	Metrics io.Writer
	// Strategy names the idempotency strategy, as a metric dimension ["transaction"].
	Strategy string
	// Now is the clock [time.Now].
	Now func() time.Time
}

// Handler processes SQS batches. It is safe for concurrent use.
type Handler struct {
	applier Applier
	opts    Options
}

// New returns a Handler applying through a.
func New(a Applier, opts Options) *Handler {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.Reserve <= 0 {
		opts.Reserve = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Strategy == "" {
		opts.Strategy = "transaction"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Handler{applier: a, opts: opts}
}

// record is one message's journey through a batch.
type record struct {
	msg      events.SQSMessage
	mov      movimiento.Movimiento
	result   ledger.Result
	duration time.Duration
	parked   bool
}

// ErrNothingProcessed is returned (wrapped) when no record of a batch could be processed
// for reasons outside the messages, such as an unreachable table: the invocation fails,
// which is what alarms watch, and SQS returns the whole batch.
var ErrNothingProcessed = errors.New("consumer: no record of the batch could be processed")

// Handle processes one batch. BatchItemFailures names exactly the messages that must
// come back: transient failures, records not started before the deadline, and permanent
// failures that could not be parked. The error is non-nil only with
// ErrNothingProcessed.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	recs := make([]record, len(ev.Records))
	groups := map[string][]int{}
	var order []string
	for i, msg := range ev.Records {
		recs[i].msg = msg
		t0 := h.opts.Now()
		m, err := movimiento.Parse([]byte(msg.Body))
		if err != nil {
			recs[i].result = ledger.Result{Outcome: ledger.Failed, Err: &ledger.PermanentError{Err: err}}
			recs[i].duration = h.opts.Now().Sub(t0)
			continue
		}
		recs[i].mov = m
		if _, ok := groups[m.Cuenta]; !ok {
			order = append(order, m.Cuenta)
		}
		groups[m.Cuenta] = append(groups[m.Cuenta], i)
	}

	h.applyGroups(ctx, recs, groups, order)
	h.park(ctx, recs)

	var resp events.SQSEventResponse
	for i := range recs {
		h.log(ctx, &recs[i])
		if comesBack(&recs[i]) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: recs[i].msg.MessageId})
		}
	}
	h.emit(recs)
	if err := nothingProcessed(recs); err != nil {
		return resp, err
	}
	return resp, nil
}

// applyGroups applies each account's records, accounts concurrently.
func (h *Handler) applyGroups(ctx context.Context, recs []record, groups map[string][]int, order []string) {
	work := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		work, cancel = context.WithDeadline(ctx, deadline.Add(-h.opts.Reserve/2))
		defer cancel()
	}
	sem := make(chan struct{}, h.opts.Concurrency)
	var wg sync.WaitGroup
	for _, c := range order {
		idx := groups[c]
		sem <- struct{}{}
		if !h.timeLeft(ctx) {
			<-sem
			for _, i := range idx {
				recs[i].result = ledger.Result{Outcome: ledger.Failed, Err: &ledger.TransientError{Err: errNotStarted}}
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			entregas := make([]ledger.Entrega, len(idx))
			for j, i := range idx {
				entregas[j] = ledger.Entrega{Mov: recs[i].mov, Origen: recs[i].msg.MessageId}
			}
			t0 := h.opts.Now()
			results := h.applier.ApplyAll(work, entregas)
			d := h.opts.Now().Sub(t0)
			for j, i := range idx {
				recs[i].result, recs[i].duration = results[j], d
			}
		}()
	}
	wg.Wait()
}

var errNotStarted = errors.New("consumer: not started, the invocation's deadline was near")

func (h *Handler) timeLeft(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) >= h.opts.Reserve
}

// park sends the permanent failures to the DLQ, when a Parker is configured.
func (h *Handler) park(ctx context.Context, recs []record) {
	if h.opts.Parker == nil {
		return
	}
	for i := range recs {
		r := &recs[i]
		if !permanent(r.result) {
			continue
		}
		reason := Reason{Outcome: r.result.Outcome, Error: r.result.Err.Error()}
		if err := h.opts.Parker.Park(ctx, r.msg, reason); err != nil {
			h.opts.Logger.ErrorContext(ctx, "park failed; the message will come back", "message_id", r.msg.MessageId, "error", err.Error())
			continue
		}
		r.parked = true
	}
}

func permanent(r ledger.Result) bool { return errors.Is(r.Err, ledger.ErrPermanent) }

// comesBack reports whether SQS must deliver the record again.
func comesBack(r *record) bool {
	return r.result.Retry() || (permanent(r.result) && !r.parked)
}

// nothingProcessed is ErrNothingProcessed when every record failed transiently for a
// reason outside the messages (not a rule such as insufficient funds).
func nothingProcessed(recs []record) error {
	if len(recs) == 0 {
		return nil
	}
	var insuf *cuenta.SaldoInsuficienteError
	for _, r := range recs {
		if !r.result.Retry() || errors.As(r.result.Err, &insuf) {
			return nil
		}
	}
	return fmt.Errorf("%w: %v", ErrNothingProcessed, recs[0].result.Err)
}
