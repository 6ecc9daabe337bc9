package migrate_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/testenv"
)

func TestRunIsIdempotentAndRecordsMigrations(t *testing.T) {
	env := testenv.NewDynamoDB(t) // runs the migrations once
	ctx := context.Background()

	steps, err := migrate.Run(ctx, env.Client, migrate.Options{Tables: env.Tables, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		switch s.Action {
		case migrate.Unchanged, migrate.TTLUnchanged, migrate.TTLSkipped:
		default:
			t.Errorf("second run: %s on %s did %q, want unchanged", s.Migration, s.Table, s.Action)
		}
	}

	desc, err := env.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(env.Table())})
	if err != nil {
		t.Fatal(err)
	}
	if len(desc.Table.GlobalSecondaryIndexes) != 1 || aws.ToString(desc.Table.GlobalSecondaryIndexes[0].IndexName) != "por_seq" {
		t.Errorf("indexes = %+v, want por_seq", desc.Table.GlobalSecondaryIndexes)
	}

	rec, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(env.Table()),
		ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: migrate.RecordPrefix + "0001_ledger"},
			"sk": &types.AttributeValueMemberS{Value: "MIGRACION"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := rec.Item["primera"].(*types.AttributeValueMemberS)
	last, _ := rec.Item["ultima"].(*types.AttributeValueMemberS)
	if first == nil || last == nil || first.Value > last.Value || rec.Item["huella"] == nil {
		t.Errorf("record = %v, want primera <= ultima and a checksum", rec.Item)
	}
}

// tableWithoutIndex creates a ledger table as a release before the por_seq index did,
// dropped when the test ends.
func tableWithoutIndex(t *testing.T, env *testenv.DynamoDB, suffix string) string {
	t.Helper()
	ctx := context.Background()
	old := env.Table() + suffix
	_, err := env.Client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(old),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = env.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(old)})
	})
	return old
}

// indexes is the names of table's indexes.
func indexes(t *testing.T, env *testenv.DynamoDB, table string) []string {
	t.Helper()
	desc, err := env.Client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range desc.Table.GlobalSecondaryIndexes {
		names = append(names, aws.ToString(g.IndexName))
	}
	return names
}

func TestRunAddsAMissingIndex(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	old := tableWithoutIndex(t, env, "-old")
	steps, err := migrate.Run(context.Background(), env.Client, migrate.Options{Tables: map[string]string{"ledger": old}, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if steps[0].Action != migrate.IndexAdded {
		t.Errorf("action = %q, want %q", steps[0].Action, migrate.IndexAdded)
	}
	if got := indexes(t, env, old); !slices.Equal(got, []string{"por_seq"}) {
		t.Errorf("indexes after migration = %v, want por_seq", got)
	}
}

// Two deploys may add the same index at once. The one whose UpdateTable is refused
// plans again from the table as it is once active, and asks once more; refused twice,
// it fails, naming the refusal.
func TestRunPlansAgainAfterARefusedIndexUpdate(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	old := tableWithoutIndex(t, env, "-raced")
	ft := sim.NewTransport(nil)
	ft.Inject("UpdateTable", sim.Validation)
	steps, err := migrate.Run(context.Background(), env.ClientVia(ft), migrate.Options{Tables: map[string]string{"ledger": old}, Poll: time.Millisecond})
	if err != nil || steps[0].Action != migrate.IndexAdded || ft.Calls("UpdateTable") != 2 {
		t.Fatalf("after one refusal: steps %+v, %v, %d UpdateTable calls; want the index added by the second", steps, err, ft.Calls("UpdateTable"))
	}
	if got := indexes(t, env, old); !slices.Equal(got, []string{"por_seq"}) {
		t.Errorf("indexes after migration = %v, want por_seq", got)
	}

	again := tableWithoutIndex(t, env, "-refused")
	ft = sim.NewTransport(nil)
	ft.Inject("UpdateTable", sim.Validation, sim.Validation)
	_, err = migrate.Run(context.Background(), env.ClientVia(ft), migrate.Options{Tables: map[string]string{"ledger": again}, Poll: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "add index to "+again) || ft.Calls("UpdateTable") != 2 {
		t.Errorf("after two refusals: %v, %d UpdateTable calls; want the refusal after 2", err, ft.Calls("UpdateTable"))
	}
}

func TestRunRefusesATableWithAnotherKey(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	other := env.Table() + "-other"
	_, err := env.Client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(other),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = env.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(other)})
	})
	_, err = migrate.Run(ctx, env.Client, migrate.Options{Tables: map[string]string{"ledger": other}, Poll: 10 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "has key (id), migration 0001_ledger wants (pk, sk)") {
		t.Fatalf("migrating a table with another key: %v; want a refusal naming both keys", err)
	}
}

