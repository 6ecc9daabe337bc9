// Package consumer turns a batch of SQS messages into ledger outcomes and says which
// must come back. Every consumer (Lambda, worker, `ledger up`, demo, comparison) goes
// through Handler.Handle (Settle wraps it for receivers other than Lambda), so all
// group by account, keep order within a group and drop nothing silently.
package consumer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

// MaxBatch is SQS's limit of messages per receive, and so of records per batch.
const MaxBatch = 10

// FunctionTimeout is the deployed consumer's Lambda timeout (template.yaml): the
// deadline a batch gets where no Lambda gives one (ledger up's lines, the simulations).
// SimulatedVisibility is the visibility timeout the simulations give their queue, six
// times it, as AWS recommends for a Lambda's queue.
const (
	FunctionTimeout     = 30 * time.Second
	SimulatedVisibility = 6 * FunctionTimeout
)

// DefaultConcurrency is how many groups of accounts a handler processes at once
// (LEDGER_CONCURRENCY overrides it).
const DefaultConcurrency = 8

// Applier applies one group of deliveries (Groups) and returns one result per delivery,
// in order: the ledger (*store.Ledger), or a strategy it is compared against.
type Applier interface {
	Apply(ctx context.Context, group []store.Entrega) []store.Result
}

// Parker moves a message that can never succeed (malformed, invalid, a conflicting
// duplicate, another currency) to the dead-letter queue at once, with its reason.
type Parker interface {
	Park(ctx context.Context, msg events.SQSMessage, reason Reason) error
}

// Reason is why a message is parked, for whoever reads the dead-letter queue.
type Reason struct {
	Outcome store.Outcome
	Error   string
}

// Record is what became of one message of a batch. Mov is zero when the body was
// invalid.
type Record struct {
	Msg      events.SQSMessage
	Mov      movimiento.Movimiento
	Result   store.Result
	Duration time.Duration
	Action   Action
}

// Observer is told about every record once its batch is decided, in the batch's order.
// Batches handled concurrently call it concurrently.
type Observer func(Record)

// Options tune a Handler. Zero values pick the defaults in brackets.
type Options struct {
	// Concurrency bounds the groups of accounts processed at once [DefaultConcurrency].
	// One group's records are always processed in arrival order by one goroutine.
	Concurrency int
	// Reserve is the time kept back before the invocation's deadline [1s]: no group
	// starts with less left, work in flight is cut off Reserve/2 before it and parking
	// Reserve/4 before it, so its records are reported (and come back) rather than lost
	// with a timed-out invocation.
	Reserve time.Duration
	// Parker parks permanent failures at once [none: they come back until SQS moves
	// them to the DLQ after maxReceiveCount].
	Parker Parker
	// Logger receives one line per record [slog.Default()].
	Logger *slog.Logger
	// Metrics receives one CloudWatch Embedded Metric Format document per batch [none].
	Metrics io.Writer
	// Strategy names the idempotency strategy, as a metric dimension [Transaction].
	Strategy string
	// Function names the Lambda function, as a second dimension set beside Strategy, so
	// that two stacks in one account and region can be told apart [none: Strategy only].
	Function string
	// Observer is told what became of every record [none].
	Observer Observer
	// Now is the clock [time.Now].
	Now func() time.Time
}

// Transaction names this ledger's strategy in the metrics' Strategy dimension: the
// movement's record is written in its account's transaction.
const Transaction = "transaction"

// Handler processes SQS batches. It is safe for concurrent use.
type Handler struct {
	applier Applier
	opts    Options
}

// New returns a Handler applying through a.
func New(a Applier, opts Options) *Handler {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Reserve <= 0 {
		opts.Reserve = time.Second
	}
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	opts.Strategy = cmp.Or(opts.Strategy, Transaction)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Handler{applier: a, opts: opts}
}

// ErrNothingProcessed is returned (wrapped) when no record of a batch could be processed
// for reasons outside the messages, such as an unreachable table: the invocation fails,
// which alarms watch, and SQS returns the whole batch.
var ErrNothingProcessed = errors.New("consumer: no record of the batch could be processed")

// Settle runs a batch through Handle and returns the ids of the messages that must come
// back: the item failures, or all of them when the batch failed as a whole. The rest
// may be deleted.
func (h *Handler) Settle(ctx context.Context, msgs []events.SQSMessage) map[string]bool {
	resp, err := h.Handle(ctx, events.SQSEvent{Records: msgs})
	back := make(map[string]bool, len(resp.BatchItemFailures))
	for _, f := range resp.BatchItemFailures {
		back[f.ItemIdentifier] = true
	}
	if err != nil {
		for _, m := range msgs {
			back[m.MessageId] = true
		}
	}
	return back
}

