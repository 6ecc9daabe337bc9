package migrate

import (
	"errors"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/ledger-dev/ledger/migrations"
)

var ledgerDef = migrations.Migration{
	Name:       "0001_ledger",
	Table:      "ledger",
	Attributes: map[string]string{"pk": "S", "sk": "S", "seq": "N"},
	Key:        migrations.Key{Partition: "pk", Sort: "sk"},
	Indexes:    []migrations.Index{{Name: "por_seq", Key: migrations.Key{Partition: "pk", Sort: "seq"}, Projection: "ALL"}},
	Billing:    "PAY_PER_REQUEST",
}

func TestCreateTableInput(t *testing.T) {
	in := createTableInput(ledgerDef, "prod-ledger", false)
	if aws.ToString(in.TableName) != "prod-ledger" || in.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("name/billing = %s/%s", aws.ToString(in.TableName), in.BillingMode)
	}
	if got := describedKey(in.KeySchema); got != ledgerDef.Key {
		t.Errorf("key = %+v", got)
	}
	var defs []string
	for _, d := range in.AttributeDefinitions {
		defs = append(defs, aws.ToString(d.AttributeName)+":"+string(d.AttributeType))
	}
	if strings.Join(defs, ",") != "pk:S,seq:N,sk:S" {
		t.Errorf("attribute definitions = %v", defs)
	}
	if len(in.GlobalSecondaryIndexes) != 1 || describedKey(in.GlobalSecondaryIndexes[0].KeySchema) != ledgerDef.Indexes[0].Key ||
		in.GlobalSecondaryIndexes[0].Projection.ProjectionType != types.ProjectionTypeAll {
		t.Errorf("indexes = %+v", in.GlobalSecondaryIndexes)
	}
}

// A protected table is created as the stack creates its tables: deletion protection,
// KMS encryption, and point-in-time recovery turned on unless it is on. A throwaway one
// has none of them, so it can be dropped.
func TestProtectedTablesAreCreatedAsTheStackCreatesThem(t *testing.T) {
	in := createTableInput(ledgerDef, "prod-ledger", true)
	if !aws.ToBool(in.DeletionProtectionEnabled) || in.SSESpecification == nil || !aws.ToBool(in.SSESpecification.Enabled) || in.SSESpecification.SSEType != types.SSETypeKms {
		t.Errorf("protected: deletion protection %v, encryption %+v; want both", in.DeletionProtectionEnabled, in.SSESpecification)
	}
	if in := createTableInput(ledgerDef, "tmp", false); in.DeletionProtectionEnabled != nil || in.SSESpecification != nil {
		t.Errorf("throwaway: deletion protection %v, encryption %+v; want the defaults", in.DeletionProtectionEnabled, in.SSESpecification)
	}
	for _, tc := range []struct {
		desc *types.ContinuousBackupsDescription
		on   bool
	}{
		{nil, false},
		{&types.ContinuousBackupsDescription{}, false},
		{&types.ContinuousBackupsDescription{PointInTimeRecoveryDescription: &types.PointInTimeRecoveryDescription{PointInTimeRecoveryStatus: types.PointInTimeRecoveryStatusDisabled}}, false},
		{&types.ContinuousBackupsDescription{PointInTimeRecoveryDescription: &types.PointInTimeRecoveryDescription{PointInTimeRecoveryStatus: types.PointInTimeRecoveryStatusEnabled}}, true},
	} {
		if got := recovering(tc.desc); got != tc.on {
			t.Errorf("recovering(%+v) = %v, want %v", tc.desc, got, tc.on)
		}
	}
	r := recoveryInput("prod-ledger")
	if aws.ToString(r.TableName) != "prod-ledger" || !aws.ToBool(r.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled) {
		t.Errorf("recovery = %+v", r)
	}
}

