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
	seen  map[string]tokenUse
	order []remembered // in the order remembered, so that the lapsed leave first
}

// tokenUse is a remembered token: its request's digest, and when it succeeded.
type tokenUse struct {
	digest [sha256.Size]byte
	at     time.Time
}

// remembered is a token and when it was remembered.
type remembered struct {
	token string
	at    time.Time
}

func newTokens() *tokens { return &tokens{seen: map[string]tokenUse{}} }

// tokened is what tokens compares of a request: its ClientRequestToken ("" for none)
// and the SHA-256 of its JSON with every object's names sorted, so that two encodings
// of one request, whose maps the SDK writes in any order, share it.
type tokened struct {
	token  string
	digest [sha256.Size]byte
}

// tokenedOf reads a TransactWriteItems body once for what tokens compares; a body that
// is no JSON object has no token (minidyn answers it).
func tokenedOf(body []byte) tokened {
	var req map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if d.Decode(&req) != nil {
		return tokened{}
	}
	tok, _ := req["ClientRequestToken"].(string)
	canonical, err := json.Marshal(req) // encoding/json sorts map keys
	if tok == "" || err != nil {
		return tokened{}
	}
	return tokened{token: tok, digest: sha256.Sum256(canonical)}
}

// answer answers req from memory on w and reports true, when its token is remembered;
// it reports false, having written nothing, for a request to run.
func (m *tokens) answer(w http.ResponseWriter, req tokened) bool {
	use, ok := m.seen[req.token]
	if req.token == "" || !ok || time.Since(use.at) >= tokenWindow {
		return false
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if use.digest != req.digest {
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

// remember notes the token of req, a request that succeeded, and forgets the tokens
// whose window has passed.
func (m *tokens) remember(req tokened) {
	now := time.Now()
	for len(m.order) > 0 && now.Sub(m.order[0].at) >= tokenWindow {
		if old := m.order[0]; m.seen[old.token].at.Equal(old.at) { // not remembered again since
			delete(m.seen, old.token)
		}
		m.order = m.order[1:]
	}
	if req.token != "" {
		m.seen[req.token] = tokenUse{digest: req.digest, at: now}
		m.order = append(m.order, remembered{req.token, now})
	}
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
