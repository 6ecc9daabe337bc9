package api

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCursorRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		cuenta string
		seq    int64
	}{{"ES76", 71}, {"a", 1}, {strings.Repeat("x", maxCuentaLen), 1<<63 - 1}, {strings.Repeat("é", maxCuentaLen), 2}, {"ES7620770024003102575766", 51}} {
		c := encodeCursor(tc.cuenta, tc.seq)
		if strings.ContainsAny(c, "+/=") || len(c) != 34 {
			t.Errorf("cursor %q is not 34 characters of URL-safe unpadded base64", c)
		}
		seq, err := decodeCursor(c, tc.cuenta)
		if err != nil || seq != tc.seq {
			t.Errorf("decode(encode(%s, %d)) = %d, %v", tc.cuenta, tc.seq, seq, err)
		}
	}
}

// sealed builds a cursor payload with a correct checksum, as someone who read the
// format could.
func sealed(version byte, seq uint64, cuenta string) string {
	b := []byte{version}
	b = binary.BigEndian.AppendUint64(b, seq)
	acct := sha256.Sum256([]byte(cuenta))
	b = append(b, acct[:8]...)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(append(b, sum[:8]...))
}

func TestCursorRefusesAnythingElse(t *testing.T) {
	good := encodeCursor("ES76", 71)
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	cases := map[string]string{
		"empty":                        "",
		"garbage":                      "not a cursor!",
		"padded standard base64":       base64.StdEncoding.EncodeToString(raw),
		"truncated":                    good[:len(good)-2],
		"extended":                     good + "AA",
		"another account's":            encodeCursor("ES77", 71),
		"a prefix account's":           encodeCursor("ES7", 71),
		"another version":              sealed(3, 71, "ES76"),
		"seq 0 (from the top)":         sealed(2, 0, "ES76"),
		"seq beyond int64":             sealed(2, 1<<63, "ES76"),
		"of its length, not base64url": strings.Repeat("!", len(good)),
	}
	// Every single altered byte is caught.
	for i := range raw {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x01
		cases[fmt.Sprintf("byte %d altered", i)] = base64.RawURLEncoding.EncodeToString(b)
	}
	for name, c := range cases {
		seq, err := decodeCursor(c, "ES76")
		var bad *cursorError
		if !errors.As(err, &bad) || bad.Reason == "" {
			t.Errorf("%s: decode = %d, %v; want a cursorError", name, seq, err)
		}
	}
}
