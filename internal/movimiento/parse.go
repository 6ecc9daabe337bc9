package movimiento

import (
	"fmt"
)

// maxBody is SQS's maximum message size: a larger body did not come from the
// queue intact, and bounding it bounds the work spent on it.
const maxBody = 256 << 10

// Envelope kinds, as EnvelopeError.Kind reports them.
const (
	kindSNS         = "SNS"
	kindEventBridge = "EventBridge"
)

// Keys Parse reads, after the movement's fields (fID … fFecha).
const (
	fType       = numFields + iota // SNS: must be "Notification"
	fMessage                       // SNS: the movement as a JSON string
	fDetail                        // EventBridge: the movement as an object
	fDetailType                    // EventBridge: marks an event
	numKeys
)

// fieldNames are the JSON names of the movement's fields, by index.
var fieldNames = [numFields]string{"id", "cuenta", "tipo", "importe", "moneda", "concepto", "fecha"}

// object holds the raw JSON value of each key Parse reads from one JSON object;
// nil means absent. The slices point into the parsed body.
type object [numKeys][]byte

// Parse reads an SQS message body: a movement JSON object, an SNS notification
// envelope whose Message is the movement as a JSON string, or an EventBridge
// event whose detail is the movement. The kind is decided by the top-level keys:
// "detail-type" and "detail" make an EventBridge event, else "Type" makes an SNS
// envelope, else the object is the movement. Envelopes cannot be nested.
//
// Keys are matched case-sensitively, unknown keys are ignored, and a repeated key
// is an error. Importe may be a JSON string or number; a number is read from its
// literal text, never through float64. Bodies over 256 KiB (SQS's limit) are
// rejected before decoding. Every error matches ErrInvalid; a problem with the
// movement inside an envelope is an *EnvelopeError wrapping the movement's own
// typed error.
func Parse(body []byte) (Movimiento, error) {
	if len(body) > maxBody {
		return Movimiento{}, &SyntaxError{Err: fmt.Errorf("body is %d bytes, over the %d-byte limit (SQS's maximum message size)", len(body), maxBody)}
	}
	obj, err := readObject(body)
	if err != nil {
		return Movimiento{}, err
	}
	switch envelope(&obj) {
	case kindEventBridge:
		detail := obj[fDetail]
		if detail[0] != '{' {
			return Movimiento{}, &EnvelopeError{Kind: kindEventBridge, Reason: "detail must be a JSON object, got " + describe(detail)}
		}
		inner, err := readObject(detail)
		return fromInner(kindEventBridge, "detail", &inner, err)
	case kindSNS:
		if t := obj[fType]; t[0] != '"' || decodeString(t) != "Notification" {
			return Movimiento{}, &EnvelopeError{Kind: kindSNS, Reason: `Type must be "Notification", got ` + describe(t)}
		}
		msg := obj[fMessage]
		if msg == nil || msg[0] == 'n' {
			return Movimiento{}, &EnvelopeError{Kind: kindSNS, Reason: "Message is missing"}
		}
		if msg[0] != '"' {
			return Movimiento{}, &EnvelopeError{Kind: kindSNS, Reason: "Message must be a JSON string, got " + describe(msg)}
		}
		inner, err := readObject(unquote(msg))
		return fromInner(kindSNS, "Message", &inner, err)
	}
	return fromObject(&obj)
}

// envelope names the kind of envelope obj is, or "" for a plain movement.
func envelope(obj *object) string {
	switch {
	case obj[fDetailType] != nil && obj[fDetail] != nil:
		return kindEventBridge
	case obj[fType] != nil:
		return kindSNS
	}
	return ""
}

// fromInner reads the movement inside an envelope of kind, found at where;
// scanErr is the error reading it as a JSON object, if any.
func fromInner(kind, where string, inner *object, scanErr error) (Movimiento, error) {
	if scanErr != nil {
		return Movimiento{}, &EnvelopeError{Kind: kind, Reason: "in " + where, Err: scanErr}
	}
	if nested := envelope(inner); nested != "" {
		return Movimiento{}, &EnvelopeError{Kind: kind, Reason: where + " holds an " + nested + " envelope; envelopes cannot be nested"}
	}
	m, err := fromObject(inner)
	if err != nil {
		return Movimiento{}, &EnvelopeError{Kind: kind, Reason: "in " + where, Err: err}
	}
	return m, nil
}

// fromObject validates the movement fields of obj.
func fromObject(obj *object) (Movimiento, error) {
	var d Datos
	var typeErrs [numFields]error
	dst := [numFields]*string{&d.ID, &d.Cuenta, (*string)(&d.Tipo), &d.Importe, &d.Moneda, &d.Concepto, &d.Fecha}
	for f, p := range dst {
		raw := obj[f]
		switch {
		case raw == nil || raw[0] == 'n': // absent or null: left empty, as absent
		case raw[0] == '"':
			*p = decodeString(raw)
		case f == fImporte && (raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9'):
			*p = string(raw) // the number's literal, checked like a string
		default:
			typeErrs[f] = &FieldTypeError{Field: fieldNames[f], Got: kindOf(raw)}
		}
	}
	return validate(&d, &typeErrs)
}

func keyIndex(key []byte) int {
	switch string(key) {
	case "id":
		return fID
	case "cuenta":
		return fCuenta
	case "tipo":
		return fTipo
	case "importe":
		return fImporte
	case "moneda":
		return fMoneda
	case "concepto":
		return fConcepto
	case "fecha":
		return fFecha
	case "Type":
		return fType
	case "Message":
		return fMessage
	case "detail":
		return fDetail
	case "detail-type":
		return fDetailType
	}
	return -1
}