func TestIndexUpdates(t *testing.T) {
	table := func(key []types.KeySchemaElement, gsis ...types.GlobalSecondaryIndexDescription) *types.TableDescription {
		return &types.TableDescription{KeySchema: key, GlobalSecondaryIndexes: gsis}
	}
	ours := createTableInput(ledgerDef, "x", false)
	seqIndex := types.GlobalSecondaryIndexDescription{IndexName: aws.String("por_seq"), KeySchema: ours.GlobalSecondaryIndexes[0].KeySchema, Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}

	if u, err := indexUpdates(ledgerDef, "x", table(ours.KeySchema, seqIndex)); err != nil || len(u) != 0 {
		t.Errorf("up to date: %d updates, %v; want none", len(u), err)
	}
	u, err := indexUpdates(ledgerDef, "x", table(ours.KeySchema))
	if err != nil || len(u) != 1 || aws.ToString(u[0].GlobalSecondaryIndexUpdates[0].Create.IndexName) != "por_seq" {
		t.Fatalf("missing index: %+v, %v; want one create of por_seq", u, err)
	}

	// A provisioned table, as DescribeTable shows one switched to it and one always on it:
	// its new index would need capacity the migration does not give.
	for name, billed := range map[string]*types.TableDescription{
		"switched": {BillingModeSummary: &types.BillingModeSummary{BillingMode: types.BillingModeProvisioned}},
		"always":   {ProvisionedThroughput: &types.ProvisionedThroughputDescription{ReadCapacityUnits: aws.Int64(1), WriteCapacityUnits: aws.Int64(1)}},
	} {
		billed.KeySchema = ours.KeySchema
		if _, err := indexUpdates(ledgerDef, "x", billed); err == nil || !strings.Contains(err.Error(), "table x is billed PROVISIONED: its new index por_seq would need capacity") {
			t.Errorf("%s provisioned, without the index: %v, want refused", name, err)
		}
		billed.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{seqIndex}
		if u, err := indexUpdates(ledgerDef, "x", billed); err != nil || len(u) != 0 {
			t.Errorf("%s provisioned, with the index: %d updates, %v; want it accepted as it is", name, len(u), err)
		}
	}
	onDemand := table(ours.KeySchema)
	onDemand.ProvisionedThroughput = &types.ProvisionedThroughputDescription{ReadCapacityUnits: aws.Int64(0), WriteCapacityUnits: aws.Int64(0)}
	if u, err := indexUpdates(ledgerDef, "x", onDemand); err != nil || len(u) != 1 {
		t.Errorf("on demand, as DescribeTable shows it (capacity 0): %d updates, %v; want the index created", len(u), err)
	}

	hashOnly := []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}}
	if _, err := indexUpdates(ledgerDef, "x", table(hashOnly)); err == nil {
		t.Error("a table with another key was accepted")
	}
	keysOnly := seqIndex
	keysOnly.Projection = &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}
	if _, err := indexUpdates(ledgerDef, "x", table(ours.KeySchema, keysOnly)); err == nil {
		t.Error("an index with another projection was accepted")
	}
	otherKey := seqIndex
	otherKey.KeySchema = hashOnly
	if _, err := indexUpdates(ledgerDef, "x", table(ours.KeySchema, otherKey)); err == nil {
		t.Error("an index with another key was accepted")
	}
	seqAsText := table(ours.KeySchema, seqIndex)
	seqAsText.AttributeDefinitions = []types.AttributeDefinition{
		{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
		{AttributeName: aws.String("seq"), AttributeType: types.ScalarAttributeTypeS},
	}
	if _, err := indexUpdates(ledgerDef, "x", seqAsText); err == nil || !strings.Contains(err.Error(), "types key attribute seq as S, migration 0001_ledger wants N") {
		t.Errorf("an index sorted on seq as text: %v, want refused (every posted movement would be)", err)
	}
}

func TestTTLUpdate(t *testing.T) {
	m := migrations.Migration{Name: "0002_idempotencia", Table: "idempotencia", TTL: "expira"}
	desc := func(status types.TimeToLiveStatus, attr string) *types.TimeToLiveDescription {
		return &types.TimeToLiveDescription{TimeToLiveStatus: status, AttributeName: aws.String(attr)}
	}
	cases := []struct {
		name   string
		desc   *types.TimeToLiveDescription
		update bool
		fails  bool
	}{
		{name: "never described", desc: nil, update: true},
		{name: "disabled", desc: &types.TimeToLiveDescription{TimeToLiveStatus: types.TimeToLiveStatusDisabled}, update: true},
		{name: "enabled on expira", desc: desc(types.TimeToLiveStatusEnabled, "expira")},
		{name: "being enabled on expira", desc: desc(types.TimeToLiveStatusEnabling, "expira")},
		{name: "enabled on another attribute", desc: desc(types.TimeToLiveStatusEnabled, "ttl"), fails: true},
		{name: "being disabled", desc: desc(types.TimeToLiveStatusDisabling, "expira"), fails: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ttlUpdate(m, "prod-idempotencia", tc.desc)
			if tc.fails {
				if !errors.Is(err, ErrTTLConflict) {
					t.Fatalf("err = %v, want ErrTTLConflict", err)
				}
				return
			}
			if err != nil || (in != nil) != tc.update {
				t.Fatalf("update = %+v, %v; want an update: %v", in, err, tc.update)
			}
			if in != nil && (aws.ToString(in.TableName) != "prod-idempotencia" || aws.ToString(in.TimeToLiveSpecification.AttributeName) != "expira" || !aws.ToBool(in.TimeToLiveSpecification.Enabled)) {
				t.Errorf("update = %+v", in.TimeToLiveSpecification)
			}
		})
	}
}

