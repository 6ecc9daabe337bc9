package main

// The README check (`make readme-check`, part of `make test`) runs the README's marked
// shell blocks against the embedded store, so that what they show stays true.
//
// The convention, for whoever writes the README:
//
//   - A block is checked when the line <!-- readme-check --> comes right before its
//     opening fence, ```sh (blank lines may come between). Other blocks are not run.
//
//   - Every line of a checked block is a comment, blank, or one command; a trailing \
//     continues a command on the next line. A command is one of:
//
//     ledger ARGS… or go run ./cmd/ledger ARGS…
//     run in-process with run(); it must exit 0.
//
//     ledger up ARGS…   (a trailing & is allowed)
//     started in the background on a free port: its --addr (default 127.0.0.1:8080)
//     is replaced, and so is that address in the block's curl URLs. It is stopped
//     when the block ends, and must then exit 0.
//
//     curl -s URL
//     an HTTP GET of URL (quote it when it has ? or &), which must name the address
//     of a ledger up started earlier in the block.
//
//     sleep N
//     a reader's pause; the check itself waits for ledger up to listen.
//
//     Words are split as sh splits them, with '…' and "…" quoting; anything more
//     (variables, globs, pipes, redirections, other programs) fails the check rather
//     than being run differently from a shell.
//
//   - A comment line # → TEXT under a command is what the command must show (several
//     such lines: all of them):
//
//     ledger: TEXT appears in its stdout (for ledger up: in what it printed by the
//     time it stopped, with the README's address in place of the real one).
//
//     curl: when TEXT is JSON ({…} or […]), the body is the same JSON, except that
//     the values of "actualizada" and "aplicado" (times) and any value written as
//     "…" are not compared (the keys must still be there); other TEXT appears in the
//     body. Since ledger up consumes its file in the background, a curl is repeated
//     for up to 30 s until it shows what the README says.
//
//     Other comments are prose and are not checked.
//
//   - Blocks run in README order, each on a fresh embedded store, in the repository
//     root (so `--from examples/x.jsonl` is a path in the repository).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/testenv"
)

const (
	readmeMarker = "<!-- readme-check -->"
	readmeWant   = "# →"
	// readmeDefaultAddr is ledger up's --addr when none is given.
	readmeDefaultAddr = "127.0.0.1:8080"
)

// readmeVolatile are the JSON keys whose values change from run to run (times).
var readmeVolatile = map[string]bool{"actualizada": true, "aplicado": true}

