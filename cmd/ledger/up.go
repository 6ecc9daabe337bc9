package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/app"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/worker"
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

// upHelp is ledger up's --help.
var upHelp = helpText{synopsis: "[--addr A] [--from FILE|-] [--queue-url U [--dlq-url U]] [--endpoint URL] [--sqs-endpoint URL] [--table T] [--events FILE]", about: `
Runs a local stack: DynamoDB, the tables, the balance API and the consumer, until
Ctrl-C. DynamoDB is embedded, in memory and gone on exit, unless --endpoint names one;
the tables are created there when it is on this machine, and must exist anywhere else.
The consumer takes the lines of --from as a queue's messages (a line that can never
succeed is parked in the log), and up keeps serving after them: the API answers once
each line of a regular file has been handled once, and at once for stdin and pipes,
read as they come. With --queue-url it consumes that queue too, as ledger consume does;
an --endpoint on this machine serves SQS as well, unless --sqs-endpoint is given. With
--events, the embedded DynamoDB keeps a stream of its writes, and the events Lambda's
handler announces them into the file, one JSON line per event, as an EventBridge
rule's target would receive them.`, example: `
ledger up --from examples/movimientos.jsonl
ledger up --from examples/movimientos.jsonl --events events.jsonl
ledger up --endpoint http://127.0.0.1:5000 --queue-url http://127.0.0.1:5000/123456789012/movimientos \
  --dlq-url http://127.0.0.1:5000/123456789012/movimientos-dlq`}

// upCmd is ledger up's command line.
type upCmd struct {
	*flags
	table       tableFlags // --endpoint "" for the embedded DynamoDB
	addr        string
	from        string
	queueURL    string
	dlq         string
	sqsEndpoint string
	events      string
}

// newUpCmd declares ledger up's flags.
func newUpCmd(stdout, stderr io.Writer) *upCmd {
	c := &upCmd{flags: newFlags("up", upHelp, stdout, stderr)}
	c.addrVar(&c.addr)
	c.fromVar(&c.from)
	c.queueURLVar(&c.queueURL)
	c.dlqURLVar(&c.dlq)
	c.table.declare(c.flags)
	c.sqsEndpointVar(&c.sqsEndpoint)
	c.StringVar(&c.events, "events", "", "write the events the stack announces to this file, one JSON line each (emptied first; the embedded DynamoDB only)")
	return c
}

// runUp is ledger up: it parses the command line, then validates it and runs.
func runUp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newUpCmd(stdout, stderr)
	return c.execute(ctx, args, 0, c)
}

// validate checks --from and --addr, the queues and what they need, then where the
// table is.
func (c *upCmd) validate() error {
	if err := checkFile(c.from); err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if err := checkAddr(c.addr); err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	if err := checkEndpointFlag("--sqs-endpoint", c.sqsEndpoint); err != nil {
		return err
	}
	if err := config.ValidateQueueURL(c.queueURL); err != nil {
		return fmt.Errorf("--queue-url: %w", err)
	}
	if err := config.ValidateQueueURL(c.dlq); err != nil {
		return fmt.Errorf("--dlq-url: %w", err)
	}
	if c.dlq != "" && c.queueURL == "" {
		return errors.New("--dlq-url needs --queue-url: lines of --from that fail are parked in the log")
	}
	if c.sqsEndpoint != "" && c.queueURL == "" {
		return errors.New("--sqs-endpoint needs --queue-url: it is where that queue is served")
	}
	if c.events != "" && c.table.endpoint != "" {
		return errors.New("--events needs the embedded DynamoDB (no --endpoint): a table elsewhere is announced by its own stream and the events function (docs/deploy.md)")
	}
	return c.table.validate()
}

