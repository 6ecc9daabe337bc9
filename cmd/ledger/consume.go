package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/ledger-dev/ledger/internal/app"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/consumer"
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

func runConsume(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("consume", helpText{synopsis: "--queue-url U [--endpoint URL] [--sqs-endpoint URL] [--table T] [--dlq-url U] [--pollers N] [--wait D] [--retry-delay D] [--drain]", example: `
ledger consume --queue-url http://127.0.0.1:5000/123456789012/movimientos \
  --dlq-url http://127.0.0.1:5000/123456789012/movimientos-dlq --endpoint http://127.0.0.1:5000`}, stdout, stderr)
	queueURL := fs.String("queue-url", "", "the movements queue (required)")
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL, such as a moto server (default: AWS)")
	sqsEndpoint := fs.String("sqs-endpoint", "", "SQS endpoint URL (default: a loopback --endpoint, else AWS)")
	table := fs.String("table", "", "ledger table name (default: $LEDGER_TABLE, else ledger)")
	dlq := fs.String("dlq-url", "", dlqUsage)
	pollers := fs.Int("pollers", consumer.DefaultPollers, fmt.Sprintf("concurrent receive loops (1–%d); at most 10 messages in flight each", maxPollers))
	retryDelay := fs.Duration("retry-delay", consumer.DefaultRetryDelay, "visibility timeout given back to a message that must come back (1s–11h)")
	wait := fs.Duration("wait", consumer.MaxWait, "long-poll wait per receive (1s–20s)")
	drain := fs.Bool("drain", false, fmt.Sprintf("stop when a receive comes back empty, instead of polling until interrupted (messages in flight or waiting out --retry-delay then stay queued; it says how many); fail after %d failed receives in a row", consumer.MaxDrainReceiveFailures))
	if code, ok := fs.parse(args, 0); !ok {
		return code
	}
	switch {
	case *queueURL == "":
		return fs.usageError("--queue-url is required")
	case config.ValidateQueueURL(*queueURL) != nil:
		return fs.usageError("--queue-url: %v", config.ValidateQueueURL(*queueURL))
	case *pollers < 1 || *pollers > maxPollers:
		return fs.usageError("--pollers must be within 1–%d, not %d", maxPollers, *pollers)
	case *wait < time.Second || *wait > consumer.MaxWait:
		return fs.usageError("--wait must be within 1s–%v, not %v", consumer.MaxWait, *wait)
	case *retryDelay < time.Second || *retryDelay > maxRetryDelay:
		return fs.usageError("--retry-delay must be within 1s–%v, not %v", maxRetryDelay, *retryDelay)
	case config.ValidateQueueURL(*dlq) != nil:
		return fs.usageError("--dlq-url: %v", config.ValidateQueueURL(*dlq))
	}
	if _, err := awsconf.IsLoopback(*sqsEndpoint); err != nil {
		return fs.usageError("--sqs-endpoint: %v", err)
	}
	cfg, awsCfg, db, code := fs.connect(ctx, *table, *endpoint)
	if code != 0 {
		return code
	}
	dlqFrom := withDLQ(&cfg, *dlq)
	*sqsEndpoint = sqsEndpointFor(*sqsEndpoint, *endpoint)
	q := app.SQS(awsCfg, *sqsEndpoint)
	if err := servedQueue(*queueURL, q, "--endpoint or --sqs-endpoint"); err != nil {
		return fs.usageError("%v", err)
	}
	if err := checkTable(ctx, db, cfg.Table, *endpoint); err != nil {
		return fs.fail(err)
	}
	if err := checkQueues(ctx, q, *queueURL, dlqFrom, cfg.DLQ); err != nil {
		return fs.fail(err)
	}
	tally := &consumer.Tally{}
	opts := app.LambdaLogs(stderr)
	opts.Observer = tally.Observe
	h, err := app.Consumer(cfg, awsCfg, app.Endpoints{DynamoDB: *endpoint, SQS: *sqsEndpoint}, opts)
	if err != nil {
		return fs.usageError("%v", err)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil)) // stderr stays JSON lines, as in the Lambda
	w, err := consumer.NewWorker(q, h, consumer.WorkerOptions{
		QueueURL: *queueURL, Pollers: *pollers, WaitTime: *wait, RetryDelay: *retryDelay, Drain: *drain, Logger: logger,
	})
	if err != nil {
		return fs.usageError("%v", err)
	}
	if err := w.Run(ctx); err != nil {
		return fs.fail(err)
	}
	fmt.Fprintf(stdout, "consumed %s: %v\n", *queueURL, tally.Outcomes())
	if !*drain {
		return 0
	}
	if n, err := unseen(ctx, q, *queueURL); err == nil && n > 0 {
		logger.Warn("the queue answered empty, but holds messages no receive could see: in flight (received, not deleted, such as by an interrupted run) or delayed; they come back when their visibility timeout or delay passes",
			"queue", *queueURL, "unseen", n)
	}
	return 0
}
