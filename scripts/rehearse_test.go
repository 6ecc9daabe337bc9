package scripts

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ledger-dev/ledger/internal/testenv"
)

// rehearsalTimeout bounds one rehearsal: about 20 s on a quiet machine, most of it
// moto's imports and a message's five receives before it reaches the DLQ.
const rehearsalTimeout = 3 * time.Minute

// missingType is added to template.yaml for TestRehearsal: a resource of a type moto
// has no model for (nor has AWS), what refers to it, and what refers to it only where
// a false condition would take it.
const missingType = `
Conditions:
  RehearsalNever: !Equals ["yes", "no"]
Resources:
  Missing:
    Type: AWS::Rehearsal::Missing
  NeedsMissing:
    Type: AWS::SQS::Queue
    Properties:
      Tags:
        - Key: missing
          Value: !Ref Missing
  KeptQueue:
    Type: AWS::SQS::Queue
    Properties:
      Tags:
        - Key: missing
          Value: !If [RehearsalNever, !GetAtt Missing.Name, none]
  MissingNever:
    Type: AWS::Rehearsal::Missing
    Condition: RehearsalNever
Outputs:
  MissingName:
    Value: !Sub "${Missing}-name"
`

// TestRehearsal runs the deploy rehearsal on the moto server: template.yaml (with
// missingType added) transformed and created as a stack, movements sent through the
// stack's queue and read back through its table and DLQ. What moto lacks is left out
// by name, with only what needs it; the rest is created and used.
func TestRehearsal(t *testing.T) {
	endpoint := os.Getenv(testenv.MotoEndpointEnv)
	if endpoint == "" {
		t.Skipf("%s is not set: the rehearsal runs on moto (make test)", testenv.MotoEndpointEnv)
	}
	python := pythonWithTools(t)
	ledger := buildLedger(t)
	stack := "rehearsal-" + strings.ToLower(rand.Text()[:10])
	ctx, cancel := context.WithTimeout(context.Background(), rehearsalTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "rehearse.py", "--endpoint", endpoint, "--ledger", ledger,
		"--template", templateWithMissingType(t), "--stack", stack, "TableName="+stack)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("rehearse.py: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"\nskipped AWS::Rehearsal::Missing (moto has no such resource): Missing\n",
		"NeedsMissing (Missing)",
		"MissingName (Missing)",
		"CREATE_COMPLETE",
		"\n  pago-roto: ledger: permanent failure: movimiento: importe \"12,50\"",
		"\n  coche: moved by SQS after maxReceiveCount",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the rehearsal did not print %q:\n%s", want, out)
		}
	}
	queues := line(out, "  AWS::SQS::Queue: ")
	if !strings.Contains(queues, "KeptQueue") || strings.Contains(queues, "NeedsMissing") {
		t.Errorf("want KeptQueue created (the Fn::If leaves Missing out) and NeedsMissing not: %q", queues)
	}
	if strings.Contains(out, "MissingNever") {
		t.Errorf("MissingNever's condition is false, yet the rehearsal names it:\n%s", out)
	}
	// docs/deploy.md shows the stack and its table under the default names.
	shown := strings.ReplaceAll(out, stack, "ledger")
	for _, want := range documentedOutput(t) {
		if !want.MatchString(shown) {
			t.Errorf("docs/deploy.md shows the rehearsal printing a line %q, which it did not:\n%s", want, out)
		}
	}
}

// documentedOutput is the rehearsal's output as docs/deploy.md shows it: a pattern for
// each line of the first text block after its heading "Rehearse it first", where "…"
// stands for any text.
func documentedOutput(t *testing.T) []*regexp.Regexp {
	t.Helper()
	doc, err := os.ReadFile(testenv.ModuleFile(t, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(doc), "## Rehearse it first")
	_, block, opened := strings.Cut(section, "```text\n")
	block, _, closed := strings.Cut(block, "```")
	if !found || !opened || !closed {
		t.Fatal("docs/deploy.md has no section \"Rehearse it first\" with a text block")
	}
	var lines []*regexp.Regexp
	for l := range strings.Lines(block) {
		parts := strings.Split(strings.TrimSuffix(l, "\n"), "…")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		lines = append(lines, regexp.MustCompile("(?m)^"+strings.Join(parts, ".*")+"$"))
	}
	return lines
}

// pythonWithTools is $PYTHON (python3 by default), which must import what the
// rehearsal needs: it is the python that runs the moto server.
func pythonWithTools(t *testing.T) string {
	t.Helper()
	python := os.Getenv("PYTHON")
	if python == "" {
		python = "python3"
	}
	if out, err := exec.Command(python, "-c", "import boto3, cfnlint, samtranslator, moto.cloudformation.parsing").CombinedOutput(); err != nil {
		t.Fatalf("%s is set, but %s cannot import the rehearsal's tools (set PYTHON to moto's python, as make test does): %v\n%s", testenv.MotoEndpointEnv, python, err, out)
	}
	return python
}

// buildLedger builds cmd/ledger into the test's temporary directory.
func buildLedger(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ledger")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ledger")
	cmd.Dir = filepath.Dir(testenv.ModuleFile(t, "go.mod"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build ledger: %v\n%s", err, out)
	}
	return bin
}

// templateWithMissingType writes template.yaml with missingType's conditions,
// resources and outputs added to its own, and returns its path.
func templateWithMissingType(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(testenv.ModuleFile(t, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc, extra yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(missingType), &extra); err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"Conditions", "Resources", "Outputs"} {
		into := mapping(t, doc.Content[0], section)
		into.Content = append(into.Content, mapping(t, extra.Content[0], section).Content...)
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// mapping is the value of key in the YAML mapping node m, itself a mapping.
func mapping(t *testing.T, m *yaml.Node, key string) *yaml.Node {
	t.Helper()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.MappingNode {
			return m.Content[i+1]
		}
	}
	t.Fatalf("the template has no mapping %s", key)
	return nil
}

// line is the line of out that starts with prefix, or "".
func line(out, prefix string) string {
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
