package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/app"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
)

var upCommand = command{
	name:    "up",
	summary: "a local stack: DynamoDB (embedded or --endpoint), the balance API, the consumer",
	run:     runUp,
}

// A line that must come back is delivered at most lineAttempts times, lineRetry apart,
// doubled each time (about 31 s in all), then dropped with an error line. A batch waits
// lineBatchPause for more lines, and has lineDeadline, as a Lambda's timeout. localPoll
// paces the wait for a new table and for due retries once the input is done;
// localMigrate bounds creating the tables on a loopback endpoint, which takes moments.
const (
	localMigrate   = time.Minute
	lineAttempts   = 6
	lineRetry      = time.Second
	lineBatchPause = 200 * time.Millisecond
	lineDeadline   = consumer.FunctionTimeout
	localPoll      = 100 * time.Millisecond
)

func runUp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("up", helpText{synopsis: "[--addr A] [--from FILE|-] [--queue-url U [--dlq-url U]] [--endpoint URL] [--sqs-endpoint URL] [--table T]", example: `
ledger up --from examples/movimientos.jsonl
ledger up --endpoint http://127.0.0.1:5000 --queue-url http://127.0.0.1:5000/123456789012/movimientos \
  --dlq-url http://127.0.0.1:5000/123456789012/movimientos-dlq`}, stdout, stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "the balance API's listen address (keep it on loopback: the API has no authentication of its own)")
	from := fs.String("from", "", "consume message bodies from this JSON-lines file, then keep serving; the API answers once each line of a regular file has been handled once ('-' for stdin, read as it comes; stdin and pipes are served at once)")
	queueURL := fs.String("queue-url", "", "consume this SQS queue, as ledger consume does")
	dlq := fs.String("dlq-url", "", "with --queue-url: "+dlqUsage)
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL (default: an embedded DynamoDB, in memory, gone on exit)")
	sqsEndpoint := fs.String("sqs-endpoint", "", "SQS endpoint URL for --queue-url (default: a loopback --endpoint, else AWS)")
	table := fs.String("table", "", "ledger table name (default: $LEDGER_TABLE, else ledger)")
	if code, ok := fs.parse(args, 0); !ok {
		return code
	}
	if err := checkFile(*from); err != nil {
		return fs.usageError("--from: %v", err)
	}
	if err := checkAddr(*addr); err != nil {
		return fs.usageError("--addr: %v", err)
	}
	if _, err := awsconf.IsLoopback(*sqsEndpoint); err != nil {
		return fs.usageError("--sqs-endpoint: %v", err)
	}
	if err := config.ValidateQueueURL(*queueURL); err != nil {
		return fs.usageError("--queue-url: %v", err)
	}
	if err := config.ValidateQueueURL(*dlq); err != nil {
		return fs.usageError("--dlq-url: %v", err)
	}
	if *dlq != "" && *queueURL == "" {
		return fs.usageError("--dlq-url needs --queue-url: lines of --from that fail are parked in the log")
	}
	if *sqsEndpoint != "" && *queueURL == "" {
		return fs.usageError("--sqs-endpoint needs --queue-url: it is where that queue is served")
	}
	loopback, err := awsconf.IsLoopback(*endpoint)
	if err != nil {
		return fs.usageError("--endpoint: %v", err)
	}
	cfg, code := fs.envConfig(*table)
	if code != 0 {
		return code
	}
	dlqFrom := withDLQ(&cfg, *dlq)
	// The address is taken before any long work, so a port in use is said at once.
	ln, err := fs.listen(*addr)
	if err != nil {
		return fs.fail(err)
	}
	defer ln.Close()
	// Before the embedded DynamoDB, which has no SQS, takes --endpoint's place.
	*sqsEndpoint = sqsEndpointFor(*sqsEndpoint, *endpoint)
	if *endpoint == "" {
		embedded, err := sim.StartDynamoDB()
		if err != nil {
			return fs.fail(err)
		}
		defer embedded.Close()
		*endpoint, loopback = embedded.URL, true
		fmt.Fprintf(stderr, "ledger up: embedded DynamoDB on %s (in memory)\n", embedded.URL)
	}
	awsCfg, err := awsconf.Load(ctx, *endpoint)
	if err != nil {
		return fs.fail(err)
	}
	db, q := awsconf.DynamoDB(awsCfg, *endpoint), app.SQS(awsCfg, *sqsEndpoint)
	if err := servedQueue(*queueURL, q, "--endpoint or --sqs-endpoint"); err != nil {
		return fs.usageError("%v", err)
	}
	// A local DynamoDB gets its tables here; anywhere else they exist already (a
	// stack's, docs/deploy.md), and up only checks the ledger table is there.
	if !loopback {
		if err := checkTable(ctx, db, cfg.Table, *endpoint); err != nil {
			return fs.fail(err)
		}
	} else if err := checkEndpoint(ctx, db, cfg.Table, *endpoint); err != nil {
		return fs.fail(err)
	} else if err := migrateLocal(ctx, db, cfg.Tables()); err != nil {
		return fs.fail(err)
	}
	if *queueURL != "" {
		if err := checkQueues(ctx, q, *queueURL, dlqFrom, cfg.DLQ); err != nil {
			return fs.fail(err)
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	tally := &consumer.Tally{}
	handler := func(cfg config.Config, parker consumer.Parker) (*consumer.Handler, error) {
		return app.Consumer(cfg, awsCfg, app.Endpoints{DynamoDB: *endpoint, SQS: *sqsEndpoint},
			consumer.Options{Logger: logger, Parker: parker, Observer: tally.Observe})
	}
	var worker *consumer.Worker
	if *queueURL != "" {
		// A message that can never succeed goes to --dlq-url or $LEDGER_DLQ_URL when set,
		// else comes back until the queue's redrive policy moves it to its DLQ.
		h, err := handler(cfg, nil)
		if err != nil {
			return fs.usageError("%v", err)
		}
		if worker, err = consumer.NewWorker(q, h, consumer.WorkerOptions{QueueURL: *queueURL, Logger: logger}); err != nil {
			return fs.usageError("%v", err)
		}
		if err := worker.Check(ctx); err != nil {
			return fs.fail(err)
		}
	}
	// A file's balances are in place before the API answers: a request made meanwhile
	// waits on the listener. Stdin and pipes may never end, so their API answers at once.
	fileDone, handledOnce, when := make(chan struct{}), func() {}, ""
	if st, err := os.Stat(*from); *from != "-" && err == nil && st.Mode().IsRegular() {
		when = ", answering once each line of " + *from + " has been handled once"
		handledOnce = sync.OnceFunc(func() {
			fmt.Fprintf(stderr, "ledger up: each line of %s handled once; the API answers\n", *from)
			close(fileDone)
		})
	} else {
		close(fileDone)
	}
	fmt.Fprintf(stderr, "ledger up: balance API on http://%s (table %s)%s; Ctrl-C stops everything\n", ln.Addr(), cfg.Table, when)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		select {
		case <-fileDone:
		case <-gctx.Done():
			return nil
		}
		return serveAPI(gctx, ln, store.NewReader(db, cfg.Table), stderr)
	})
	if *from != "" {
		// Lines have no queue: a line that can never succeed is parked in the log, never
		// on a DLQ named in the environment.
		lineCfg := cfg
		lineCfg.DLQ = ""
		h, err := handler(lineCfg, consumer.LogParker{Logger: logger})
		if err != nil {
			return fs.usageError("%v", err)
		}
		g.Go(func() error {
			in, err := openInput(gctx, *from)
			if err != nil {
				return err
			}
			defer in.Close()
			feed := lineFeed{h: h, log: logger, retry: lineRetry, handledOnce: handledOnce, drop: tally.Drop}
			n, skipped, err := feed.run(gctx, in)
			if gctx.Err() == nil {
				fmt.Fprintf(stderr, "ledger up: %d lines from %s handled (%v), %d skipped (over %d bytes); still serving\n", n, *from, tally.Outcomes(), skipped, maxLine)
			}
			return err
		})
	}
	if worker != nil {
		g.Go(func() error { return worker.Run(gctx) })
	}
	err = g.Wait()
	fmt.Fprintf(stdout, "ledger up: stopped; messages: %v\n", tally.Outcomes())
	if err != nil && ctx.Err() == nil {
		return fs.fail(err)
	}
	return 0
}

