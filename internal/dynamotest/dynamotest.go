// Package dynamotest gives a test a real *dynamodb.Client, spoken to over HTTP through
// the AWS SDK, with the ledger's tables migrated under names of the test's own. The
// backend is the embedded minidyn server (one per test, in-process) unless
// LEDGER_TEST_DYNAMODB_ENDPOINT names another endpoint, such as the moto server that
// `make test` starts. Suites are written once and run on every backend.
package dynamotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/embedded"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/migrations"
)

// EndpointEnv names the environment variable that selects an external backend.
const EndpointEnv = "LEDGER_TEST_DYNAMODB_ENDPOINT"

// Backend names the implementation behind a test's client.
type Backend string

// The backends the suites run on.
const (
	Minidyn  Backend = "minidyn"
	External Backend = "external" // moto in `make test`; whatever EndpointEnv names
)

// Env is one test's DynamoDB: a client, the endpoint it talks to, and the physical
// names of the migrated tables by logical name (Tables["ledger"] is the ledger table,
// Tables["idempotencia"] the separate-table baseline's).
type Env struct {
	Client   *dynamodb.Client
	Config   aws.Config
	Endpoint string
	Backend  Backend
	Tables   map[string]string
}

// Table is the physical name of the ledger table.
func (e *Env) Table() string { return e.Tables["ledger"] }

// New starts (or connects to) the backend and migrates fresh tables for t. On an
// external backend the tables get a random suffix and are deleted when t ends, so tests
// may run in parallel against one server.
func New(t testing.TB) *Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	env := &Env{Backend: External, Endpoint: os.Getenv(EndpointEnv)}
	if env.Endpoint == "" {
		srv, err := embedded.Start()
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
		suffix = "-" + randomHex()
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
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, name := range env.Tables {
				_, _ = env.Client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
			}
		})
	}
	return env
}

// ClientVia returns another client on the same backend whose HTTP calls go through rt,
// such as a *faults.Transport wrapping http.DefaultTransport.
func (e *Env) ClientVia(rt http.RoundTripper) *dynamodb.Client {
	cfg := e.Config.Copy()
	cfg.HTTPClient = &http.Client{Transport: rt}
	return awsconf.DynamoDB(cfg, e.Endpoint)
}

// sanitize keeps a test name within DynamoDB's table-name rules ([A-Za-z0-9_.-], at most
// 255 characters, leaving room for the suffixes).
func sanitize(name string) string {
	name = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '_'
	}, name)
	if len(name) > 200 {
		name = name[:200]
	}
	return name
}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
