package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/migrate"
)

var migrateCommand = command{
	name:    "migrate",
	summary: "create or update the table(s) from migrations/, idempotently",
	run:     runMigrate,
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("migrate", "[--endpoint URL] [--table T]", `
ledger migrate --endpoint http://127.0.0.1:5000 --table ledger`, stderr)
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL (default: AWS, or AWS_ENDPOINT_URL_DYNAMODB)")
	table := fs.String("table", "", "ledger table name (default: $LEDGER_TABLE, else ledger)")
	wait := fs.Duration("wait", 10*time.Minute, "give up waiting for tables and indexes to become active after this long")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	cfg, ok := envConfig("migrate", *table, stderr)
	if !ok {
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	aws, err := awsconf.Load(ctx, *endpoint)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	steps, err := migrate.Run(ctx, awsconf.DynamoDB(aws, *endpoint), migrate.Options{Tables: cfg.Tables()})
	for _, s := range steps {
		fmt.Fprintf(stderr, "%-14s table %-20s %s\n", s.Migration, s.Table, s.Action)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ledger migrate: %v\n", err)
		return 1
	}
	return 0
}
