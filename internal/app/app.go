// Package app assembles the service's parts from validated configuration, so the
// Lambda functions and the CLI wire things alike: the ledger that applies movements,
// where permanent failures are parked, how the consumer logs.
package app

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/store"
)

// Endpoints overrides where the AWS clients send their calls; empty fields mean the
// SDK's defaults (AWS itself, or AWS_ENDPOINT_URL_*).
type Endpoints struct {
	DynamoDB string
	SQS      string
}

// FromEnv reads a Lambda function's configuration once, at init: the service's
// environment (internal/config) and the AWS SDK's default configuration.
func FromEnv(ctx context.Context) (config.Config, aws.Config, error) {
	cfg, err := config.FromEnv(nil)
	if err != nil {
		return config.Config{}, aws.Config{}, err
	}
	awsCfg, err := awsconf.Load(ctx, "")
	return cfg, awsCfg, err
}

// Consumer returns the SQS batch handler for cfg: the ledger on cfg.Table, its
// concurrency, and its parker — the DLQ when cfg.DLQ is set, else opts.Parker, which may
// be nil (permanent failures then come back until the queue's redrive policy moves
// them). opts gives the rest: the logs, the metrics, an observer.
func Consumer(cfg config.Config, awsCfg aws.Config, ep Endpoints, opts consumer.Options) (*consumer.Handler, error) {
	l, err := store.New(awsconf.DynamoDB(awsCfg, ep.DynamoDB), store.Config{Table: cfg.Table, InsufficientFunds: cfg.InsufficientFunds})
	if err != nil {
		return nil, err
	}
	opts.Concurrency = cfg.Concurrency
	if cfg.DLQ != "" {
		opts.Parker = &consumer.SQSParker{Client: SQS(awsCfg, ep.SQS), QueueURL: cfg.DLQ}
	}
	return consumer.New(l, opts), nil
}

// LambdaLogs are a Lambda function's consumer options: one JSON log line per record and
// one Embedded Metric Format document per batch on out, which CloudWatch Logs reads,
// with the function's name (AWS_LAMBDA_FUNCTION_NAME, which Lambda sets) as a dimension.
func LambdaLogs(out io.Writer) consumer.Options {
	return consumer.Options{Logger: slog.New(slog.NewJSONHandler(out, nil)), Metrics: out, Function: os.Getenv("AWS_LAMBDA_FUNCTION_NAME")}
}

// SQS returns an SQS client, sent to endpoint when it is not empty.
func SQS(awsCfg aws.Config, endpoint string) *sqs.Client {
	return sqs.NewFromConfig(awsCfg, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// SNS returns an SNS client, sent to endpoint when it is not empty.
func SNS(awsCfg aws.Config, endpoint string) *sns.Client {
	return sns.NewFromConfig(awsCfg, func(o *sns.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}
