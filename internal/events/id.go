package events

import (
	"crypto/sha256"
	"encoding/hex"
)

// EventID is the id of the event announcing that movement id of account cuenta reached
// estado: the first 128 bits of SHA-256 over the three, each followed by a NUL byte
// (which no account, id or estado holds), in hex. Every publication of one fact carries
// the same id, and two facts never share one: a record is created once, a hold settled
// or dropped once, and an administration has a version of its own.
func EventID(cuenta, id, estado string) string {
	h := sha256.New()
	for _, part := range []string{cuenta, id, estado} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
