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
	const module = "github.com/ledger-dev/ledger/"
	forbidden := []string{"internal/compare", "internal/sim", "internal/demo", "internal/testenv", "internal/audit", "internal/worker", "internal/migrate", "cmd/ledger"}
	for _, fn := range []struct {
		pkg string
		own []string // forbidden to this function only
	}{
		{"../../cmd/ledger-consumer", nil},
		{"../../cmd/ledger-api", []string{"internal/consumer"}},
		{"../../cmd/ledger-events", []string{"internal/consumer", "internal/store"}},
	} {
		out, err := exec.Command("go", "list", "-deps", fn.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", fn.pkg, err)
		}
		for _, d := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if d == module+f || strings.HasPrefix(d, module+f+"/") {
					t.Errorf("%s links %s", fn.pkg, d)
				}
			}
			for _, f := range fn.own {
				if d == module+f {
					t.Errorf("%s links %s", fn.pkg, d)
				}
			}
		}
	}
}
