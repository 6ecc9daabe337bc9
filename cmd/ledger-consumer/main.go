// Command ledger-consumer is the Lambda function behind the movements queue's SQS event
// source: every batch goes to the shared consumer handler, which reports partial
// failures. A configuration error stops the init, so a broken deploy fails on its first
// invocation.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/ledger-dev/ledger/internal/app"
)

func main() {
	cfg, awsCfg, err := app.FromEnv(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h, err := app.Consumer(cfg, awsCfg, app.Endpoints{}, app.LambdaLogs(os.Stdout))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}
