package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

func TestDemoCommandPrintsTheDocumentedJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"demo", "--accounts", "4", "--movements", "150", "--seed", "1", "--json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var doc struct {
		Seed                                     uint64
		Accounts, Movements, Deliveries, Handled int
		Outcomes                                 map[string]int
		Audit                                    struct {
			OK                  bool
			Accounts, Movements int
			Broken, Unverified  []any
			Remitentes          []struct {
				Remitente, Via string
				Registros      int
			}
		}
		Transfers, Reversals, Refused int
		RefusedWhat                   []string `json:"refused_what"`
		Repartos                      struct{ Count, Legs, Widest int }
		Refunds                       struct {
			Partial        int
			RefundedInFull int `json:"refunded_in_full"`
		}
		Reversed struct{ Transfers, Repartos, Legs int }
		Holds    struct {
			Taken, Captured, Released, Expired int
			PartlyCaptured                     int `json:"partly_captured"`
		}
		Freeze struct {
			Cuenta       *string
			FrozenS      float64 `json:"frozen_s"`
			DebitsWaited int     `json:"debits_waited"`
		}
		Balances    []struct{ Cuenta, Saldo, Expected string }
		ExactlyOnce bool    `json:"exactly_once"`
		DurationS   float64 `json:"duration_s"`
	}
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not the documented document: %v", err)
	}
	if doc.Accounts != 4 || doc.Movements != 150 || !doc.Audit.OK || doc.Audit.Accounts != doc.Accounts || len(doc.Audit.Broken) != 0 || doc.Audit.Unverified == nil || len(doc.Audit.Remitentes) == 0 || doc.Outcomes["applied"] != 150 || !doc.ExactlyOnce {
		t.Errorf("demo --json = %+v", doc)
	}
	if h := doc.Holds; doc.Transfers == 0 || doc.Refused == 0 || h.Taken == 0 || h.Captured == 0 || h.PartlyCaptured == 0 || h.Released == 0 || h.Expired == 0 || doc.Freeze.Cuenta == nil {
		t.Errorf("demo --json counts %+v", doc)
	}
	if r := doc.Repartos; r.Count == 0 || r.Legs < 2*r.Count || r.Widest < 2 || doc.Refunds.Partial == 0 || doc.Reversed.Transfers == 0 || doc.Reversed.Repartos == 0 || doc.Reversed.Legs < doc.Reversed.Transfers+2*doc.Reversed.Repartos {
		t.Errorf("demo --json counts repartos %+v, refunds %+v, reversed %+v: want repartos, refunds in parts and a reversed transfer", r, doc.Refunds, doc.Reversed)
	}
	// What the text summary shows besides the counts: the seed, how often messages were
	// received, what was refused, how long the freeze held, each balance, the duration.
	if doc.Seed != 1 || doc.Handled < doc.Deliveries || len(doc.RefusedWhat) != doc.Refused || doc.Freeze.FrozenS <= 0 || doc.DurationS <= 0 {
		t.Errorf("demo --json: seed %d, handled %d of %d messages, refused %v of %d, frozen %gs, duration %gs", doc.Seed, doc.Handled, doc.Deliveries, doc.RefusedWhat, doc.Refused, doc.Freeze.FrozenS, doc.DurationS)
	}
	if len(doc.Balances) != doc.Accounts {
		t.Errorf("demo --json has %d balances for %d accounts", len(doc.Balances), doc.Accounts)
	}
	for _, b := range doc.Balances {
		if b.Cuenta == "" || b.Saldo == "" || b.Saldo != b.Expected {
			t.Errorf("demo --json balance %+v, want an account's saldo as expected", b)
		}
	}
	sum := 0
	for _, k := range []string{"applied", "duplicate", "conflicting_duplicate", "rejected", "failed"} {
		n, ok := doc.Outcomes[k]
		if !ok {
			t.Errorf("outcomes lack %q", k)
		}
		sum += n
	}
	if sum != doc.Deliveries || len(doc.Outcomes) != 5 {
		t.Errorf("outcomes %v do not account for the %d deliveries", doc.Outcomes, doc.Deliveries)
	}
}

// validate names the first thing wrong: the sizes, in their order, then --seed.
func TestDemoValidate(t *testing.T) {
	testValidate(t, newDemoCmd, []validateCase{
		{nil, ""},
		{[]string{"--accounts", "100000", "--movements", "10000", "--consumers", "64"}, ""},
		{[]string{"--accounts", "0", "--movements", "0"}, "--accounts must be within 1–100000, not 0"},
		{[]string{"--movements", "10001", "--seed", "0"}, "--movements must be within 1–10000, not 10001"},
		{[]string{"--consumers", "0"}, "--consumers must be within 1–64, not 0"},
		{[]string{"--seed", "0"}, "--seed must be at least 1"},
	})
}
