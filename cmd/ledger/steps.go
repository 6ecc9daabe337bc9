package main

import (
	"context"
	"errors"
	"fmt"
)

// options are one command's parsed command line, in a struct of its own, in two steps:
// validate names the one thing wrong with the flags and arguments, before any long
// work or network call; run does the work.
type options interface {
	validate() error
	run(ctx context.Context) error
}

// usageErr is a mistake of the command line that shows only once run has read the
// environment, such as a queue on this machine with no endpoint serving it: it is
// reported as validate's are, and exits 2.
type usageErr struct{ err error }

func (e usageErr) Error() string { return e.err.Error() }
func (e usageErr) Unwrap() error { return e.err }

// errReported ends a run whose result, already printed, is a failure (an audit that
// found broken accounts): it exits 1 with nothing more to say.
var errReported = errors.New("the result printed is a failure")

// execute parses args, allowing at most want positional arguments, then steps through o.
func (f *flags) execute(ctx context.Context, args []string, want int, o options) int {
	if code, ok := f.parse(args, want); !ok {
		return code
	}
	return f.step(ctx, o)
}

// step validates o, then runs it; it returns the exit code, having said in one line
// what went wrong: 2 for the command line, 1 for a failure.
func (f *flags) step(ctx context.Context, o options) int {
	if err := o.validate(); err != nil {
		return f.usageError("%v", err)
	}
	var usage usageErr
	switch err := o.run(ctx); {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		return f.usageError("%v", err)
	case errors.Is(err, errReported):
		return 1
	default:
		return f.fail(err)
	}
}

// badUsage is a usageErr saying what fmt.Errorf says.
func badUsage(format string, args ...any) error {
	return usageErr{fmt.Errorf(format, args...)}
}
