// Command openapi-lint lints OpenAPI documents with the speakeasy-api/openapi linter,
// under the rules of a lint.yaml (-config; without one, the "recommended" ruleset).
// It prints each finding as `file:line:col severity rule message` and exits 1 when any
// finding is an error or a document cannot be read, 2 on a usage mistake.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/speakeasy-api/openapi/linter"
	"github.com/speakeasy-api/openapi/openapi"
	openapilinter "github.com/speakeasy-api/openapi/openapi/linter"
	"github.com/speakeasy-api/openapi/validation"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run lints the files args names and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("openapi-lint", flag.ContinueOnError)
	flags.SetOutput(stderr)
	configPath := flags.String("config", "", "a lint.yaml: rulesets to extend, rules to set or disable (default: extends recommended)")
	if err := flags.Parse(args); err != nil || flags.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: openapi-lint [-config lint.yaml] FILE...")
		return 2
	}
	config := &linter.Config{Extends: []string{"recommended"}}
	if *configPath != "" {
		var err error
		if config, err = linter.LoadConfigFromFile(*configPath); err != nil {
			fmt.Fprintf(stderr, "openapi-lint: %s: %v\n", *configPath, err)
			return 2
		}
	}
	status := 0
	for _, path := range flags.Args() {
		failed, err := lint(context.Background(), config, path, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "openapi-lint: %s: %v\n", path, err)
		}
		if failed || err != nil {
			status = 1
		}
	}
	return status
}

// lint prints path's findings under config; failed reports whether any is an error.
func lint(ctx context.Context, config *linter.Config, path string, out io.Writer) (failed bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	doc, invalid, err := openapi.Unmarshal(ctx, f)
	if err != nil {
		return false, err
	}
	l, err := openapilinter.NewLinter(config)
	if err != nil {
		return false, err
	}
	output, err := l.Lint(ctx, linter.NewDocumentInfo(doc, path), invalid, nil)
	if err != nil {
		return false, err
	}
	for _, finding := range output.Results {
		var v *validation.Error
		if !errors.As(finding, &v) {
			fmt.Fprintf(out, "%s:-:- error internal %v\n", path, finding)
			continue
		}
		fmt.Fprintf(out, "%s:%d:%d %s %s %v\n", path, v.GetLineNumber(), v.GetColumnNumber(), v.Severity, v.Rule, v.UnderlyingError)
	}
	return output.HasErrors(), nil
}