// openInput opens --from, giving up when ctx ends first: opening a named pipe waits for
// its writer, and Ctrl-C must not.
func openInput(ctx context.Context, name string) (io.ReadCloser, error) {
	type opened struct {
		r   io.ReadCloser
		err error
	}
	done := make(chan opened, 1)
	go func() {
		r, err := openFrom(name)
		done <- opened{r, err}
	}()
	select {
	case o := <-done:
		return o.r, o.err
	case <-ctx.Done(): // the open goes on, and ends with the process
		return nil, ctx.Err()
	}
}

// migrateLocal creates or updates the tables on a loopback endpoint, within localMigrate.
func migrateLocal(ctx context.Context, db *dynamodb.Client, tables map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, localMigrate)
	defer cancel()
	_, err := migrate.Run(ctx, db, migrate.Options{Tables: tables, Poll: localPoll})
	return err
}

// lineFeed hands lines to a handler as SQS would hand it messages. A line that must come
// back is delivered at most lineAttempts times, retry apart, doubled each time, then
// dropped.
type lineFeed struct {
	h           *consumer.Handler
	log         *slog.Logger
	retry       time.Duration   // before the first redelivery of a line (lineRetry)
	handledOnce func()          // once the input is done and each line has been handled once
	drop        func(id string) // a line given up on after its last attempt
}

