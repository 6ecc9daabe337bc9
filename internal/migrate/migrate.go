// Package migrate applies the table definitions in migrations/ to a DynamoDB endpoint,
// idempotently: it creates missing tables and indexes, enables TTL (skipped only on a
// local endpoint without the API), protects tables meant to last as the stack does,
// refuses a table whose keys contradict its definition, and records each migration run,
// with its checksum, in the ledger table.
package migrate

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/versioned"
	"github.com/ledger-dev/ledger/migrations"
)

// RecordTable is the logical table that holds the migration records, whose partition
// keys start with RecordPrefix (an account's start with "CUENTA#").
const (
	RecordTable  = migrations.Ledger
	RecordPrefix = "MIGRACION#"
	recordSK     = "MIGRACION"
)

// Action says what a migration did to its table.
type Action string

// The actions a migration step reports.
const (
	Created      Action = "created"
	IndexAdded   Action = "index added"
	Unchanged    Action = "unchanged"
	TTLEnabled   Action = "ttl enabled"
	TTLUnchanged Action = "ttl unchanged"
	// TTLSkipped: a loopback endpoint (the embedded store) has no TTL API, so nothing
	// there ever expires, which only tests and the demo can accept. A remote endpoint
	// without it fails the migration.
	TTLSkipped Action = "ttl skipped: the endpoint has no TTL API"
	// RecoveryEnabled: a protected run turned on the table's point-in-time recovery.
	RecoveryEnabled Action = "point-in-time recovery enabled"
)

// Step is the outcome of one migration's table, or of its TTL (a second step).
type Step struct {
	Migration string
	Table     string
	Action    Action
}

// Options configure Run. Tables maps logical table names to physical ones (default: the
// same). Poll is how often to check a table or index still being created (default 1 s);
// the context's deadline bounds the whole run. Protect is for tables meant to last, not
// throwaway ones: it creates tables as the stack does (deletion protection, KMS
// encryption with the AWS-managed key) and turns on point-in-time recovery of every
// table it migrates that lacks it, one it created included. Extra are tables beyond
// the ledger's (migrations.Parse), applied after them: the comparison's own.
type Options struct {
	Tables  map[string]string
	Poll    time.Duration
	Protect bool
	Extra   []migrations.Migration
}

