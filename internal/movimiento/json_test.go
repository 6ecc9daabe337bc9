package movimiento

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var jsonSeeds = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{1:2}`, `"x"`, `"\u00e9\ud83d\ude00"`,
	`"\ud800"`, `"\udc00\ud800x"`, `"\ud83d\u0041"`, `"\x"`, `"\u12"`, `"tab	"`, `01`, `-0`, `-`, `1.`, `1.5e`,
	`1E+9`, `.5`, `true`, `tru`, `nul`, `falsey`, `{"a":[1,{"b":null}],"c":"}"}`, `{"a":1} {}`,
	`[[[[]]]]`, `[[[[]]]`, `{"a":"b\\"}`, `"\/"`, "\"\xff\"", `"\b\f\n\r\t\"\\\/"`, `"\u00E9"`, `"\u00G9"`, `"\u`,
}

// FuzzScanner checks the hand-written scanner against encoding/json: the same
// texts are valid, and strings decode to the same text.
func FuzzScanner(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
		if raw := bytes.Trim(b, " \t\r\n"); validJSON(b) && utf8.Valid(b) && raw[0] == '"' {
			var want string
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if got := decodeString(raw); got != want {
				t.Fatalf("decodeString(%s) = %q, encoding/json gives %q", raw, got, want)
			}
		}
	})
}

func TestScannerDepthLimit(t *testing.T) {
	for _, n := range []int{maxDepth, maxDepth + 1} {
		b := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Errorf("depth %d: validJSON = %v, json.Valid = %v", n, got, want)
		}
	}
}
