package migrate

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
	in := createTableInput(ledgerDef, "prod-ledger")
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

func TestIndexUpdates(t *testing.T) {
	table := func(key []types.KeySchemaElement, gsis ...types.GlobalSecondaryIndexDescription) *types.TableDescription {
		return &types.TableDescription{KeySchema: key, GlobalSecondaryIndexes: gsis}
	}
	ours := createTableInput(ledgerDef, "x")
	seqIndex := types.GlobalSecondaryIndexDescription{IndexName: aws.String("por_seq"), KeySchema: ours.GlobalSecondaryIndexes[0].KeySchema, Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}

	if u, err := indexUpdates(ledgerDef, "x", table(ours.KeySchema, seqIndex)); err != nil || len(u) != 0 {
		t.Errorf("up to date: %d updates, %v; want none", len(u), err)
	}
	u, err := indexUpdates(ledgerDef, "x", table(ours.KeySchema))
	if err != nil || len(u) != 1 || aws.ToString(u[0].GlobalSecondaryIndexUpdates[0].Create.IndexName) != "por_seq" {
		t.Fatalf("missing index: %+v, %v; want one create of por_seq", u, err)
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
}
