// Package worker consumes an SQS queue outside Lambda with the consumer's Handler (ledger
// consume, ledger up): long polling, delete on success, a short visibility timeout on
// failure, graceful shutdown; and counts what became of each message (Tally).
package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/consumer"
)

// SQSAPI is the part of the SQS API the worker uses.
type SQSAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, opts ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// The worker's defaults: DefaultPollers receive loops, each long-polling MaxWait (SQS's
// maximum), a message that must come back made visible again after DefaultRetryDelay.
const (
	DefaultPollers    = 2
	MaxWait           = 20 * time.Second
	DefaultRetryDelay = 5 * time.Second
)

// Options tune a Worker. Zero values pick the defaults in brackets.
type Options struct {
	// QueueURL is the queue to consume (required).
	QueueURL string
	// Pollers is the number of concurrent receive loops [2], each with at most one batch
	// of 10 messages in flight.
	Pollers int
	// WaitTime is the long-poll wait per receive [20s, SQS's maximum, which it is cut to].
	WaitTime time.Duration
	// RetryDelay is the visibility timeout given back to a message that must come back,
	// rather than the queue's full one [5s].
	RetryDelay time.Duration
	// Logger receives the worker's own lines [slog.Default()].
	Logger *slog.Logger
	// Drain stops each receive loop at its first empty receive; messages invisible then
	// (being retried) stay queued. A drain also gives up, failing, after
	// MaxDrainReceiveFailures receives in a row fail: a run meant to end must not retry
	// a lost endpoint, a deleted queue or refused credentials forever.
	Drain bool
}

// Worker consumes a queue outside Lambda with the consumer's Handler: long polling, delete on
// success, a short visibility timeout on failure, graceful shutdown.
type Worker struct {
	sqs      SQSAPI
	handler  *consumer.Handler
	opts     Options
	worked   atomic.Bool  // a batch was handled since the queue last said it was caught up
	inFlight atomic.Int32 // batches received and not yet acknowledged, over every poller
}

// New returns a Worker feeding q's messages to h.
func New(q SQSAPI, h *consumer.Handler, opts Options) (*Worker, error) {
	if opts.QueueURL == "" {
		return nil, errors.New("worker: the worker needs a queue URL")
	}
	if opts.Pollers <= 0 {
		opts.Pollers = DefaultPollers
	}
	if opts.WaitTime <= 0 || opts.WaitTime > MaxWait { // SQS refuses a longer wait on every receive
		opts.WaitTime = MaxWait
	}
	if opts.RetryDelay <= 0 {
		opts.RetryDelay = DefaultRetryDelay
	}
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	return &Worker{sqs: q, handler: h, opts: opts}, nil
}

// MaxDrainReceiveFailures is how many receives in a row a drain lets fail, RetryDelay
// apart, before it gives up: long enough to ride out an endpoint's restart.
const MaxDrainReceiveFailures = 5

// MinVisibility is the shortest visibility timeout the worker consumes under: a batch's
// deadline is the queue's visibility timeout, and the handler keeps Options.Reserve of
// it (1 s by default) back, so a shorter one would leave no time to apply anything.
const MinVisibility = 5 * time.Second

// ErrUnsafeQueue is matched by Run's refusal of a queue it cannot consume without
// losing a message or looping on one forever.
var ErrUnsafeQueue = errors.New("worker: the queue cannot be consumed safely")

// Run consumes until ctx is cancelled, then stops receiving, finishes the batches in
// flight (each bounded by the queue's visibility timeout) and returns. It refuses
// (ErrUnsafeQueue) a visibility timeout under MinVisibility, and a queue without a
// redrive policy: a message that keeps failing would come back forever, whether the
// handler parks permanent failures or not.
func (w *Worker) Run(ctx context.Context) error {
	arn, visibility, err := w.queueAttributes(ctx)
	if err != nil {
		return err
	}
	var g errgroup.Group
	for range w.opts.Pollers {
		g.Go(func() error { return w.poll(ctx, arn, visibility) })
	}
	return g.Wait()
}

// Check reads the queue's attributes and refuses it as Run would, without receiving.
func (w *Worker) Check(ctx context.Context) error {
	_, _, err := w.queueAttributes(ctx)
	return err
}

func (w *Worker) queueAttributes(ctx context.Context) (arn string, visibility time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, ackTimeout)
	defer cancel()
	out, err := w.sqs.GetQueueAttributes(ctx, attributesInput(w.opts.QueueURL))
	if err != nil {
		return "", 0, fmt.Errorf("worker: read the queue's attributes: %w", err)
	}
	vt := out.Attributes[string(types.QueueAttributeNameVisibilityTimeout)]
	secs, err := strconv.Atoi(vt)
	if err != nil || secs <= 0 {
		return "", 0, fmt.Errorf("worker: queue visibility timeout %q is unusable", vt)
	}
	visibility = time.Duration(secs) * time.Second
	switch {
	case visibility < MinVisibility:
		return "", 0, fmt.Errorf("%w: its visibility timeout is %v, under %v: no batch would have time to apply", ErrUnsafeQueue, visibility, MinVisibility)
	case out.Attributes[string(types.QueueAttributeNameRedrivePolicy)] == "":
		// A DLQ given takes only permanent failures: a debit waiting for funds, or a park
		// that fails, would still come back forever.
		return "", 0, fmt.Errorf("%w: it has no redrive policy: a message that keeps failing would come back forever; give it a DLQ and a maxReceiveCount", ErrUnsafeQueue)
	}
	return out.Attributes[string(types.QueueAttributeNameQueueArn)], visibility, nil
}

