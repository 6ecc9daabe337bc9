// Package awsconf builds the AWS SDK configuration every binary uses: the SDK's default
// chain (AWS_ENDPOINT_URL_DYNAMODB …), plus what a loopback endpoint needs (see Load).
package awsconf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/logging"
)

// credentialsTimeout bounds the search for credentials, which may probe the EC2
// metadata service. requestTimeout bounds one HTTP request of every client built from
// Load's configuration (a DynamoDB page of 1 MB takes well under a second, an SQS long
// poll at most 20 s), so a stalled endpoint fails the attempt, which the SDK retries,
// even where no context deadline is set.
const (
	credentialsTimeout = 10 * time.Second
	requestTimeout     = time.Minute
)

// LocalRegion is the region assumed for a loopback endpoint when none is configured:
// emulators accept any region, but the SDK needs one to sign.
const LocalRegion = "us-east-1"

// ErrNoRegion and ErrNoCredentials are matched by Load's refusals of an environment
// that names no AWS region, or finds no credentials, for an endpoint in AWS.
var (
	ErrNoRegion      = errors.New("awsconf: no AWS region")
	ErrNoCredentials = errors.New("awsconf: no AWS credentials found")
)

// Load returns the SDK configuration for endpoint ("": AWS, or AWS_ENDPOINT_URL_*). For
// a loopback endpoint (given, or in AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL) a
// missing region is LocalRegion, the EC2 metadata service is not probed, and where the
// chain finds no credentials they are placeholders (moto needs a signature, never
// checks it); credentials it finds are kept, for a queue in AWS beside a local store.
// Elsewhere nothing is invented: a missing region or missing credentials is an error
// that says so. The SDK's own log lines (an IMDS fallback, say) are silenced: what goes
// wrong is returned. Every HTTP request has requestTimeout.
func Load(ctx context.Context, endpoint string) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithLogger(logging.Nop{}),
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTimeout(requestTimeout)),
	}
	local, err := IsLoopback(endpoint)
	if err != nil {
		return aws.Config{}, err
	}
	if endpoint == "" { // the SDK's own endpoint settings may name a local store too
		local = envLoopback("AWS_ENDPOINT_URL_DYNAMODB") || envLoopback("AWS_ENDPOINT_URL")
	}
	if local {
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("awsconf: load the AWS configuration: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, credentialsTimeout) // a credential_process may hang
	defer cancel()
	if !local {
		if cfg.Region == "" {
			return aws.Config{}, fmt.Errorf("%w: set AWS_REGION, or a region in the AWS profile", ErrNoRegion)
		}
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			return aws.Config{}, fmt.Errorf("%w (environment, profile, SSO or instance role): %w", ErrNoCredentials, err)
		}
		return cfg, nil
	}
	if cfg.Region == "" {
		cfg.Region = LocalRegion
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		cfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "awsconf"}, nil
		})
	}
	return cfg, nil
}

// envLoopback reports whether the environment variable name holds a loopback URL.
func envLoopback(name string) bool {
	local, err := IsLoopback(os.Getenv(name))
	return err == nil && local
}

// IsLoopback reports whether endpoint is a URL on the loopback interface. An empty
// endpoint is not.
func IsLoopback(endpoint string) (bool, error) {
	if endpoint == "" {
		return false, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false, fmt.Errorf("awsconf: endpoint %q: want a URL such as http://127.0.0.1:8000", endpoint)
	}
	host := u.Hostname()
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// DynamoDB returns a DynamoDB client for cfg, sent to endpoint when it is not empty.
func DynamoDB(cfg aws.Config, endpoint string) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}