func TestRunEnablesTheTTLOrSkipsItWhereThereIsNoTTLAPI(t *testing.T) {
	env := testenv.NewDynamoDB(t) // the first run
	ctx := context.Background()
	steps, err := migrate.Run(ctx, env.Client, migrate.Options{Tables: env.Tables, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var ttl []migrate.Action
	for _, s := range steps {
		if s.Migration == "0002_idempotencia" && s.Action != migrate.Unchanged {
			ttl = append(ttl, s.Action)
		}
	}
	want := migrate.TTLUnchanged // enabled by the first run
	if env.Backend == testenv.Minidyn {
		want = migrate.TTLSkipped
	}
	if len(ttl) != 1 || ttl[0] != want {
		t.Fatalf("second run's TTL steps = %v, want [%s]", ttl, want)
	}
	if env.Backend == testenv.Minidyn {
		return
	}
	out, err := env.Client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(env.Tables["idempotencia"])})
	if err != nil {
		t.Fatal(err)
	}
	if d := out.TimeToLiveDescription; d.TimeToLiveStatus != types.TimeToLiveStatusEnabled || aws.ToString(d.AttributeName) != "expira" {
		t.Errorf("TTL = %s on %q, want ENABLED on expira", d.TimeToLiveStatus, aws.ToString(d.AttributeName))
	}
}

// DynamoDB may answer DescribeTable right after CreateTable with ResourceNotFoundException;
// migrate keeps waiting for the table (bounded by its context) instead of calling it gone.
func TestRunWaitsForAFreshTableDynamoDBDoesNotSeeYet(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	tables := map[string]string{"ledger": env.Table() + "-fresh", "idempotencia": env.Tables["idempotencia"] + "-fresh"}
	t.Cleanup(func() {
		for _, name := range tables {
			_, _ = env.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		}
	})
	ft := sim.NewTransport(nil)
	// The first DescribeTable finds nothing (the table is created); the next two, right
	// after CreateTable, do not see it yet.
	ft.Inject("DescribeTable", 0, sim.NotFound, sim.NotFound)
	steps, err := migrate.Run(ctx, env.ClientVia(ft), migrate.Options{Tables: tables, Poll: time.Millisecond})
	if err != nil {
		t.Fatalf("migrate over a table not visible yet: %v", err)
	}
	if steps[0].Action != migrate.Created || ft.Injected()[sim.NotFound] != 2 {
		t.Errorf("steps %+v, %d NotFound answers injected; want the ledger table created after 2", steps, ft.Injected()[sim.NotFound])
	}
}

// Two deploys may migrate at once: the one whose CreateTable finds the table already
// there (ResourceInUseException) waits for it and goes on, instead of failing.
func TestRunWhenAnotherMigratorCreatedTheTableFirst(t *testing.T) {
	env := testenv.NewDynamoDB(t) // the tables exist: "another migrator" made them
	ft := sim.NewTransport(nil)
	ft.Inject("DescribeTable", sim.NotFound) // it had not, when this one looked
	steps, err := migrate.Run(context.Background(), env.ClientVia(ft), migrate.Options{Tables: env.Tables, Poll: time.Millisecond})
	if err != nil {
		t.Fatalf("migrate racing another migrator: %v", err)
	}
	if steps[0].Action != migrate.Created || ft.Calls("CreateTable") != 1 {
		t.Errorf("steps %+v after %d CreateTable calls; want the ledger table taken as created by one refused call", steps, ft.Calls("CreateTable"))
	}
}

// Two deploys may enable the TTL at once: the one whose UpdateTimeToLive is refused
// looks again, finds it enabled by the other, and goes on.
func TestRunTakesATTLAnotherMigratorEnabled(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	if env.Backend == testenv.Minidyn {
		t.Skip("the embedded store has no TTL API")
	}
	tables := map[string]string{"ledger": env.Table() + "-ttl", "idempotencia": env.Tables["idempotencia"] + "-ttl"}
	t.Cleanup(func() { migrate.Drop(env.Client, tables) })
	ft := sim.NewTransport(nil)
	// The first call enables it and its answer is lost, as if the other migrator had;
	// the SDK's retry is refused.
	ft.Inject("UpdateTimeToLive", sim.LostResponse, sim.Validation)
	steps, err := migrate.Run(context.Background(), env.ClientVia(ft), migrate.Options{Tables: tables, Poll: time.Millisecond})
	if err != nil {
		t.Fatalf("migrate racing another migrator's TTL: %v", err)
	}
	if last := steps[len(steps)-1]; last.Action != migrate.TTLUnchanged || ft.Calls("UpdateTimeToLive") != 2 {
		t.Errorf("TTL step %+v after %d UpdateTimeToLive calls; want it taken as enabled after the refused retry", last, ft.Calls("UpdateTimeToLive"))
	}
}
