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

	"github.com/ledger-dev/ledger/internal/cuenta"
)

// The environment variables the binaries read (docs/operations.md, "Configuration").
const (
	EnvTable             = "LEDGER_TABLE"
	EnvInsufficientFunds = "LEDGER_INSUFFICIENT_FUNDS"
	EnvDLQ               = "LEDGER_DLQ_URL"
	EnvConcurrency       = "LEDGER_CONCURRENCY"
)

// DefaultTable is the ledger table's name when LEDGER_TABLE is unset.
const DefaultTable = "ledger"

// Config is the validated environment. DLQ is where the consumer parks permanent
// failures at once (empty: none). Concurrency bounds the accounts a consumer processes
// at once (0: the consumer's default).
type Config struct {
	Table             string
	InsufficientFunds cuenta.FundsPolicy
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
	c := Config{Table: cmp.Or(getenv(EnvTable), DefaultTable), DLQ: getenv(EnvDLQ)}
	check(EnvTable, ValidateTable(c.Table))
	var err error
	c.InsufficientFunds, err = cuenta.ParseFundsPolicy(getenv(EnvInsufficientFunds))
	check(EnvInsufficientFunds, err)
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
