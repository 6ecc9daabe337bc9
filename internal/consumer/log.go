package consumer

import (
	"context"
	"log/slog"
	"strconv"
)

// Action is what happens to a message after its batch: the consumer's promise to the
// person reading the log.
type Action string

// The actions a record can end in.
const (
	Delete     Action = "delete"       // done: applied, duplicate or rejected
	Retry      Action = "retry"        // comes back: a transient failure
	Parked     Action = "parked"       // sent to the DLQ now, with its reason
	RetryToDLQ Action = "retry-to-dlq" // permanent, but parking was not possible: comes back until maxReceiveCount moves it to the DLQ
)

// decide is what happens to r's message. A permanent failure is parked first, if it
// can be.
func (h *Handler) decide(ctx context.Context, r Record) Action {
	switch {
	case permanent(r.Result) && h.park(ctx, r):
		return Parked
	case permanent(r.Result):
		return RetryToDLQ
	case r.Result.Retry():
		return Retry
	}
	return Delete
}

// log writes the record's one structured line: message id, cuenta, id, outcome, the
// transactions this delivery took, how many times SQS has delivered the message (when
// it says), duration, what happens next, and the reason of a rejection or failure,
// without amounts or balances (withheld). The account id is in its own field, which the
// log group's data-protection policy masks.
func (h *Handler) log(ctx context.Context, r *Record) {
	attrs := []slog.Attr{
		slog.String("message_id", r.Msg.MessageId),
		slog.String("cuenta", r.Mov.Cuenta),
		slog.String("id", r.Mov.ID),
		slog.String("outcome", string(r.Result.Outcome)),
		slog.Int("transactions", r.Result.Attempts),
		slog.Float64("duration_ms", float64(r.Duration.Microseconds())/1000),
		slog.String("action", string(r.Action)),
	}
	if n, err := strconv.Atoi(r.Msg.Attributes["ApproximateReceiveCount"]); err == nil { // this delivery included
		attrs = append(attrs, slog.Int("receives", n))
	}
	if r.Result.Estado != "" {
		attrs = append(attrs, slog.String("estado", string(r.Result.Estado)))
	}
	if r.Result.Seq > 0 {
		attrs = append(attrs, slog.Int64("seq", r.Result.Seq))
	}
	if r.Result.Rechazo != "" { // why a rejected movement was recorded rejected
		attrs = append(attrs, slog.String("rule", string(r.Result.Rechazo)))
	}
	level := slog.LevelInfo
	if r.Result.Err != nil {
		attrs = append(attrs, slog.String("error", withheld(r.Result.Err)))
		level = slog.LevelWarn
		if permanent(r.Result) {
			level = slog.LevelError
		}
	}
	h.opts.Logger.LogAttrs(ctx, level, "movement", attrs...)
}
