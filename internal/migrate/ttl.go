package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/versioned"
	"github.com/ledger-dev/ledger/migrations"
)

// ErrTTLConflict reports a table's TTL on another attribute, or being disabled: changing
// it takes DynamoDB up to an hour and deletes data on its own schedule, so a migration
// never does it silently.
var ErrTTLConflict = errors.New("migrate: the table's TTL contradicts the migration")

// enableTTL makes DynamoDB expire m's table by m.TTL: DescribeTimeToLive first, because
// UpdateTimeToLive fails on a table whose TTL is already enabled. A refused
// UpdateTimeToLive is looked at once more: another migrator may have enabled it meanwhile.
func enableTTL(ctx context.Context, db *dynamodb.Client, m migrations.Migration, table string) (Action, error) {
	action, update, err := ttlPlan(ctx, db, m, table)
	if err != nil || update == nil {
		return action, err
	}
	_, err = db.UpdateTimeToLive(ctx, update)
	if err == nil {
		return TTLEnabled, nil
	}
	switch action, update, errAgain := ttlPlan(ctx, db, m, table); {
	case errors.Is(errAgain, ErrTTLConflict): // the other migrator's TTL is not m's
		return "", errAgain
	case errAgain == nil && update == nil:
		return action, nil
	}
	return "", fmt.Errorf("enable the TTL of %s: %w", table, err)
}

// ttlPlan reads table's TTL and returns the update it needs, or when it needs none what
// that means: TTLUnchanged, or TTLSkipped on a local endpoint without the TTL API.
func ttlPlan(ctx context.Context, db *dynamodb.Client, m migrations.Migration, table string) (Action, *dynamodb.UpdateTimeToLiveInput, error) {
	out, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if skippable(err, aws.ToString(db.Options().BaseEndpoint)) {
		return TTLSkipped, nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("describe the TTL of %s: %w", table, err)
	}
	update, err := ttlUpdate(m, table, out.TimeToLiveDescription)
	return TTLUnchanged, update, err
}

// ttlUpdate is the UpdateTimeToLive request that gives table m's TTL, nil when desc has
// it enabled or enabling.
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
		return nil, fmt.Errorf("table %s expires by %q, the migration wants %q; change it by hand: %w", table, attr, m.TTL, ErrTTLConflict)
	case types.TimeToLiveStatusDisabling:
		return nil, fmt.Errorf("the TTL of %s is being disabled; run the migration again once it is: %w", table, ErrTTLConflict)
	}
	return &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(m.TTL), Enabled: aws.Bool(true)},
	}, nil
}

// skippable reports a TTL call that failed because a local endpoint has no TTL API (the
// embedded store). Anywhere else such an answer (a proxy's HTML page) is an error, not a
// table that silently never expires.
func skippable(err error, endpoint string) bool {
	local, _ := awsconf.IsLoopback(endpoint)
	return local && versioned.Unsupported(err)
}
