package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/config"
)

// tableFlags are --endpoint and --table, which say where the ledger table is, for the
// commands that read or write it.
type tableFlags struct {
	endpoint string // DynamoDB's endpoint URL; "" for the SDK's own (AWS, or AWS_ENDPOINT_URL_*)
	name     string // the ledger table; "" for $LEDGER_TABLE, else ledger
}

// validate checks --endpoint, then --table.
func (t tableFlags) validate() error {
	if err := checkEndpointFlag("--endpoint", t.endpoint); err != nil {
		return err
	}
	if err := config.ValidateTable(t.name); t.name != "" && err != nil {
		return fmt.Errorf("--table: %w", err)
	}
	return nil
}

// checkEndpointFlag checks an endpoint URL given by flag ("" is none).
func checkEndpointFlag(flag, endpoint string) error {
	if _, err := awsconf.IsLoopback(endpoint); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return nil
}

// envConfig reads the environment's configuration, with table (when given) in place
// of $LEDGER_TABLE. An error is the environment's, no part of the command line.
func envConfig(table string) (config.Config, error) {
	cfg, err := config.FromEnv(nil)
	if err != nil {
		return cfg, err
	}
	if table != "" {
		cfg.Table = table
	}
	return cfg, nil
}

// connect reads the environment and makes a DynamoDB client for --endpoint, calling
// nothing yet.
func (t tableFlags) connect(ctx context.Context) (cfg config.Config, awsCfg aws.Config, db *dynamodb.Client, err error) {
	if cfg, err = envConfig(t.name); err != nil {
		return cfg, awsCfg, nil, err
	}
	if awsCfg, err = loadAWS(ctx, t.endpoint); err != nil {
		return cfg, awsCfg, nil, err
	}
	return cfg, awsCfg, awsconf.DynamoDB(awsCfg, t.endpoint), nil
}

// open connects, then checks the table with check (checkTable, or checkEndpoint for a
// command that creates it).
func (t tableFlags) open(ctx context.Context, check func(context.Context, *dynamodb.Client, string, string) error) (cfg config.Config, awsCfg aws.Config, db *dynamodb.Client, err error) {
	if cfg, awsCfg, db, err = t.connect(ctx); err != nil {
		return cfg, awsCfg, nil, err
	}
	if err := check(ctx, db, cfg.Table, t.endpoint); err != nil {
		return cfg, awsCfg, nil, err
	}
	return cfg, awsCfg, db, nil
}
