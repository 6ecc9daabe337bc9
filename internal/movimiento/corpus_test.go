package movimiento

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corpusVerdicts is what each seed in testdata/fuzz/FuzzParse must read as, recorded
// from an independent parser (a hand-written scanner) with its errors translated to
// FieldError fields. An accepted seed has its movement as "id|cuenta|tipo|importe|
// moneda|concepto|fecha" and its fingerprint (printf "v2\n<cuenta>\n…" | sha256sum).
var corpusVerdicts = []struct {
	file, field string
	movement    string // "" when rejected
	huella      string
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
	{"eventbridge", "", "pago-8f2c|ES7620770024003102575766|cargo|50|EUR|Pedido 1234|2026-12-02T10:15:00Z", "6e6c2389af92c751c183e48b7fec19669c80ca3c79abfcae1334da24a1349400"},
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
	{"plain", "", "pago-8f2c|ES7620770024003102575766|cargo|50|EUR|Pedido 1234|2026-12-02T10:15:00Z", "6e6c2389af92c751c183e48b7fec19669c80ca3c79abfcae1334da24a1349400"},
	{"plain-jpy", "", "a|b|abono|1000|JPY||", "66624fc347fc2e519e191dda5c63d2f45646a87e0114c03cc85077ff0fbe8e24"},
	{"plain-kwd", "", "a|b|abono|1.005|KWD||", "026f8e6b343e2c70b1fa4099081b5bf29b3f6e3a8aa3bfa644c3d79749e92962"},
	{"plain-number-importe", "", "pago-8f2c|ES7620770024003102575766|cargo|50.25|EUR|Pedido 1234|", "b5f889164812f5b16e39a7196f6d6b88f07da8456bf2e66cd9da1b05fbe8782a"},
	{"sns", "", "pago-8f2c|ES7620770024003102575766|cargo|50|EUR|Pedido 1234|2026-12-02T10:15:00Z", "6e6c2389af92c751c183e48b7fec19669c80ca3c79abfcae1334da24a1349400"},
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
// movement and fingerprint, or rejected for the same field.
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
				if got != v.movement || m.Huella() != v.huella {
					t.Fatalf("accepted %s with fingerprint %s, want %s with %s", got, m.Huella(), v.movement, v.huella)
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
