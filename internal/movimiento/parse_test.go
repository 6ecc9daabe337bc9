package movimiento

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

const plainBody = `{"id": "pago-8f2c", "cuenta": "ES7620770024003102575766", "tipo": "cargo",
 "importe": "50.00", "moneda": "EUR", "concepto": "Pedido 1234",
 "fecha": "2026-12-02T10:15:00Z"}`

func snsSample(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/sns-envelope-body.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonString returns s as a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// sns wraps a movement body in an SNS notification envelope.
func sns(inner string) string {
	return `{"Type":"Notification","MessageId":"m-1","TopicArn":"arn:aws:sns:us-east-1:1:t","Message":` + jsonString(inner) + `}`
}

// eventBridge wraps a movement object in an EventBridge event. The event has its
// own "id", which must not be taken for the movement's.
func eventBridge(detail string) string {
	return `{"version":"0","id":"6a7e8feb-b491-4cf7-a9f1-bf3703467718","detail-type":"Movimiento",` +
		`"source":"ledger.test","account":"123456789012","time":"2026-12-02T10:15:00Z",` +
		`"region":"us-east-1","resources":[],"detail":` + detail + `}`
}

// movement builds a plain body from the example movement, replacing fields with
// raw JSON values from edits ("" deletes the field).
func movement(edits ...string) string {
	fields := [][2]string{
		{"id", `"pago-8f2c"`}, {"cuenta", `"ES7620770024003102575766"`}, {"tipo", `"cargo"`},
		{"importe", `"50.00"`}, {"moneda", `"EUR"`}, {"concepto", `"Pedido 1234"`},
		{"fecha", `"2026-12-02T10:15:00Z"`},
	}
	for i := 0; i+1 < len(edits); i += 2 {
		found := false
		for j := range fields {
			if fields[j][0] == edits[i] {
				fields[j][1], found = edits[i+1], true
			}
		}
		if !found {
			fields = append(fields, [2]string{edits[i], edits[i+1]})
		}
	}
	var parts []string
	for _, f := range fields {
		if f[1] != "" {
			parts = append(parts, `"`+f[0]+`":`+f[1])
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestParseValid(t *testing.T) {
	example := Movimiento{
		ID: "pago-8f2c", Cuenta: "ES7620770024003102575766", Tipo: Cargo,
		Importe: decimal.RequireFromString("50.00"), Moneda: "EUR",
		Concepto: "Pedido 1234", Fecha: "2026-12-02T10:15:00Z",
	}
	with := func(edit func(*Movimiento)) Movimiento {
		m := example
		edit(&m)
		return m
	}
	tests := []struct {
		name string
		body string
		want Movimiento
	}{
		{"plain", plainBody, example},
		{"SNS envelope sample", string(snsSample(t)), example},
		{"EventBridge event", eventBridge(plainBody), example},
		{"importe as JSON number", movement("importe", `50.25`), with(func(m *Movimiento) { m.Importe = decimal.RequireFromString("50.25") })},
		{"JPY", movement("importe", `"1000"`, "moneda", `"JPY"`), with(func(m *Movimiento) { m.Importe, m.Moneda = decimal.RequireFromString("1000"), "JPY" })},
		{"KWD", movement("importe", `"1.005"`, "moneda", `"KWD"`), with(func(m *Movimiento) { m.Importe, m.Moneda = decimal.RequireFromString("1.005"), "KWD" })},
		{"unknown fields ignored", movement("canal", `"web"`, "meta", `{"a":[1,{"b":"}]\"{"}],"c":null}`, "ID", `"other"`), example},
		{"optional fields absent", movement("concepto", "", "fecha", ""), with(func(m *Movimiento) { m.Concepto, m.Fecha = "", "" })},
		{"optional fields null", movement("concepto", "null", "fecha", "null"), with(func(m *Movimiento) { m.Concepto, m.Fecha = "", "" })},
		{"escapes in keys and values", `{"\u0069d":"pago-8f2c","cuenta":"ES7620770024003102575766","tipo":"cargo","importe":"50.00","moneda":"EUR","concepto":"Caf\u00e9 \"1\" \ud83d\ude00"}`,
			with(func(m *Movimiento) { m.Concepto, m.Fecha = "Café \"1\" 😀", "" })},
		{"pretty-printed", "\n\t{ \"id\" : \"pago-8f2c\" ,\r\n \"cuenta\":\"ES7620770024003102575766\", \"tipo\":\"cargo\", \"importe\": 50.00 , \"moneda\":\"EUR\", \"concepto\":\"Pedido 1234\", \"fecha\":\"2026-12-02T10:15:00Z\" }\n ", example},
		{"SNS wrapping an unusual movement", sns(movement("importe", "7", "concepto", `"línea\u00a0dos"`)),
			with(func(m *Movimiento) { m.Importe, m.Concepto = decimal.RequireFromString("7"), "línea\u00a0dos" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !sameMovement(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// sameMovement compares movements field by field, Importe by value.
func sameMovement(a, b Movimiento) bool {
	return a.ID == b.ID && a.Cuenta == b.Cuenta && a.Tipo == b.Tipo && a.Importe.Equal(b.Importe) &&
		a.Moneda == b.Moneda && a.Concepto == b.Concepto && a.Fecha == b.Fecha
}

func TestParseEnvelopesKeepTheFingerprint(t *testing.T) {
	plain, err := Parse([]byte(plainBody))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"SNS":          string(snsSample(t)),
		"EventBridge":  eventBridge(plainBody),
		"importe 50":   movement("importe", `"50"`),
		"number 50.0":  movement("importe", `50.0`),
		"new concepto": movement("concepto", `"otro"`),
	} {
		m, err := Parse([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Huella() != plain.Huella() {
			t.Errorf("%s: Huella %s, plain body has %s", name, m.Huella(), plain.Huella())
		}
	}
}

type invalidCase struct {
	name string
	body string
	// want is the typed error errors.As must find; its non-zero fields must match.
	want error
	// inner, when set, is the movement's error an EnvelopeError must wrap.
	inner error
}

func invalidCases() []invalidCase {
	long := strings.Repeat("a", 129)
	return []invalidCase{
		{"missing id", movement("id", ""), &MissingFieldError{Field: "id"}, nil},
		{"missing cuenta", movement("cuenta", ""), &MissingFieldError{Field: "cuenta"}, nil},
		{"missing tipo", movement("tipo", ""), &MissingFieldError{Field: "tipo"}, nil},
		{"missing importe", movement("importe", ""), &MissingFieldError{Field: "importe"}, nil},
		{"missing moneda", movement("moneda", ""), &MissingFieldError{Field: "moneda"}, nil},
		{"null id", movement("id", "null"), &MissingFieldError{Field: "id"}, nil},
		{"empty importe", movement("importe", `""`), &MissingFieldError{Field: "importe"}, nil},
		{"id is a number", movement("id", "5"), &FieldTypeError{Field: "id", Got: "number"}, nil},
		{"tipo is a boolean", movement("tipo", "true"), &FieldTypeError{Field: "tipo", Got: "boolean"}, nil},
		{"importe is an object", movement("importe", `{"v":"1"}`), &FieldTypeError{Field: "importe", Got: "object"}, nil},
		{"concepto is an array", movement("concepto", `["a"]`), &FieldTypeError{Field: "concepto", Got: "array"}, nil},
		{"wrong tipo", movement("tipo", `"transferencia"`), &TipoError{Tipo: "transferencia"}, nil},
		{"tipo in capitals", movement("tipo", `"Abono"`), &TipoError{Tipo: "Abono"}, nil},
		{"importe 0", movement("importe", `"0"`), &ImporteError{Importe: "0"}, nil},
		{"importe 0.00", movement("importe", `"0.00"`), &ImporteError{Importe: "0.00"}, nil},
		{"importe -0", movement("importe", `"-0"`), &ImporteError{Importe: "-0"}, nil},
		{"importe -5", movement("importe", `"-5"`), &ImporteError{Importe: "-5"}, nil},
		{"importe 1e3", movement("importe", `"1e3"`), &ImporteError{Importe: "1e3"}, nil},
		{"importe NaN", movement("importe", `"NaN"`), &ImporteError{Importe: "NaN"}, nil},
		{"importe Infinity", movement("importe", `"Infinity"`), &ImporteError{Importe: "Infinity"}, nil},
		{"importe +5", movement("importe", `"+5"`), &ImporteError{Importe: "+5"}, nil},
		{"importe .5", movement("importe", `".5"`), &ImporteError{Importe: ".5"}, nil},
		{"importe 5.", movement("importe", `"5."`), &ImporteError{Importe: "5."}, nil},
		{"importe 007", movement("importe", `"007"`), &ImporteError{Importe: "007"}, nil},
		{"importe with spaces", movement("importe", `" 5"`), &ImporteError{Importe: " 5"}, nil},
		{"importe 1,50", movement("importe", `"1,50"`), &ImporteError{Importe: "1,50"}, nil},
		{"JSON number 1e3", movement("importe", `1e3`), &ImporteError{Importe: "1e3"}, nil},
		{"JSON number -5", movement("importe", `-5`), &ImporteError{Importe: "-5"}, nil},
		{"21 significant digits", movement("importe", `"1234567890123456789.01"`), &ImporteError{Importe: "1234567890123456789.01"}, nil},
		{"21 integer digits", movement("importe", `"100000000000000000000"`), &ImporteError{Importe: "100000000000000000000"}, nil},
		{"1.234 in EUR", movement("importe", `"1.234"`), &ScaleError{Importe: "1.234", Moneda: "EUR", MinorUnits: 2}, nil},
		{"1.230 in EUR", movement("importe", `"1.230"`), &ScaleError{Importe: "1.230", Moneda: "EUR", MinorUnits: 2}, nil},
		{"1000.0 in JPY", movement("importe", `"1000.0"`, "moneda", `"JPY"`), &ScaleError{Importe: "1000.0", Moneda: "JPY"}, nil},
		{"lowercase moneda", movement("moneda", `"eur"`), &MonedaError{Moneda: "eur"}, nil},
		{"XAU", movement("moneda", `"XAU"`), &MonedaError{Moneda: "XAU"}, nil},
		{"XXX", movement("moneda", `"XXX"`), &MonedaError{Moneda: "XXX"}, nil},
		{"withdrawn HRK", movement("moneda", `"HRK"`), &MonedaError{Moneda: "HRK"}, nil},
		{"unknown moneda", movement("moneda", `"EURO"`), &MonedaError{Moneda: "EURO"}, nil},
		{"id with #", movement("id", `"pago#1"`), &IDError{Field: "id", Value: "pago#1"}, nil},
		{"id with a Cyrillic a", movement("id", `"p\u0430go-8f2c"`), &IDError{Field: "id", Value: "p\u0430go-8f2c"}, nil},
		{"id with a space", movement("id", `"pago 1"`), &IDError{Field: "id", Value: "pago 1"}, nil},
		{"129-char id", movement("id", `"`+long+`"`), &IDError{Field: "id", Value: long}, nil},
		{"cuenta with /", movement("cuenta", `"ES76/2077"`), &IDError{Field: "cuenta", Value: "ES76/2077"}, nil},
		{"65-char cuenta", movement("cuenta", `"`+long[:65]+`"`), &IDError{Field: "cuenta", Value: long[:65]}, nil},
		{"overlong concepto", movement("concepto", `"`+strings.Repeat("é", 257)+`"`), &ConceptoError{Length: 257}, nil},
		{"control char in concepto", movement("concepto", `"Pedido\n1234"`), &ConceptoError{Length: 11}, nil},
		{"bad fecha", movement("fecha", `"02/12/2026"`), &FechaError{Fecha: "02/12/2026"}, nil},
		{"fecha without zone", movement("fecha", `"2026-12-02T10:15:00"`), &FechaError{Fecha: "2026-12-02T10:15:00"}, nil},
		{"fecha is a number", movement("fecha", `1764670500`), &FieldTypeError{Field: "fecha", Got: "number"}, nil},
		{"not JSON", `id=pago-8f2c&importe=50`, &SyntaxError{}, nil},
		{"JSON array", `[` + plainBody + `]`, &SyntaxError{}, nil},
		{"JSON string", `"hola"`, &SyntaxError{}, nil},
		{"empty body", ``, &SyntaxError{}, nil},
		{"only spaces", "  \n", &SyntaxError{}, nil},
		{"duplicate key", `{"id":"a","cuenta":"b","tipo":"abono","importe":"1","importe":"1000","moneda":"EUR"}`, &SyntaxError{}, nil},
		{"duplicate key spelled with an escape", `{"id":"a","\u0069d":"b","cuenta":"b","tipo":"abono","importe":"1","moneda":"EUR"}`, &SyntaxError{}, nil},
		{"duplicate unknown key", strings.TrimSuffix(plainBody, "}") + `,"x":1,"x":2}`, &SyntaxError{}, nil},
		{"key not a string", `{id:"a"}`, &SyntaxError{}, nil},
		{"missing colon", `{"id" "a"}`, &SyntaxError{}, nil},
		{"missing comma", `{"id":"a" "cuenta":"b"}`, &SyntaxError{}, nil},
		{"unclosed object", `{"id":"a",`, &SyntaxError{}, nil},
		{"trailing garbage", plainBody + ` xyz`, &SyntaxError{}, nil},
		{"two objects", plainBody + plainBody, &SyntaxError{}, nil},
		{"invalid UTF-8", movement("concepto", "\"caf\xe9\""), &SyntaxError{}, nil},
		{"300 KiB body", movement("relleno", `"`+strings.Repeat("x", 300<<10)+`"`), &SyntaxError{}, nil},
		{"SNS with bad inner movement", sns(movement("id", "")), &EnvelopeError{Kind: "SNS"}, &MissingFieldError{Field: "id"}},
		{"SNS with bad inner importe", sns(movement("importe", `"1.234"`)), &EnvelopeError{Kind: "SNS"}, &ScaleError{Importe: "1.234", Moneda: "EUR", MinorUnits: 2}},
		{"SNS with inner not JSON", `{"Type":"Notification","Message":"pago de 50 EUR"}`, &EnvelopeError{Kind: "SNS"}, &SyntaxError{}},
		{"SNS SubscriptionConfirmation", `{"Type":"SubscriptionConfirmation","Message":"You have chosen to subscribe","SubscribeURL":"https://example.com"}`, &EnvelopeError{Kind: "SNS"}, nil},
		{"SNS Type not a string", `{"Type":1,"Message":"{}"}`, &EnvelopeError{Kind: "SNS"}, nil},
		{"SNS without Message", `{"Type":"Notification","MessageId":"m-1"}`, &EnvelopeError{Kind: "SNS"}, nil},
		{"SNS Message an object", `{"Type":"Notification","Message":` + plainBody + `}`, &EnvelopeError{Kind: "SNS"}, nil},
		{"SNS inside SNS", sns(sns(plainBody)), &EnvelopeError{Kind: "SNS"}, nil},
		{"EventBridge inside SNS", sns(eventBridge(plainBody)), &EnvelopeError{Kind: "SNS"}, nil},
		{"SNS inside EventBridge", eventBridge(sns(plainBody)), &EnvelopeError{Kind: "EventBridge"}, nil},
		{"EventBridge detail a string", eventBridge(jsonString(plainBody)), &EnvelopeError{Kind: "EventBridge"}, nil},
		{"EventBridge detail null", eventBridge(`null`), &EnvelopeError{Kind: "EventBridge"}, nil},
		{"EventBridge bad inner tipo", eventBridge(movement("tipo", `"debito"`)), &EnvelopeError{Kind: "EventBridge"}, &TipoError{Tipo: "debito"}},
		// The body as a whole is ambiguous, whatever the depth of the repeated key.
		{"EventBridge duplicate key in detail", eventBridge(`{"id":"a","id":"b"}`), &SyntaxError{}, nil},
		{"SNS duplicate key in the inner movement", sns(`{"id":"a","id":"b"}`), &EnvelopeError{Kind: "SNS"}, &SyntaxError{}},
	}
}

func TestParseInvalid(t *testing.T) {
	for _, tt := range invalidCases() {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.body))
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
			if msg := matchError(err, tt.want); msg != "" {
				t.Error(msg)
			}
			if tt.inner != nil {
				if msg := matchError(err, tt.inner); msg != "" {
					t.Error("inner: " + msg)
				}
			}
		})
	}
}

// matchError reports how err fails to contain an error of want's type whose
// fields equal want's non-zero fields ("" when it does).
func matchError(err, want error) string {
	target := reflect.New(reflect.TypeOf(want))
	if !errors.As(err, target.Interface()) {
		return "got " + reflect.TypeOf(err).String() + " " + err.Error() + ", want a " + reflect.TypeOf(want).String()
	}
	got, exp := target.Elem().Elem(), reflect.ValueOf(want).Elem()
	for i := range exp.NumField() {
		if f := exp.Field(i); !f.IsZero() && !reflect.DeepEqual(f.Interface(), got.Field(i).Interface()) {
			return "got " + err.Error() + ": field " + exp.Type().Field(i).Name + " differs from the expected " + reflect.TypeOf(want).String()
		}
	}
	return ""
}

// TestParseFirstProblemInFieldOrder: JSON type errors take their field's turn.
func TestParseFirstProblemInFieldOrder(t *testing.T) {
	tests := []struct {
		body string
		want error
	}{
		{movement("id", `"a#"`, "cuenta", "5"), &IDError{Field: "id"}},
		{movement("cuenta", "5", "importe", `"x"`), &FieldTypeError{Field: "cuenta"}},
		{movement("importe", `"-1"`, "moneda", "true"), &ImporteError{Importe: "-1"}},
		{movement("importe", `"1.234"`, "moneda", "true"), &FieldTypeError{Field: "moneda"}},
		{movement("importe", `"1.234"`, "concepto", "1"), &ScaleError{Importe: "1.234"}},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.body))
		if msg := matchError(err, tt.want); msg != "" {
			t.Errorf("%s: %s", tt.body, msg)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	long := strings.Repeat("x", 200) + "#"
	tests := []struct {
		body     string
		contains []string
		excludes string
	}{
		{movement("importe", `"1.234"`), []string{"importe", `"1.234"`, "EUR", "2 decimals"}, ""},
		{movement("importe", `"1000.5"`, "moneda", `"JPY"`), []string{"importe", "JPY", "no decimals"}, ""},
		{movement("importe", `"-5"`), []string{"importe", `"-5"`, "greater than zero"}, ""},
		{movement("id", ""), []string{"missing", `"id"`}, ""},
		{movement("cuenta", `"ES76/2077"`), []string{"cuenta", `"ES76/2077"`, `'/'`}, ""},
		{movement("id", `"p\u0430go"`), []string{"id", "U+0430"}, ""},
		{movement("id", `"`+long+`"`), []string{"id", strings.Repeat("x", 40) + "…", "'#'"}, strings.Repeat("x", 41)},
		{movement("moneda", `"eur"`), []string{"moneda", `"eur"`, "upper case"}, ""},
		{movement("tipo", `"Cargo"`), []string{"tipo", `"Cargo"`, `"cargo"`}, ""},
		{movement("fecha", `"ayer"`), []string{"fecha", `"ayer"`, "RFC 3339"}, ""},
		{movement("importe", "true"), []string{"importe", "JSON string or number", "boolean"}, ""},
		{movement("concepto", `"a\u0007b"`), []string{"concepto", "control character", "U+0007"}, ""},
		{sns(movement("id", "")), []string{"SNS", "Message", `missing required field "id"`}, "movimiento: movimiento:"},
		{`{"Type":"SubscriptionConfirmation"}`, []string{"SNS", "Type", `"SubscriptionConfirmation"`}, ""},
		{`{"id":"a","id":"b"}`, []string{"duplicate", `"id"`}, ""},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.body))
		if err == nil {
			t.Errorf("%.60s: accepted", tt.body)
			continue
		}
		for _, s := range tt.contains {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("message %q does not mention %q", err, s)
			}
		}
		if tt.excludes != "" && strings.Contains(err.Error(), tt.excludes) {
			t.Errorf("message %q contains %q", err, tt.excludes)
		}
	}
}

func TestSyntaxErrorExposesJSONOffset(t *testing.T) {
	_, err := Parse([]byte(`{"id": pago}`))
	var jsonErr *json.SyntaxError
	if !errors.As(err, &jsonErr) || jsonErr.Offset == 0 {
		t.Errorf("got %v, want a *json.SyntaxError with its offset", err)
	}
}

func TestParseMatchesNew(t *testing.T) {
	got, err := Parse([]byte(plainBody))
	if err != nil {
		t.Fatal(err)
	}
	want := mustNew(t, datos())
	if !sameMovement(got, want) || got.Huella() != want.Huella() {
		t.Errorf("Parse gave %+v, New gave %+v", got, want)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(plainBody))
	f.Add(snsSample(f))
	f.Add([]byte(eventBridge(plainBody)))
	f.Add([]byte(movement("importe", "50.25")))
	f.Add([]byte(movement("importe", `"1.500"`, "moneda", `"KWD"`)))
	for _, tt := range invalidCases() {
		if len(tt.body) < 4096 {
			f.Add([]byte(tt.body))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := Parse(body)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			return
		}
		again, err := New(Datos{
			ID: m.ID, Cuenta: m.Cuenta, Tipo: m.Tipo, Importe: m.ImporteTexto(),
			Moneda: m.Moneda, Concepto: m.Concepto, Fecha: m.Fecha,
		})
		if err != nil {
			t.Fatalf("Parse accepted %+v, New rejects it: %v", m, err)
		}
		if !sameMovement(m, again) || m.Huella() != again.Huella() {
			t.Fatalf("New changed the movement: %+v, then %+v", m, again)
		}
		if !m.Importe.IsPositive() || m.Delta().Abs().Cmp(m.Importe) != 0 {
			t.Fatalf("importe %s, delta %s", m.Importe, m.Delta())
		}
	})
}

// FuzzEnvelopes checks that unwrapping is transparent: a body that is not itself an
// envelope parses to the same movement, or fails alike, whether it arrives plain, as an
// SNS notification's Message or as an EventBridge event's detail.
func FuzzEnvelopes(f *testing.F) {
	f.Add([]byte(plainBody))
	f.Add([]byte(movement("importe", "50.25", "x", `{"Type":1}`)))
	f.Add([]byte(movement("id", `"p\u0430go"`)))
	f.Add([]byte(`{"id":"a","id":"b"}`))
	f.Add([]byte(`{"detail-type":"x","id":"a","cuenta":"b","tipo":"abono","importe":"1","moneda":"EUR"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) || len(body) > maxBody/2 {
			return // an SNS Message is a JSON string (UTF-8), and both wrappers must fit
		}
		if obj, err := readObject(body); err == nil && envelope(&obj) != "" {
			return // an envelope inside an envelope is refused by design
		}
		plain, plainErr := Parse(body)
		wrapped := map[string]string{"SNS": sns(string(body))}
		if json.Valid(body) {
			wrapped["EventBridge"] = eventBridge(string(body)) // detail is raw JSON, so only JSON can be wrapped
		}
		for kind, w := range wrapped {
			m, err := Parse([]byte(w))
			switch {
			case plainErr == nil && err != nil:
				t.Fatalf("plain body parses, inside %s it fails: %v", kind, err)
			case plainErr != nil && err == nil:
				t.Fatalf("plain body fails (%v), inside %s it parses to %+v", plainErr, kind, m)
			case err != nil && !errors.Is(err, ErrInvalid):
				t.Fatalf("inside %s: error %v does not match ErrInvalid", kind, err)
			case err == nil && (!sameMovement(m, plain) || m.Huella() != plain.Huella()):
				t.Fatalf("inside %s: %+v, plain: %+v", kind, m, plain)
			}
		}
	})
}
