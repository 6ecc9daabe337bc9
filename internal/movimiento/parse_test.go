package movimiento

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
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

// sameMovement compares movements field by field, Importe and Expira by value.
func sameMovement(a, b Movimiento) bool {
	return a.ID == b.ID && a.Cuenta == b.Cuenta && a.Tipo == b.Tipo && a.Importe.Equal(b.Importe) &&
		a.Moneda == b.Moneda && a.Concepto == b.Concepto && a.Fecha == b.Fecha &&
		a.Destino == b.Destino && a.Anula == b.Anula && a.Retencion == b.Retencion && a.Expira.Equal(b.Expira)
}

// datosOf is the text New needs to rebuild m.
func datosOf(m Movimiento) Datos {
	d := Datos{
		ID: m.ID, Cuenta: m.Cuenta, Tipo: m.Tipo, Importe: m.ImporteTexto(), Moneda: m.Moneda,
		Concepto: m.Concepto, Fecha: m.Fecha, Destino: m.Destino, Anula: m.Anula, Retencion: m.Retencion,
	}
	if !m.Expira.IsZero() {
		d.Expira = m.Expira.Format(time.RFC3339Nano)
	}
	return d
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
	// field is the FieldError's Field: "" for the body as a whole.
	field string
}

func invalidCases() []invalidCase {
	long := strings.Repeat("a", 129)
	return []invalidCase{
		{"missing id", movement("id", ""), "id"},
		{"missing cuenta", movement("cuenta", ""), "cuenta"},
		{"missing tipo", movement("tipo", ""), "tipo"},
		{"missing importe", movement("importe", ""), "importe"},
		{"missing moneda", movement("moneda", ""), "moneda"},
		{"null id", movement("id", "null"), "id"},
		{"empty importe", movement("importe", `""`), "importe"},
		{"id is a number", movement("id", "5"), "id"},
		{"tipo is a boolean", movement("tipo", "true"), "tipo"},
		{"importe is an object", movement("importe", `{"v":"1"}`), "importe"},
		{"concepto is an array", movement("concepto", `["a"]`), "concepto"},
		{"wrong tipo", movement("tipo", `"transferencia"`), "tipo"},
		{"tipo in capitals", movement("tipo", `"Abono"`), "tipo"},
		{"importe 0", movement("importe", `"0"`), "importe"},
		{"importe 0.00", movement("importe", `"0.00"`), "importe"},
		{"importe -0", movement("importe", `"-0"`), "importe"},
		{"importe -5", movement("importe", `"-5"`), "importe"},
		{"importe 1e3", movement("importe", `"1e3"`), "importe"},
		{"importe NaN", movement("importe", `"NaN"`), "importe"},
		{"importe Infinity", movement("importe", `"Infinity"`), "importe"},
		{"importe +5", movement("importe", `"+5"`), "importe"},
		{"importe .5", movement("importe", `".5"`), "importe"},
		{"importe 5.", movement("importe", `"5."`), "importe"},
		{"importe 007", movement("importe", `"007"`), "importe"},
		{"importe with spaces", movement("importe", `" 5"`), "importe"},
		{"importe 1,50", movement("importe", `"1,50"`), "importe"},
		{"JSON number 1e3", movement("importe", `1e3`), "importe"},
		{"JSON number -5", movement("importe", `-5`), "importe"},
		{"21 significant digits", movement("importe", `"1234567890123456789.01"`), "importe"},
		{"21 integer digits", movement("importe", `"100000000000000000000"`), "importe"},
		{"39 decimals without a moneda", movement("tipo", `"captura"`, "retencion", `"h1"`, "moneda", `null`, "importe", `"1.`+strings.Repeat("0", 39)+`"`), "importe"},
		{"10,001 decimals, all zeros", movement("importe", `"1.`+strings.Repeat("0", 10001)+`"`), "importe"},
		{"10,001 decimals as a JSON number", movement("importe", `1.`+strings.Repeat("0", 10001)), "importe"},
		{"1.234 in EUR", movement("importe", `"1.234"`), "importe"},
		{"1.230 in EUR", movement("importe", `"1.230"`), "importe"},
		{"1000.0 in JPY", movement("importe", `"1000.0"`, "moneda", `"JPY"`), "importe"},
		{"lowercase moneda", movement("moneda", `"eur"`), "moneda"},
		{"XAU", movement("moneda", `"XAU"`), "moneda"},
		{"XXX", movement("moneda", `"XXX"`), "moneda"},
		{"withdrawn HRK", movement("moneda", `"HRK"`), "moneda"},
		{"unknown moneda", movement("moneda", `"EURO"`), "moneda"},
		{"id with #", movement("id", `"pago#1"`), "id"},
		{"id with a Cyrillic a", movement("id", `"p\u0430go-8f2c"`), "id"},
		{"id with a space", movement("id", `"pago 1"`), "id"},
		{"129-char id", movement("id", `"`+long+`"`), "id"},
		{"cuenta with /", movement("cuenta", `"ES76/2077"`), "cuenta"},
		{"65-char cuenta", movement("cuenta", `"`+long[:65]+`"`), "cuenta"},
		{"overlong concepto", movement("concepto", `"`+strings.Repeat("é", 257)+`"`), "concepto"},
		{"control char in concepto", movement("concepto", `"Pedido\n1234"`), "concepto"},
		{"bad fecha", movement("fecha", `"02/12/2026"`), "fecha"},
		{"fecha without zone", movement("fecha", `"2026-12-02T10:15:00"`), "fecha"},
		{"fecha is a number", movement("fecha", `1764670500`), "fecha"},
		{"not JSON", `id=pago-8f2c&importe=50`, ""},
		{"JSON array", `[` + plainBody + `]`, ""},
		{"JSON string", `"hola"`, ""},
		{"empty body", ``, ""},
		{"only spaces", "  \n", ""},
		{"duplicate key", `{"id":"a","cuenta":"b","tipo":"abono","importe":"1","importe":"1000","moneda":"EUR"}`, ""},
		{"duplicate key spelled with an escape", `{"id":"a","\u0069d":"b","cuenta":"b","tipo":"abono","importe":"1","moneda":"EUR"}`, ""},
		{"duplicate unknown key", strings.TrimSuffix(plainBody, "}") + `,"x":1,"x":2}`, ""},
		{"key not a string", `{id:"a"}`, ""},
		{"missing colon", `{"id" "a"}`, ""},
		{"missing comma", `{"id":"a" "cuenta":"b"}`, ""},
		{"unclosed object", `{"id":"a",`, ""},
		{"trailing garbage", plainBody + ` xyz`, ""},
		{"two objects", plainBody + plainBody, ""},
		{"invalid UTF-8", movement("concepto", "\"caf\xe9\""), ""},
		{"300 KiB body", movement("relleno", `"`+strings.Repeat("x", 300<<10)+`"`), ""},
		{"SNS with bad inner movement", sns(movement("id", "")), "Message.id"},
		{"SNS with bad inner importe", sns(movement("importe", `"1.234"`)), "Message.importe"},
		{"SNS with inner not JSON", `{"Type":"Notification","Message":"pago de 50 EUR"}`, "Message"},
		{"SNS SubscriptionConfirmation", `{"Type":"SubscriptionConfirmation","Message":"You have chosen to subscribe","SubscribeURL":"https://example.com"}`, "Type"},
		{"SNS Type not a string", `{"Type":1,"Message":"{}"}`, "Type"},
		{"SNS without Message", `{"Type":"Notification","MessageId":"m-1"}`, "Message"},
		{"SNS Message an object", `{"Type":"Notification","Message":` + plainBody + `}`, "Message"},
		{"SNS inside SNS", sns(sns(plainBody)), "Message"},
		{"EventBridge inside SNS", sns(eventBridge(plainBody)), "Message"},
		{"SNS inside EventBridge", eventBridge(sns(plainBody)), "detail"},
		{"EventBridge detail a string", eventBridge(jsonString(plainBody)), "detail"},
		{"EventBridge detail null", eventBridge(`null`), "detail"},
		{"EventBridge bad inner tipo", eventBridge(movement("tipo", `"debito"`)), "detail.tipo"},
		// The body as a whole is ambiguous, whatever the depth of the repeated key.
		{"EventBridge duplicate key in detail", eventBridge(`{"id":"a","id":"b"}`), ""},
		{"SNS duplicate key in the inner movement", sns(`{"id":"a","id":"b"}`), "Message"},
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
			if got := fieldOf(err); got != tt.field {
				t.Errorf("got %v (field %q), want field %q", err, got, tt.field)
			}
		})
	}
}

