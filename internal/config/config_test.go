package config

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/migrations"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestDefaults(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil || c.Table != "ledger" || c.InsufficientFunds != ledger.Retry || c.Strategy != ledger.Transaction || c.DLQ != "" || c.Concurrency != 0 || c.IdempotencyTable != "idempotencia" {
		t.Fatalf("defaults = %+v, %v", c, err)
	}
}

func TestReadsTheEnvironment(t *testing.T) {
	c, err := FromEnv(env(map[string]string{EnvTable: "prod-ledger", EnvInsufficientFunds: "reject",
		EnvStrategy: "separate-table", EnvDLQ: "https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos-dlq", EnvConcurrency: "16",
		EnvIdempotencyTable: "prod-idempotencia"}))
	if err != nil || c.Table != "prod-ledger" || c.InsufficientFunds != ledger.Reject || c.DLQ == "" || c.Concurrency != 16 ||
		c.Strategy != ledger.SeparateTable || c.IdempotencyTable != "prod-idempotencia" {
		t.Fatalf("config = %+v, %v", c, err)
	}
}

func TestReportsEveryProblemAtOnce(t *testing.T) {
	_, err := FromEnv(env(map[string]string{EnvTable: "no spaces", EnvInsufficientFunds: "ignore",
		EnvStrategy: "separate", EnvDLQ: "movimientos-dlq", EnvConcurrency: "0", EnvIdempotencyTable: "x"}))
	for _, name := range []string{EnvTable, EnvInsufficientFunds, EnvStrategy, EnvDLQ, EnvConcurrency, EnvIdempotencyTable} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("err = %v, want %s named", err, name)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %q, want one line: a Lambda logs each line apart", err)
	}
}

func TestValidateQueueURL(t *testing.T) {
	for u, ok := range map[string]bool{"": true, "https://sqs.eu-west-1.amazonaws.com/123456789012/q": true, "http://127.0.0.1:5000/123456789012/q": true,
		"movimientos-dlq": false, "ftp://h/q": false, "https:///q": false, "http://": false} {
		if err := ValidateQueueURL(u); (err == nil) != ok {
			t.Errorf("ValidateQueueURL(%q) = %v, want ok=%v", u, err, ok)
		}
	}
}

// LEDGER_CONCURRENCY takes 1 to 256, both included.
func TestConcurrencyBounds(t *testing.T) {
	for v, ok := range map[string]bool{"1": true, "256": true, "0": false, "257": false, "8x": false} {
		c, err := FromEnv(env(map[string]string{EnvConcurrency: v}))
		if (err == nil) != ok || (ok && strconv.Itoa(c.Concurrency) != v) {
			t.Errorf("%s=%s: %+v, %v; want accepted %v", EnvConcurrency, v, c.Concurrency, err, ok)
		}
	}
}

func TestValidateTable(t *testing.T) {
	for name, ok := range map[string]bool{"ledger": true, "prod.ledger-v2_eu": true, "abc": true, "ab": false, strings.Repeat("a", 255): true,
		strings.Repeat("a", 256): false, "no spaces": false, "tabla-ñ": false, "": false} {
		if err := ValidateTable(name); (err == nil) != ok {
			t.Errorf("ValidateTable(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestTablesMapEveryMigratedTable(t *testing.T) {
	c, err := FromEnv(env(map[string]string{EnvTable: "prod-ledger", EnvIdempotencyTable: "prod-idem"}))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Tables()
	if got["ledger"] != "prod-ledger" || got["idempotencia"] != "prod-idem" {
		t.Errorf("Tables() = %v", got)
	}
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if got[m.Table] == "" {
			t.Errorf("migration %s creates table %q, which the configuration does not name", m.Name, m.Table)
		}
	}
}
