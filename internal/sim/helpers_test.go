package sim_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/sim"
)

// startClient starts an embedded DynamoDB with start, stopped when t ends, and returns
// it with a client of it, as the ledger makes one.
func startClient(t *testing.T, start func() (*sim.DynamoDB, error)) (*sim.DynamoDB, *dynamodb.Client) {
	t.Helper()
	srv, err := start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	cfg, err := awsconf.Load(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return srv, awsconf.DynamoDB(cfg, srv.URL)
}
