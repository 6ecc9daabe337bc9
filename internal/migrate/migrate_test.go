package migrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/migrations"
)

func TestRunIsIdempotentAndRecordsMigrations(t *testing.T) {
	env := testenv.NewDynamoDBWith(t, expiring(t)) // runs the migrations once
	ctx := context.Background()

	steps, err := migrate.Run(ctx, env.Client, migrate.Options{Extra: extras(t), Tables: env.Tables, Poll: 10 * time.Millisecond})
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

	if got := indexes(t, env, env.Table()); !slices.Equal(got, ledgerIndexes) {
		t.Errorf("indexes = %v, want %v", got, ledgerIndexes)
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

// ledgerIndexes are the ledger table's indexes once migrated, by name.
var ledgerIndexes = []string{"por_aplicado", "por_seq"}

// indexes is the names of table's indexes, sorted.
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
	slices.Sort(names)
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
	if got := indexes(t, env, old); !slices.Equal(got, ledgerIndexes) {
		t.Errorf("indexes after migration = %v, want %v", got, ledgerIndexes)
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
	if err != nil || steps[0].Action != migrate.IndexAdded || ft.Calls("UpdateTable") != len(ledgerIndexes)+1 {
		t.Fatalf("after one refusal: steps %+v, %v, %d UpdateTable calls; want the first index added by the second, the next by the third", steps, err, ft.Calls("UpdateTable"))
	}
	if got := indexes(t, env, old); !slices.Equal(got, ledgerIndexes) {
		t.Errorf("indexes after migration = %v, want %v", got, ledgerIndexes)
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
	env := testenv.NewDynamoDBWith(t, expiring(t)) // the first run
	ctx := context.Background()
	steps, err := migrate.Run(ctx, env.Client, migrate.Options{Extra: extras(t), Tables: env.Tables, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var ttl []migrate.Action
	for _, s := range steps {
		if s.Migration == "0002_expiring" && s.Action != migrate.Unchanged {
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
	out, err := env.Client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(env.Tables["expiring"])})
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
	env := testenv.NewDynamoDBWith(t, expiring(t))
	ctx := context.Background()
	tables := freshTables(t, env, "-fresh")
	ft := sim.NewTransport(nil)
	// The first DescribeTable finds nothing (the table is created); the next two, right
	// after CreateTable, do not see it yet.
	ft.Inject("DescribeTable", 0, sim.NotFound, sim.NotFound)
	steps, err := migrate.Run(ctx, env.ClientVia(ft), migrate.Options{Extra: extras(t), Tables: tables, Poll: time.Millisecond})
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
	env := testenv.NewDynamoDBWith(t, expiring(t)) // the tables exist: "another migrator" made them
	ft := sim.NewTransport(nil)
	ft.Inject("DescribeTable", sim.NotFound) // it had not, when this one looked
	steps, err := migrate.Run(context.Background(), env.ClientVia(ft), migrate.Options{Extra: extras(t), Tables: env.Tables, Poll: time.Millisecond})
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
	env := testenv.NewDynamoDBWith(t, expiring(t))
	if env.Backend == testenv.Minidyn {
		t.Skip("the embedded store has no TTL API")
	}
	tables := freshTables(t, env, "-ttl")
	ft := sim.NewTransport(nil)
	// The first call enables it and its answer is lost, as if the other migrator had;
	// the SDK's retry is refused.
	ft.Inject("UpdateTimeToLive", sim.LostResponse, sim.Validation)
	steps, err := migrate.Run(context.Background(), env.ClientVia(ft), migrate.Options{Extra: extras(t), Tables: tables, Poll: time.Millisecond})
	if err != nil {
		t.Fatalf("migrate racing another migrator's TTL: %v", err)
	}
	if last := steps[len(steps)-1]; last.Action != migrate.TTLUnchanged || ft.Calls("UpdateTimeToLive") != 2 {
		t.Errorf("TTL step %+v after %d UpdateTimeToLive calls; want it taken as enabled after the refused retry", last, ft.Calls("UpdateTimeToLive"))
	}
}

// backupsNotYet answers the first n UpdateContinuousBackups calls as DynamoDB does for
// some seconds after CreateTable (backups not yet available) and passes the rest on.
type backupsNotYet struct {
	mu       sync.Mutex
	n, calls int
}

func (b *backupsNotYet) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".UpdateContinuousBackups") {
		return http.DefaultTransport.RoundTrip(req)
	}
	b.mu.Lock()
	b.calls++
	refuse := b.calls <= b.n
	b.mu.Unlock()
	if !refuse {
		return http.DefaultTransport.RoundTrip(req)
	}
	return refusal(req, "ContinuousBackupsUnavailableException", "Backups are being enabled for the table"), nil
}

// refusal is DynamoDB's 400 answer to req with the error code and message.
func refusal(req *http.Request, code, message string) *http.Response {
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#` + code + `","message":"` + message + `"}`
	return &http.Response{StatusCode: http.StatusBadRequest, Status: "400 Bad Request", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}
}

// A protected run creates tables as the stack does: deletion protection, KMS encryption
// and point-in-time recovery, which it asks for again while DynamoDB says backups are
// not available yet. A run after one that failed before turning recovery on turns it on.
func TestAProtectedRunProtectsItsTables(t *testing.T) {
	env := testenv.NewDynamoDBWith(t, expiring(t))
	if env.Backend == testenv.Minidyn {
		t.Skip("the embedded store has no backups API")
	}
	ctx := context.Background()
	tables := freshTables(t, env, "-prot")
	ft := sim.NewTransport(nil)
	ft.Inject("UpdateContinuousBackups", sim.Validation)
	if _, err := migrate.Run(ctx, env.ClientVia(ft), migrate.Options{Extra: extras(t), Tables: tables, Poll: time.Millisecond, Protect: true}); err == nil || !strings.Contains(err.Error(), "enable point-in-time recovery") {
		t.Fatalf("a run whose recovery call is refused: %v; want it to fail naming recovery", err)
	}
	slow := &backupsNotYet{n: 2}
	steps, err := migrate.Run(ctx, env.ClientVia(slow), migrate.Options{Extra: extras(t), Tables: tables, Poll: time.Millisecond, Protect: true})
	if err != nil {
		t.Fatal(err)
	}
	var recovered []string
	for _, s := range steps {
		if s.Action == migrate.RecoveryEnabled {
			recovered = append(recovered, s.Migration)
		}
	}
	if !slices.Equal(recovered, []string{"0001_ledger", "0002_expiring"}) || slow.calls != 4 {
		t.Errorf("recovery turned on for %v after %d calls; want both tables, after 2 refusals", recovered, slow.calls)
	}
	for _, name := range tables {
		desc, err := env.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		backups, err := env.Client.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		sse, pitr := desc.Table.SSEDescription, backups.ContinuousBackupsDescription.PointInTimeRecoveryDescription
		if !aws.ToBool(desc.Table.DeletionProtectionEnabled) || sse == nil || sse.SSEType != types.SSETypeKms || pitr == nil || pitr.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusEnabled {
			t.Errorf("%s: deletion protection %v, encryption %+v, recovery %+v; want all three", name, desc.Table.DeletionProtectionEnabled, sse, pitr)
		}
	}
	steps, err = migrate.Run(ctx, env.Client, migrate.Options{Extra: extras(t), Tables: tables, Poll: time.Millisecond, Protect: true})
	for _, s := range steps {
		if err != nil || s.Action == migrate.RecoveryEnabled {
			t.Errorf("a third run: %+v, %v; want recovery left as it is", steps, err)
			break
		}
	}
}

// ttlElsewhere plays another migrator with another TTL: it answers the first
// UpdateTimeToLive with a refusal, after setting the table's TTL on attribute "otra".
type ttlElsewhere struct {
	db   *dynamodb.Client
	done bool
}

func (e *ttlElsewhere) RoundTrip(req *http.Request) (*http.Response, error) {
	if e.done || !strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".UpdateTimeToLive") {
		return http.DefaultTransport.RoundTrip(req)
	}
	e.done = true
	var in struct{ TableName string }
	if err := json.NewDecoder(req.Body).Decode(&in); err != nil {
		return nil, err
	}
	if _, err := e.db.UpdateTimeToLive(req.Context(), &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(in.TableName),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("otra"), Enabled: aws.Bool(true)}}); err != nil {
		return nil, err
	}
	return refusal(req, "ValidationException", "TimeToLive is already enabled"), nil
}

