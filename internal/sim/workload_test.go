package sim

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

func TestGenerateIsReproducibleAndNeverOverdraws(t *testing.T) {
	spec := Spec{Accounts: 7, Movements: 500, Seed: 42}
	a, err := Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(spec)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same spec generated two workloads")
	}
	if c, _ := Generate(Spec{Accounts: 7, Movements: 500, Seed: 43}); reflect.DeepEqual(a.Movements, c.Movements) {
		t.Fatal("another seed generated the same workload")
	}
	running := map[string]decimal.Decimal{}
	cargos := 0
	for _, m := range a.Movements {
		running[m.Cuenta] = running[m.Cuenta].Add(m.Delta())
		if running[m.Cuenta].IsNegative() {
			t.Fatalf("%s takes %s below zero", m.ID, m.Cuenta)
		}
		if m.Tipo == movimiento.Cargo {
			cargos++
		}
	}
	for c, s := range a.Saldos {
		if !s.Equal(running[c]) {
			t.Errorf("Saldos[%s] = %s, movements sum to %s", c, s, running[c])
		}
	}
	if cargos < 50 {
		t.Errorf("only %d cargos in 500 movements: the workload would not exercise the funds rule", cargos)
	}
}

func TestGenerateRefusesEmptyOrOddSpecs(t *testing.T) {
	for _, spec := range []Spec{{Accounts: 0, Movements: 1}, {Accounts: 1, Movements: 0}, {Accounts: 1, Movements: 1, Moneda: "JPY"}} {
		if _, err := Generate(spec); err == nil {
			t.Errorf("Generate(%+v) succeeded", spec)
		}
	}
}

func TestDeliveriesCarryEveryMovementAtLeastOnce(t *testing.T) {
	w, err := Generate(Spec{Accounts: 5, Movements: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := Deliveries(w, Mix{Duplicates: 0.25, Conflicting: 0.02, Malformed: 0.03}, 9)
	if len(s.Deliveries) != 200+50+6 || len(s.Late) != 4 {
		t.Fatalf("%d deliveries and %d late, want 256 and 4", len(s.Deliveries), len(s.Late))
	}
	seen := map[string]int{}
	ids := map[string]bool{}
	huella := map[string]string{}
	for _, m := range w.Movements {
		huella[m.ID] = m.Huella()
	}
	bad := 0
	for _, d := range s.Deliveries {
		if ids[d.ID] {
			t.Fatalf("message id %s used twice", d.ID)
		}
		ids[d.ID] = true
		m, err := movimiento.Parse([]byte(d.Body))
		if err != nil {
			bad++
			continue
		}
		if m.Huella() != huella[m.ID] {
			t.Errorf("delivery %s of %s changed the movement", d.ID, m.ID)
		}
		seen[m.ID]++
	}
	if bad != 6 || len(seen) != 200 {
		t.Errorf("%d malformed and %d distinct movements, want 6 and 200", bad, len(seen))
	}
	for _, d := range s.Late {
		m, err := movimiento.Parse([]byte(d.Body))
		if err != nil || m.Huella() == huella[m.ID] {
			t.Errorf("late delivery %s is not a conflicting duplicate: %v", d.Body, err)
		}
	}
	if again := Deliveries(w, Mix{Duplicates: 0.25, Conflicting: 0.02, Malformed: 0.03}, 9); !reflect.DeepEqual(s, again) {
		t.Error("the same seed scheduled different deliveries")
	}
}

func TestPrefixKeepsWorkloadsApart(t *testing.T) {
	a, err := Generate(Spec{Accounts: 3, Movements: 20, Seed: 5, Prefix: "c1-"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(Spec{Accounts: 3, Movements: 20, Seed: 5, Prefix: "c2-"})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range a.Movements {
		if !strings.HasPrefix(m.Cuenta, "c1-") || !strings.HasPrefix(b.Movements[i].Cuenta, "c2-") {
			t.Fatalf("movement %d: cuentas %q and %q do not start with their prefixes", i, m.Cuenta, b.Movements[i].Cuenta)
		}
		if m.Importe.Cmp(b.Movements[i].Importe) != 0 {
			t.Fatalf("movement %d: the prefix changed the money: %s and %s", i, m.Importe, b.Movements[i].Importe)
		}
	}
	if _, err := Generate(Spec{Accounts: 1, Movements: 1, Prefix: "c#1"}); err == nil {
		t.Error("a prefix with '#' made valid cuentas")
	}
}
