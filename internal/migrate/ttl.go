package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/ledger-dev/ledger/migrations"
)

// The actions a migration's TTL step reports.
const (
	TTLEnabled   Action = "ttl enabled"
	TTLUnchanged Action = "ttl unchanged"
	// TTLSkipped: the endpoint does not implement the TTL API (the embedded store). The
	// table works; nothing there ever expires, which only tests and the demo can accept.
	TTLSkipped Action = "ttl skipped: the endpoint has no TTL API"
)

// ErrTTLConflict is returned when a table's TTL is on another attribute than the
// migration's, or is being disabled: changing it takes DynamoDB up to an hour and
// deletes data on its own schedule, so a migration never does it silently.
var ErrTTLConflict = errors.New("migrate: the table's TTL contradicts the migration")

// enableTTL makes DynamoDB expire m's table by m.TTL: DescribeTimeToLive first, because
// UpdateTimeToLive fails on a table whose TTL is already enabled.
func enableTTL(ctx context.Context, db *dynamodb.Client, m migrations.Migration, table string) (Action, error) {
	out, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if unsupported(err) {
		return TTLSkipped, nil
	}
	if err != nil {
		return "", fmt.Errorf("describe the TTL of %s: %w", table, err)
	}
	update, err := ttlUpdate(m, table, out.TimeToLiveDescription)
	if err != nil || update == nil {
		return TTLUnchanged, err
	}
	if _, err := db.UpdateTimeToLive(ctx, update); err != nil {
		return "", fmt.Errorf("enable the TTL of %s: %w", table, err)
	}
	return TTLEnabled, nil
}

// ttlUpdate is the UpdateTimeToLive request that gives table m's TTL, nil when desc
// says it has it already (enabled, or being enabled, on m.TTL).
func ttlUpdate(m migrations.Migration, table string, desc *types.TimeToLiveDescription) (*dynamodb.UpdateTimeToLiveInput, error) {
	var status types.TimeToLiveStatus
	var attr string
	if desc != nil {
		status, attr = desc.TimeToLiveStatus, aws.ToString(desc.AttributeName)
	}
	switch status {
	case types.TimeToLiveStatusEnabled, types.TimeToLiveStatusEnabling:
		if attr == m.TTL {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %s expires by %q, migration %s wants %q", ErrTTLConflict, table, attr, m.Name, m.TTL)
	case types.TimeToLiveStatusDisabling:
		return nil, fmt.Errorf("%w: the TTL of %s is being disabled; run the migration again once it is", ErrTTLConflict, table)
	}
	return &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(m.TTL), Enabled: aws.Bool(true)},
	}, nil
}

// unsupported reports an endpoint that does not implement the operation called:
// DynamoDB-compatible services answer UnknownOperationException; the embedded store
// answers a bare 400 whose body is not a DynamoDB error document, which the SDK
// reports as a failure to deserialize that response.
func unsupported(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "UnknownOperationException" {
		return true
	}
	var resp *smithyhttp.ResponseError
	var decode *smithy.DeserializationError
	return errors.As(err, &resp) && resp.HTTPStatusCode() == 400 && errors.As(err, &decode)
}
