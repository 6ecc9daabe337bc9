package awsconf_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/testenv"
)

func TestIsLoopback(t *testing.T) {
	cases := map[string]bool{
		"":                      false,
		"http://127.0.0.1:8000": true,
		"http://127.8.9.10:1":   true,
		"http://localhost:4566": true,
		"http://[::1]:8000":     true,
		"https://dynamodb.eu-west-1.amazonaws.com": false,
		"http://10.0.0.5:8000":                     false,
	}
	for endpoint, want := range cases {
		got, err := awsconf.IsLoopback(endpoint)
		if err != nil || got != want {
			t.Errorf("awsconf.IsLoopback(%q) = %v, %v; want %v", endpoint, got, err, want)
		}
	}
	for _, bad := range []string{"127.0.0.1:8000", "ftp://127.0.0.1", "::", "http://", "https:///x"} {
		if _, err := awsconf.IsLoopback(bad); err == nil {
			t.Errorf("awsconf.IsLoopback(%q) accepted a malformed endpoint", bad)
		}
	}
}

func TestLoadLoopbackNeedsNoAccount(t *testing.T) {
	testenv.NoAWSAccount(t)
	cfg, err := awsconf.Load(context.Background(), "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != awsconf.LocalRegion {
		t.Errorf("region = %q, want %q", cfg.Region, awsconf.LocalRegion)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID == "" {
		t.Errorf("credentials = %+v, %v; want placeholders", creds, err)
	}
}

// Credentials the chain finds are kept for a loopback endpoint: a queue in AWS beside a
// local store needs them (moto and the embedded store accept any).
func TestLoadLoopbackKeepsConfiguredCredentials(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "credentials")
	if err := os.WriteFile(file, []byte("[default]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.NoAWSAccount(t)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
	cfg, err := awsconf.Load(context.Background(), "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if creds, err := cfg.Credentials.Retrieve(context.Background()); err != nil || creds.AccessKeyID != "AKIAPROFILE" {
		t.Errorf("credentials = %+v, %v; want the profile's", creds, err)
	}
}

// Against AWS nothing is invented: a missing region or missing credentials is said at
// once, in words, not as a failure to reach DynamoDB on the first call.
func TestLoadElsewhereSaysWhatIsMissing(t *testing.T) {
	testenv.NoAWSAccount(t)
	if _, err := awsconf.Load(context.Background(), ""); !errors.Is(err, awsconf.ErrNoRegion) || !strings.Contains(err.Error(), "set AWS_REGION") {
		t.Errorf("without a region: %v", err)
	}
	t.Setenv("AWS_REGION", "eu-west-1")
	if _, err := awsconf.Load(context.Background(), ""); !errors.Is(err, awsconf.ErrNoCredentials) {
		t.Errorf("without credentials: %v", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	if _, err := awsconf.Load(context.Background(), ""); err != nil {
		t.Errorf("with both: %v", err)
	}
}

// A local store named by the SDK's own endpoint variables, DynamoDB's or every
// service's, needs no account either.
func TestLoadTreatsALoopbackEndpointVariableAsLocal(t *testing.T) {
	for _, name := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"} {
		t.Run(name, func(t *testing.T) {
			testenv.NoAWSAccount(t)
			t.Setenv(name, "http://127.0.0.1:1")
			cfg, err := awsconf.Load(context.Background(), "")
			if err != nil || cfg.Region != awsconf.LocalRegion {
				t.Errorf("Load = region %q, %v; want %q", cfg.Region, err, awsconf.LocalRegion)
			}
		})
	}
}

// Every request has a deadline of its own, so a stalled endpoint fails the call even
// where its context has none (a CLI command's).
func TestClientsBoundEveryRequest(t *testing.T) {
	cfg, err := awsconf.Load(context.Background(), "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	c := awsconf.DynamoDB(cfg, "http://127.0.0.1:1")
	b, ok := c.Options().HTTPClient.(*awshttp.BuildableClient)
	if !ok || b.GetTimeout() <= 0 {
		t.Errorf("HTTP client %T without a request timeout", c.Options().HTTPClient)
	}
}
