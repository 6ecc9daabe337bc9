// Command ledger is the operator's CLI; `ledger help` lists its commands. Results go to
// stdout (one JSON document with --json), progress and logs to stderr. Exit codes: 0
// success, 1 failure, 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
)

// command is one subcommand. run returns the process exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{demoCommand, upCommand, migrateCommand, serveCommand, consumeCommand, cuentaCommand, extractoCommand, auditCommand, sendCommand, compareCommand}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal asks the command to stop cleanly; a second one ends it at once.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "ledger: give a command; run 'ledger help' for the list")
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, version())
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "ledger: unknown command %q; run 'ledger help' for the list\n", args[0])
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "ledger applies account movements exactly once, with no idempotency table.")
	fmt.Fprintln(w, "\nUsage: ledger COMMAND [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'ledger COMMAND --help' for a command's flags and an example; 'ledger --version' for the build.")
}

// version is the module version and the VCS revision the binary was built from.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "ledger (unknown build)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	v := "ledger " + info.Main.Version
	if rev := settings["vcs.revision"]; rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += ", modified"
		}
		v += " (" + rev + ")"
	}
	return v + " " + info.GoVersion
}

// flags is a command's flag set: --help prints the synopsis, the flags and an example
// on stdout; a bad flag is one line on stderr naming it, then where to find help.
type flags struct {
	*flag.FlagSet
	name           string
	text           helpText
	stdout, stderr io.Writer
}

// helpText is what a command's --help says besides its flags.
type helpText struct {
	synopsis string // the command line's shape, after "ledger NAME"
	about    string // what the command does with its flags, and its defaults that differ
	example  string // command lines to copy, one a line
}

func newFlags(name string, text helpText, stdout, stderr io.Writer) *flags {
	fs := flag.NewFlagSet("ledger "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse errors are reported by parse, in one line
	fs.Usage = func() {}     // and help by help, on stdout
	return &flags{FlagSet: fs, name: name, text: text, stdout: stdout, stderr: stderr}
}

// help prints the synopsis, the description, the flags and an example on stdout.
func (f *flags) help() {
	fmt.Fprintf(f.stdout, "Usage: ledger %s %s\n\n", f.name, f.text.synopsis)
	if about := strings.TrimSpace(f.text.about); about != "" {
		fmt.Fprintf(f.stdout, "%s\n\n", about)
	}
	fmt.Fprintln(f.stdout, "Flags:")
	f.SetOutput(f.stdout)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
	fmt.Fprintf(f.stdout, "\nExample:\n  %s\n", strings.ReplaceAll(strings.TrimSpace(f.text.example), "\n", "\n  "))
}

// parse parses args, allowing at most want positional arguments; ok is false when the
// command must stop with code: 0 after --help, 2 after a bad flag or a stray argument.
func (f *flags) parse(args []string, want int) (code int, ok bool) {
	err := f.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		f.help()
		return 0, false
	case err != nil:
		return f.usageError("%v", err), false
	case f.NArg() > want:
		return f.usageError("unexpected argument %q", f.Arg(want)), false
	}
	return 0, true
}

// given reports whether the command line set the flag name, even to its default.
func (f *flags) given(name string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// usageError reports the one thing wrong with the command line and how to get help;
// it returns 2.
func (f *flags) usageError(format string, args ...any) int {
	fmt.Fprintf(f.stderr, "ledger %s: %s\nrun 'ledger %s --help' for usage\n", f.name, fmt.Sprintf(format, args...), f.name)
	return 2
}

// fail reports a failure in one line; it returns exit code 1.
func (f *flags) fail(err error) int {
	if errors.Is(err, context.Canceled) { // Ctrl-C: the one thing to say
		err = errInterrupted
	}
	// An SDK error may span lines; the report stays one.
	fmt.Fprintf(f.stderr, "ledger %s: %s\n", f.name, strings.ReplaceAll(err.Error(), "\n", " "))
	return 1
}

var errInterrupted = errors.New("interrupted")