// poll is one receive loop until ctx is cancelled. A batch already received is finished
// under its own deadline (the visibility timeout), so a shutdown never abandons it.
func (w *Worker) poll(ctx context.Context, arn string, visibility time.Duration) error {
	failures := 0 // receives in a row that failed
	for ctx.Err() == nil {
		receiveCtx, cancel := context.WithTimeout(ctx, w.opts.WaitTime+receiveMargin)
		out, err := w.sqs.ReceiveMessage(receiveCtx, receiveInput(w.opts.QueueURL, w.opts.WaitTime))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if failures++; w.opts.Drain && failures == MaxDrainReceiveFailures {
				return fmt.Errorf("worker: receive from %s failed %d times in a row: %w", w.opts.QueueURL, failures, err)
			}
			w.opts.Logger.WarnContext(ctx, "receive failed; retrying", "queue", w.opts.QueueURL, "error", err.Error())
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(w.opts.RetryDelay):
			}
			continue
		}
		failures = 0
		if len(out.Messages) == 0 {
			if w.opts.Drain {
				return nil
			}
			// Once per lull, and only when no poller still has a batch: an operator
			// waiting for the backlog to be handled can look now.
			if w.inFlight.Load() == 0 && w.worked.Swap(false) {
				w.opts.Logger.InfoContext(ctx, "the queue answered empty; waiting for more (messages handed back come back after their retry delay)", "queue", w.opts.QueueURL)
			}
			continue
		}
		w.inFlight.Add(1)
		batchCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), visibility)
		w.process(batchCtx, arn, out.Messages)
		cancel()
		w.worked.Store(true) // before the batch stops counting, so its end is seen
		w.inFlight.Add(-1)
	}
	return nil
}

// process runs one batch through the handler, then deletes what is done and hands back
// what must come back.
func (w *Worker) process(ctx context.Context, arn string, msgs []types.Message) {
	batch := make([]events.SQSMessage, len(msgs))
	for i, m := range msgs {
		batch[i] = toEvent(m, arn)
	}
	back := w.handler.Settle(ctx, batch)
	var done, retry []types.Message
	for _, m := range msgs {
		if back[aws.ToString(m.MessageId)] {
			retry = append(retry, m)
		} else {
			done = append(done, m)
		}
	}
	// Acknowledgements must not die with the batch's deadline.
	ackCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	w.delete(ackCtx, done)
	w.release(ackCtx, retry)
}

// ackTimeout bounds the delete and visibility calls that acknowledge one batch, and
// the read of the queue's attributes at start, the SDK's retries included.
const ackTimeout = 30 * time.Second

// receiveMargin is how long past its long-poll wait a receive may take before the
// endpoint counts as hung, and the receive is retried. It is generous: a receive given
// up on may have taken messages, which then wait out their visibility timeout.
const receiveMargin = time.Minute

func (w *Worker) delete(ctx context.Context, msgs []types.Message) {
	if len(msgs) == 0 {
		return
	}
	out, err := w.sqs.DeleteMessageBatch(ctx, deleteInput(w.opts.QueueURL, msgs))
	if err != nil {
		w.opts.Logger.WarnContext(ctx, "delete failed; the messages will be redelivered as duplicates", "count", len(msgs), "error", err.Error())
		return
	}
	for _, f := range out.Failed {
		w.opts.Logger.WarnContext(ctx, "delete failed for one message; it will be redelivered as a duplicate", "entry", aws.ToString(f.Id), "code", aws.ToString(f.Code))
	}
}

func (w *Worker) release(ctx context.Context, msgs []types.Message) {
	if len(msgs) == 0 {
		return
	}
	out, err := w.sqs.ChangeMessageVisibilityBatch(ctx, releaseInput(w.opts.QueueURL, msgs, w.opts.RetryDelay))
	if err != nil {
		w.opts.Logger.WarnContext(ctx, "could not shorten the visibility timeout; the messages come back after the queue's", "count", len(msgs), "error", err.Error())
		return
	}
	for _, f := range out.Failed {
		w.opts.Logger.WarnContext(ctx, "could not shorten the visibility timeout of one message; it comes back after the queue's",
			"entry", aws.ToString(f.Id), "code", aws.ToString(f.Code), "reason", aws.ToString(f.Message))
	}
}

// toEvent converts a received message into the shape Lambda hands the handler.
func toEvent(m types.Message, arn string) events.SQSMessage {
	ev := events.SQSMessage{
		MessageId:         aws.ToString(m.MessageId),
		ReceiptHandle:     aws.ToString(m.ReceiptHandle),
		Body:              aws.ToString(m.Body),
		Md5OfBody:         aws.ToString(m.MD5OfBody),
		Attributes:        m.Attributes,
		MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSource:       "aws:sqs",
		EventSourceARN:    arn,
	}
	for name, a := range m.MessageAttributes {
		ev.MessageAttributes[name] = events.SQSMessageAttribute{DataType: aws.ToString(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
	}
	return ev
}
