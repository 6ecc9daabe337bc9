package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/ledger-dev/ledger/internal/app"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/worker"
)

var consumeCommand = command{
	name:    "consume",
	summary: "consume an SQS queue outside Lambda, with the Lambda's handler",
	run:     runConsume,
}

// maxRetryDelay bounds --retry-delay: SQS keeps a message invisible for at most 12 h
// counted from its receive, which leaves a batch an hour to run before its failures
// are handed back for at most 11.
const maxRetryDelay = 11 * time.Hour

// maxPollers bounds --pollers: 64 loops hold up to 640 messages in flight, more than one
// process applies within their visibility timeouts; run more processes instead.
const maxPollers = 64

// consumeHelp is ledger consume's --help.
var consumeHelp = helpText{synopsis: "--queue-url U [--endpoint URL] [--sqs-endpoint URL] [--table T] [--dlq-url U] [--pollers N] [--wait D] [--retry-delay D] [--drain]", about: `
Consumes the SQS queue --queue-url (required) with the Lambda's handler, long-polling
until Ctrl-C or, with --drain, until a receive comes back empty, and applies its
movements to the ledger table in DynamoDB at --endpoint; an --endpoint on this machine
serves SQS too, unless --sqs-endpoint is given. It checks the table and the queues
before it starts.`, example: `
ledger consume --queue-url http://127.0.0.1:5000/123456789012/movimientos \
  --dlq-url http://127.0.0.1:5000/123456789012/movimientos-dlq --endpoint http://127.0.0.1:5000`}

// consumeCmd is ledger consume's command line.
type consumeCmd struct {
	*flags
	table       tableFlags
	queueURL    string
	sqsEndpoint string
	dlq         string
	pollers     int
	retryDelay  time.Duration
	wait        time.Duration
	drain       bool
}

// newConsumeCmd declares ledger consume's flags.
func newConsumeCmd(stdout, stderr io.Writer) *consumeCmd {
	c := &consumeCmd{flags: newFlags("consume", consumeHelp, stdout, stderr)}
	c.queueURLVar(&c.queueURL)
	c.table.declare(c.flags)
	c.sqsEndpointVar(&c.sqsEndpoint)
	c.dlqURLVar(&c.dlq)
	c.IntVar(&c.pollers, "pollers", worker.DefaultPollers, fmt.Sprintf("concurrent receive loops (1–%d); at most 10 messages in flight each", maxPollers))
	c.DurationVar(&c.retryDelay, "retry-delay", worker.DefaultRetryDelay, "visibility timeout given back to a message that must come back (1s–11h)")
	c.DurationVar(&c.wait, "wait", worker.MaxWait, "long-poll wait per receive (1s–20s)")
	c.BoolVar(&c.drain, "drain", false, fmt.Sprintf("stop when a receive comes back empty, instead of polling until interrupted (messages in flight or waiting out --retry-delay then stay queued; it says how many); fail after %d failed receives in a row", worker.MaxDrainReceiveFailures))
	return c
}

// runConsume is ledger consume: it parses the command line, then validates it and runs.
func runConsume(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newConsumeCmd(stdout, stderr)
	return c.execute(ctx, args, 0, c)
}

// validate checks the queues and the worker's pace, then the endpoints and the table.
func (c *consumeCmd) validate() error {
	switch {
	case c.queueURL == "":
		return errors.New("--queue-url is required")
	case config.ValidateQueueURL(c.queueURL) != nil:
		return fmt.Errorf("--queue-url: %w", config.ValidateQueueURL(c.queueURL))
	case c.pollers < 1 || c.pollers > maxPollers:
		return fmt.Errorf("--pollers must be within 1–%d, not %d", maxPollers, c.pollers)
	case c.wait < time.Second || c.wait > worker.MaxWait:
		return fmt.Errorf("--wait must be within 1s–%v, not %v", worker.MaxWait, c.wait)
	case c.retryDelay < time.Second || c.retryDelay > maxRetryDelay:
		return fmt.Errorf("--retry-delay must be within 1s–%v, not %v", maxRetryDelay, c.retryDelay)
	case config.ValidateQueueURL(c.dlq) != nil:
		return fmt.Errorf("--dlq-url: %w", config.ValidateQueueURL(c.dlq))
	}
	if err := checkEndpointFlag("--sqs-endpoint", c.sqsEndpoint); err != nil {
		return err
	}
	return c.table.validate()
}

// run checks the table and the queues, then consumes until interrupted or, with
// --drain, until the queue answers empty; it prints the outcomes.
func (c *consumeCmd) run(ctx context.Context) error {
	cfg, awsCfg, db, err := c.table.connect(ctx)
	if err != nil {
		return err
	}
	dlqFrom := withDLQ(&cfg, c.dlq)
	ends := app.Endpoints{DynamoDB: c.table.endpoint, SQS: sqsEndpointFor(c.sqsEndpoint, c.table.endpoint)}
	q := app.SQS(awsCfg, ends.SQS)
	if err := servedQueue(c.queueURL, q, "--endpoint or --sqs-endpoint"); err != nil {
		return usageErr{err}
	}
	if err := checkTable(ctx, db, cfg.Table, c.table.endpoint); err != nil {
		return err
	}
	if err := checkQueues(ctx, q, c.queueURL, dlqFrom, cfg.DLQ); err != nil {
		return err
	}
	tally := &worker.Tally{}
	logger := slog.New(slog.NewJSONHandler(c.stderr, nil)) // stderr stays JSON lines, as in the Lambda
	w, err := c.worker(cfg, awsCfg, ends, q, tally, logger)
	if err != nil {
		return err
	}
	if err := w.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "consumed %s: %v\n", c.queueURL, tally.Outcomes())
	if c.drain {
		c.warnUnseen(ctx, q, logger)
	}
	return nil
}

// worker is the Lambda's handler, counting outcomes in tally, in a worker polling
// --queue-url. The options they refuse are usage errors.
func (c *consumeCmd) worker(cfg config.Config, awsCfg aws.Config, ends app.Endpoints, q *sqs.Client, tally *worker.Tally, logger *slog.Logger) (*worker.Worker, error) {
	opts := app.LambdaLogs(c.stderr)
	opts.Observer = tally.Observe
	h, err := app.Consumer(cfg, awsCfg, ends, opts)
	if err != nil {
		return nil, usageErr{err}
	}
	w, err := worker.New(q, h, worker.Options{
		QueueURL: c.queueURL, Pollers: c.pollers, WaitTime: c.wait, RetryDelay: c.retryDelay, Drain: c.drain, Logger: logger,
	})
	if err != nil {
		return nil, usageErr{err}
	}
	return w, nil
}

// warnUnseen warns, after a drain, of the messages the queue holds that no receive
// could see.
func (c *consumeCmd) warnUnseen(ctx context.Context, q *sqs.Client, logger *slog.Logger) {
	if n, err := unseen(ctx, q, c.queueURL); err == nil && n > 0 {
		logger.Warn("the queue answered empty, but holds messages no receive could see: in flight (received, not deleted, such as by an interrupted run) or delayed; they come back when their visibility timeout or delay passes",
			"queue", c.queueURL, "unseen", n)
	}
}
