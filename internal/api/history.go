package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

// SaldoEnBody is an account's balance at an instant as the API answers it
// (api/openapi.yaml, SaldoEn): after the movement seq, the last posted at or before
// En. Seq 0 says none was posted by then. Version is the account's version that
// movement was written with, and Aplicado when; both are absent when not known.
type SaldoEnBody struct {
	Cuenta   string `json:"cuenta"`
	Moneda   string `json:"moneda"`
	En       string `json:"en"`
	Saldo    string `json:"saldo"`
	Seq      int64  `json:"seq"`
	Version  int64  `json:"version,omitempty"`
	Aplicado string `json:"aplicado,omitempty"`
}

// NewSaldoEnBody is s, the balance at en, as the API answers it.
func NewSaldoEnBody(s store.SaldoEn, en time.Time) SaldoEnBody {
	b := SaldoEnBody{Cuenta: s.Cuenta, Moneda: s.Moneda, En: movimiento.Timestamp(en), Saldo: movimiento.Texto(s.Saldo, s.Moneda), Seq: s.Seq, Version: s.Version}
	if !s.Aplicado.IsZero() {
		b.Aplicado = movimiento.Timestamp(s.Aplicado)
	}
	return b
}

// saldoEn answers GET /cuentas/{cuenta}?en=: the balance at an instant, not in the
// future. An instant before the account was opened is a 404 of its own code.
func (s *server) saldoEn(w http.ResponseWriter, r *http.Request, id string, q url.Values) {
	en, msg := instant(q, "en", false)
	if msg == "" && en.After(time.Now()) {
		msg = fmt.Sprintf("en %s is in the future: no balance is known there yet", q.Get("en"))
	}
	if msg != "" {
		writeError(w, http.StatusBadRequest, codeBadRequest, msg)
		return
	}
	saldo, err := s.reader.SaldoEn(r.Context(), id, en)
	if errors.Is(err, store.ErrNotYetOpen) {
		writeError(w, http.StatusNotFound, codeNotYetOpen, fmt.Sprintf("account %s was not open yet at %s", id, movimiento.Timestamp(en)))
		return
	}
	if err != nil {
		s.readFailed(w, r, err, fmt.Sprintf("account %s not found", id))
		return
	}
	writeJSON(w, http.StatusOK, NewSaldoEnBody(saldo, en))
}

// rangeParams reads desde and hasta, the statement's bounds by applied time (zero when
// absent); msg says what is wrong, naming the parameter.
func rangeParams(q url.Values) (desde, hasta time.Time, msg string) {
	if desde, msg = instant(q, "desde", true); msg != "" {
		return desde, hasta, msg
	}
	if hasta, msg = instant(q, "hasta", true); msg != "" {
		return desde, hasta, msg
	}
	if !desde.IsZero() && !hasta.IsZero() && !hasta.After(desde) {
		return desde, hasta, fmt.Sprintf("hasta %s must be later than desde %s: the range is [desde, hasta)", q.Get("hasta"), q.Get("desde"))
	}
	return desde, hasta, ""
}

// instant reads the query parameter name as an RFC 3339 date-time, or a full date
// (its first instant in UTC) when days is true; zero when absent. msg says what is
// wrong, naming it.
func instant(q url.Values, name string, days bool) (time.Time, string) {
	vs, ok := q[name]
	if !ok {
		return time.Time{}, ""
	}
	if len(vs) > 1 {
		return time.Time{}, name + " must be given once"
	}
	if t, ok := movimiento.ParseInstante(vs[0]); ok {
		return t, ""
	}
	if t, ok := movimiento.ParseDia(vs[0]); ok && days {
		return t, ""
	}
	want := "an RFC 3339 date-time such as 2026-11-30T23:59:59Z"
	if days {
		want += " or a date such as 2026-12-01"
	}
	msg := fmt.Sprintf("%s %q must be %s", name, vs[0], want)
	if strings.Contains(vs[0], " ") {
		msg += " (send a + in an offset as %2B: a query string reads + as a space)"
	}
	return time.Time{}, msg
}