// fieldOf returns the Field of err's *FieldError, or "<no FieldError>".
func fieldOf(err error) string {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return "<no FieldError>"
	}
	return fe.Field
}

// TestParseFirstProblemInFieldOrder: JSON type errors take their field's turn.
func TestParseFirstProblemInFieldOrder(t *testing.T) {
	tests := []struct {
		body string
		want FieldError // Rule is matched as a substring
	}{
		{movement("id", `"a#"`, "cuenta", "5"), FieldError{"id", "a#", "contains '#'"}},
		{movement("cuenta", "5", "importe", `"x"`), FieldError{"cuenta", "", "must be a JSON string, got a JSON number"}},
		{movement("importe", `"-1"`, "moneda", "true"), FieldError{"importe", "-1", "greater than zero"}},
		{movement("importe", `"1.234"`, "moneda", "true"), FieldError{"moneda", "", "got a JSON boolean"}},
		{movement("importe", `"1.234"`, "concepto", "1"), FieldError{"importe", "1.234", "EUR allows at most 2 decimals"}},
		{movement("tipo", `"cargo"`, "destino", `"ES1"`, "anula", "5"), FieldError{"destino", "ES1", "not allowed for tipo cargo"}},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.want.Field || fe.Value != tt.want.Value || !strings.Contains(fe.Rule, tt.want.Rule) {
			t.Errorf("%s: got %v, want %+v", tt.body, err, tt.want)
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
		{movement("importe", `"1e3"`), []string{`movimiento: importe "1e3": must be plain decimal notation such as "50.00"`}, ""},
		{movement("importe", `"1.234"`), []string{"importe", `"1.234"`, "EUR", "2 decimals"}, ""},
		{movement("importe", `"1000.5"`, "moneda", `"JPY"`), []string{"importe", "JPY", "no decimals"}, ""},
		{movement("importe", `"-5"`), []string{"importe", `"-5"`, "greater than zero"}, ""},
		{movement("id", ""), []string{"movimiento: id: is required"}, ""},
		{movement("cuenta", `"ES76/2077"`), []string{"cuenta", `"ES76/2077"`, `'/'`}, ""},
		{movement("id", `"p\u0430go"`), []string{"id", "U+0430"}, ""},
		{movement("id", `"`+long+`"`), []string{"id", strings.Repeat("x", 40) + "…", "'#'"}, strings.Repeat("x", 41)},
		{movement("moneda", `"eur"`), []string{"moneda", `"eur"`, "upper case"}, ""},
		{movement("tipo", `"Cargo"`), []string{"tipo", `"Cargo"`, `"cargo"`}, ""},
		{movement("fecha", `"ayer"`), []string{"fecha", `"ayer"`, "RFC 3339"}, ""},
		{movement("importe", "true"), []string{"importe", "JSON string or number", "boolean"}, ""},
		{movement("concepto", `"a\u0007b"`), []string{"concepto", "control character", "U+0007"}, ""},
		{movement("concepto", `"Pago \u202eanuladO"`), []string{"concepto", "invisible format or separator character", "U+202E", "position 6"}, ""},
		{movement("concepto", `"Pa\u200bgo"`), []string{"concepto", "U+200B"}, ""},
		{movement("concepto", `"\ufeffPago"`), []string{"concepto", "U+FEFF", "position 1"}, ""},
		{movement("concepto", `"Pago\u2028Otro"`), []string{"concepto", "U+2028"}, ""},
		{movement("concepto", `"Pago\u2029Otro"`), []string{"concepto", "U+2029"}, ""},
		{sns(movement("id", "")), []string{"movimiento: Message.id: is required"}, ""},
		{`{"cuenta":"ES01","Type":"Notification","Message":"{}"}`, []string{"movimiento: cuenta: beside the SNS envelope's Type", "not both"}, ""},
		{`{"Type":"Notification","importe":"5.00","Message":"{}"}`, []string{"movimiento: importe: beside the SNS envelope's Type"}, ""},
		{`{"detail-type":"Movimiento","detail":{},"tipo":"abono"}`, []string{"movimiento: tipo: beside the EventBridge envelope's detail-type"}, ""},
		{`{"Type":"SubscriptionConfirmation"}`, []string{"SNS", "Type", `"SubscriptionConfirmation"`}, ""},
		{`{"id":"a","id":"b"}`, []string{"movimiento: body:", "duplicate", `"id"`}, ""},
		{sns(`{"id":"a","id":"b"}`), []string{"movimiento: Message:", "duplicate", `"id"`}, ""},
		{`[]`, []string{"movimiento: body: must be a JSON object, got a JSON array"}, ""},
		{sns(eventBridge(plainBody)), []string{"Message", "EventBridge", "cannot be nested"}, ""},
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

func TestBodyErrorGivesTheOffset(t *testing.T) {
	_, err := Parse([]byte(`{"id": pago}`))
	if fieldOf(err) != "" || !strings.Contains(err.Error(), "offset 7") {
		t.Errorf("got %v, want a body error naming offset 7", err)
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
	f.Add([]byte(`{"id":"tr-91","tipo":"traspaso","cuenta":"ES76","destino":"ES12","importe":"25.00","moneda":"EUR"}`))
	f.Add([]byte(`{"id":"an-7","tipo":"anulacion","cuenta":"ES76","anula":"pago-8f2c"}`))
	f.Add([]byte(`{"id":"aut-1","tipo":"retencion","cuenta":"ES76","importe":"30.00","moneda":"EUR","expira":"2026-12-10T00:00:00Z"}`))
	f.Add([]byte(`{"id":"cap-1","tipo":"captura","cuenta":"ES76","retencion":"aut-1","importe":"25.00"}`))
	f.Add([]byte(`{"id":"lib-1","tipo":"liberacion","cuenta":"ES76","retencion":"aut-1"}`))
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
		again, err := New(datosOf(m))
		if err != nil {
			t.Fatalf("Parse accepted %+v, New rejects it: %v", m, err)
		}
		if !sameMovement(m, again) || m.Huella() != again.Huella() {
			t.Fatalf("New changed the movement: %+v, then %+v", m, again)
		}
		if m.Importe.IsNegative() || !m.Delta().IsZero() && m.Delta().Abs().Cmp(m.Importe) != 0 {
			t.Fatalf("importe %s, delta %s", m.Importe, m.Delta())
		}
	})
}

// FuzzEnvelopes checks that unwrapping is transparent: a body that is not itself an
// envelope parses to the same movement, or fails alike (in SNS, for the same field
// under Message), whether it arrives plain, as an SNS notification's Message or as
// an EventBridge event's detail.
func FuzzEnvelopes(f *testing.F) {
	f.Add([]byte(plainBody))
	f.Add([]byte(movement("importe", "50.25", "x", `{"Type":1}`)))
	f.Add([]byte(movement("id", `"p\u0430go"`)))
	f.Add([]byte(`{"id":"a","id":"b"}`))
	f.Add([]byte(`{"detail-type":"x","id":"a","cuenta":"b","tipo":"abono","importe":"1","moneda":"EUR"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) || len(body) > MaxBody/2 {
			return // an SNS Message is a JSON string (UTF-8), and both wrappers must fit
		}
		if msg, err := decode(body); err == nil && msg.envelope() != "" {
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
			case kind == "SNS" && err != nil && fieldOf(err) != strings.TrimSuffix("Message."+fieldOf(plainErr), "."):
				t.Fatalf("inside SNS: %v, plain: %v; want the same field under Message", err, plainErr)
			case err == nil && (!sameMovement(m, plain) || m.Huella() != plain.Huella()):
				t.Fatalf("inside %s: %+v, plain: %+v", kind, m, plain)
			}
		}
	})
}

// SQS's 256 KiB is the limit: a body of exactly that size is read, one byte more is not.
func TestParseTakesBodiesUpToSQSLimit(t *testing.T) {
	padded := func(size int) []byte {
		pad := size - len(movement("relleno", `""`))
		return []byte(movement("relleno", `"`+strings.Repeat("x", pad)+`"`))
	}
	if body := padded(MaxBody); len(body) != MaxBody {
		t.Fatalf("built %d bytes, want %d", len(body), MaxBody)
	} else if _, err := Parse(body); err != nil {
		t.Errorf("a %d-byte body: %v", len(body), err)
	}
	if _, err := Parse(padded(MaxBody + 1)); err == nil || !strings.Contains(err.Error(), "over the 262144-byte limit") {
		t.Errorf("a body one byte over: %v, want it refused for its size", err)
	}
}
