package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/ledger-dev/ledger/internal/app"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/consumer"
)

var consumeCommand = command{
	name:    "consume",
	summary: "consume an SQS queue outside Lambda, with the Lambda's handler",
	run:     runConsume,
}

func runConsume(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("consume", "--queue-url U [--endpoint URL] [--sqs-endpoint URL] [--table T] [--dlq-url U] [--pollers N] [--drain]", `
ledger consume --queue-url http://127.0.0.1:5000/123456789012/movimientos \
  --dlq-url http://127.0.0.1:5000/123456789012/movimientos-dlq --endpoint http://127.0.0.1:5000`, stderr)
	queueURL := fs.String("queue-url", "", "the movements queue (required)")
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL, such as a moto server (default: AWS)")
	sqsEndpoint := fs.String("sqs-endpoint", "", "SQS endpoint URL (default: --endpoint)")
	table := fs.String("table", "", "ledger table name (default: $LEDGER_TABLE, else ledger)")
	dlq := fs.String("dlq-url", "", "park permanent failures on this queue at once (default: $LEDGER_DLQ_URL; none: they come back until maxReceiveCount)")
	pollers := fs.Int("pollers", 2, "concurrent receive loops; at most 10 messages in flight each")
	retryDelay := fs.Duration("retry-delay", 5*time.Second, "visibility timeout given back to a message that must come back")
	wait := fs.Duration("wait", 20*time.Second, "long-poll wait per receive (at most 20s)")
	drain := fs.Bool("drain", false, "stop when a receive comes back empty, instead of polling until interrupted")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *queueURL == "" || *pollers < 1 || *wait < time.Second || *wait > 20*time.Second || *retryDelay < 0 || *retryDelay > 12*time.Hour {
		fmt.Fprintln(stderr, "ledger consume: --queue-url is required; --pollers ≥ 1; --wait within 1s–20s; --retry-delay within 0–12h")
		fs.Usage()
		return 2
	}
	cfg, ok := envConfig("consume", *table, stderr)
	if !ok {
		return 2
	}
	if *dlq != "" {
		cfg.DLQ = *dlq
	}
	awsCfg, err := awsconf.Load(ctx, *endpoint)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *sqsEndpoint == "" {
		*sqsEndpoint = *endpoint
	}
	ep := app.Endpoints{DynamoDB: *endpoint, SQS: *sqsEndpoint}
	h, err := app.Consumer(cfg, awsCfg, ep, stderr, nil)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	w, err := consumer.NewWorker(app.SQS(awsCfg, *sqsEndpoint), h, consumer.WorkerOptions{
		QueueURL: *queueURL, Pollers: *pollers, WaitTime: *wait, RetryDelay: *retryDelay, Drain: *drain,
		Logger: slog.New(slog.NewJSONHandler(stderr, nil)),
	})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err := w.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "ledger consume: %v\n", err)
		return 1
	}
	return 0
}
