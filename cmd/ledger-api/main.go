// Command ledger-api is the Lambda function behind the balance API's API Gateway HTTP
// API (payload format 2.0): internal/api's handler, as `ledger serve` runs it. It only
// reads (dynamodb:GetItem and Query); a configuration error stops the init, so a broken
// deploy fails on its first invocation.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/ledger-dev/ledger/internal/api"
	"github.com/ledger-dev/ledger/internal/app"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/store"
)

func main() {
	cfg, awsCfg, err := app.FromEnv(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lambda.Start(handler(store.NewReader(awsconf.DynamoDB(awsCfg, ""), cfg.Table), os.Stdout))
}

// handler serves API Gateway HTTP API v2 events with the balance API reading through
// r, logging failures as JSON to logs (CloudWatch, from stdout).
func handler(r api.Reader, logs io.Writer) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(api.New(r, slog.New(slog.NewJSONHandler(logs, nil)))).ProxyWithContext
}
