package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// documentedSize is docs/design.md's row for this bootstrap's size, its figure in MB.
var documentedSize = regexp.MustCompile("\\| consumer bootstrap, linux/arm64, stripped \\(`make build`\\) \\| ([0-9.]+) MB \\|")

// sizeTolerance is how far the documented size may be from the built one, as a share
// of the built one: a figure that drifts further is out of date.
const sizeTolerance = 0.05

// The size docs/design.md gives the consumer's bootstrap is what `make build` makes,
// within 5 %. The bootstrap is built by the Makefile's own recipe, so the figure
// follows the flags that are deployed.
func TestTheDocumentedBootstrapSizeIsWhatMakeBuildMakes(t *testing.T) {
	doc, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	m := documentedSize.FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/design.md has no row matching %s", documentedSize)
	}
	documented, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	built := float64(makeBuild(t, "ledger-consumer")) / 1e6
	if math.Abs(documented-built) > sizeTolerance*built {
		t.Errorf("docs/design.md gives the consumer bootstrap as %.1f MB; make build makes %.1f MB: update the figure", documented, built)
	}
}

// makeBuild builds the Lambda command as `make build` does, into a directory of the
// test's, and returns the bootstrap's size in bytes. It skips t where make is absent.
func makeBuild(t *testing.T, command string) int64 {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed: the bootstrap is built by the Makefile's recipe")
	}
	bin := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "-s", "-C", "../..", "BIN="+bin, "build-"+command)
	for _, kv := range os.Environ() { // a make running this test passes its own flags on; this make takes none
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build-%s: %v\n%s", command, err, out)
	}
	st, err := os.Stat(filepath.Join(bin, command, "bootstrap"))
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
