package app

import (
	"os/exec"
	"strings"
	"testing"
)

// The Lambda functions link production code only: no baseline, comparison, simulation,
// demo or test support; the API does not link the consumer, and the events function,
// which only publishes what the stream hands it, links neither the consumer nor the
// store.
func TestTheLambdasLinkProductionCodeOnly(t *testing.T) {
	deps := func(pkg string) []string {
		t.Helper()
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	const module = "github.com/ledger-dev/ledger/"
	forbidden := []string{"internal/compare", "internal/sim", "internal/demo", "internal/testenv", "internal/audit", "internal/worker", "internal/migrate", "cmd/ledger"}
	for _, fn := range []string{"../../cmd/ledger-consumer", "../../cmd/ledger-api", "../../cmd/ledger-events"} {
		for _, d := range deps(fn) {
			for _, f := range forbidden {
				if d == module+f || strings.HasPrefix(d, module+f+"/") {
					t.Errorf("%s links %s", fn, d)
				}
			}
		}
	}
	for _, d := range deps("../../cmd/ledger-api") {
		if d == module+"internal/consumer" {
			t.Errorf("the API links the consumer")
		}
	}
	for _, d := range deps("../../cmd/ledger-events") {
		if d == module+"internal/consumer" || d == module+"internal/store" {
			t.Errorf("the events function links %s", d)
		}
	}
}