// Run applies every migration in order and returns what each did.
func Run(ctx context.Context, db *dynamodb.Client, opts Options) ([]Step, error) {
	all, err := migrations.All()
	if err != nil {
		return nil, err
	}
	all = append(all, opts.Extra...)
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	steps := make([]Step, 0, len(all))
	for _, m := range all {
		table := cmp.Or(opts.Tables[m.Table], m.Table)
		action, err := apply(ctx, db, m, table, opts)
		if err != nil {
			return steps, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		steps = append(steps, Step{Migration: m.Name, Table: table, Action: action})
		if m.TTL != "" {
			action, err := enableTTL(ctx, db, m, table)
			if err != nil {
				return steps, fmt.Errorf("migration %s: %w", m.Name, err)
			}
			steps = append(steps, Step{Migration: m.Name, Table: table, Action: action})
		}
		if opts.Protect {
			enabled, err := enableRecovery(ctx, db, table, opts.Poll)
			if err != nil {
				return steps, fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if enabled {
				steps = append(steps, Step{Migration: m.Name, Table: table, Action: RecoveryEnabled})
			}
		}
		if err := record(ctx, db, cmp.Or(opts.Tables[RecordTable], RecordTable), m); err != nil {
			return steps, fmt.Errorf("migration %s: record it: %w", m.Name, err)
		}
	}
	return steps, nil
}

// apply creates m's table, or adds the indexes it lacks.
func apply(ctx context.Context, db *dynamodb.Client, m migrations.Migration, table string, opts Options) (Action, error) {
	desc, err := describe(ctx, db, table)
	if err != nil {
		return "", err
	}
	if desc != nil {
		return addIndexes(ctx, db, m, table, opts.Poll)
	}
	_, err = db.CreateTable(ctx, createTableInput(m, table, opts.Protect))
	if err != nil && !versioned.TableInUse(err) { // in use: another migrator created it first
		return "", fmt.Errorf("create table %s: %w", table, err)
	}
	if _, err := waitActive(ctx, db, table, opts.Poll); err != nil {
		return "", err
	}
	return Created, nil
}

// enableRecovery turns on table's point-in-time recovery unless it is on, and reports
// whether it did. Right after CreateTable DynamoDB may refuse it for some seconds
// (backups not yet available): it asks again every poll, bounded by ctx.
func enableRecovery(ctx context.Context, db *dynamodb.Client, table string, poll time.Duration) (bool, error) {
	out, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(table)})
	if err != nil {
		return false, fmt.Errorf("describe the backups of %s: %w", table, err)
	}
	if recovering(out.ContinuousBackupsDescription) {
		return false, nil
	}
	for {
		_, err := db.UpdateContinuousBackups(ctx, recoveryInput(table))
		if !versioned.BackupsUnavailable(err) {
			if err != nil {
				return false, fmt.Errorf("enable point-in-time recovery of %s: %w", table, err)
			}
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("enable point-in-time recovery of %s (backups still unavailable): %w", table, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// addIndexes adds the indexes m defines that table lacks, one UpdateTable at a time
// (DynamoDB adds one index per call), each planned from the table's description once it
// is active: an index another migrator is adding or deleting is waited for, neither
// counted present nor asked for twice. A refused UpdateTable is planned once more from a
// fresh description, as another migrator's change may have caused it; a second refusal
// fails.
func addIndexes(ctx context.Context, db *dynamodb.Client, m migrations.Migration, table string, poll time.Duration) (Action, error) {
	action, refused := Unchanged, false
	for range len(m.Indexes) + 2 { // a call per index, one re-plan after a refusal, the last look
		desc, err := waitActive(ctx, db, table, poll)
		if err != nil {
			return "", err
		}
		updates, err := indexUpdates(m, table, desc)
		if err != nil || len(updates) == 0 {
			return action, err
		}
		if _, err := db.UpdateTable(ctx, updates[0]); err != nil {
			if refused {
				return "", fmt.Errorf("add index to %s: %w", table, err)
			}
			refused = true
			continue
		}
		action = IndexAdded
	}
	return "", fmt.Errorf("table %s still lacks an index after %d UpdateTable calls", table, len(m.Indexes)+2)
}

// describe returns the table's description, or nil when it does not exist.
func describe(ctx context.Context, db *dynamodb.Client, table string) (*types.TableDescription, error) {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if versioned.NoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("describe table %s: %w", table, err)
	}
	return out.Table, nil
}

// waitActive polls until the table and its indexes are ACTIVE, bounded by ctx, and
// returns that description. A table not found is waited for too: DescribeTable right
// after CreateTable may not see it. Giving up, it names what was still pending.
func waitActive(ctx context.Context, db *dynamodb.Client, table string, poll time.Duration) (*types.TableDescription, error) {
	for {
		desc, err := describe(ctx, db, table)
		if err != nil {
			return nil, err
		}
		state := "not found"
		if desc != nil {
			if state = pending(desc); state == "" {
				return desc, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for table %s to become active (%s): %w", table, state, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// pending says what of desc is not yet ACTIVE ("table UPDATING, index por_seq
// CREATING"), "" when nothing is. A status not reported (the embedded store reports
// none) counts as active.
func pending(desc *types.TableDescription) string {
	var parts []string
	if desc.TableStatus != "" && desc.TableStatus != types.TableStatusActive {
		parts = append(parts, "table "+string(desc.TableStatus))
	}
	for _, g := range desc.GlobalSecondaryIndexes {
		if g.IndexStatus != "" && g.IndexStatus != types.IndexStatusActive {
			parts = append(parts, "index "+aws.ToString(g.IndexName)+" "+string(g.IndexStatus))
		}
	}
	return strings.Join(parts, ", ")
}

// record notes that m ran: when it first did, when it last did, with which checksum.
func record(ctx context.Context, db *dynamodb.Client, table string, m migrations.Migration) error {
	_, err := db.UpdateItem(ctx, recordInput(table, m, time.Now()))
	return err
}

// recordInput is the UpdateItem that records m's run at now in table, keeping the time
// of its first run.
func recordInput(table string, m migrations.Migration, now time.Time) *dynamodb.UpdateItemInput {
	// Maps of strings always marshal.
	key, _ := attributevalue.MarshalMap(map[string]string{"pk": RecordPrefix + m.Name, "sk": recordSK})
	values, _ := attributevalue.MarshalMap(map[string]string{
		":t": now.UTC().Format(time.RFC3339Nano), ":h": m.Checksum, ":tabla": m.Table,
	})
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(table),
		Key:                       key,
		UpdateExpression:          aws.String("SET primera = if_not_exists(primera, :t), ultima = :t, huella = :h, tabla = :tabla"),
		ExpressionAttributeValues: values,
	}
}

// dropTimeout bounds Drop, which runs as a test or a comparison ends.
const dropTimeout = 30 * time.Second

// Drop deletes tables, as far as it can in 30 s: the throwaway tables a test or a
// comparison run migrated on a shared endpoint.
func Drop(db *dynamodb.Client, tables map[string]string) {
	ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
	defer cancel()
	for _, name := range tables {
		_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	}
}