func TestReadme(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := checkedBlocks("README.md", string(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatalf("README.md has no %s blocks: nothing would be checked", readmeMarker)
	}
	t.Chdir(root)
	check := readmeCheck{file: "README.md", settle: 30 * time.Second}
	for _, b := range blocks {
		t.Run(fmt.Sprintf("line%d", b.line), func(t *testing.T) {
			for _, err := range check.run(t.Context(), b) {
				t.Error(err)
			}
		})
	}
}

func TestReadmeCheckRunsUpAndCurlAndComparesLeniently(t *testing.T) {
	file := filepath.Join(t.TempDir(), "movimientos.jsonl")
	lines := `{"id":"a1","cuenta":"ES76","tipo":"abono","importe":"100.00","moneda":"EUR"}
{"id":"c1","cuenta":"ES76","tipo":"cargo","importe":"30.00","moneda":"EUR","concepto":"Pedido 1"}
`
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	md := "# Title\n\n```sh\nnot checked: no marker\n```\n\n" + readmeMarker + "\n\n```sh\n" +
		"ledger --version   # a comment\n" +
		"# → ledger\n" +
		"go run ./cmd/ledger up --from '" + file + "' \\\n  --addr 127.0.0.1:8080 &\n" +
		"# → balance API on http://127.0.0.1:8080\n" +
		"curl -s http://127.0.0.1:8080/cuentas/ES76\n" +
		`# → {"cuenta":"ES76","saldo":"70.00","moneda":"EUR","limite":"…","bloqueada":false,"retenido":"0.00","disponible":"70.00","version":"…","movimientos":2,"actualizada":"2020-01-01T00:00:00Z"}` + "\n" +
		"curl -s 'http://127.0.0.1:8080/cuentas/ES76/movimientos/c1'\n" +
		`# → "concepto":"Pedido 1"` + "\n" +
		"curl -s http://127.0.0.1:8080/cuentas/nadie\n" +
		"# → not_found\n" +
		"```\n"
	blocks, err := checkedBlocks("x.md", md)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 || blocks[0].line != 10 {
		t.Fatalf("blocks = %+v, want the marked one, from line 10", blocks)
	}
	for _, err := range (readmeCheck{file: "x.md", settle: 30 * time.Second}).run(t.Context(), blocks[0]) {
		t.Error(err)
	}
}

func TestReadmeCheckReportsWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		name, block, want string
	}{
		{"another answer", "ledger --version\n# → no such text\n", `x.md:4: ledger --version: stdout does not contain "no such text"`},
		{"a failing command", "ledger nonsense\n", `x.md:3: ledger nonsense: exit 2`},
		{"another JSON", "ledger up --from /dev/null\ncurl -s http://127.0.0.1:8080/cuentas/ES76\n# → {\"error\":\"bad_request\",\"message\":\"…\"}\n",
			`x.md:5: curl -s http://127.0.0.1:8080/cuentas/ES76: want {"error":"bad_request","message":"…"}`},
		{"invalid JSON", "ledger --version\ncurl -s http://127.0.0.1:8080/\n# → {\"a\":…}\n", `x.md:5: # → {"a":…} is not valid JSON`},
		{"no up", "curl -s http://127.0.0.1:9999/cuentas/ES76\n", "x.md:3: curl -s http://127.0.0.1:9999/cuentas/ES76: no ledger up of this block listens on 127.0.0.1:9999"},
		{"another program", "echo hello\n", `x.md:3: echo hello: not a command a checked block may run`},
		{"sleep without seconds", "sleep a while\n", `x.md:3: sleep a while: not a command a checked block may run`},
		{"sleep with no number", "sleep soon\n", `x.md:3: sleep soon: sleep takes a number of seconds`},
		{"a variable", "ledger demo --seed $SEED\n", "x.md:3: ledger demo --seed $SEED: $ (a shell feature) is not supported"},
		{"a glob", "curl -s http://127.0.0.1:8080/cuentas?limit=2\n", "x.md:3: curl -s http://127.0.0.1:8080/cuentas?limit=2: ? (a shell feature) is not supported"},
		{"background", "ledger demo &\n", "x.md:3: ledger demo &: only ledger up may run in the background (&)"},
		{"a pipe", "ledger demo | head\n", "x.md:3: ledger demo | head: | (a shell feature) is not supported"},
		{"curl flags", "curl -X POST http://127.0.0.1:8080/\n", "x.md:3: curl -X POST http://127.0.0.1:8080/: only curl -s URL is supported"},
		{"an answer before any command", "# → hello\n", "x.md:3: # → hello comes before any command"},
	} {
		t.Run(c.name, func(t *testing.T) {
			blocks, err := checkedBlocks("x.md", "```sh\n"+c.block+"```\n")
			if err != nil || len(blocks) != 0 {
				t.Fatalf("an unmarked block: %v, %v", blocks, err)
			}
			blocks, err = checkedBlocks("x.md", readmeMarker+"\n```sh\n"+c.block+"```\n")
			if err != nil {
				t.Fatal(err)
			}
			errs := (readmeCheck{file: "x.md", settle: 300 * time.Millisecond}).run(t.Context(), blocks[0])
			if len(errs) == 0 || !strings.Contains(errs[0].Error(), c.want) {
				t.Errorf("errors = %v, want the first to contain %q", errs, c.want)
			}
		})
	}
	for _, md := range []string{readmeMarker + "\ntext\n", readmeMarker + "\n```json\n{}\n```\n", readmeMarker + "\n```sh\nledger demo\n"} {
		if _, err := checkedBlocks("x.md", md); err == nil {
			t.Errorf("checkedBlocks(%q) took it", md)
		}
	}
}

// readmeBlock is a checked block: its lines, and the line number of the first.
type readmeBlock struct {
	line  int
	lines []string
}