// run feeds r's lines in batches of up to ten (fewer when the input pauses), each line
// a message, those that must come back again later. It returns when the input is done
// and no retry waits, or when ctx is done, with the lines handled and skipped.
func (f lineFeed) run(ctx context.Context, r io.Reader) (n, skipped int, err error) {
	defer f.handledOnce() // also when ctx ends it first
	lines := make(chan line)
	readErr := make(chan error, 1)
	var long atomic.Int64 // lines over maxLine, counted by the reader
	go func() {
		defer close(lines)
		for l, err := range readLines(r) {
			switch {
			case errors.Is(err, errLongLine): // no queue would take it: it is parked here
				f.log.Error("skipped a line no queue would take", "error", err)
				long.Add(1)
				continue
			case err != nil:
				readErr <- err
				return
			}
			select {
			case lines <- l:
			case <-ctx.Done():
				return
			}
		}
	}()

	type retry struct {
		msg      events.SQSMessage
		attempts int
		due      time.Time
	}
	var waiting []retry
	for open := true; (open || len(waiting) > 0) && ctx.Err() == nil; {
		if !open {
			f.handledOnce() // the batch that found the input's end has been handled
		}
		var batch []events.SQSMessage
		attempts := map[string]int{}
		now := time.Now()
		var later []retry
		for _, w := range waiting { // retries that are due go first
			if !w.due.After(now) && len(batch) < consumer.MaxBatch {
				batch, attempts[w.msg.MessageId] = append(batch, w.msg), w.attempts
			} else {
				later = append(later, w)
			}
		}
		waiting = later
		pause := time.After(lineBatchPause)
	collect:
		for open && len(batch) < consumer.MaxBatch {
			select {
			case l, ok := <-lines:
				if !ok {
					open = false
					break collect
				}
				n++
				id := fmt.Sprintf("line-%d", l.n) // the line of the input, as an editor numbers it
				batch, attempts[id] = append(batch, events.SQSMessage{MessageId: id, Body: l.text, EventSource: "aws:sqs"}), 0
			case <-pause:
				break collect
			case <-ctx.Done():
				return n, int(long.Load()), nil
			}
		}
		if len(batch) == 0 {
			if !open && len(waiting) > 0 {
				time.Sleep(localPoll) // only retries left, none due yet
			}
			continue
		}
		// A batch begun is finished, as the worker finishes one: Ctrl-C never leaves a
		// movement written but reported failed. A second Ctrl-C quits at once (main).
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lineDeadline)
		noted := context.AfterFunc(ctx, func() {
			f.log.Info("stopping: finishing the batch in flight, for at most " + lineDeadline.String() + "; Ctrl-C again quits now")
		})
		back := f.h.Settle(bctx, batch)
		noted()
		cancel()
		for _, m := range batch {
			if !back[m.MessageId] {
				continue
			}
			a := attempts[m.MessageId] + 1
			if a >= lineAttempts {
				f.log.Error("gave up on a line after its last attempt", "message_id", m.MessageId, "attempts", a)
				f.drop(m.MessageId)
				continue
			}
			waiting = append(waiting, retry{msg: m, attempts: a, due: time.Now().Add(f.retry << (a - 1))})
		}
	}
	select {
	case err := <-readErr:
		return n, int(long.Load()), err
	default:
		return n, int(long.Load()), nil
	}
}