// Handle processes one batch: it is the Lambda's handler. It reads every body, applies
// the movements a group of accounts at a time (Groups; groups concurrently, each in
// arrival order), decides what becomes of each message (parking permanent failures) and
// logs it. BatchItemFailures names the messages that must come back: transient
// failures, records not started before the deadline, and permanent failures that could
// not be parked. The error is non-nil only with ErrNothingProcessed.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	recs, entregas, valid := h.Deliveries(ctx, ev.Records)
	work, cancel := h.cutoff(ctx, h.opts.Reserve/2)
	defer cancel()
	var g errgroup.Group
	g.SetLimit(h.opts.Concurrency)
	for _, group := range Groups(entregas) {
		g.Go(func() error {
			batch := make([]store.Entrega, len(group))
			for k, j := range group {
				batch[k] = entregas[j]
			}
			defer h.recovered(ctx, func(err error) { h.settle(recs, valid, group, nil, store.Transient(err), 0) })
			if !h.timeLeft(ctx) {
				h.settle(recs, valid, group, nil, store.Transient(errNotStarted), 0)
				return nil
			}
			t0 := h.opts.Now()
			results := h.applier.Apply(work, batch)
			h.settle(recs, valid, group, results, nil, h.opts.Now().Sub(t0))
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through recs, never by error
	h.decideAll(ctx, recs)
	return h.respond(ctx, recs), nothingProcessed(recs)
}

// Deliveries reads a batch's messages as Handle does before it applies any: recs has
// one Record per message; entregas are the deliveries Handle applies, in arrival order,
// each in its record's FIFO message group, and valid maps each to its record. A body
// that is not a movement, or a message with a reserved attribute, fails for good; the
// valid records behind it in its message group fail untried (notAttempted).
// Groups(entregas) are the groups Handle applies concurrently.
func (h *Handler) Deliveries(ctx context.Context, msgs []events.SQSMessage) (recs []Record, entregas []store.Entrega, valid []int) {
	recs = make([]Record, len(msgs))
	stopped := map[string]bool{} // message groups with an invalid body so far
	for i, msg := range msgs {
		recs[i].Msg = msg
		grupo := messageGroup(msg)
		t0 := h.opts.Now()
		m, env, err := h.read(ctx, msg.Body)
		if name := reserved(msg); name != "" {
			err = fmt.Errorf("%w %s: only the ledger sets ledger.* attributes; send the movement without it", ErrReservedAttribute, name)
		}
		switch {
		case err != nil:
			recs[i].Result = store.Result{Outcome: store.Failed, Err: store.Permanent(err)}
			recs[i].Duration = h.opts.Now().Sub(t0)
			if grupo != "" {
				stopped[grupo] = true
			}
		case stopped[grupo]:
			recs[i].Mov, recs[i].Result = m, notAttempted(grupo)
		default:
			recs[i].Mov = m
			e := entrega(msg, m, env)
			e.Grupo = grupo
			entregas, valid = append(entregas, e), append(valid, i)
		}
	}
	return recs, entregas, valid
}

// settle records a group's results, or err for each of them, and how long they took.
func (h *Handler) settle(recs []Record, valid, group []int, results []store.Result, err error, d time.Duration) {
	for k, j := range group {
		r := &recs[valid[j]]
		if results != nil {
			r.Result = results[k]
		} else {
			r.Result = store.Result{Outcome: store.Failed, Err: err}
		}
		r.Duration = d
	}
}

// respond logs every record, tells the observer, emits the batch's metrics, and names
// the messages that must come back, each once (SQS may deliver one twice in a batch).
func (h *Handler) respond(ctx context.Context, recs []Record) events.SQSEventResponse {
	var resp events.SQSEventResponse
	back := map[string]bool{}
	for i := range recs {
		r := &recs[i]
		h.log(ctx, r)
		if (r.Action == Retry || r.Action == RetryToDLQ) && !back[r.Msg.MessageId] {
			back[r.Msg.MessageId] = true
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.Msg.MessageId})
		}
		if h.opts.Observer != nil {
			h.opts.Observer(*r)
		}
	}
	h.emit(recs)
	return resp
}

// ErrReservedAttribute refuses, for good, a message a producer gave an attribute of
// ReservedPrefix.
var ErrReservedAttribute = errors.New("consumer: reserved attribute")

// reserved is the first attribute of msg, by name, that only the ledger may set, or "".
func reserved(msg events.SQSMessage) string {
	for _, name := range slices.Sorted(maps.Keys(msg.MessageAttributes)) {
		if strings.HasPrefix(name, ReservedPrefix) {
			return name
		}
	}
	return ""
}

// read is movimiento.ParseEnvelope, a panic turned into the body's own failure: a body
// that crashes the parser would crash it on every delivery, so it is parked.
func (h *Handler) read(ctx context.Context, body string) (m movimiento.Movimiento, env movimiento.Envelope, err error) {
	defer h.recovered(ctx, func(p error) { err = p })
	return movimiento.ParseEnvelope([]byte(body))
}