// checkedBlocks returns markdown's blocks marked with readmeMarker.
func checkedBlocks(file, markdown string) ([]readmeBlock, error) {
	var blocks []readmeBlock
	lines := strings.Split(markdown, "\n")
	marked := 0 // the line of a marker waiting for its block
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		switch {
		case line == readmeMarker:
			marked = i + 1
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			fence, info := line[:3], strings.Fields(line[3:]+" ")
			end := slices.IndexFunc(lines[i+1:], func(l string) bool { return strings.TrimSpace(l) == fence })
			if end < 0 {
				return nil, fmt.Errorf("%s:%d: the code block is never closed", file, i+1)
			}
			if marked > 0 {
				if len(info) == 0 || info[0] != "sh" {
					return nil, fmt.Errorf("%s:%d: %s must come right before a ```sh block", file, marked, readmeMarker)
				}
				blocks = append(blocks, readmeBlock{line: i + 2, lines: lines[i+1 : i+1+end]})
				marked = 0
			}
			i += end + 1
		case line != "" && marked > 0:
			return nil, fmt.Errorf("%s:%d: %s must come right before a ```sh block", file, marked, readmeMarker)
		}
	}
	if marked > 0 {
		return nil, fmt.Errorf("%s:%d: %s must come right before a ```sh block", file, marked, readmeMarker)
	}
	return blocks, nil
}

// readmeStep is one command of a checked block.
type readmeStep struct {
	line       int    // where it starts
	text       string // as written, continuation lines joined
	words      []string
	background bool     // it ended with &
	want       []string // the TEXT of its # → lines
	wantLines  []int
}

