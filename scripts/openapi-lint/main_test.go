package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An operation without a security scheme is an error under lint.yaml: the finding
// names its file, line and rule, and the exit status is 1. api/openapi.yaml has no
// finding; a call without a file is a usage mistake.
func TestLintReportsErrorsWhereTheyAre(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	doc := `openapi: 3.1.0
info: {title: t, version: "1", description: d}
servers: [{url: "https://api.test"}]
paths:
  /a:
    get:
      operationId: getA
      description: d
      responses:
        '200': {description: ok}
        '400': {description: bad}
        '429': {description: slow down}
        '500': {description: broken}
`
	if err := os.WriteFile(bad, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		status int
		out    string
	}{
		{[]string{"-config", "lint.yaml", bad}, 1, bad + ":7:7 error owasp-protection-global-safe "},
		{[]string{"-config", "lint.yaml", filepath.Join("..", "..", "api", "openapi.yaml")}, 0, ""},
		{[]string{"-config", "lint.yaml"}, 2, ""},
		{[]string{"-config", "missing.yaml", bad}, 2, ""},
	} {
		var out, errs bytes.Buffer
		status := run(tc.args, &out, &errs)
		if status != tc.status || !strings.HasPrefix(out.String(), tc.out) || (tc.out == "" && out.Len() > 0) {
			t.Errorf("openapi-lint %v = %d\n%s%s; want %d with %q", tc.args, status, &out, &errs, tc.status, tc.out)
		}
	}
}
