package main

import (
	"fmt"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/config"
)

// The flags several commands share are declared here, each by one method with one help
// text, true for every command that has the flag. What a command does with one, and a
// default of its own, are said in the command's description (helpText.about), which
// --help prints above the flags.

// endpointVar declares --endpoint.
func (f *flags) endpointVar(p *string) {
	f.StringVar(p, "endpoint", "", "AWS endpoint URL, such as a moto server (default: AWS, or AWS_ENDPOINT_URL_*; the description above names the services called there, and any other default)")
}

// tableVar declares --table.
func (f *flags) tableVar(p *string) {
	f.StringVar(p, "table", "", "ledger table name (default: $LEDGER_TABLE, else ledger)")
}

// sqsEndpointVar declares --sqs-endpoint.
func (f *flags) sqsEndpointVar(p *string) {
	f.StringVar(p, "sqs-endpoint", "", "SQS endpoint URL for --queue-url and --dlq-url (default: a loopback --endpoint, else AWS, or AWS_ENDPOINT_URL_SQS)")
}

// queueURLVar declares --queue-url.
func (f *flags) queueURLVar(p *string) {
	f.StringVar(p, "queue-url", "", "URL of the movements' SQS queue (the description above says what the command does with it)")
}

// dlqURLVar declares --dlq-url.
func (f *flags) dlqURLVar(p *string) {
	f.StringVar(p, "dlq-url", "", "park --queue-url's permanent failures on this queue at once, with their reason (default: $LEDGER_DLQ_URL; none: they come back until the queue's maxReceiveCount moves them to its DLQ; a queue without a redrive policy is refused either way)")
}

// jsonVar declares --json.
func (f *flags) jsonVar(p *bool) {
	f.BoolVar(p, "json", false, "print the result as one JSON document on stdout instead of text")
}

// addrVar declares --addr.
func (f *flags) addrVar(p *string) {
	f.StringVar(p, "addr", "127.0.0.1:8080", "the balance API's listen address; keep it on loopback unless something in front authenticates callers: the API has no authentication of its own")
}

// fromVar declares --from.
func (f *flags) fromVar(p *string) {
	f.StringVar(p, "from", "", "a file of JSON lines, one message body per line ('-' for stdin; the description above says what the command does with them)")
}

// accountsVar declares --accounts, value by default.
func (f *flags) accountsVar(p *int, value int) {
	f.IntVar(p, "accounts", value, "accounts of the generated workload")
}

// movementsVar declares --movements, value by default.
func (f *flags) movementsVar(p *int, value int) {
	f.IntVar(p, "movements", value, "movements of the generated workload")
}

// seedVar declares --seed.
func (f *flags) seedVar(p *uint64) {
	f.Uint64Var(p, "seed", 1, "seed of the generated workload and of all else the command draws at random (the description above says what one seed repeats)")
}

// tableFlags are --endpoint and --table, which say where the ledger table is, for the
// commands that read or write it.
type tableFlags struct {
	endpoint string // DynamoDB's endpoint URL; "" for the SDK's own (AWS, or AWS_ENDPOINT_URL_*)
	name     string // the ledger table; "" for $LEDGER_TABLE, else ledger
}

// declare declares --endpoint and --table.
func (t *tableFlags) declare(f *flags) {
	f.endpointVar(&t.endpoint)
	f.tableVar(&t.name)
}

// validate checks --endpoint, then --table.
func (t tableFlags) validate() error {
	if err := checkEndpointFlag("--endpoint", t.endpoint); err != nil {
		return err
	}
	if err := config.ValidateTable(t.name); t.name != "" && err != nil {
		return fmt.Errorf("--table: %w", err)
	}
	return nil
}

// checkEndpointFlag checks an endpoint URL given by flag ("" is none).
func checkEndpointFlag(flag, endpoint string) error {
	if _, err := awsconf.IsLoopback(endpoint); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return nil
}
