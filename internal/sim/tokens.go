package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"time"
)

// tokenWindow is how long DynamoDB remembers a ClientRequestToken after the
// TransactWriteItems that used it succeeded: 10 minutes.
const tokenWindow = 10 * time.Minute

// tokens is DynamoDB's memory of the ClientRequestTokens of TransactWriteItems that
// succeeded. Within tokenWindow, the same request with its token again is answered
// success and writes nothing (so the SDK's retry of an answer lost after commit is
// harmless), and another request with that token is refused with
// IdempotentParameterMismatchException. A cancelled or failed request is not
// remembered. Not safe for concurrent use: transactions calls it under its lock.
type tokens struct {
	now   func() time.Time
	seen  map[string]tokenUse
	order []remembered // in the order remembered, so that the lapsed leave first
}

// remembered is a token and when it was remembered.
type remembered struct {
	token string
	at    time.Time
}

// tokenUse is a remembered token: its request's digest, and when it succeeded.
type tokenUse struct {
	digest [sha256.Size]byte
	at     time.Time
}

func newTokens(now func() time.Time) *tokens {
	return &tokens{now: now, seen: map[string]tokenUse{}}
}

// answer answers body from memory on w and reports true, when body's token is
// remembered; it reports false, having written nothing, for a request to run.
func (m *tokens) answer(w http.ResponseWriter, body []byte) bool {
	tok := tokenOf(body)
	use, ok := m.seen[tok]
	if tok == "" || !ok || m.now().Sub(use.at) >= tokenWindow {
		return false
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if use.digest != digestOf(body) {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{
			"__type":  "com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException",
			"message": "Request has a ClientRequestToken already used by a request with other parameters",
		})
		return true
	}
	_, _ = w.Write([]byte("{}"))
	return true
}

// remember notes the token of body, a request that succeeded, and forgets the tokens
// whose window has passed.
func (m *tokens) remember(body []byte) {
	now := m.now()
	for len(m.order) > 0 && now.Sub(m.order[0].at) >= tokenWindow {
		if old := m.order[0]; m.seen[old.token].at.Equal(old.at) { // not remembered again since
			delete(m.seen, old.token)
		}
		m.order = m.order[1:]
	}
	if tok := tokenOf(body); tok != "" {
		m.seen[tok] = tokenUse{digest: digestOf(body), at: now}
		m.order = append(m.order, remembered{tok, now})
	}
}

// digestOf is the SHA-256 of body's JSON with every object's names sorted, so that two
// encodings of one request, whose maps the SDK writes in any order, share it.
func digestOf(body []byte) [sha256.Size]byte {
	var v any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return sha256.Sum256(body)
	}
	canonical, err := json.Marshal(v) // encoding/json sorts map keys
	if err != nil {
		return sha256.Sum256(body)
	}
	return sha256.Sum256(canonical)
}

// tokenOf is the ClientRequestToken of a TransactWriteItems body, "" when it has none.
func tokenOf(body []byte) string {
	var req struct{ ClientRequestToken string }
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	return req.ClientRequestToken
}

// statusWriter is a ResponseWriter that notes the status written through it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}
