package movimiento

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corpusVerdicts is what the parser before this one (a hand-written scanner
// with one error type per rule) said of each seed in testdata/fuzz/FuzzParse,
// recorded by running it, with its error types translated to FieldError
// fields. An accepted seed has its movement as "id|cuenta|tipo|importe|moneda|
// concepto|fecha" and the v1 fingerprint stored for it then.
var corpusVerdicts = []struct {
	file, field string
	movement    string // "" when rejected
	huellaV1    string
}{
	{"bom", "", "", ""},                                 // SyntaxError
	{"concepto-control-chars", "concepto", "", ""},      // ConceptoError
	{"cuenta-cuenta-separator", "cuenta", "", ""},       // IDError
	{"cuenta-fullwidth-digits", "cuenta", "", ""},       // IDError
	{"cuenta-rtl-override", "cuenta", "", ""},           // IDError
	{"duplicate-key-in-eb-detail", "", "", ""},          // SyntaxError
	{"duplicate-key-in-sns-message", "Message", "", ""}, // EnvelopeError/SyntaxError
	{"duplicate-key-top", "", "", ""},                   // SyntaxError
	{"eb-detail-array", "detail", "", ""},               // EnvelopeError
	{"eb-detail-null", "detail", "", ""},                // EnvelopeError
	{"eb-detail-string", "detail", "", ""},              // EnvelopeError
	{"eb-in-sns", "Message", "", ""},                    // EnvelopeError
	{"empty", "", "", ""},                               // SyntaxError
	{"eventbridge", "", "pago-8f2c|ES7620770024003102575766|cargo|50|EUR|Pedido 1234|2026-12-02T10:15:00Z", "8e4573ba81a508d97f68450c39e563f00f13f69a81c194957434e960199df6e0"},
	{"id-cyrillic-a", "id", "", ""},                   // IDError
	{"id-inner-separator", "id", "", ""},              // IDError
	{"id-mov-separator", "id", "", ""},                // IDError
	{"id-zero-width-joiner", "id", "", ""},            // IDError
	{"importe-1e400-bare", "importe", "", ""},         // ImporteError
	{"importe-1e400-string", "importe", "", ""},       // ImporteError
	{"importe-21-digits", "importe", "", ""},          // ImporteError
	{"importe-fullwidth", "importe", "", ""},          // ImporteError
	{"importe-infinity-bare", "", "", ""},             // SyntaxError
	{"importe-infinity-string", "importe", "", ""},    // ImporteError
	{"importe-minus-infinity", "importe", "", ""},     // ImporteError
	{"importe-minus-infinity-bare", "", "", ""},       // SyntaxError
	{"importe-nan-bare", "", "", ""},                  // SyntaxError
	{"importe-nan-string", "importe", "", ""},         // ImporteError
	{"importe-negative-zero", "importe", "", ""},      // ImporteError
	{"importe-negative-zero-bare", "importe", "", ""}, // ImporteError
	{"invalid-utf8", "", "", ""},                      // SyntaxError
	{"jpy-decimals", "importe", "", ""},               // ScaleError
	{"moneda-unknown", "moneda", "", ""},              // MonedaError
	{"moneda-xau", "moneda", "", ""},                  // MonedaError
	{"nesting-100-in-importe", "importe", "", ""},     // FieldTypeError
	{"nesting-100-objects", "id", "", ""},             // MissingFieldError
	{"nesting-10001", "", "", ""},                     // SyntaxError
	{"plain", "", "pago-8f2c|ES7620770024003102575766|cargo|50|EUR|Pedido 1234|2026-12-02T10:15:00Z", "8e4573ba81a508d97f68450c39e563f00f13f69a81c194957434e960199df6e0"},
	{"plain-jpy", "", "a|b|abono|1000|JPY||", "8af4b4ba348deee8ee98e477924b202ffe43616cb90acc7038b8192fc9267b85"},
	{"plain-kwd", "", "a|b|abono|1.005|KWD||", "92080d9d7fc19ee361943891ba52362e93c9b29356d6906cba6104fee0455de5"},
	{"plain-number-importe", "", "pago-8f2c|ES7620770024003102575766|cargo|50.25|EUR|Pedido 1234|", "39e9fe8280fa8b8dac7fee5eb3bf1052cd1e544669cdafa3c1799f7bd3048ea9"},
	{"sns", "", "pago-8f2c|ES7620770024003102575766|cargo|50|EUR|Pedido 1234|2026-12-02T10:15:00Z", "8e4573ba81a508d97f68450c39e563f00f13f69a81c194957434e960199df6e0"},
	{"sns-in-eb", "detail", "", ""},                   // EnvelopeError
	{"sns-in-sns", "Message", "", ""},                 // EnvelopeError
	{"sns-subscription-confirmation", "Type", "", ""}, // EnvelopeError
	{"sns-type-number", "Type", "", ""},               // EnvelopeError
	{"sns-unsubscribe-confirmation", "Type", "", ""},  // EnvelopeError
	{"top-array", "", "", ""},                         // SyntaxError
	{"top-null", "", "", ""},                          // SyntaxError
	{"top-number", "", "", ""},                        // SyntaxError
	{"top-string", "", "", ""},                        // SyntaxError
	{"trailing-garbage", "", "", ""},                  // SyntaxError
	{"whitespace", "", "", ""},                        // SyntaxError
}

// TestFuzzCorpusKeepsItsVerdicts: every seed is still accepted with the same
// movement (whose stored v1 fingerprint still matches) or rejected for the
// same field.
func TestFuzzCorpusKeepsItsVerdicts(t *testing.T) {
	files, err := filepath.Glob("testdata/fuzz/FuzzParse/*")
	if err != nil || len(files) != len(corpusVerdicts) {
		t.Fatalf("%d seeds, %d verdicts (%v): record a verdict for each new seed", len(files), len(corpusVerdicts), err)
	}
	for _, v := range corpusVerdicts {
		t.Run(v.file, func(t *testing.T) {
			m, err := Parse(readSeed(t, filepath.Join("testdata/fuzz/FuzzParse", v.file)))
			switch {
			case v.movement == "" && err == nil:
				t.Fatalf("accepted %+v, want rejected for %q", m, v.field)
			case v.movement == "" && fieldOf(err) != v.field:
				t.Fatalf("rejected with %v, want field %q", err, v.field)
			case v.movement != "" && err != nil:
				t.Fatalf("rejected with %v, want accepted", err)
			case v.movement != "":
				got := strings.Join([]string{m.ID, m.Cuenta, string(m.Tipo), m.Importe.String(), m.Moneda, m.Concepto, m.Fecha}, "|")
				if got != v.movement || !m.MatchesHuella(v.huellaV1) {
					t.Fatalf("accepted %s (v1 fingerprint matches: %v), want %s", got, m.MatchesHuella(v.huellaV1), v.movement)
				}
			}
		})
	}
}

// readSeed returns the body in a "go test fuzz v1" file of one []byte.
func readSeed(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, lit, _ := strings.Cut(string(b), "\n")
	lit = strings.TrimSpace(lit)
	if header != "go test fuzz v1" || !strings.HasPrefix(lit, "[]byte(") || !strings.HasSuffix(lit, ")") {
		t.Fatalf("%s: not a fuzz seed of one []byte", path)
	}
	s, err := strconv.Unquote(lit[len("[]byte(") : len(lit)-1])
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}