// Only a local endpoint may lack the TTL API: elsewhere an answer the SDK cannot read
// (a proxy's HTML 400) fails the migration instead of leaving a table that never expires.
func TestOnlyALocalEndpointMaySkipTheTTL(t *testing.T) {
	undecodable := &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: http.StatusBadRequest}},
		Err:      &smithy.DeserializationError{Err: errors.New("invalid character '<'")},
	}
	unknown := &smithy.GenericAPIError{Code: "UnknownOperationException"}
	throttled := &smithy.GenericAPIError{Code: "ThrottlingException"}
	for _, tc := range []struct {
		err      error
		endpoint string
		skip     bool
	}{
		{undecodable, "http://127.0.0.1:8000", true},
		{unknown, "http://localhost:5000", true},
		{throttled, "http://127.0.0.1:8000", false},
		{nil, "http://127.0.0.1:8000", false},
		{undecodable, "https://dynamodb.eu-west-1.amazonaws.com", false},
		{unknown, "", false}, // AWS itself
	} {
		if got := skippable(tc.err, tc.endpoint); got != tc.skip {
			t.Errorf("%v at %q: skip %v, want %v", tc.err, tc.endpoint, got, tc.skip)
		}
	}
}

// A migration's record keeps when it first ran and says when it last did, with what.
func TestRecordInput(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 5, time.FixedZone("CET", 3600))
	in := recordInput("prod-ledger", migrations.Migration{Name: "0001_ledger", Table: "ledger", Checksum: "abc"}, at)
	want := map[string]string{"pk": "MIGRACION#0001_ledger", "sk": "MIGRACION", ":t": "2026-12-03T09:00:00.000000005Z", ":h": "abc", ":tabla": "ledger"}
	got := map[string]string{}
	for _, m := range []map[string]types.AttributeValue{in.Key, in.ExpressionAttributeValues} {
		for k, v := range m {
			s, _ := v.(*types.AttributeValueMemberS)
			if s != nil {
				got[k] = s.Value
			}
		}
	}
	expr := aws.ToString(in.UpdateExpression)
	if !maps.Equal(got, want) || aws.ToString(in.TableName) != "prod-ledger" ||
		!strings.Contains(expr, "primera = if_not_exists(primera, :t)") || !strings.Contains(expr, "ultima = :t") {
		t.Errorf("record = %s %v %s, want %v", aws.ToString(in.TableName), got, aws.ToString(in.UpdateExpression), want)
	}
}

// A table, or one of its indexes, still being created, updated or deleted is not ready:
// the migration waits, and names what it waited for when it gives up. A status not
// reported (the embedded store's) is ready.
func TestPendingNamesWhatIsNotActiveYet(t *testing.T) {
	index := func(s types.IndexStatus) []types.GlobalSecondaryIndexDescription {
		return []types.GlobalSecondaryIndexDescription{{IndexName: aws.String("a"), IndexStatus: types.IndexStatusActive}, {IndexName: aws.String("por_seq"), IndexStatus: s}}
	}
	for _, tc := range []struct {
		desc    types.TableDescription
		pending string
	}{
		{types.TableDescription{TableStatus: types.TableStatusActive, GlobalSecondaryIndexes: index(types.IndexStatusActive)}, ""},
		{types.TableDescription{}, ""},
		{types.TableDescription{TableStatus: types.TableStatusCreating}, "table CREATING"},
		{types.TableDescription{TableStatus: types.TableStatusUpdating, GlobalSecondaryIndexes: index(types.IndexStatusCreating)}, "table UPDATING, index por_seq CREATING"},
		{types.TableDescription{TableStatus: types.TableStatusActive, GlobalSecondaryIndexes: index(types.IndexStatusUpdating)}, "index por_seq UPDATING"},
		{types.TableDescription{TableStatus: types.TableStatusActive, GlobalSecondaryIndexes: index(types.IndexStatusDeleting)}, "index por_seq DELETING"},
	} {
		if got := pending(&tc.desc); got != tc.pending {
			t.Errorf("table %q, indexes %v: pending %q, want %q", tc.desc.TableStatus, tc.desc.GlobalSecondaryIndexes, got, tc.pending)
		}
	}
}
