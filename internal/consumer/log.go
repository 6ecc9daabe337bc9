package consumer

import (
	"context"
	"log/slog"
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

func action(r *record) Action {
	switch {
	case r.parked:
		return Parked
	case permanent(r.result):
		return RetryToDLQ
	case r.result.Retry():
		return Retry
	}
	return Delete
}

// log writes the record's one structured line: message id, cuenta, id, outcome,
// attempts, duration, and what happens next.
func (h *Handler) log(ctx context.Context, r *record) {
	attrs := []slog.Attr{
		slog.String("message_id", r.msg.MessageId),
		slog.String("cuenta", r.mov.Cuenta),
		slog.String("id", r.mov.ID),
		slog.String("outcome", string(r.result.Outcome)),
		slog.Int("attempts", r.result.Attempts),
		slog.Float64("duration_ms", float64(r.duration.Microseconds())/1000),
		slog.String("action", string(action(r))),
	}
	if r.result.Estado != "" {
		attrs = append(attrs, slog.String("estado", string(r.result.Estado)))
	}
	if r.result.Seq > 0 {
		attrs = append(attrs, slog.Int64("seq", r.result.Seq))
	}
	level := slog.LevelInfo
	if r.result.Err != nil {
		attrs = append(attrs, slog.String("error", r.result.Err.Error()))
		level = slog.LevelWarn
		if permanent(r.result) {
			level = slog.LevelError
		}
	}
	h.opts.Logger.LogAttrs(ctx, level, "movement", attrs...)
}
