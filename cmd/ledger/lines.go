package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// maxLine bounds one JSON line: SQS and SNS take messages of at most 256 KiB.
const maxLine = movimiento.MaxBody

// errLongLine is the error readLines yields for a line over maxLine bytes; reading goes
// on after it.
var errLongLine = fmt.Errorf("over %d bytes, SQS's and SNS's limit for a message", maxLine)

// line is a line of input and its number, from 1.
type line struct {
	n    int
	text string
}

// readLines yields the lines of r that are not blank (whitespace, a stray \r, is
// blank). A line over maxLine bytes is yielded as errLongLine (wrapped, naming it) and
// skipped, holding at most maxLine bytes of it; a read error ends the lines.
func readLines(r io.Reader) iter.Seq2[line, error] {
	return func(yield func(line, error) bool) {
		br := bufio.NewReader(r)
		for n := 1; ; n++ {
			var text []byte
			long, eof := false, false
			for {
				chunk, more, err := br.ReadLine()
				if errors.Is(err, io.EOF) {
					eof = true
					break
				}
				if err != nil {
					yield(line{}, fmt.Errorf("read line %d: %w", n, err))
					return
				}
				long = long || len(text)+len(chunk) > maxLine
				if !long {
					text = append(text, chunk...)
				}
				if !more {
					break
				}
			}
			switch {
			case long:
				if !yield(line{}, fmt.Errorf("line %d is %w", n, errLongLine)) {
					return
				}
			case strings.TrimSpace(string(text)) != "":
				if !yield(line{n, string(text)}, nil) {
					return
				}
			}
			if eof {
				return
			}
		}
	}
}
