package movimiento

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a small RFC 8259 scanner. Parse needs what encoding/json does not
// offer cheaply: the raw text of each top-level member (to read an importe number
// from its literal), duplicate-key detection, and speed on the per-message path
// (json.Valid alone costs several µs for an SNS envelope). It accepts exactly what
// json.Valid accepts (FuzzScanner checks this); error explanations come from
// encoding/json, off the hot path.

// maxDepth is encoding/json's nesting limit, kept so both agree on every input.
const maxDepth = 10000

// scanner walks a JSON text; every method returns false on a syntax error.
type scanner struct {
	b     []byte
	i     int
	depth int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// skip consumes optional space and then c, reporting whether c was there.
func (s *scanner) skip(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// value consumes optional space and one JSON value.
func (s *scanner) value() bool {
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		return s.str()
	case '{':
		return s.container('}')
	case '[':
		return s.container(']')
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	return s.number()
}

// container consumes an object or array, whichever end closes.
func (s *scanner) container(end byte) bool {
	s.depth++
	if s.depth > maxDepth {
		return false
	}
	s.i++
	if !s.skip(end) {
		for {
			if end == '}' && !(s.skip('"') && s.strRest() && s.skip(':')) {
				return false
			}
			if !s.value() {
				return false
			}
			if s.skip(end) {
				break
			}
			if !s.skip(',') {
				return false
			}
		}
	}
	s.depth--
	return true
}

// str consumes a string; s.b[s.i] is its opening quote.
func (s *scanner) str() bool {
	s.i++
	return s.strRest()
}

// strRest consumes a string whose opening quote is already consumed.
func (s *scanner) strRest() bool {
	b := s.b
	for i := s.i; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return true
		case c == '\\':
			i++
			if i >= len(b) {
				return false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || hex4(b[i+1:i+5]) < 0 {
					return false
				}
				i += 4
			default:
				return false
			}
		case c < 0x20:
			return false
		}
	}
	return false
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// number consumes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digitsEnd(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsEnd(b, i)
		if j == i {
			return false
		}
		i = j
	}
	s.i = i
	return true
}

func digitsEnd(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// hex4 decodes four hex digits, or returns -1.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// validJSON reports whether b is one JSON value, as json.Valid does.
func validJSON(b []byte) bool {
	s := scanner{b: b}
	if !s.value() {
		return false
	}
	s.space()
	return s.i == len(b)
}

// unquote returns the text of raw, a string literal the scanner accepted,
// decoded as encoding/json decodes it (a lone surrogate becomes U+FFFD). Without
// escapes it returns a subslice of raw, so it copies nothing.
func unquote(raw []byte) []byte {
	s := raw[1 : len(raw)-1]
	i := bytes.IndexByte(s, '\\')
	if i < 0 {
		return s
	}
	out := make([]byte, i, len(s))
	copy(out, s)
	for i < len(s) {
		if s[i] != '\\' {
			out = append(out, s[i])
			i++
			continue
		}
		switch c := s[i+1]; c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(s[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 = hex4(s[i+2 : i+6])
				}
				if r = utf16.DecodeRune(r, r2); r != utf8.RuneError {
					i += 6
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, c)
		}
		i += 2
	}
	return out
}

// decodeString returns the text of raw, a string literal the scanner accepted.
func decodeString(raw []byte) string {
	return string(unquote(raw))
}

// kindOf names the JSON type of the valid value raw.
func kindOf(raw []byte) string {
	switch raw[0] {
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

// describe names the valid value raw for a message: a string's quoted text,
// else its JSON type.
func describe(raw []byte) string {
	if raw[0] == '"' {
		s := scanner{b: raw}
		s.str()
		return quote(decodeString(raw[:s.i]))
	}
	return "a JSON " + kindOf(raw)
}
