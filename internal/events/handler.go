package events

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/ledger-dev/ledger/internal/items"
)

// Handler announces a DynamoDB stream batch on an event bus: the Lambda's handler, and
// what `ledger up --events` runs over the embedded store's writes. It is safe for
// concurrent use.
type Handler struct {
	pub    *Publisher
	bus    string
	logger *slog.Logger
	now    func() time.Time
}

// NewHandler returns a Handler publishing through pub on bus (a name or an ARN),
// logging to logger [slog.Default()].
func NewHandler(pub *Publisher, bus string, logger *slog.Logger) *Handler {
	return &Handler{pub: pub, bus: bus, logger: cmp.Or(logger, slog.Default()), now: time.Now}
}

// ErrNothingPublished is returned (wrapped) when EventBridge took no event of a batch
// that had some to announce: the invocation fails, which the errors alarm watches, and
// Lambda retries the whole batch.
var ErrNothingPublished = errors.New("events: EventBridge took no event of the batch")

// Handle announces a batch: the events of each record (FromRecord), in each account's
// order, published in calls of at most ten. The response names the first record not
// wholly announced (unreadable, or an event EventBridge did not take), by its sequence
// number: Lambda retries the batch from it, so a record is never skipped, and those
// after it are announced again, which subscribers drop by event_id. Records after an
// unreadable one are not published in this invocation: they come back anyway.
func (h *Handler) Handle(ctx context.Context, ev lambdaevents.DynamoDBEvent) (lambdaevents.DynamoDBEventResponse, error) {
	t0 := h.now()
	b := h.read(ev.Records)
	entries, owners := b.entries(h.bus, ev.Records)
	sent := h.pub.Publish(ctx, entries)
	for i, ok := range sent.Published {
		if !ok { // published in account order: the earliest record in the stream decides
			b.fail(owners[i], sent.Err)
		}
	}
	var resp lambdaevents.DynamoDBEventResponse
	if b.first >= 0 {
		resp.BatchItemFailures = []lambdaevents.DynamoDBBatchItemFailure{{ItemIdentifier: ev.Records[b.first].Change.SequenceNumber}}
	}
	h.log(ctx, ev.Records, b, sent, h.now().Sub(t0))
	if len(entries) > 0 && sent.published() == 0 {
		return resp, fmt.Errorf("%w: %w", ErrNothingPublished, sent.Err)
	}
	return resp, nil
}

// batch is what a batch's records announce: each record's events, up to the first
// record that cannot be announced (first, −1 for none) and why.
type batch struct {
	events [][]Event // by record
	first  int
	why    error
}

// fail marks record i not announced because of err, unless an earlier one is already.
func (b *batch) fail(i int, err error) {
	if b.first < 0 || i < b.first {
		b.first, b.why = i, err
	}
}

// read derives every record's events, stopping at the first record it cannot read.
func (h *Handler) read(recs []lambdaevents.DynamoDBEventRecord) *batch {
	b := &batch{events: make([][]Event, len(recs)), first: -1}
	for i, rec := range recs {
		evs, err := FromRecord(rec)
		if err != nil {
			b.fail(i, err)
			break
		}
		b.events[i] = evs
	}
	return b
}

// entries are the PutEvents entries of the records before the first that cannot be
// announced, in each account's order, and the record each entry announces. An event
// that cannot be encoded fails its record, and no entry after it is built.
func (b *batch) entries(bus string, recs []lambdaevents.DynamoDBEventRecord) ([]types.PutEventsRequestEntry, []int) {
	type owned struct {
		ev  Event
		rec int
	}
	var order []owned
	for i, evs := range b.events {
		if b.first >= 0 && i >= b.first {
			break
		}
		for _, ev := range evs {
			order = append(order, owned{ev, i})
		}
	}
	slices.SortStableFunc(order, func(x, y owned) int { return compare(x.ev.Detail, y.ev.Detail) })
	entries := make([]types.PutEventsRequestEntry, 0, len(order))
	owners := make([]int, 0, len(order))
	for _, o := range order {
		var resources []string
		if arn := TableARN(recs[o.rec]); arn != "" {
			resources = []string{arn}
		}
		e, err := Entry(o.ev, bus, resources)
		if err != nil {
			b.fail(o.rec, err)
			break
		}
		entries, owners = append(entries, e), append(owners, o.rec)
	}
	return entries, owners
}

// log writes the batch's one summary line, and when a record must come back, names it
// and why.
func (h *Handler) log(ctx context.Context, recs []lambdaevents.DynamoDBEventRecord, b *batch, sent Sent, d time.Duration) {
	attrs := []any{"records", len(recs), "events", len(sent.Published), "published", sent.published(),
		"calls", sent.Calls, "retried", sent.Retried, "duration_ms", float64(d.Microseconds()) / 1000}
	if b.first < 0 {
		h.logger.InfoContext(ctx, "batch announced", attrs...)
		return
	}
	rec := recs[b.first]
	h.logger.ErrorContext(ctx, "record not announced; the batch comes back from it", append(attrs,
		"sequence_number", rec.Change.SequenceNumber, "event_name", rec.EventName,
		"pk", key(rec, items.AttrPK), "sk", key(rec, items.AttrSK), "error", fmt.Sprint(b.why))...)
}
