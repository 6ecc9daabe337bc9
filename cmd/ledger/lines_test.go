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
	var numbers []int
	for l, err := range readLines(strings.NewReader(in)) {
		switch {
		case errors.Is(err, errLongLine):
			errs = append(errs, err.Error())
		case err != nil:
			t.Fatal(err)
		default:
			got, numbers = append(got, l.text), append(numbers, l.n)
		}
	}
	if want := []string{`{"id":"a"}`, exact, `{"id":"b"}`}; !slices.Equal(got, want) || !slices.Equal(numbers, []int{1, 4, 6}) {
		t.Errorf("lines = %.40q numbered %v, want %.40q numbered 1, 4, 6", got, numbers, want)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "line 3 is over 262144 bytes") {
		t.Errorf("errors = %q, want line 3 named", errs)
	}
}
