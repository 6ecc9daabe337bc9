package movimiento

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// JSON reading is done by jsontext (github.com/go-json-experiment/json, the upstream of
// Go's encoding/json/v2, still behind an experiment flag in Go 1.26): it rejects
// duplicate member names and invalid UTF-8, gives each member's raw text (so an importe
// number is read from its literal, never through float64), and is fast enough for the
// per-message path. encoding/json explains bad input, off the hot path.

var decoders = sync.Pool{New: func() any { return jsontext.NewDecoder(bytes.NewReader(nil)) }}

// readObject reads b as exactly one JSON object, recording the raw values of the keys
// Parse reads (slices of b) and rejecting repeated keys.
func readObject(b []byte) (object, error) {
	dec := decoders.Get().(*jsontext.Decoder)
	defer decoders.Put(dec)
	dec.Reset(bytes.NewBuffer(b)) // a bytes.Buffer is parsed in place, not copied

	var obj object
	if dec.PeekKind() != '{' {
		return object{}, notObject(b)
	}
	if _, err := dec.ReadToken(); err != nil {
		return object{}, syntaxError(b, err)
	}
	var nameBuf [32]byte
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue() // the member name, still quoted
		if err != nil {
			return object{}, syntaxError(b, err)
		}
		key, err := jsontext.AppendUnquote(nameBuf[:0], name)
		if err != nil {
			return object{}, syntaxError(b, err)
		}
		k := keyIndex(key)
		val, err := dec.ReadValue()
		if err != nil {
			return object{}, syntaxError(b, err)
		}
		if k >= 0 {
			end := int(dec.InputOffset())
			obj[k] = b[end-len(val) : end]
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return object{}, syntaxError(b, err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return object{}, &SyntaxError{Err: errors.New("unexpected data after the JSON object")}
	}
	return obj, nil
}

// syntaxError explains why b could not be read. A duplicate name is reported as such;
// anything else is explained by encoding/json, whose *json.SyntaxError carries the
// offset, or by jsontext where encoding/json accepts what jsontext does not.
func syntaxError(b []byte, err error) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName) {
		return &SyntaxError{Err: fmt.Errorf("duplicate key %s in %s", quote(se.JSONPointer.LastToken()), where(se.JSONPointer))}
	}
	if err == io.ErrUnexpectedEOF {
		return notObject(b)
	}
	var raw json.RawMessage
	if jerr := json.Unmarshal(b, &raw); jerr != nil {
		return &SyntaxError{Err: jerr}
	}
	return &SyntaxError{Err: err}
}

func where(p jsontext.Pointer) string {
	if parent := p.Parent(); parent != "" {
		return "object " + string(parent)
	}
	return "the top-level object"
}

// notObject explains why b is not one JSON object.
func notObject(b []byte) error {
	trimmed := bytes.Trim(b, " \t\r\n")
	if len(trimmed) == 0 {
		return &SyntaxError{Err: errors.New("empty body")}
	}
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return &SyntaxError{Err: err}
	}
	return &SyntaxError{Err: fmt.Errorf("got %s, want an object", describe(trimmed))}
}

// unquote returns the text of raw, a valid JSON string literal.
func unquote(raw []byte) []byte {
	out, _ := jsontext.AppendUnquote(nil, raw) // raw was validated by the decoder
	return out
}

// decodeString returns the text of raw, a valid JSON string literal. Without escapes
// the text is the literal's inside, already checked to be UTF-8.
func decodeString(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	return string(unquote(raw))
}

// kindOf names the JSON type of the valid value raw.
func kindOf(raw []byte) string {
	switch jsontext.Value(raw).Kind() {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// describe names the valid value raw for a message: a string's quoted text, else its
// JSON type.
func describe(raw []byte) string {
	if jsontext.Value(raw).Kind() == '"' {
		return quote(decodeString(raw))
	}
	return "a JSON " + kindOf(raw)
}