// When the TTL another migrator enabled meanwhile is not the migration's, the refusal
// says so: ErrTTLConflict, naming the attribute, not the refused call.
func TestRunReportsATTLAnotherMigratorSetOtherwise(t *testing.T) {
	env := testenv.NewDynamoDBWith(t, expiring(t))
	if env.Backend == testenv.Minidyn {
		t.Skip("the embedded store has no TTL API")
	}
	tables := freshTables(t, env, "-otra")
	_, err := migrate.Run(context.Background(), env.ClientVia(&ttlElsewhere{db: env.Client}), migrate.Options{Extra: extras(t), Tables: tables, Poll: time.Millisecond})
	if !errors.Is(err, migrate.ErrTTLConflict) || !strings.Contains(err.Error(), `expires by "otra"`) {
		t.Errorf("migrate racing a migrator with another TTL: %v; want ErrTTLConflict naming otra", err)
	}
}

// freshTables names a ledger and an expiring table no run has made yet, dropped when
// the test ends (deletion protection lifted first, for a protected run's).
func freshTables(t *testing.T, env *testenv.DynamoDB, suffix string) map[string]string {
	t.Helper()
	tables := map[string]string{"ledger": env.Table() + suffix, "expiring": env.Tables["expiring"] + suffix}
	t.Cleanup(func() {
		for _, name := range tables {
			_, _ = env.Client.UpdateTable(context.Background(), &dynamodb.UpdateTableInput{TableName: aws.String(name), DeletionProtectionEnabled: aws.Bool(false)})
		}
		migrate.Drop(env.Client, tables)
	})
	return tables
}

// expiring is a table whose items expire by a TTL, migrated beside the ledger's, whose
// own tables have none: what the TTL steps are tried on.
func expiring(t *testing.T) migrations.Migration {
	t.Helper()
	m, err := migrations.Parse("0002_expiring", []byte(`{"description":"items that expire","table":"expiring","attributes":{"pk":"S"},"key":{"partition":"pk"},"ttl":"expira","billing":"PAY_PER_REQUEST"}`))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func extras(t *testing.T) []migrations.Migration { return []migrations.Migration{expiring(t)} }
