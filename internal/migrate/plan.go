package migrate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/migrations"
)

// createTableInput is the CreateTable request for m under the physical name table;
// protected, with deletion protection and KMS encryption (the AWS-managed key), as the
// stack creates its tables (point-in-time recovery is turned on by recoveryInput).
func createTableInput(m migrations.Migration, table string, protect bool) *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          types.BillingMode(m.Billing),
		AttributeDefinitions: attributeDefinitions(m),
		KeySchema:            keySchema(m.Key),
	}
	if protect {
		in.DeletionProtectionEnabled = aws.Bool(true)
		in.SSESpecification = &types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeKms}
	}
	for _, ix := range m.Indexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, gsi(ix))
	}
	return in
}

// recoveryInput turns on table's point-in-time recovery (35 days of restorable writes),
// as the stack does; CreateTable cannot.
func recoveryInput(table string) *dynamodb.UpdateContinuousBackupsInput {
	return &dynamodb.UpdateContinuousBackupsInput{
		TableName:                        aws.String(table),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)},
	}
}

// recovering reports point-in-time recovery on in desc.
func recovering(desc *types.ContinuousBackupsDescription) bool {
	return desc != nil && desc.PointInTimeRecoveryDescription != nil &&
		desc.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus == types.PointInTimeRecoveryStatusEnabled
}

// indexUpdates returns one UpdateTable request per index of m that desc lacks (DynamoDB
// creates one per call). It fails when the table contradicts m (its key, a key
// attribute's type, an index's key or projection): that needs a new table, which a
// migration never makes silently.
func indexUpdates(m migrations.Migration, table string, desc *types.TableDescription) ([]*dynamodb.UpdateTableInput, error) {
	if got := describedKey(desc.KeySchema); got != m.Key {
		return nil, fmt.Errorf("table %s has key %v, migration %s wants %v: keys cannot change in place", table, got, m.Name, m.Key)
	}
	for _, d := range desc.AttributeDefinitions { // a key typed otherwise refuses every write
		name := aws.ToString(d.AttributeName)
		if want, ok := m.Attributes[name]; ok && string(d.AttributeType) != want {
			return nil, fmt.Errorf("table %s types key attribute %s as %s, migration %s wants %s: key types cannot change in place", table, name, d.AttributeType, m.Name, want)
		}
	}
	var out []*dynamodb.UpdateTableInput
	for _, ix := range m.Indexes {
		i := slices.IndexFunc(desc.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndexDescription) bool {
			return aws.ToString(g.IndexName) == ix.Name
		})
		if i < 0 {
			if provisioned(desc) && m.Billing != string(types.BillingModeProvisioned) {
				return nil, fmt.Errorf("table %s is billed PROVISIONED: its new index %s would need capacity, which migration %s (%s) does not set; switch the table to on-demand, or add the index by hand", table, ix.Name, m.Name, m.Billing)
			}
			g := gsi(ix)
			out = append(out, &dynamodb.UpdateTableInput{
				TableName:            aws.String(table),
				AttributeDefinitions: attributeDefinitions(m),
				GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
					IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection,
				}}},
			})
			continue
		}
		g := desc.GlobalSecondaryIndexes[i]
		if got := describedKey(g.KeySchema); got != ix.Key {
			return nil, fmt.Errorf("index %s of %s has key %v, migration %s wants %v", ix.Name, table, got, m.Name, ix.Key)
		}
		if g.Projection != nil && string(g.Projection.ProjectionType) != ix.Projection {
			return nil, fmt.Errorf("index %s of %s projects %s, migration %s wants %s", ix.Name, table, g.Projection.ProjectionType, m.Name, ix.Projection)
		}
	}
	return out, nil
}

// provisioned reports whether desc is billed for provisioned capacity: DescribeTable
// omits BillingModeSummary for a table that was never switched, but gives it capacity.
func provisioned(desc *types.TableDescription) bool {
	if desc.BillingModeSummary != nil {
		return desc.BillingModeSummary.BillingMode == types.BillingModeProvisioned
	}
	return desc.ProvisionedThroughput != nil && aws.ToInt64(desc.ProvisionedThroughput.ReadCapacityUnits) > 0
}

func gsi(ix migrations.Index) types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{
		IndexName:  aws.String(ix.Name),
		KeySchema:  keySchema(ix.Key),
		Projection: &types.Projection{ProjectionType: types.ProjectionType(ix.Projection)},
	}
}

func keySchema(k migrations.Key) []types.KeySchemaElement {
	ks := []types.KeySchemaElement{{AttributeName: aws.String(k.Partition), KeyType: types.KeyTypeHash}}
	if k.Sort != "" {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(k.Sort), KeyType: types.KeyTypeRange})
	}
	return ks
}

// attributeDefinitions types every attribute of m (exactly the key attributes, as
// migrations.All checked), sorted so that requests are reproducible.
func attributeDefinitions(m migrations.Migration) []types.AttributeDefinition {
	var defs []types.AttributeDefinition
	for _, a := range slices.Sorted(maps.Keys(m.Attributes)) {
		defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: types.ScalarAttributeType(m.Attributes[a])})
	}
	return defs
}

func describedKey(ks []types.KeySchemaElement) migrations.Key {
	var k migrations.Key
	for _, e := range ks {
		switch e.KeyType {
		case types.KeyTypeHash:
			k.Partition = aws.ToString(e.AttributeName)
		case types.KeyTypeRange:
			k.Sort = aws.ToString(e.AttributeName)
		}
	}
	return k
}
