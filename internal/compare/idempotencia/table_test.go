package idempotencia_test

import (
	"testing"

	"github.com/ledger-dev/ledger/internal/compare/idempotencia"
	"github.com/ledger-dev/ledger/migrations"
)

// The baseline's records expire by DynamoDB's TTL, as Powertools keeps them.
func TestTheIdempotencyTableExpiresByTTL(t *testing.T) {
	m, err := idempotencia.Migration()
	if err != nil {
		t.Fatal(err)
	}
	if m.Table != idempotencia.Table || m.Key != (migrations.Key{Partition: "pk"}) || m.TTL != "expira" {
		t.Errorf("idempotencia = %+v, want key pk and TTL on expira", m)
	}
}
