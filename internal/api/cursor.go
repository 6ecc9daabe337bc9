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
//	version (1 byte, 2) | seq (8 bytes, big endian) | account (8 bytes) | check (8 bytes)
//
// seq (≥ 1) is the last movement returned. account is the first 8 bytes of SHA-256
// over the account id, so every cursor has cursorLen characters, whatever the
// account's length. check is the first 8 bytes of SHA-256 over the rest, so a mangled
// cursor, or one from another statement, is a 400, not a wrong page. It is unsigned on
// purpose: it only narrows a query its caller may already make, and without a key the
// API stays stateless.
const (
	cursorVersion  = 2
	cursorCheckLen = 8
	cursorSeqAt    = 1               // the seq's offset, after the version
	cursorAcctAt   = cursorSeqAt + 8 // the account's, after the seq
	cursorCheckAt  = cursorAcctAt + 8
	cursorBytes    = cursorCheckAt + cursorCheckLen
)

// cursorLen is every cursor's length in characters (api/openapi.yaml, Cursor).
var cursorLen = base64.RawURLEncoding.EncodedLen(cursorBytes)

// cursorError says why a cursor was refused; its text is the 400's message, Reason
// reads after "cursor ".
type cursorError struct {
	Reason string
}

func (e *cursorError) Error() string { return "cursor " + e.Reason }

// encodeCursor is the cursor of the page after the one ending at seq on account cuenta.
func encodeCursor(cuenta string, seq int64) string {
	b := make([]byte, 0, cursorBytes)
	b = append(b, cursorVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(seq))
	b = append(b, account(cuenta)...)
	sum := sha256.Sum256(b)
	b = append(b, sum[:cursorCheckLen]...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// account is the cursor's fingerprint of the account id cuenta.
func account(cuenta string) []byte {
	sum := sha256.Sum256([]byte(cuenta))
	return sum[:cursorCheckAt-cursorAcctAt]
}

// decodeCursor returns the seq below which the next page of cuenta's statement starts.
// A cursor of any other length is refused before it is decoded.
func decodeCursor(s, cuenta string) (int64, error) {
	if len(s) != cursorLen {
		return 0, &cursorError{"has the wrong length"}
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return 0, &cursorError{"is not base64url"}
	}
	if b[0] != cursorVersion {
		return 0, &cursorError{"has an unknown format"}
	}
	body, check := b[:cursorCheckAt], b[cursorCheckAt:]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:cursorCheckLen], check) {
		return 0, &cursorError{"is damaged or altered"}
	}
	if !bytes.Equal(body[cursorAcctAt:], account(cuenta)) {
		return 0, &cursorError{"belongs to another account's statement"}
	}
	seq := binary.BigEndian.Uint64(body[cursorSeqAt:cursorAcctAt])
	if seq < 1 || seq > math.MaxInt64 {
		return 0, &cursorError{"points outside any statement"}
	}
	return int64(seq), nil
}