// MaxEsperaSNS bounds how much earlier than SQS an SNS notification's Timestamp may
// say the topic took it and still count as when it was sent: SNS retries delivery to a
// queue that refuses or throttles it, but an envelope is also what any sender may
// write, so a claim beyond the bound is ignored.
const MaxEsperaSNS = time.Hour

// entrega is the delivery of m by msg, with where it came from as SQS states it (its
// message id, its sender, when it took it) and what m's envelope (env) claims. It was
// sent when SQS took it, or when its SNS envelope says the topic did, if that is
// earlier by at most MaxEsperaSNS.
func entrega(msg events.SQSMessage, m movimiento.Movimiento, env movimiento.Envelope) store.Entrega {
	e := store.Entrega{Mov: m, Origen: msg.MessageId, Remitente: msg.Attributes["SenderId"]}
	if env.Kind != "" {
		e.Via = env.Kind + ":" + env.Sender
	}
	ms, err := strconv.ParseInt(msg.Attributes["SentTimestamp"], 10, 64)
	if err != nil {
		return e // unknown: judged when applied
	}
	e.Enviado = time.UnixMilli(ms).UTC()
	if early := e.Enviado.Sub(env.Sent); !env.Sent.IsZero() && early > 0 && early <= MaxEsperaSNS {
		e.Enviado = env.Sent.UTC()
	}
	return e
}

// cutoff is ctx ended reserve before its deadline, if it has one.
func (h *Handler) cutoff(ctx context.Context, reserve time.Duration) (context.Context, context.CancelFunc) {
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, deadline.Add(-reserve))
	}
	return ctx, func() {}
}

// decideAll decides what becomes of each record, parking permanent failures
// concurrently, each park cut off Reserve/4 before the invocation's deadline: one that
// cannot finish by then comes back rather than time the invocation out. A permanent
// failure SQS delivered twice in the batch (one message id) is parked once: its later
// copies take the first's action.
func (h *Handler) decideAll(ctx context.Context, recs []Record) {
	ctx, cancel := h.cutoff(ctx, h.opts.Reserve/4)
	defer cancel()
	firstPermanent := map[string]int{} // message id → its first permanent failure's record
	copies := map[int]int{}            // a later copy's record → the first's
	var g errgroup.Group
	g.SetLimit(h.opts.Concurrency)
	for i := range recs {
		if permanent(recs[i].Result) {
			id := recs[i].Msg.MessageId
			if j, seen := firstPermanent[id]; seen {
				copies[i] = j
				continue
			}
			firstPermanent[id] = i
		}
		g.Go(func() error {
			recs[i].Action = h.decide(ctx, recs[i])
			return nil
		})
	}
	_ = g.Wait() // decide reports through recs
	for i, j := range copies {
		recs[i].Action = recs[j].Action
	}
}

var errNotStarted = errors.New("consumer: not started, the invocation's deadline was near")

func (h *Handler) timeLeft(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) >= h.opts.Reserve
}

// park sends r's message to the DLQ with its reason, when a Parker is configured, and
// reports whether it did.
func (h *Handler) park(ctx context.Context, r Record) bool {
	if h.opts.Parker == nil {
		return false
	}
	reason := Reason{Outcome: r.Result.Outcome, Error: r.Result.Err.Error()}
	defer h.recovered(ctx, func(error) {}) // a park that panicked returns false: not parked
	if err := h.opts.Parker.Park(ctx, r.Msg, reason); err != nil {
		h.opts.Logger.ErrorContext(ctx, "park failed; the message will come back", "message_id", r.Msg.MessageId, "error", err.Error())
		return false
	}
	return true
}

// recovered, deferred in the work of one message or group, turns a panic there into
// fail's failure of its own records, logged with the stack, rather than the end of the
// process, which would bring back the whole batch and spend every message's receive
// count.
func (h *Handler) recovered(ctx context.Context, fail func(error)) {
	if p := recover(); p != nil {
		err := fmt.Errorf("consumer: panic: %v", p)
		h.opts.Logger.ErrorContext(ctx, "recovered a panic; only its own messages fail", "error", err.Error(), "stack", string(debug.Stack()))
		fail(err)
	}
}

func permanent(r store.Result) bool { return errors.Is(r.Err, store.ErrPermanent) }

// nothingProcessed is ErrNothingProcessed when every record failed transiently for a
// reason outside the messages: not an account rule a later delivery may pass (a debit
// an account refuses, a movement waiting for another, a capture of a hold another
// writer settled or let lapse), which says nothing of the service's health.
func nothingProcessed(recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	var rule *cuenta.RuleError
	for _, r := range recs {
		if !r.Result.Retry() || errors.As(r.Result.Err, &rule) {
			return nil
		}
	}
	return fmt.Errorf("%w: %v", ErrNothingProcessed, recs[0].Result.Err)
}
