// Package testenv is the test-support package: the real services a test talks to and
// the checks it holds them to. Nothing in a binary imports it.
package testenv

import (
	"context"
	"crypto/rand"
	"net/http"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/migrations"
)

// DynamoDBEndpointEnv names the environment variable that selects an external backend.
const DynamoDBEndpointEnv = "LEDGER_TEST_DYNAMODB_ENDPOINT"

// Backend names the implementation behind a test's client.
type Backend string

// The backends the suites run on.
const (
	Minidyn  Backend = "minidyn"
	External Backend = "external" // moto in `make test`; whatever DynamoDBEndpointEnv names
)

// DynamoDB is one test's DynamoDB: a client, its endpoint, and the physical names of
// the migrated tables by logical name ("ledger", "idempotencia").
type DynamoDB struct {
	Client   *dynamodb.Client
	Config   aws.Config
	Endpoint string
	Backend  Backend
	Tables   map[string]string
}

// Table is the physical name of the ledger table.
func (e *DynamoDB) Table() string { return e.Tables[migrations.Ledger] }

// NewDynamoDB gives t a real client with the ledger's tables migrated under names of
// t's own: on an embedded minidyn server of its own, or on the endpoint
// DynamoDBEndpointEnv names, where the names get a random suffix and the tables are
// deleted when t ends, so that tests may share the server.
func NewDynamoDB(t testing.TB) *DynamoDB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	env := &DynamoDB{Backend: External, Endpoint: os.Getenv(DynamoDBEndpointEnv)}
	if env.Endpoint == "" {
		srv, err := sim.StartDynamoDB()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		env.Backend, env.Endpoint = Minidyn, srv.URL
	}
	cfg, err := awsconf.Load(ctx, env.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	env.Config = cfg
	env.Client = awsconf.DynamoDB(cfg, env.Endpoint)

	suffix := ""
	if env.Backend == External {
		suffix = "-" + rand.Text()
	}
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	env.Tables = map[string]string{}
	for _, m := range all {
		env.Tables[m.Table] = sanitize(t.Name()) + "-" + m.Table + suffix
	}
	if _, err := migrate.Run(ctx, env.Client, migrate.Options{Tables: env.Tables, Poll: 50 * time.Millisecond}); err != nil {
		t.Fatalf("migrate test tables: %v", err)
	}
	if env.Backend == External {
		t.Cleanup(func() { migrate.Drop(env.Client, env.Tables) })
	}
	return env
}

// ClientVia returns another client on the same backend whose HTTP calls go through rt,
// such as a *sim.Transport injecting faults.
func (e *DynamoDB) ClientVia(rt http.RoundTripper) *dynamodb.Client {
	cfg := e.Config.Copy()
	cfg.HTTPClient = &http.Client{Transport: rt}
	return awsconf.DynamoDB(cfg, e.Endpoint)
}

// sanitize keeps a test name within DynamoDB's table-name rules: [A-Za-z0-9_.-], at
// most 255 characters with the suffixes.
func sanitize(name string) string {
	name = regexp.MustCompile(`[^A-Za-z0-9_.-]`).ReplaceAllString(name, "_")
	return name[:min(len(name), 200)]
}
