// Command ledger is the operator's CLI: it migrates tables, runs the demo and the local
// stack, serves the balance API, consumes a queue outside Lambda, audits, compares the
// design with the separate-table baseline, and sends movements. `ledger help` lists
// the commands; `ledger COMMAND --help` explains one, with an example.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ledger-dev/ledger/internal/config"
)

// command is one subcommand. run returns the process exit code: 0 success, 1 failure,
// 2 bad usage.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{demoCommand, upCommand, migrateCommand, serveCommand, consumeCommand, auditCommand, sendCommand, compareCommand}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		out := stdout
		if len(args) == 0 {
			out = stderr
		}
		usage(out)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "ledger: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "ledger applies account movements exactly once, with no idempotency table.")
	fmt.Fprintln(w, "\nUsage: ledger COMMAND [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'ledger COMMAND --help' for a command's flags and an example.")
}

// newFlags returns a flag set that reports errors instead of exiting, with a usage text
// made of the synopsis, the flags and an example.
func newFlags(name, synopsis, example string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ledger "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ledger %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), "\nExample:\n  %s\n", strings.ReplaceAll(strings.TrimSpace(example), "\n", "\n  "))
	}
	return fs
}

// parseFlags parses args; ok is false when the command must stop with code (0 after
// --help, 2 after a bad flag or stray arguments).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return 2, false
	}
	return 0, true
}

// envConfig reads the environment's configuration, with --table (when given)
// overriding LEDGER_TABLE. ok is false after it has reported a bad value: exit 2.
func envConfig(name, table string, stderr io.Writer) (cfg config.Config, ok bool) {
	cfg, err := config.FromEnv(nil)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return cfg, false
	}
	if table != "" {
		if err := config.ValidateTable(table); err != nil {
			fmt.Fprintf(stderr, "ledger %s: --table: %v\n", name, err)
			return cfg, false
		}
		cfg.Table = table
	}
	return cfg, true
}
