package app

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/idempotencia"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/store"
)

func TestApplierFollowsTheStrategy(t *testing.T) {
	for strategy, want := range map[ledger.Strategy]string{ledger.Transaction: "*store.Ledger", ledger.SeparateTable: "*idempotencia.Service"} {
		cfg, err := config.FromEnv(func(k string) string {
			if k == config.EnvStrategy {
				return string(strategy)
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		a, err := Applier(cfg, aws.Config{Region: "eu-west-1"}, Endpoints{})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		switch a.(type) {
		case *store.Ledger:
			got = "*store.Ledger"
		case *idempotencia.Service:
			got = "*idempotencia.Service"
		}
		if got != want {
			t.Errorf("LEDGER_STRATEGY=%s built %T, want %s", strategy, a, want)
		}
	}
}
