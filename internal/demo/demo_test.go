package demo

import (
	"bytes"
	"context"
	"fmt"
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

// Every size a newcomer might try succeeds, accounts no movement reached included
// (balance 0), and the progress lines count up truthfully.
func TestDemoSucceedsAtEverySize(t *testing.T) {
	for _, tc := range []struct{ accounts, movements int }{{1, 1}, {3, 3}, {20, 10}, {20, 100}} {
		var progress bytes.Buffer
		s, err := Run(context.Background(), Options{Accounts: tc.accounts, Movements: tc.movements, Seed: 1, Progress: &progress})
		if err != nil || !s.ExactlyOnce {
			t.Fatalf("%d movements on %d accounts: %v, %+v", tc.movements, tc.accounts, err, s)
		}
		if len(s.Balances) != tc.accounts {
			t.Errorf("%d movements on %d accounts: %d balances", tc.movements, tc.accounts, len(s.Balances))
		}
		lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
		last := lines[len(lines)-1]
		if want := fmt.Sprintf("100%% of messages settled (%d/%d)", s.Deliveries, s.Deliveries); !strings.Contains(last, want) {
			t.Errorf("%d movements: last progress line %q, want %q", tc.movements, last, want)
		}
		for i := 1; i < len(lines); i++ {
			if lines[i] == lines[i-1] {
				t.Errorf("%d movements: progress repeats %q", tc.movements, lines[i])
			}
		}
	}
}
