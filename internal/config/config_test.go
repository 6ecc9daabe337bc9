package config

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ledger-dev/ledger/internal/cuenta"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestDefaults(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil || c.Table != "ledger" || c.InsufficientFunds != cuenta.Retry || c.DLQ != "" || c.Concurrency != 0 {
		t.Fatalf("defaults = %+v, %v", c, err)
	}
}

func TestReadsTheEnvironment(t *testing.T) {
	c, err := FromEnv(env(map[string]string{EnvTable: "prod-ledger", EnvInsufficientFunds: "reject",
		EnvDLQ: "https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos-dlq", EnvConcurrency: "16"}))
	if err != nil || c.Table != "prod-ledger" || c.InsufficientFunds != cuenta.Reject || c.DLQ == "" || c.Concurrency != 16 {
		t.Fatalf("config = %+v, %v", c, err)
	}
}

func TestReportsEveryProblemAtOnce(t *testing.T) {
	_, err := FromEnv(env(map[string]string{EnvTable: "no spaces", EnvInsufficientFunds: "ignore",
		EnvDLQ: "movimientos-dlq", EnvConcurrency: "0"}))
	for _, name := range []string{EnvTable, EnvInsufficientFunds, EnvDLQ, EnvConcurrency} {
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
