package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/ledger-dev/ledger/internal/migrate"
)

var migrateCommand = command{
	name:    "migrate",
	summary: "create or update the ledger and idempotency tables from migrations/, idempotently",
	run:     runMigrate,
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("migrate", helpText{synopsis: "[--endpoint URL] [--table T] [--wait D]", example: `
ledger migrate --endpoint http://127.0.0.1:5000 --table ledger`}, stdout, stderr)
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL (default: AWS, or AWS_ENDPOINT_URL_DYNAMODB)")
	table := fs.String("table", "", "ledger table name (default: $LEDGER_TABLE, else ledger)")
	wait := fs.Duration("wait", 10*time.Minute, "give up the migrations after this long, waiting for tables and indexes to become active included")
	if code, ok := fs.parse(args, 0); !ok {
		return code
	}
	if *wait <= 0 {
		return fs.usageError("--wait must be positive, not %v", *wait)
	}
	cfg, _, db, code := fs.openTable(ctx, *table, *endpoint, checkEndpoint)
	if code != 0 {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	// Tables in AWS itself (no endpoint given by flag, environment or profile) are meant
	// to last: protected as the stack protects them. An emulator's are not.
	inAWS := aws.ToString(db.Options().BaseEndpoint) == ""
	steps, err := migrate.Run(ctx, db, migrate.Options{Tables: cfg.Tables(), Protect: inAWS})
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("gave up after --wait %v: %w", *wait, err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, s := range steps {
		fmt.Fprintf(tw, "%s\ttable %s\t%s\n", s.Migration, s.Table, s.Action)
	}
	tw.Flush()
	if err != nil {
		return fs.fail(err)
	}
	return 0
}