// steps parses b's commands and what they must show.
func (b readmeBlock) steps(file string) ([]readmeStep, error) {
	var steps []readmeStep
	for i := 0; i < len(b.lines); i++ {
		line, n := strings.TrimSpace(b.lines[i]), b.line+i
		for strings.HasSuffix(line, `\`) && i+1 < len(b.lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(b.lines[i])
		}
		switch {
		case line == "":
		case strings.HasPrefix(line, readmeWant):
			if len(steps) == 0 {
				return nil, fmt.Errorf("%s:%d: %s comes before any command", file, n, line)
			}
			s := &steps[len(steps)-1]
			s.want = append(s.want, strings.TrimSpace(strings.TrimPrefix(line, readmeWant)))
			s.wantLines = append(s.wantLines, n)
		case strings.HasPrefix(line, "#"):
		default:
			words, background, err := shellWords(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %v", file, n, line, err)
			}
			steps = append(steps, readmeStep{line: n, text: line, words: words, background: background})
		}
	}
	return steps, nil
}

// shellWords splits line into words as sh does for a simple command: blanks separate
// words, '…' quotes literally, "…" quotes with \ escaping \ " $ and `, \ escapes one
// character, # at the start of a word begins a comment, and a final & runs the
// command in the background. Whatever else sh would expand or interpret is refused.
func shellWords(line string) (words []string, background bool, err error) {
	var word strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, word.String())
		}
		word.Reset()
		inWord = false
	}
	r := []rune(line)
	for i := 0; i < len(r); i++ {
		switch c := r[i]; {
		case c == ' ' || c == '\t':
			end()
		case c == '#' && !inWord:
			i = len(r)
		case c == '\'':
			j := slices.Index(r[i+1:], '\'')
			if j < 0 {
				return nil, false, errors.New("unterminated '")
			}
			word.WriteString(string(r[i+1 : i+1+j]))
			inWord, i = true, i+1+j
		case c == '"':
			inWord = true
			for i++; ; i++ {
				if i == len(r) {
					return nil, false, errors.New(`unterminated "`)
				}
				if r[i] == '"' {
					break
				}
				if r[i] == '$' || r[i] == '`' {
					return nil, false, fmt.Errorf("%c (a shell feature) is not supported", r[i])
				}
				if r[i] == '\\' && i+1 < len(r) && strings.ContainsRune("\\\"$`", r[i+1]) {
					i++
				}
				word.WriteRune(r[i])
			}
		case c == '\\':
			if i+1 < len(r) {
				i++
				word.WriteRune(r[i])
				inWord = true
			}
		case c == '&' && strings.TrimSpace(string(r[i+1:])) == "":
			end()
			return words, true, nil
		case strings.ContainsRune("$`|&;<>()*?[{}", c) || c == '~' && !inWord:
			return nil, false, fmt.Errorf("%c (a shell feature) is not supported", c)
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	end()
	return words, false, nil
}

// readmeCheck runs checked blocks.
type readmeCheck struct {
	file string
	// settle is how long a curl is repeated until it shows what the block says.
	settle time.Duration
}

// background is a ledger up the block started.
type background struct {
	step          readmeStep
	shown, actual string // the address the README shows, the one it listens on
	cancel        context.CancelFunc
	done          chan int
	stdout        *testenv.Buffer
	stderr        *testenv.Buffer
}

// run runs b's commands and returns what is not as the block shows.
func (c readmeCheck) run(ctx context.Context, b readmeBlock) (errs []error) {
	steps, err := b.steps(c.file)
	if err != nil {
		return []error{err}
	}
	var started []*background
	defer func() {
		for _, bg := range started {
			errs = append(errs, c.stop(bg)...)
		}
	}()
	for _, s := range steps {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s: %s", c.file, s.line, s.text, fmt.Sprintf(format, args...))
		}
		args, isLedger := ledgerArgs(s.words)
		if s.background && !(isLedger && len(args) > 0 && args[0] == "up") {
			return append(errs, fail("only ledger up may run in the background (&)"))
		}
		switch {
		case isLedger && len(args) > 0 && args[0] == "up":
			bg, err := c.start(ctx, s, args)
			if err != nil {
				return append(errs, fail("%v", err))
			}
			started = append(started, bg)
		case isLedger:
			var stdout, stderr bytes.Buffer
			if code := run(ctx, args, &stdout, &stderr); code != 0 {
				return append(errs, fail("exit %d; stderr:\n%s", code, tail(stderr.String())))
			}
			for i, want := range s.want {
				if !strings.Contains(stdout.String(), want) {
					errs = append(errs, fmt.Errorf("%s:%d: %s: stdout does not contain %q; stdout:\n%s", c.file, s.wantLines[i], s.text, want, tail(stdout.String())))
				}
			}
		case len(s.words) > 0 && s.words[0] == "curl":
			if err := c.curl(ctx, s, started); err != nil {
				errs = append(errs, err)
			}
		case len(s.words) == 2 && s.words[0] == "sleep":
			// A reader's pause for ledger up to start: the check waits for it to listen,
			// and asks each curl again until it settles.
			if _, err := strconv.ParseFloat(s.words[1], 64); err != nil {
				return append(errs, fail("sleep takes a number of seconds"))
			}
		default:
			return append(errs, fail("not a command a checked block may run (ledger, go run ./cmd/ledger, curl -s URL, sleep N)"))
		}
	}
	return errs
}

// ledgerArgs returns the arguments of a ledger command, and whether words are one.
func ledgerArgs(words []string) ([]string, bool) {
	switch {
	case len(words) >= 1 && words[0] == "ledger":
		return words[1:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/ledger":
		return words[3:], true
	}
	return nil, false
}

// start starts ledger up in the background on a free port and waits for it to listen.
func (c readmeCheck) start(ctx context.Context, s readmeStep, args []string) (*background, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	actual := ln.Addr().String()
	ln.Close()
	shown := readmeDefaultAddr
	args = slices.Clone(args)
	given := false
	for i, a := range args {
		switch {
		case (a == "--addr" || a == "-addr") && i+1 < len(args):
			shown, args[i+1], given = args[i+1], actual, true
		case strings.HasPrefix(a, "--addr=") || strings.HasPrefix(a, "-addr="):
			shown, args[i], given = a[strings.Index(a, "=")+1:], "--addr="+actual, true
		}
	}
	if !given {
		args = append(args, "--addr", actual)
	}
	ctx, cancel := context.WithCancel(ctx)
	bg := &background{step: s, shown: shown, actual: actual, cancel: cancel, done: make(chan int, 1), stdout: &testenv.Buffer{}, stderr: &testenv.Buffer{}}
	go func() { bg.done <- run(ctx, args, bg.stdout, bg.stderr) }()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if conn, err := net.DialTimeout("tcp", actual, time.Second); err == nil {
			conn.Close()
			return bg, nil
		}
		select {
		case code := <-bg.done:
			cancel()
			return nil, fmt.Errorf("exit %d before listening; stderr:\n%s", code, tail(bg.stderr.String()))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			<-bg.done
			return nil, fmt.Errorf("not listening on %s after 30 s; stderr:\n%s", actual, tail(bg.stderr.String()))
		}
	}
}

// stop stops a ledger up as Ctrl-C does, and checks its exit code and what it printed.
func (c readmeCheck) stop(bg *background) []error {
	bg.cancel()
	fail := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s: %s", c.file, line, bg.step.text, fmt.Sprintf(format, args...))
	}
	select {
	case code := <-bg.done:
		if code != 0 {
			return []error{fail(bg.step.line, "exit %d; stderr:\n%s", code, tail(bg.stderr.String()))}
		}
	case <-time.After(30 * time.Second):
		return []error{fail(bg.step.line, "still running 30 s after it was stopped")}
	}
	out := strings.ReplaceAll(bg.stdout.String()+bg.stderr.String(), bg.actual, bg.shown)
	var errs []error
	for i, want := range bg.step.want {
		if !strings.Contains(out, want) {
			errs = append(errs, fail(bg.step.wantLines[i], "its output does not contain %q; output:\n%s", want, tail(out)))
		}
	}
	return errs
}

