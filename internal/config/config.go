// Package config reads and validates the service's environment once, at start-up, so a
// typo in a deployment fails loudly instead of changing behaviour quietly.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/migrations"
)

// The environment variables the binaries read (README, "Configuration").
const (
	EnvTable             = "LEDGER_TABLE"
	EnvInsufficientFunds = "LEDGER_INSUFFICIENT_FUNDS"
	EnvStrategy          = "LEDGER_STRATEGY"
	EnvDLQ               = "LEDGER_DLQ_URL"
	EnvConcurrency       = "LEDGER_CONCURRENCY"
	EnvIdempotencyTable  = "LEDGER_IDEMPOTENCY_TABLE"
)

// The tables' names when LEDGER_TABLE and LEDGER_IDEMPOTENCY_TABLE are unset: the ledger
// table, and the separate-table baseline's.
const (
	DefaultTable            = "ledger"
	DefaultIdempotencyTable = "idempotencia"
)

// Config is the validated environment. DLQ is where the consumer parks permanent
// failures at once (empty: none). Concurrency bounds the accounts a consumer processes
// at once (0: the consumer's default). IdempotencyTable is read only by the
// separate-table strategy.
type Config struct {
	Table             string
	IdempotencyTable  string
	InsufficientFunds ledger.FundsPolicy
	Strategy          ledger.Strategy
	DLQ               string
	Concurrency       int
}

// maxConcurrency bounds LEDGER_CONCURRENCY: more groups at once than a Lambda has
// connections to spare would only queue inside the SDK.
const maxConcurrency = 256

// FromEnv reads the environment through getenv (os.Getenv when nil) and reports every
// problem at once.
func FromEnv(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var problems []string // on one line, as a Lambda logs them and a command reports them
	check := func(env string, err error) {
		if err != nil {
			problems = append(problems, env+": "+err.Error())
		}
	}
	c := Config{
		Table:            cmp.Or(getenv(EnvTable), DefaultTable),
		IdempotencyTable: cmp.Or(getenv(EnvIdempotencyTable), DefaultIdempotencyTable),
		DLQ:              getenv(EnvDLQ),
	}
	check(EnvTable, ValidateTable(c.Table))
	check(EnvIdempotencyTable, ValidateTable(c.IdempotencyTable))
	var err error
	c.InsufficientFunds, err = ledger.ParseFundsPolicy(getenv(EnvInsufficientFunds))
	check(EnvInsufficientFunds, err)
	c.Strategy, err = ledger.ParseStrategy(getenv(EnvStrategy))
	check(EnvStrategy, err)
	check(EnvDLQ, ValidateQueueURL(c.DLQ))
	if v := getenv(EnvConcurrency); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxConcurrency {
			check(EnvConcurrency, fmt.Errorf("%q: want an integer from 1 to %d", v, maxConcurrency))
		}
		c.Concurrency = n
	}
	if len(problems) > 0 {
		return Config{}, errors.New("config: " + strings.Join(problems, "; "))
	}
	return c, nil
}

// Tables maps the migrations' logical table names to the configured ones, for
// migrate.Options.Tables.
func (c Config) Tables() map[string]string {
	return map[string]string{migrations.Ledger: c.Table, migrations.Idempotencia: c.IdempotencyTable}
}

// ValidateQueueURL checks that u, when set, is an http(s) URL with a host, as SQS queue
// URLs are; whether the queue exists only SQS can say.
func ValidateQueueURL(u string) error {
	if p, err := url.Parse(u); u != "" && (err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "") {
		return fmt.Errorf("%q is not a queue URL", u)
	}
	return nil
}

// ValidateTable checks a table name against DynamoDB's rules (3–255 characters of
// letters, digits, '_', '-', '.').
func ValidateTable(name string) error {
	// A loop, not a regexp: ^[…]{3,255}$ compiles into 255 copies of the class, which
	// cost a Lambda cold start ~25 ms.
	ok := len(name) >= 3 && len(name) <= 255
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
	}
	if !ok {
		return fmt.Errorf("table name %q: want 3 to 255 of the characters A-Z a-z 0-9 _ - and dot", name)
	}
	return nil
}
