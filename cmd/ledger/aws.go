package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// checkTimeout bounds the check that a command's table is there before it starts.
const checkTimeout = 10 * time.Second

// errNoTable is checkTable's error, wrapped, for a table that does not exist.
var errNoTable = errors.New("no such table")

// checkTable makes sure table is there before a command starts long work on it, so a
// typo in --endpoint or --table is one line at start, not a failure on every request.
// Only a local endpoint is told to run 'ledger migrate': in AWS a stack's template
// makes the tables (docs/deploy.md), and a migrated one would lack its protections.
func checkTable(ctx context.Context, db *dynamodb.Client, table, endpoint string) error {
	where, remedy := endpoint, "create it with 'ledger migrate'"
	if local, _ := awsconf.IsLoopback(endpoint); !local {
		remedy = "check --table and the region; a stack's tables come from its template (docs/deploy.md)"
	}
	if where == "" {
		where = "AWS (region " + db.Options().Region + ")"
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var refused smithy.APIError
	switch {
	case versioned.NoTable(err):
		return fmt.Errorf("%w: table %s does not exist at %s; %s", errNoTable, table, where, remedy)
	case errors.As(err, &refused): // it answered: say what, not "cannot reach"
		return fmt.Errorf("DynamoDB at %s refused DescribeTable on %s: %s: %s", where, table, refused.ErrorCode(), refused.ErrorMessage())
	case err != nil:
		return unreachable("DynamoDB at "+where, err)
	}
	return nil
}

// checkEndpoint makes sure DynamoDB answers at endpoint before a command that creates
// its tables starts long work there: DescribeTable of table (the embedded DynamoDB has no
// ListTables), where "no such table" is an answer too.
func checkEndpoint(ctx context.Context, db *dynamodb.Client, table, endpoint string) error {
	if err := checkTable(ctx, db, table, endpoint); !errors.Is(err, errNoTable) {
		return err
	}
	return nil
}

// unreachable says who did not answer, with the network's reason when there is one
// rather than the SDK's whole retry story.
func unreachable(who string, err error) error {
	var netErr *net.OpError
	if errors.As(err, &netErr) {
		err = netErr
	}
	return fmt.Errorf("cannot reach %s: %w", who, err)
}

// withDLQ puts --dlq-url, when given, in place of $LEDGER_DLQ_URL, and names which one
// cfg.DLQ now comes from, for checkQueues' errors.
func withDLQ(cfg *config.Config, flag string) (from string) {
	if flag == "" {
		return config.EnvDLQ
	}
	cfg.DLQ = flag
	return "--dlq-url"
}

// checkQueue makes sure SQS answers for the queue at url, named by what (a flag or a
// variable), before a command starts long work on it: a queue that does not exist is
// one line at start, not a failure on every receive or park. It returns the queue's ARN.
func checkQueue(ctx context.Context, q *sqs.Client, what, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	out, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", answered(what, "SQS", "GetQueueAttributes", url, err)
	}
	return out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], nil
}

// checkQueues checks the queue to consume and, when one is given, the DLQ (named by
// dlqFrom, a flag or a variable), before a command starts consuming. The DLQ may not be
// the queue itself, under any URL: a parked message would come back as a new one, forever.
func checkQueues(ctx context.Context, q *sqs.Client, queueURL, dlqFrom, dlq string) error {
	arn, err := checkQueue(ctx, q, "--queue-url", queueURL)
	if err != nil || dlq == "" {
		return err
	}
	dlqARN, err := checkQueue(ctx, q, dlqFrom, dlq)
	if err == nil && dlqARN == arn {
		err = fmt.Errorf("%s: %s is the queue --queue-url consumes: a message parked there would come back as a new one, forever", dlqFrom, arn)
	}
	return err
}

