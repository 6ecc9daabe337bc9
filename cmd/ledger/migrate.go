package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/migrations"
)

var migrateCommand = command{
	name:    "migrate",
	summary: "create or update the ledger table from migrations/, idempotently",
	run:     runMigrate,
}

// migrateHelp is ledger migrate's --help.
var migrateHelp = helpText{synopsis: "[--endpoint URL] [--table T] [--wait D] [--backfill]", about: `
Creates or updates the ledger table from migrations/, idempotently, in
DynamoDB at --endpoint. Tables in AWS itself, with no endpoint set by flag, environment
or profile, are protected as the stack protects them. With --backfill it then gives
the movements posted before the por_aplicado index their key in it (aplicado_seq), so
that balances at an instant and statements by date count them: one scan of the table,
within --wait. Run it once every consumer runs a release that keys its own movements;
a second run keys only what the first missed. It needs dynamodb:Scan and UpdateItem.`, example: `
ledger migrate --endpoint http://127.0.0.1:5000 --table ledger
ledger migrate --table ledger --backfill`}

// migrateCmd is ledger migrate's command line.
type migrateCmd struct {
	*flags
	table    tableFlags
	wait     time.Duration
	backfill bool
}

// newMigrateCmd declares ledger migrate's flags.
func newMigrateCmd(stdout, stderr io.Writer) *migrateCmd {
	c := &migrateCmd{flags: newFlags("migrate", migrateHelp, stdout, stderr)}
	c.table.declare(c.flags)
	c.DurationVar(&c.wait, "wait", 10*time.Minute, "give up the migrations after this long, waiting for tables and indexes to become active included")
	c.BoolVar(&c.backfill, "backfill", false, "then key the movements posted before the por_aplicado index in it (one scan of the table)")
	return c
}

// runMigrate is ledger migrate: it parses the command line, then validates it and runs.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newMigrateCmd(stdout, stderr)
	return c.execute(ctx, args, 0, c)
}

// validate checks --wait, then where the tables go.
func (c *migrateCmd) validate() error {
	if c.wait <= 0 {
		return fmt.Errorf("--wait must be positive, not %v", c.wait)
	}
	return c.table.validate()
}

// run applies the migrations within --wait and prints what each did to each table, then
// backfills when --backfill asks.
func (c *migrateCmd) run(ctx context.Context) error {
	cfg, _, db, err := c.table.open(ctx, checkEndpoint)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.wait)
	defer cancel()
	// Tables in AWS itself (no endpoint given by flag, environment or profile) are meant
	// to last: protected as the stack protects them. An emulator's are not.
	inAWS := aws.ToString(db.Options().BaseEndpoint) == ""
	steps, err := migrate.Run(ctx, db, migrate.Options{Tables: tables(cfg), Protect: inAWS})
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	for _, s := range steps {
		fmt.Fprintf(tw, "%s\ttable %s\t%s\n", s.Migration, s.Table, s.Action)
	}
	if err == nil && c.backfill {
		var b store.Backfilled
		b, err = store.Backfill(ctx, db, cfg.Table)
		fmt.Fprintf(tw, "backfill\ttable %s\t%d posted movements keyed in %s, %d without a readable aplicado left out\n", cfg.Table, b.Keyed, items.IndexPorAplicado, b.Unreadable)
	}
	tw.Flush()
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("gave up after --wait %v: %w", c.wait, err)
	}
	return err
}

// tables maps the migrations' logical table names to the configured ones, for
// migrate.Options.Tables.
func tables(cfg config.Config) map[string]string {
	return map[string]string{migrations.Ledger: cfg.Table}
}
