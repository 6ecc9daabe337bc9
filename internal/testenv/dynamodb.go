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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/migrations"
)

// DynamoDBEndpointEnv names the environment variable that selects an external backend.
const DynamoDBEndpointEnv = "LEDGER_TEST_DYNAMODB_ENDPOINT"

// MotoEndpointEnv names the environment variable with the moto server's URL, which
// scripts/with-moto sets (make test does): the suites that need SQS, SNS or the
// rehearsal's services skip without it.
const MotoEndpointEnv = "LEDGER_TEST_MOTO_ENDPOINT"

// Backend names the implementation behind a test's client.
type Backend string

// The backends the suites run on.
const (
	Minidyn  Backend = "minidyn"
	External Backend = "external" // moto in `make test`; whatever DynamoDBEndpointEnv names
)

// DynamoDB is one test's DynamoDB: a client, its endpoint, and the physical names of
// the migrated tables by logical name ("ledger", and any extra table's).
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
	return NewDynamoDBWith(t)
}

// NewDynamoDBWith is NewDynamoDB with extra tables beside the ledger's (the
// comparison's baseline, a test's own).
func NewDynamoDBWith(t testing.TB, extra ...migrations.Migration) *DynamoDB {
	t.Helper()
	env := &DynamoDB{Backend: External, Endpoint: os.Getenv(DynamoDBEndpointEnv)}
	if env.Endpoint == "" {
		env, _ = embedded(t, sim.StartDynamoDB)
	}
	env.migrate(t, extra)
	return env
}

// NewStreamingDynamoDB is NewDynamoDB on an embedded minidyn server that keeps a
// stream of its writes (sim.StartStreamingDynamoDB), whatever DynamoDBEndpointEnv says,
// and that stream.
func NewStreamingDynamoDB(t testing.TB) (*DynamoDB, *sim.Stream) {
	t.Helper()
	env, srv := embedded(t, sim.StartStreamingDynamoDB)
	env.migrate(t, nil)
	return env, srv.Stream
}

// embedded starts a minidyn server with start, stopped when t ends.
func embedded(t testing.TB, start func() (*sim.DynamoDB, error)) (*DynamoDB, *sim.DynamoDB) {
	t.Helper()
	srv, err := start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &DynamoDB{Backend: Minidyn, Endpoint: srv.URL}, srv
}

// migrate connects env's client and creates the ledger's tables and extra under names
// of t's own, dropped when t ends on an external backend.
func (env *DynamoDB) migrate(t testing.TB, extra []migrations.Migration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
	all = append(all, extra...)
	env.Tables = map[string]string{}
	for _, m := range all {
		env.Tables[m.Table] = sanitize(t.Name()) + "-" + m.Table + suffix
	}
	if _, err := migrate.Run(ctx, env.Client, migrate.Options{Tables: env.Tables, Poll: 50 * time.Millisecond, Extra: extra}); err != nil {
		t.Fatalf("migrate test tables: %v", err)
	}
	if env.Backend == External {
		t.Cleanup(func() { migrate.Drop(env.Client, env.Tables) })
	}
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

// Get reads the item (pk, sk) of env's table strongly consistently; nil when absent.
func (env *DynamoDB) Get(t *testing.T, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(env.Table()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Item) == 0 {
		return nil
	}
	return out.Item
}

// Put writes item to env's table as it is, as another writer or a hand edit would.
func (env *DynamoDB) Put(t *testing.T, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := env.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(env.Table()), Item: item}); err != nil {
		t.Fatal(err)
	}
}
