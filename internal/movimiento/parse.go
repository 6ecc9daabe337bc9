package movimiento

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MaxBody is SQS's and SNS's maximum message size, 256 KiB: a larger body did not come
// from the queue intact, and bounding it bounds the work spent on it.
const MaxBody = 256 << 10

// strict spells out the v2 defaults Parse relies on: a repeated name (at any depth) and
// invalid UTF-8 are errors; names match case-sensitively; unknown members are ignored.
var strict = json.JoinOptions(
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
	json.MatchCaseInsensitiveNames(false),
	json.RejectUnknownMembers(false),
)

// message is one JSON object as Parse reads it. Members are kept raw (nil when absent),
// so a wrong JSON type is reported in its field's turn and a number keeps its literal.
type message struct {
	ID        jsontext.Value `json:"id"`
	Cuenta    jsontext.Value `json:"cuenta"`
	Tipo      jsontext.Value `json:"tipo"`
	Importe   jsontext.Value `json:"importe"`
	Moneda    jsontext.Value `json:"moneda"`
	Concepto  jsontext.Value `json:"concepto"`
	Fecha     jsontext.Value `json:"fecha"`
	Destino   jsontext.Value `json:"destino"`
	Partes    jsontext.Value `json:"partes"`
	Anula     jsontext.Value `json:"anula"`
	Retencion jsontext.Value `json:"retencion"`
	Expira    jsontext.Value `json:"expira"`

	Type       jsontext.Value `json:"Type"`        // SNS: must be "Notification"
	Message    jsontext.Value `json:"Message"`     // SNS: the movement as a JSON string
	TopicArn   jsontext.Value `json:"TopicArn"`    // SNS: the topic it claims to come from
	Timestamp  jsontext.Value `json:"Timestamp"`   // SNS: when the topic took it
	DetailType jsontext.Value `json:"detail-type"` // EventBridge: marks an event
	Detail     jsontext.Value `json:"detail"`      // EventBridge: the movement as an object
	Source     jsontext.Value `json:"source"`      // EventBridge: the source it claims
	Account    jsontext.Value `json:"account"`     // EventBridge: the account it claims to come from
}

// Envelope is what an SNS notification or an EventBridge event says of where a movement
// came from: claims of the envelope, which the transport's own word (the SQS message's
// sender and time) goes beside, never replaced by.
type Envelope struct {
	Kind   string    // "sns" or "eventbridge"; "" for a plain movement
	Sender string    // the topic's ARN, or "source@account"
	Sent   time.Time // when the topic says it took it (SNS only: EventBridge's time is the caller's); zero when unstated
}

// ParseEnvelope is Parse, with what the body's envelope (if any) says of its origin.
func ParseEnvelope(body []byte) (Movimiento, Envelope, error) {
	m, msg, err := parse(body)
	if err != nil {
		return m, Envelope{}, err
	}
	return m, msg.origin(), nil
}

// origin is what envelope msg says of where its movement came from; none for a plain
// movement.
func (msg *message) origin() Envelope {
	switch msg.envelope() {
	case "SNS":
		return Envelope{Kind: "sns", Sender: text(msg.TopicArn), Sent: stated(msg.Timestamp)}
	case "EventBridge":
		return Envelope{Kind: "eventbridge", Sender: text(msg.Source) + "@" + text(msg.Account)}
	}
	return Envelope{}
}

// stated is the RFC 3339 time raw holds, or zero.
func stated(raw jsontext.Value) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, text(raw))
	return t
}

// Parse reads an SQS message body: a movement, an SNS notification (a "Type") whose
// Message is the movement as a JSON string, or an EventBridge event ("detail-type" and
// "detail") whose detail is the movement; envelopes cannot be nested. A JSON number
// importe is read from its literal, never through float64. Bodies over 256 KiB are
// refused unread. Errors are *FieldError, with paths such as "Message.importe".
func Parse(body []byte) (Movimiento, error) {
	m, _, err := parse(body)
	return m, err
}

// parse is Parse, and the body as decoded, whose envelope says where the movement came
// from.
func parse(body []byte) (Movimiento, *message, error) {
	if len(body) > MaxBody {
		return Movimiento{}, nil, &FieldError{Rule: fmt.Sprintf("is %d bytes, over the %d-byte limit (SQS's maximum message size)", len(body), MaxBody)}
	}
	msg, err := decode(body)
	if err != nil {
		return Movimiento{}, nil, err
	}
	if err := msg.ambiguous(); err != nil {
		return Movimiento{}, nil, err
	}
	var m Movimiento
	switch msg.envelope() {
	case "EventBridge":
		if k := msg.Detail.Kind(); k != '{' {
			return Movimiento{}, nil, &FieldError{Field: "detail", Rule: "must be a JSON object holding the movement, got " + kindNames[k]}
		}
		m, err = unwrap("detail", msg.Detail)
	case "SNS":
		if t := text(msg.Type); t != "Notification" {
			rule := `must be "Notification": only SNS notifications carry a movement`
			if k := msg.Type.Kind(); k != '"' {
				rule += ", got " + kindNames[k]
			}
			return Movimiento{}, nil, &FieldError{Field: "Type", Value: t, Rule: rule}
		}
		if k := msg.Message.Kind(); k != '"' {
			return Movimiento{}, nil, &FieldError{Field: "Message", Rule: "must be a JSON string holding the movement, got " + kindNames[k]}
		}
		m, err = unwrap("Message", []byte(text(msg.Message)))
	default:
		m, err = msg.movimiento()
	}
	return m, &msg, err
}

