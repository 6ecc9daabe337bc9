package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/ledger-dev/ledger/internal/events"
	"github.com/ledger-dev/ledger/internal/sim"
)

// The events of ledger up: the embedded store keeps a stream of its writes
// (sim.StartStreamingDynamoDB), which announce hands to the events Lambda's handler,
// whose PutEvents calls land in --events' file instead of on a bus. localBus names the
// bus the entries would go to; streamBatch is the stream batch, as the stack's mapping
// takes by default; announceDrain bounds the last batches announced once up stops.
const (
	localBus      = "ledger-local"
	streamBatch   = 100
	announceDrain = 5 * time.Second
)

// eventsFile is --events' file: each event one JSON line, as an EventBridge rule's
// target receives it. It stands where EventBridge stands in AWS: it implements the
// one call the publisher makes.
type eventsFile struct {
	mu    sync.Mutex
	f     *os.File
	count int
}

// openEventsFile creates (or empties) the file at path, before any long work.
func openEventsFile(path string) (*eventsFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &eventsFile{f: f}, nil
}

// envelope is an event as a rule's target receives it; detail is the entry's, as is.
type envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Time       string          `json:"time"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// PutEvents writes each entry as a line, with an id of its own as EventBridge gives
// one, and answers as EventBridge does. A write that fails fails the call whole, and
// the publisher sends it again.
func (e *eventsFile) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w := bufio.NewWriter(e.f)
	out := &eventbridge.PutEventsOutput{}
	for _, entry := range in.Entries {
		env := envelope{Version: "0", ID: eventBridgeID(), DetailType: aws.ToString(entry.DetailType), Source: aws.ToString(entry.Source),
			Time: aws.ToTime(entry.Time).UTC().Format(time.RFC3339), Resources: entry.Resources, Detail: json.RawMessage(aws.ToString(entry.Detail))}
		if env.Resources == nil {
			env.Resources = []string{}
		}
		line, err := json.Marshal(env)
		if err != nil {
			return nil, fmt.Errorf("--events: %w", err)
		}
		_, _ = w.Write(append(line, '\n'))
		out.Entries = append(out.Entries, types.PutEventsResultEntry{EventId: aws.String(env.ID)})
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("--events: %w", err)
	}
	e.count += len(in.Entries)
	return out, nil
}

// written is how many events the file holds.
func (e *eventsFile) written() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.count
}

// close closes the file.
func (e *eventsFile) close() error { return e.f.Close() }

// eventBridgeID is a random id in EventBridge's form (a UUID), which differs for every
// publication of one fact; the detail's event_id does not.
func eventBridgeID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// announcer hands the embedded store's stream to the events handler, as Lambda's event
// source mapping hands the table's stream to the events function: a batch answered
// with a failure comes back from that record after a pause, at most lineAttempts
// times, then is given up with an error line, as a mapping's retries end.
type announcer struct {
	stream *sim.Stream
	h      *events.Handler
	log    *slog.Logger
	retry  time.Duration // before the first retry of a batch; doubled each time
}

// newAnnouncer announces stream into file with the events Lambda's handler and
// publisher, logging to log.
func newAnnouncer(stream *sim.Stream, file *eventsFile, log *slog.Logger) *announcer {
	h := events.NewHandler(events.NewPublisher(file, events.PublishOptions{}), localBus, log)
	return &announcer{stream: stream, h: h, log: log, retry: lineRetry}
}

// run announces the stream's records until ctx ends.
func (a announcer) run(ctx context.Context) {
	for {
		recs, err := a.stream.Next(ctx, streamBatch)
		if err != nil {
			return
		}
		a.announce(ctx, recs)
	}
}

// drain announces what the stream still holds, within announceDrain: the last writes
// before up stopped.
func (a announcer) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), announceDrain)
	defer cancel()
	for {
		wait, stop := context.WithTimeout(ctx, localPoll)
		recs, err := a.stream.Next(wait, streamBatch)
		stop()
		if err != nil {
			return
		}
		a.announce(ctx, recs)
	}
}

// announce hands one batch to the handler until each record is announced, or the
// attempts are spent. An attempt under way when ctx ends goes on (its records are in
// no stream any more); no retry starts after.
func (a announcer) announce(ctx context.Context, recs []lambdaevents.DynamoDBEventRecord) {
	pause := a.retry
	for attempt := 1; len(recs) > 0; attempt++ {
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lineDeadline)
		resp, err := a.h.Handle(bctx, lambdaevents.DynamoDBEvent{Records: recs})
		cancel()
		from := len(recs)
		if err != nil {
			from = 0
		} else if len(resp.BatchItemFailures) > 0 {
			from = recordIndex(recs, resp.BatchItemFailures[0].ItemIdentifier)
		}
		recs = recs[from:]
		switch {
		case len(recs) == 0:
			return
		case attempt == lineAttempts || !sleep(ctx, pause):
			a.log.Error("gave up announcing stream records", "records", len(recs), "first", recs[0].Change.SequenceNumber)
			return
		}
		pause *= 2
	}
}

// sleep waits d, or until ctx ends: it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// recordIndex is the index of the record with sequence number seq, or 0 (the whole
// batch back) when none has it, as Lambda reads such an answer.
func recordIndex(recs []lambdaevents.DynamoDBEventRecord, seq string) int {
	for i, r := range recs {
		if r.Change.SequenceNumber == seq {
			return i
		}
	}
	return 0
}