// curl GETs the step's URL, on the ledger up it names, until the answer is what the
// step wants or c.settle has passed.
func (c readmeCheck) curl(ctx context.Context, s readmeStep, started []*background) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s: %s", c.file, s.line, s.text, fmt.Sprintf(format, args...))
	}
	var wantJSON []any
	for i, want := range s.want {
		if !strings.HasPrefix(want, "{") && !strings.HasPrefix(want, "[") {
			wantJSON = append(wantJSON, nil)
			continue
		}
		var v any
		if err := decodeJSON(want, &v); err != nil {
			return fmt.Errorf("%s:%d: %s %s is not valid JSON (%v); write elided values as \"…\"", c.file, s.wantLines[i], readmeWant, want, err)
		}
		wantJSON = append(wantJSON, v)
	}
	var target string
	for _, w := range s.words[1:] {
		switch {
		case w == "-s" || w == "--silent" || w == "-sS" || w == "-S" || w == "--show-error":
		case target == "" && !strings.HasPrefix(w, "-"):
			target = w
		default:
			return fail("only curl -s URL is supported")
		}
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" {
		return fail("only curl -s URL is supported, with an http:// URL")
	}
	i := slices.IndexFunc(started, func(bg *background) bool { return bg.shown == u.Host })
	if i < 0 {
		return fail("no ledger up of this block listens on %s", u.Host)
	}
	u.Host = started[i].actual
	client := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(c.settle); ; {
		var problems []error
		if body, err := get(ctx, client, u.String()); err != nil {
			problems = []error{fail("%v", err)}
		} else {
			problems = c.compare(s, wantJSON, body)
		}
		if len(problems) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return errors.Join(problems...)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// compare returns how body differs from what s wants (wantJSON: its # → lines that are
// JSON, decoded; nil for the others).
func (c readmeCheck) compare(s readmeStep, wantJSON []any, body string) []error {
	var problems []error
	for i, want := range s.want {
		if wantJSON[i] == nil {
			if !strings.Contains(body, want) {
				problems = append(problems, fmt.Errorf("%s:%d: %s: the answer does not contain %q; it is:\n%s", c.file, s.wantLines[i], s.text, want, body))
			}
			continue
		}
		var got any
		if err := decodeJSON(body, &got); err != nil || !jsonMatches(wantJSON[i], got) {
			problems = append(problems, fmt.Errorf("%s:%d: %s: want %s\n got %s", c.file, s.wantLines[i], s.text, want, strings.TrimSpace(body)))
		}
	}
	return problems
}

func get(ctx context.Context, client *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// decodeJSON decodes one JSON document, numbers as written.
func decodeJSON(s string, v any) error {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one JSON document")
	}
	return nil
}

// jsonMatches reports whether got is the JSON want shows: the same keys and values,
// but "…" matches any value, and readmeVolatile keys any value.
func jsonMatches(want, got any) bool {
	if want == "…" {
		return true
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !readmeVolatile[k] && !jsonMatches(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !jsonMatches(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

// tail is the last lines of a command's output, for a failure message.
func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 20 {
		lines = append([]string{"…"}, lines[len(lines)-20:]...)
	}
	return strings.Join(lines, "\n")
}