// decode reads b as exactly one JSON object.
func decode(b []byte) (message, error) {
	var msg message
	err := json.Unmarshal(b, &msg, strict)
	var notObject *json.SemanticError // the only kind there is: members are raw
	switch {
	case errors.As(err, &notObject):
		return msg, &FieldError{Rule: "must be a JSON object, got " + kindNames[notObject.JSONKind]}
	case err != nil:
		return msg, &FieldError{Rule: "is not valid JSON: " + strings.TrimPrefix(err.Error(), "jsontext: ")}
	case bytes.TrimLeft(b, " \t\r\n")[0] == 'n':
		return msg, &FieldError{Rule: "must be a JSON object, got a JSON null"}
	}
	return msg, nil
}

// ambiguous refuses an envelope that also carries a movement's members at its top
// level: which movement is meant, the envelope's or the body's, is for no one to guess.
// The error names the first movement member and the envelope's. An EventBridge event's
// own id is its envelope's.
func (msg *message) ambiguous() error {
	kind := msg.envelope()
	if kind == "" {
		return nil
	}
	for i, raw := range msg.members() {
		if raw != nil && !(kind == "EventBridge" && fields[i] == "id") {
			envelopeMember := map[string]string{"SNS": "Type", "EventBridge": "detail-type"}[kind]
			return &FieldError{Field: fields[i], Rule: fmt.Sprintf("beside the %s envelope's %s: a body is a movement or an envelope, not both", kind, envelopeMember)}
		}
	}
	return nil
}

// members are msg's movement members, raw, in the order of fields.
func (msg *message) members() [len(fields)]jsontext.Value {
	return [...]jsontext.Value{msg.ID, msg.Cuenta, msg.Tipo, msg.Importe, msg.Moneda,
		msg.Concepto, msg.Fecha, msg.Destino, msg.Partes, msg.Anula, msg.Retencion, msg.Expira}
}

// envelope names the envelope msg is, or "" for a plain movement.
func (msg *message) envelope() string {
	switch {
	case msg.DetailType != nil && msg.Detail != nil:
		return "EventBridge"
	case msg.Type != nil:
		return "SNS"
	}
	return ""
}

// unwrap parses the movement in an envelope's member where, reporting problems under it.
func unwrap(where string, b []byte) (Movimiento, error) {
	msg, err := decode(b)
	if err == nil {
		if kind := msg.envelope(); kind != "" {
			return Movimiento{}, &FieldError{Field: where, Rule: "holds an " + kind + " envelope; envelopes cannot be nested"}
		}
		var m Movimiento
		if m, err = msg.movimiento(); err == nil {
			return m, nil
		}
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		inner := *fe
		inner.Field = strings.TrimSuffix(where+"."+fe.Field, ".")
		err = &inner
	}
	return Movimiento{}, err
}

// movimiento validates the movement members of msg.
func (msg *message) movimiento() (Movimiento, error) {
	var d Datos
	var wrongType *FieldError // the first in field order
	dst := d.members()
	for i, raw := range msg.members() {
		if fields[i] == "partes" {
			var fe *FieldError
			if d.Partes, fe = parsePartes(raw); fe != nil && wrongType == nil {
				wrongType = fe
			}
			continue
		}
		switch k := raw.Kind(); {
		case k == '0' && fields[i] == "importe":
			*dst[i] = string(raw) // the literal, checked like a string
		case k == 0 || k == 'n' || k == '"': // absent and null are alike
			*dst[i] = text(raw)
		case wrongType == nil:
			want := "a JSON string"
			if fields[i] == "importe" {
				want += " or number"
			}
			wrongType = &FieldError{Field: fields[i], Rule: "must be " + want + ", got " + kindNames[k]}
		}
	}
	return validate(&d, wrongType)
}

// text returns the text of a JSON string, or "" for any other value.
func text(raw jsontext.Value) string {
	switch {
	case raw.Kind() != '"':
		return ""
	case bytes.IndexByte(raw, '\\') < 0: // no escapes: the text is between the quotes
		return string(raw[1 : len(raw)-1])
	}
	b, _ := jsontext.AppendUnquote(nil, raw) // valid: the decoder checked it
	return string(b)
}

// kindNames names each JSON kind for messages; 0 is an absent member.
var kindNames = map[jsontext.Kind]string{
	0: "nothing", 'n': "a JSON null", 't': "a JSON boolean", 'f': "a JSON boolean",
	'"': "a JSON string", '0': "a JSON number", '{': "a JSON object", '[': "a JSON array",
}
