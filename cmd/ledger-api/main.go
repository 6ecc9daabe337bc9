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
	"net/url"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/ledger-dev/ledger/internal/api"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/store"
)

func main() {
	cfg, err := config.FromEnv(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	awsCfg, err := awsconf.Load(context.Background(), "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lambda.Start(handler(store.NewReader(awsconf.DynamoDB(awsCfg, ""), cfg.Table), os.Stdout))
}

// handler serves API Gateway HTTP API v2 events with the balance API reading through
// r, logging failures as JSON to logs (CloudWatch, from stdout).
func handler(r api.Reader, logs io.Writer) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	proxy := httpadapter.NewV2(api.New(r, slog.New(slog.NewJSONHandler(logs, nil)))).ProxyWithContext
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		ev.RawPath = routedPath(ev)
		return proxy(ctx, ev)
	}
}

// routedPath is the request's path rebuilt from its route and path parameters, each
// percent-encoded again. An HTTP API hands the function rawPath decoded, so a movement
// id holding "/" (sent as %2F) would otherwise split into two segments, and an id "."
// would be cleaned away. The $default route has no parameters: its rawPath is encoded
// whole, so that one decoded to a lone "%" or a control character is still a URL, and
// the handler answers it 404.
func routedPath(ev events.APIGatewayV2HTTPRequest) string {
	_, route, ok := strings.Cut(ev.RouteKey, " ")
	if !ok || len(ev.PathParameters) == 0 {
		return (&url.URL{Path: ev.RawPath}).EscapedPath()
	}
	segments := strings.Split(route, "/")
	for i, seg := range segments {
		if !strings.HasPrefix(seg, "{") || !strings.HasSuffix(seg, "}") {
			continue
		}
		v := ev.PathParameters[seg[1:len(seg)-1]]
		if decoded, err := url.PathUnescape(v); err == nil {
			v = decoded // message ids never hold "%": one that does is still encoded
		}
		segments[i] = url.PathEscape(v)
		if v == "." || v == ".." {
			segments[i] = strings.ReplaceAll(v, ".", "%2E")
		}
	}
	return strings.Join(segments, "/")
}
