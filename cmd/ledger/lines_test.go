package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// readLines skips blank lines, names an over-long line by its number without holding
// it, and reads on after it: a 1 MiB line does not end the input.
func TestReadLinesSkipsALongLineAndReadsOn(t *testing.T) {
	exact := strings.Repeat("x", maxLine)
	in := "{\"id\":\"a\"}\r\n\n" + strings.Repeat("y", 1<<20) + "\n" + exact + "\n  \n{\"id\":\"b\"}" // no final newline
	var got, errs []string
	for line, err := range readLines(strings.NewReader(in)) {
		switch {
		case errors.Is(err, errLongLine):
			errs = append(errs, err.Error())
		case err != nil:
			t.Fatal(err)
		default:
			got = append(got, line)
		}
	}
	if want := []string{`{"id":"a"}`, exact, `{"id":"b"}`}; !slices.Equal(got, want) {
		t.Errorf("lines = %.40q, want %.40q", got, want)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "line 3 is over 262144 bytes") {
		t.Errorf("errors = %q, want line 3 named", errs)
	}
}
