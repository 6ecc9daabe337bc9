package demo

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestDemoAppliesEveryMovementExactlyOnce(t *testing.T) {
	var progress bytes.Buffer
	s, err := Run(context.Background(), Options{Accounts: 6, Movements: 300, Seed: 7, Consumers: 3, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if !s.ExactlyOnce || !s.Audit.OK {
		t.Fatalf("summary = %+v", s)
	}
	o := s.Outcomes
	if o.Applied != 300 || o.Duplicate < 75 || o.Failed == 0 || o.ConflictingDuplicate == 0 {
		t.Errorf("outcomes = %+v: want 300 applied, the duplicates recognised, the malformed and conflicting refused", o)
	}
	if got := o.Applied + o.Duplicate + o.ConflictingDuplicate + o.Rejected + o.Failed; got != s.Deliveries {
		t.Errorf("outcomes cover %d deliveries of %d", got, s.Deliveries)
	}
	if s.Handled <= s.Deliveries {
		t.Errorf("%d deliveries handled for %d messages: the demo did not exercise retries or redeliveries", s.Handled, s.Deliveries)
	}
	for _, b := range s.Balances {
		if !b.Saldo.Equal(b.Expected) {
			t.Errorf("%s: %s, want %s", b.Cuenta, b.Saldo, b.Expected)
		}
	}
	if !strings.Contains(progress.String(), "100% of messages settled") {
		t.Errorf("progress = %q", progress.String())
	}
}