// run takes the API's address, starts the embedded DynamoDB when no --endpoint is
// given, connects, then serves until Ctrl-C.
func (c *upCmd) run(ctx context.Context) error {
	cfg, err := envConfig(c.table.name)
	if err != nil {
		return err
	}
	dlqFrom := withDLQ(&cfg, c.dlq)
	// The address is taken before any long work, so a port in use is said at once.
	ln, err := c.listen(c.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	var file *eventsFile
	if c.events != "" {
		if file, err = openEventsFile(c.events); err != nil {
			return badUsage("--events: %w", err)
		}
		defer file.close()
	}
	// SQS's endpoint is found before the embedded DynamoDB, which has no SQS, takes
	// --endpoint's place.
	ends := app.Endpoints{DynamoDB: c.table.endpoint, SQS: sqsEndpointFor(c.sqsEndpoint, c.table.endpoint)}
	var stream *sim.Stream
	if ends.DynamoDB == "" {
		embedded, err := c.embedded()
		if err != nil {
			return err
		}
		defer embedded.Close()
		ends.DynamoDB, stream = embedded.URL, embedded.Stream
	}
	st, err := c.connect(ctx, cfg, dlqFrom, ends)
	if err != nil {
		return err
	}
	if file != nil {
		st.events, st.announcer = file, newAnnouncer(stream, file, st.logger)
	}
	return c.serve(ctx, ln, st)
}

// embedded starts the embedded DynamoDB, with a stream of its writes for --events.
func (c *upCmd) embedded() (*sim.DynamoDB, error) {
	start := sim.StartDynamoDB
	if c.events != "" {
		start = sim.StartStreamingDynamoDB
	}
	embedded, err := start()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c.stderr, "ledger up: embedded DynamoDB on %s (in memory)\n", embedded.URL)
	return embedded, nil
}

// upStack is what ledger up serves and consumes with.
type upStack struct {
	cfg    config.Config
	db     *dynamodb.Client
	logger *slog.Logger
	tally  *worker.Tally     // the outcomes of the lines and the queue's messages
	worker *worker.Worker    // consumes --queue-url; nil without it
	lines  *consumer.Handler // handles the lines of --from; nil without it
	// announcer announces the embedded store's writes into events; nil without --events.
	announcer *announcer
	events    *eventsFile
}

