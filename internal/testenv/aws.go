package testenv

import "testing"

// NoAWSAccount makes t's process a machine without an AWS account: no credentials,
// profile, region or endpoint in the environment or in files, and no instance metadata.
func NoAWSAccount(t testing.TB) {
	for name, v := range map[string]string{
		"AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_DYNAMODB": "", "AWS_ENDPOINT_URL_SQS": "", "AWS_ENDPOINT_URL_SNS": "", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
		"AWS_PROFILE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
	} {
		t.Setenv(name, v)
	}
}
