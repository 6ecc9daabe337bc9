// Command ledger-events is the Lambda function behind the ledger table's DynamoDB stream
// (an event source mapping reporting batch item failures): every batch goes to
// internal/events' handler, which announces what the table recorded on the event bus
// LEDGER_EVENT_BUS names and answers with the first record it could not announce. It
// makes one call, events:PutEvents; Lambda reads the stream. A configuration error
// stops the init, so a broken deploy fails on its first invocation.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/events"
)

func main() {
	cfg, err := config.EventsFromEnv(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	awsCfg, err := awsconf.Load(context.Background(), "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pub := events.NewPublisher(eventbridge.NewFromConfig(awsCfg), events.PublishOptions{})
	h := events.NewHandler(pub, cfg.Bus, slog.New(slog.NewJSONHandler(os.Stdout, nil)))
	lambda.Start(h.Handle)
}
