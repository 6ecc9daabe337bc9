package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math"
)

// A statement cursor is opaque to clients: base64url without padding of
//
//	version (1 byte, 1) | seq (8 bytes, big endian) | len(cuenta) (1 byte) | cuenta | check (8 bytes)
//
// seq (≥ 1) is the last movement returned; check is the first 8 bytes of SHA-256 over
// the rest, so a mangled cursor, or one from another statement, is a 400, not a wrong
// page. It is unsigned on purpose: it only narrows a query its caller may already make,
// and without a key the API stays stateless.
const (
	cursorVersion  = 1
	cursorCheckLen = 8
	cursorSeqAt    = 1               // the seq's offset, after the version
	cursorLenAt    = cursorSeqAt + 8 // len(cuenta)'s, after the seq
	cursorCuentaAt = cursorLenAt + 1
)

// cursorError says why a cursor was refused; its text is the 400's message, Reason
// reads after "cursor ".
type cursorError struct {
	Reason string
}

func (e *cursorError) Error() string { return "cursor " + e.Reason }

// encodeCursor is the cursor of the page after the one ending at seq on account cuenta
// (at most maxCuentaBytes).
func encodeCursor(cuenta string, seq int64) string {
	b := make([]byte, 0, cursorCuentaAt+len(cuenta)+cursorCheckLen)
	b = append(b, cursorVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(seq))
	b = append(b, byte(len(cuenta)))
	b = append(b, cuenta...)
	sum := sha256.Sum256(b)
	b = append(b, sum[:cursorCheckLen]...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor returns the seq below which the next page of cuenta's statement starts.
func decodeCursor(s, cuenta string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, &cursorError{"is not base64url"}
	}
	if len(b) < cursorCuentaAt+cursorCheckLen || b[0] != cursorVersion {
		return 0, &cursorError{"has an unknown format"}
	}
	n := int(b[cursorLenAt])
	if len(b) != cursorCuentaAt+n+cursorCheckLen {
		return 0, &cursorError{"has the wrong length"}
	}
	body, check := b[:len(b)-cursorCheckLen], b[len(b)-cursorCheckLen:]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:cursorCheckLen], check) {
		return 0, &cursorError{"is damaged or altered"}
	}
	if string(body[cursorCuentaAt:]) != cuenta {
		return 0, &cursorError{"belongs to another account's statement"}
	}
	seq := binary.BigEndian.Uint64(body[cursorSeqAt:cursorLenAt])
	if seq < 1 || seq > math.MaxInt64 {
		return 0, &cursorError{"points outside any statement"}
	}
	return int64(seq), nil
}