// answered is a check's error in one line: what service refused the call on resource,
// or that it could not be reached; nil when err is.
func answered(what, service, call, resource string, err error) error {
	var refused smithy.APIError
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("%s: %s refused %s on %s: %s: %s", what, service, call, resource, refused.ErrorCode(), refused.ErrorMessage())
	case err != nil:
		return fmt.Errorf("%s: %w", what, unreachable(service+" for "+resource, err))
	}
	return nil
}

// unseen is SQS's approximate count of the queue's messages a receive cannot see yet:
// in flight or delayed.
func unseen(ctx context.Context, q *sqs.Client, url string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	out, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
	if err != nil {
		return 0, err
	}
	hidden, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	delayed, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed)])
	return hidden + delayed, nil
}

// checkTopic makes sure SNS answers for the topic before a command starts long work on it.
func checkTopic(ctx context.Context, t *sns.Client, topicARN string) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	_, err := t.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(topicARN)})
	return answered("--topic-arn", "SNS", "GetTopicAttributes", topicARN, err)
}

// envConfig reads the environment's configuration, with table (when given) in place
// of $LEDGER_TABLE. An error is the environment's, no part of the command line.
func envConfig(table string) (config.Config, error) {
	cfg, err := config.FromEnv(nil)
	if err != nil {
		return cfg, err
	}
	if table != "" {
		cfg.Table = table
	}
	return cfg, nil
}

// connect reads the environment and makes a DynamoDB client for --endpoint, calling
// nothing yet.
func (t tableFlags) connect(ctx context.Context) (cfg config.Config, awsCfg aws.Config, db *dynamodb.Client, err error) {
	if cfg, err = envConfig(t.name); err != nil {
		return cfg, awsCfg, nil, err
	}
	if awsCfg, err = loadAWS(ctx, t.endpoint); err != nil {
		return cfg, awsCfg, nil, err
	}
	return cfg, awsCfg, awsconf.DynamoDB(awsCfg, t.endpoint), nil
}

// open connects, then checks the table with check (checkTable, or checkEndpoint for a
// command that creates it).
func (t tableFlags) open(ctx context.Context, check func(context.Context, *dynamodb.Client, string, string) error) (cfg config.Config, awsCfg aws.Config, db *dynamodb.Client, err error) {
	if cfg, awsCfg, db, err = t.connect(ctx); err != nil {
		return cfg, awsCfg, nil, err
	}
	if err := check(ctx, db, cfg.Table, t.endpoint); err != nil {
		return cfg, awsCfg, nil, err
	}
	return cfg, awsCfg, db, nil
}

// loadAWS is awsconf.Load, with the likelier remedy when no endpoint was given: a user
// of a local stack who left out --endpoint is told so, not sent to configure AWS.
func loadAWS(ctx context.Context, endpoint string) (aws.Config, error) {
	cfg, err := awsconf.Load(ctx, endpoint)
	if endpoint == "" && (errors.Is(err, awsconf.ErrNoRegion) || errors.Is(err, awsconf.ErrNoCredentials)) {
		err = fmt.Errorf("%w; for a local stack (ledger up, moto), give --endpoint", err)
	}
	return cfg, err
}

// servedQueue refuses a queue URL on this machine when q would call SQS in AWS for it:
// no endpoint is set for SQS, by flag, environment or profile. The call would fail
// there, naming an AWS host. remedy is the flag that fixes it.
func servedQueue(queueURL string, q *sqs.Client, remedy string) error {
	if local, _ := awsconf.IsLoopback(queueURL); !local || q.Options().BaseEndpoint != nil {
		return nil
	}
	return fmt.Errorf("--queue-url %s is on this machine, but SQS would be called in AWS: give %s, where it is served", queueURL, remedy)
}

// sqsEndpointFor is where a command calls SQS: --sqs-endpoint when given, else a
// loopback --endpoint (moto serves both), else AWS ("").
func sqsEndpointFor(sqsEndpoint, endpoint string) string {
	if local, _ := awsconf.IsLoopback(endpoint); sqsEndpoint == "" && local {
		return endpoint
	}
	return sqsEndpoint
}