// connect makes the clients for ends, makes sure the tables and the queues are there,
// and makes the consumers of --queue-url and --from.
func (c *upCmd) connect(ctx context.Context, cfg config.Config, dlqFrom string, ends app.Endpoints) (*upStack, error) {
	awsCfg, err := awsconf.Load(ctx, ends.DynamoDB)
	if err != nil {
		return nil, err
	}
	db, q := awsconf.DynamoDB(awsCfg, ends.DynamoDB), app.SQS(awsCfg, ends.SQS)
	if err := servedQueue(c.queueURL, q, "--endpoint or --sqs-endpoint"); err != nil {
		return nil, usageErr{err}
	}
	if err := prepareTables(ctx, db, cfg, ends.DynamoDB); err != nil {
		return nil, err
	}
	st := &upStack{cfg: cfg, db: db, logger: slog.New(slog.NewTextHandler(c.stderr, nil)), tally: &worker.Tally{}}
	handler := func(cfg config.Config, parker consumer.Parker) (*consumer.Handler, error) {
		h, err := app.Consumer(cfg, awsCfg, ends, consumer.Options{Logger: st.logger, Parker: parker, Observer: st.tally.Observe})
		if err != nil {
			return nil, usageErr{err}
		}
		return h, nil
	}
	if c.queueURL != "" {
		if err := checkQueues(ctx, q, c.queueURL, dlqFrom, cfg.DLQ); err != nil {
			return nil, err
		}
		// A message that can never succeed goes to --dlq-url or $LEDGER_DLQ_URL when set,
		// else comes back until the queue's redrive policy moves it to its DLQ.
		h, err := handler(cfg, nil)
		if err != nil {
			return nil, err
		}
		if st.worker, err = c.worker(ctx, q, h, st.logger); err != nil {
			return nil, err
		}
	}
	if c.from != "" {
		// Lines have no queue: a line that can never succeed is parked in the log, never
		// on a DLQ named in the environment.
		lineCfg := cfg
		lineCfg.DLQ = ""
		if st.lines, err = handler(lineCfg, consumer.LogParker{Logger: st.logger}); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// prepareTables creates or updates the tables on a loopback DynamoDB; anywhere else
// they exist already (a stack's, docs/deploy.md), and up only checks the ledger table
// is there.
func prepareTables(ctx context.Context, db *dynamodb.Client, cfg config.Config, endpoint string) error {
	if local, _ := awsconf.IsLoopback(endpoint); !local {
		return checkTable(ctx, db, cfg.Table, endpoint)
	}
	if err := checkEndpoint(ctx, db, cfg.Table, endpoint); err != nil {
		return err
	}
	return migrateLocal(ctx, db, tables(cfg))
}

// worker is a worker polling --queue-url with h, checked before it starts.
func (c *upCmd) worker(ctx context.Context, q *sqs.Client, h *consumer.Handler, logger *slog.Logger) (*worker.Worker, error) {
	w, err := worker.New(q, h, worker.Options{QueueURL: c.queueURL, Logger: logger})
	if err != nil {
		return nil, usageErr{err}
	}
	if err := w.Check(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// serve serves the API, and consumes the lines of --from and --queue-url, until ctx is
// done or one of them fails; then it prints the outcomes on stdout.
func (c *upCmd) serve(ctx context.Context, ln net.Listener, st *upStack) error {
	apiOpen, handledOnce, when := c.fileGate()
	fmt.Fprintf(c.stderr, "ledger up: balance API on http://%s (table %s)%s; Ctrl-C stops everything\n", ln.Addr(), st.cfg.Table, when)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		select {
		case <-apiOpen:
		case <-gctx.Done():
			return nil
		}
		return serveAPI(gctx, ln, store.NewReader(st.db, st.cfg.Table), c.stderr)
	})
	if st.lines != nil {
		g.Go(func() error { return c.feed(gctx, st, handledOnce) })
	}
	if st.worker != nil {
		g.Go(func() error { return st.worker.Run(gctx) })
	}
	stopAnnouncing := c.announce(st)
	err := g.Wait()
	stopAnnouncing()
	fmt.Fprintf(c.stdout, "ledger up: stopped; messages: %v\n", st.tally.Outcomes())
	if err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// announce announces the embedded store's writes into --events' file while up runs;
// the function it returns stops it, once the consumers have, after announcing the last
// writes, and says how many events the file holds.
func (c *upCmd) announce(st *upStack) (stop func()) {
	if st.announcer == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		st.announcer.run(ctx)
	}()
	return func() {
		cancel()
		<-done
		st.announcer.drain()
		fmt.Fprintf(c.stderr, "ledger up: %d events in %s\n", st.events.written(), c.events)
	}
}

// fileGate holds the API back until each line of a regular --from file has been
// handled once, so that its balances are in place before the API answers: a request
// made meanwhile waits on the listener. Stdin and pipes may never end, so their API
// answers at once. handledOnce opens the gate; when says what it waits for, if anything.
func (c *upCmd) fileGate() (open <-chan struct{}, handledOnce func(), when string) {
	done := make(chan struct{})
	if st, err := os.Stat(c.from); c.from != "-" && err == nil && st.Mode().IsRegular() {
		return done, sync.OnceFunc(func() {
			fmt.Fprintf(c.stderr, "ledger up: each line of %s handled once; the API answers\n", c.from)
			close(done)
		}), ", answering once each line of " + c.from + " has been handled once"
	}
	close(done)
	return done, func() {}, ""
}

// feed consumes the lines of --from until they are done or ctx is, then says how many
// were handled.
func (c *upCmd) feed(ctx context.Context, st *upStack, handledOnce func()) error {
	in, err := openInput(ctx, c.from)
	if err != nil {
		return err
	}
	defer in.Close()
	feed := lineFeed{h: st.lines, log: st.logger, retry: lineRetry, handledOnce: handledOnce, drop: st.tally.Drop}
	n, skipped, err := feed.run(ctx, in)
	if ctx.Err() == nil {
		fmt.Fprintf(c.stderr, "ledger up: %d lines from %s handled (%v), %d skipped (over %d bytes); still serving\n", n, c.from, st.tally.Outcomes(), skipped, maxLine)
	}
	return err
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
	in := f.read(ctx, r)
	var waiting []redelivery
	for (in.open || len(waiting) > 0) && ctx.Err() == nil {
		if !in.open {
			f.handledOnce() // the batch that found the input's end has been handled
		}
		b := feedBatch{attempts: map[string]int{}}
		waiting = b.takeDue(waiting, time.Now()) // retries that are due go first
		taken, ok := in.fill(ctx, &b)
		n += taken
		if !ok {
			return n, in.skipped(), nil
		}
		if len(b.msgs) == 0 {
			if !in.open && len(waiting) > 0 {
				time.Sleep(localPoll) // only retries left, none due yet
			}
			continue
		}
		waiting = append(waiting, f.settle(ctx, b)...)
	}
	return n, in.skipped(), in.err()
}

// feedInput is the lines of an input, read by a goroutine of their own so that a batch
// need not wait for a line that is slow to come.
type feedInput struct {
	lines   chan line
	readErr chan error
	long    atomic.Int64 // lines over maxLine, counted by the reader
	open    bool         // until lines is closed
}

// read starts reading r's lines, until they end or ctx does. A line no queue would take
// is logged, counted and skipped.
func (f lineFeed) read(ctx context.Context, r io.Reader) *feedInput {
	in := &feedInput{lines: make(chan line), readErr: make(chan error, 1), open: true}
	go func() {
		defer close(in.lines)
		for l, err := range readLines(r) {
			switch {
			case errors.Is(err, errLongLine): // no queue would take it: it is parked here
				f.log.Error("skipped a line no queue would take", "error", err)
				in.long.Add(1)
				continue
			case err != nil:
				in.readErr <- err
				return
			}
			select {
			case in.lines <- l:
			case <-ctx.Done():
				return
			}
		}
	}()
	return in
}

// fill adds lines to b, as messages named by their line number, until b is full, the
// input ends, or it pauses for lineBatchPause. It returns how many lines it took, and
// false when ctx ended first.
func (in *feedInput) fill(ctx context.Context, b *feedBatch) (taken int, ok bool) {
	pause := time.After(lineBatchPause)
	for in.open && len(b.msgs) < consumer.MaxBatch {
		select {
		case l, more := <-in.lines:
			if !more {
				in.open = false
				return taken, true
			}
			taken++
			id := fmt.Sprintf("line-%d", l.n) // the line of the input, as an editor numbers it
			b.add(events.SQSMessage{MessageId: id, Body: l.text, EventSource: "aws:sqs"}, 0)
		case <-pause:
			return taken, true
		case <-ctx.Done():
			return taken, false
		}
	}
	return taken, true
}

// skipped is how many lines were over maxLine.
func (in *feedInput) skipped() int { return int(in.long.Load()) }

// err is the error that ended the reading, if any.
func (in *feedInput) err() error {
	select {
	case err := <-in.readErr:
		return err
	default:
		return nil
	}
}

// feedBatch is a batch of lines as messages, with how many times each was delivered
// before.
type feedBatch struct {
	msgs     []events.SQSMessage
	attempts map[string]int
}

// add puts m in the batch, delivered attempts times before, with its receive count as
// SQS gives it (this delivery included), for the consumer's log.
func (b *feedBatch) add(m events.SQSMessage, attempts int) {
	m.Attributes = map[string]string{"ApproximateReceiveCount": strconv.Itoa(attempts + 1)}
	b.msgs, b.attempts[m.MessageId] = append(b.msgs, m), attempts
}

// redelivery is a line that must come back, once due.
type redelivery struct {
	msg      events.SQSMessage
	attempts int
	due      time.Time
}

// takeDue adds the redeliveries due by now to b, as many as it holds, and returns the
// others.
func (b *feedBatch) takeDue(waiting []redelivery, now time.Time) (later []redelivery) {
	for _, w := range waiting {
		if !w.due.After(now) && len(b.msgs) < consumer.MaxBatch {
			b.add(w.msg, w.attempts)
		} else {
			later = append(later, w)
		}
	}
	return later
}

// settle hands b to the handler and returns the lines that must come back, due after
// f.retry, doubled for each attempt before; a line out of attempts is dropped. A batch
// begun is finished, as the worker finishes one: Ctrl-C never leaves a movement
// written but reported failed. A second Ctrl-C quits at once (main).
func (f lineFeed) settle(ctx context.Context, b feedBatch) []redelivery {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lineDeadline)
	noted := context.AfterFunc(ctx, func() {
		f.log.Info("stopping: finishing the batch in flight, for at most " + lineDeadline.String() + "; Ctrl-C again quits now")
	})
	back := f.h.Settle(bctx, b.msgs)
	noted()
	cancel()
	var again []redelivery
	for _, m := range b.msgs {
		if !back[m.MessageId] {
			continue
		}
		a := b.attempts[m.MessageId] + 1
		if a >= lineAttempts {
			f.log.Error("gave up on a line after its last delivery", "message_id", m.MessageId, "receives", a)
			f.drop(m.MessageId)
			continue
		}
		again = append(again, redelivery{msg: m, attempts: a, due: time.Now().Add(f.retry << (a - 1))})
	}
	return again
}
