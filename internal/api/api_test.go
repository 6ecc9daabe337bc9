package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ledger-dev/ledger/internal/api"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/shopspring/decimal"
)

var appliedAt = time.Date(2026, 12, 2, 10, 15, 0, 123000000, time.UTC)

// fixture is the API over HTTP on a fresh table, with a service to put movements in.
type fixture struct {
	url    string
	client *http.Client // checks every response against api/openapi.yaml
	svc    *store.Ledger
	logs   *testenv.Buffer
	env    *testenv.DynamoDB
}

func newFixture(t *testing.T) *fixture { return newFixtureAt(t, appliedAt) }

// newFixtureAt is a fixture whose service applies movements at now.
func newFixtureAt(t *testing.T, now time.Time) *fixture {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: env.Table(), InsufficientFunds: cuenta.Reject, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	f := serve(t, store.NewReader(env.Client, env.Table()), svc)
	f.env = env
	return f
}

func serve(t *testing.T, r api.Reader, svc *store.Ledger) *fixture {
	t.Helper()
	logs := &testenv.Buffer{}
	srv := httptest.NewServer(api.New(r, slog.New(slog.NewJSONHandler(logs, nil))))
	t.Cleanup(srv.Close)
	return &fixture{url: srv.URL, client: testenv.LoadOpenAPI(t).Client(t), svc: svc, logs: logs}
}

// apply applies movements in batches, as the consumer does, and fails on anything but
// applied or rejected.
func (f *fixture) apply(t *testing.T, movs ...movimiento.Movimiento) {
	t.Helper()
	for start := 0; start < len(movs); start += 40 {
		var batch []store.Entrega
		for _, m := range movs[start:min(start+40, len(movs))] {
			batch = append(batch, store.Entrega{Mov: m, Origen: "msg-" + m.ID})
		}
		for i, r := range f.svc.Apply(context.Background(), batch) {
			if r.Outcome != store.Applied && r.Outcome != store.Rejected && r.Outcome != store.Duplicate {
				t.Fatalf("%s: %+v", batch[i].Mov.ID, r)
			}
		}
	}
}

func mov(t *testing.T, cta, id string, tipo movimiento.Tipo, importe, moneda string) movimiento.Movimiento {
	t.Helper()
	m, err := movimiento.New(movimiento.Datos{ID: id, Cuenta: cta, Tipo: tipo, Importe: importe, Moneda: moneda, Concepto: "Pedido " + id, Fecha: "2026-12-02T11:15:00+01:00"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// response is what a client got.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (f *fixture) do(t *testing.T, method, path string) response {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

func (f *fixture) get(t *testing.T, path string) response { return f.do(t, http.MethodGet, path) }

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
}

type movementBody struct {
	ID, Cuenta, Tipo, Importe, Moneda, Concepto, Fecha, Estado, Motivo, Aplicado string
	Seq                                                                          *int64
	SaldoTras                                                                    *string `json:"saldo_tras"`
}

type statementBody struct {
	Cuenta      string
	Movimientos []movementBody
	Cursor      *string
}

type errorBody struct{ Error, Message string }

func TestStatementPagesNewestFirstWithoutGapsOrRepeats(t *testing.T) {
	f := newFixture(t)
	var movs []movimiento.Movimiento
	for i := 1; i <= 120; i++ {
		movs = append(movs, mov(t, "ES76", fmt.Sprintf("pago-%03d", i), movimiento.Abono, fmt.Sprintf("%d.50", i), "EUR"))
	}
	f.apply(t, movs...)

	var sizes []int
	var seqs []int64
	path := "/cuentas/ES76/movimientos?limit=50"
	for range 10 {
		r := f.get(t, path)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		var page statementBody
		r.decode(t, &page)
		if page.Cuenta != "ES76" {
			t.Errorf("cuenta = %q", page.Cuenta)
		}
		sizes = append(sizes, len(page.Movimientos))
		for _, m := range page.Movimientos {
			seqs = append(seqs, *m.Seq)
		}
		if page.Cursor == nil {
			break
		}
		path = "/cuentas/ES76/movimientos?limit=50&cursor=" + url.QueryEscape(*page.Cursor)
	}
	if fmt.Sprint(sizes) != "[50 50 20]" {
		t.Fatalf("page sizes = %v, want [50 50 20] and no cursor on the last", sizes)
	}
	for i, seq := range seqs {
		if seq != int64(120-i) {
			t.Fatalf("position %d holds seq %d, want %d: %v", i, seq, 120-i, seqs)
		}
	}

	// The newest movement, as the statement shows it.
	var first statementBody
	f.get(t, "/cuentas/ES76/movimientos?limit=1").decode(t, &first)
	m := first.Movimientos[0]
	// Σ (i + 0.50) for i = 1..120 = 7260 + 60.
	if m.ID != "pago-120" || m.Importe != "120.50" || *m.SaldoTras != "7320.00" || m.Estado != "aplicado" || m.Tipo != "abono" || m.Motivo != "" {
		t.Errorf("newest movement = %+v", m)
	}
	var def statementBody
	if f.get(t, "/cuentas/ES76/movimientos").decode(t, &def); len(def.Movimientos) != api.DefaultLimit || def.Cursor == nil {
		t.Errorf("without limit: %d movements, cursor %v; want %d and a cursor", len(def.Movimientos), def.Cursor, api.DefaultLimit)
	}
}

func TestBalanceIsADecimalStringInTheCurrencysUnits(t *testing.T) {
	f := newFixture(t)
	f.apply(t,
		mov(t, "ES76", "a", movimiento.Abono, "100", "EUR"), mov(t, "ES76", "b", movimiento.Cargo, "49.99", "EUR"),
		mov(t, "JP01", "a", movimiento.Abono, "5000", "JPY"),
		mov(t, "KW01", "a", movimiento.Abono, "1.5", "KWD"),
	)
	for _, tc := range []struct{ cuenta, saldo, moneda string }{{"ES76", "50.01", "EUR"}, {"JP01", "5000", "JPY"}, {"KW01", "1.500", "KWD"}} {
		r := f.get(t, "/cuentas/"+tc.cuenta)
		var c struct {
			Cuenta, Saldo, Moneda, Actualizada string
			Version, Movimientos               int64
		}
		r.decode(t, &c)
		if r.status != http.StatusOK || c.Cuenta != tc.cuenta || c.Saldo != tc.saldo || c.Moneda != tc.moneda {
			t.Errorf("GET /cuentas/%s = %d %s, want saldo %q %s", tc.cuenta, r.status, r.body, tc.saldo, tc.moneda)
		}
		if c.Actualizada != "2026-12-02T10:15:00.123Z" || c.Version != 1 {
			t.Errorf("GET /cuentas/%s: actualizada %q version %d", tc.cuenta, c.Actualizada, c.Version)
		}
		if strings.Contains(string(r.body), `"saldo":`+tc.saldo) {
			t.Errorf("saldo is a JSON number: %s", r.body)
		}
		if r.header.Get("Cache-Control") != "no-store" || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("headers = %v", r.header)
		}
	}
	var es struct{ Movimientos int64 }
	if f.get(t, "/cuentas/ES76").decode(t, &es); es.Movimientos != 2 {
		t.Errorf("movimientos = %d, want 2", es.Movimientos)
	}
}

func TestMovementLookupAnswersWasIChargedTwice(t *testing.T) {
	f := newFixture(t)
	f.apply(t, mov(t, "ES76", "nomina", movimiento.Abono, "100.00", "EUR"), mov(t, "ES76", "pago/2026/1", movimiento.Cargo, "30.00", "EUR"))
	tooMuch := mov(t, "ES76", "pago-grande", movimiento.Cargo, "500.00", "EUR")
	f.apply(t, tooMuch)

	applied := f.get(t, "/cuentas/ES76/movimientos/"+url.PathEscape("pago/2026/1"))
	var a movementBody
	applied.decode(t, &a)
	if applied.status != http.StatusOK || a.ID != "pago/2026/1" || a.Estado != "aplicado" || *a.Seq != 2 || *a.SaldoTras != "70.00" ||
		a.Importe != "30.00" || a.Tipo != "cargo" || a.Concepto != "Pedido pago/2026/1" || a.Fecha != "2026-12-02T11:15:00+01:00" ||
		a.Aplicado != "2026-12-02T10:15:00.123Z" || a.Motivo != "" {
		t.Errorf("applied movement = %d %s", applied.status, applied.body)
	}

	rejected := f.get(t, "/cuentas/ES76/movimientos/pago-grande")
	var rj movementBody
	rejected.decode(t, &rj)
	if rejected.status != http.StatusOK || rj.Estado != "rechazado" || !strings.Contains(rj.Motivo, "insufficient") || rj.Seq != nil || rj.SaldoTras != nil {
		t.Errorf("rejected movement = %d %s, want estado rechazado with its motivo, no seq or saldo_tras", rejected.status, rejected.body)
	}

	// The same facts delivered again (a producer retry, SNS fan-out): nothing changes.
	redelivered := mov(t, "ES76", "pago/2026/1", movimiento.Cargo, "30", "EUR")
	for _, m := range []movimiento.Movimiento{redelivered, tooMuch} {
		r, err := testenv.One(f.svc.Apply(context.Background(), []store.Entrega{{Mov: m, Origen: "msg-again"}}))
		if err != nil || r.Outcome != store.Duplicate {
			t.Fatalf("redelivery of %s: %+v, %v", m.ID, r, err)
		}
	}
	if again := f.get(t, "/cuentas/ES76/movimientos/"+url.PathEscape("pago/2026/1")); !bytes.Equal(again.body, applied.body) {
		t.Errorf("after a duplicate delivery:\n%s\nbefore:\n%s", again.body, applied.body)
	}
	if again := f.get(t, "/cuentas/ES76/movimientos/pago-grande"); !bytes.Equal(again.body, rejected.body) {
		t.Errorf("after a duplicate delivery:\n%s\nbefore:\n%s", again.body, rejected.body)
	}
	var st statementBody
	if f.get(t, "/cuentas/ES76/movimientos").decode(t, &st); len(st.Movimientos) != 2 || st.Cursor != nil {
		t.Errorf("statement = %+v, want the 2 applied movements only", st)
	}
}

func TestErrorsHaveTheirDocumentedStatusAndCode(t *testing.T) {
	f := newFixture(t)
	var movs []movimiento.Movimiento
	for i := 1; i <= 5; i++ {
		movs = append(movs, mov(t, "ES76", fmt.Sprintf("m-%d", i), movimiento.Abono, "1", "EUR"), mov(t, "ES77", fmt.Sprintf("m-%d", i), movimiento.Abono, "1", "EUR"))
	}
	f.apply(t, movs...)
	var page statementBody
	f.get(t, "/cuentas/ES76/movimientos?limit=2").decode(t, &page)
	var other statementBody
	f.get(t, "/cuentas/ES77/movimientos?limit=2").decode(t, &other)
	if page.Cursor == nil || other.Cursor == nil {
		t.Fatal("no cursors to tamper with")
	}
	cur := *page.Cursor
	raw, err := base64.RawURLEncoding.DecodeString(cur)
	if err != nil {
		t.Fatal(err)
	}
	raw[8]++ // the position's low byte: a client editing where the page starts
	tampered := base64.RawURLEncoding.EncodeToString(raw)

	cases := []struct {
		method, path string
		status       int
		code, says   string
	}{
		{"GET", "/cuentas/ES99", 404, "not_found", "account ES99 not found"},
		{"GET", "/cuentas/ES99/movimientos", 404, "not_found", "account ES99 not found"},
		{"GET", "/cuentas/ES76/movimientos/m-99", 404, "not_found", "account ES76 has no movement m-99"},
		{"GET", "/cuentas/ES99/movimientos/m-1", 404, "not_found", "account ES99 has no movement m-1"},
		// Ids are looked up as stored data is read: today's message rules do not apply.
		{"GET", "/cuentas/ES%2376", 404, "not_found", "account ES#76 not found"},
		{"GET", "/cuentas/" + strings.Repeat("1", 65), 404, "not_found", "not found"},
		{"GET", "/cuentas/" + strings.Repeat("1", 2042), 400, "bad_request", "cuenta is 2042 characters long; at most 2041"},
		{"GET", "/cuentas/ES76/movimientos/" + strings.Repeat("x", 129), 404, "not_found", "has no movement"},
		{"GET", "/cuentas/ES76/movimientos/" + strings.Repeat("x", 1021), 400, "bad_request", "id is 1021 characters long; at most 1020"},
		{"GET", "/cuentas/ES76/movimientos/pago%201", 404, "not_found", "account ES76 has no movement pago 1"},
		{"GET", "/cuentas/ES76/movimientos?limit=0", 400, "bad_request", "limit must be one integer from 1 to 200"},
		{"GET", "/cuentas/ES76/movimientos?limit=201", 400, "bad_request", "limit must be one integer from 1 to 200"},
		{"GET", "/cuentas/ES76/movimientos?limit=abc", 400, "bad_request", "limit must be one integer from 1 to 200"},
		{"GET", "/cuentas/ES76/movimientos?limit=", 400, "bad_request", "limit must be one integer from 1 to 200"},
		{"GET", "/cuentas/ES76/movimientos?limit=5&limit=6", 400, "bad_request", "limit must be one integer"},
		{"GET", "/cuentas/ES76/movimientos?limit=%zz", 400, "bad_request", "query string is malformed"},
		{"GET", "/cuentas/ES76/movimientos?limit=1&foo=%zz", 400, "bad_request", "query string is malformed"}, // any pair, as documented
		{"GET", "/cuentas/ES76/movimientos?cursor=" + url.QueryEscape(tampered), 400, "bad_request", "cursor is damaged or altered"},
		{"GET", "/cuentas/ES76/movimientos?cursor=" + url.QueryEscape(*other.Cursor), 400, "bad_request", "cursor belongs to another account's statement"},
		{"GET", "/cuentas/ES76/movimientos?cursor=" + strings.Repeat("%27", 34), 400, "bad_request", "cursor is not base64url"},
		{"GET", "/cuentas/ES76/movimientos?cursor=" + strings.Repeat("A", 34), 400, "bad_request", "cursor has an unknown format"},
		{"GET", "/cuentas/ES76/movimientos?cursor=AAAA", 400, "bad_request", "cursor has the wrong length"},
		{"GET", "/cuentas/ES76/movimientos?cursor=" + url.QueryEscape(cur) + "A", 400, "bad_request", "cursor has the wrong length"},
		{"GET", "/cuentas/ES76/movimientos?cursor=", 400, "bad_request", "cursor has the wrong length"},
		{"GET", "/cuentas/ES76/movimientos?cursor=AAAA&cursor=AAAA", 400, "bad_request", "cursor must be given once"},
		{"POST", "/cuentas/ES76", 405, "method_not_allowed", "method POST is not allowed"},
		{"DELETE", "/cuentas/ES76", 405, "method_not_allowed", "method DELETE is not allowed"},
		{"POST", "/cuentas/ES76/movimientos", 405, "method_not_allowed", "method POST is not allowed"},
		{"DELETE", "/cuentas/ES76/movimientos/m-1", 405, "method_not_allowed", "method DELETE is not allowed"},
		{"PUT", "/cuentas/ES76/movimientos/m-1", 405, "method_not_allowed", "method PUT is not allowed"},
		{"GET", "/", 404, "not_found", "no such path"},
		{"GET", "/cuentas", 404, "not_found", "no such path"},
		{"GET", "/cuentas/ES76/", 404, "not_found", "no such path"},
		{"GET", "/cuentas/ES76/saldo", 404, "not_found", "no such path"},
		{"GET", "/cuentas/ES76/movimientos/m-1/extra", 404, "not_found", "no such path"},
		{"POST", "/nothing/here", 404, "not_found", "no such path"},
		{"GET", "/cuentas/ES76/movimientos/../../ES77", 404, "not_found", "not in canonical form"},
		{"GET", "/cuentas//ES76", 404, "not_found", "not in canonical form"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := f.do(t, tc.method, tc.path)
			var e errorBody
			r.decode(t, &e)
			if r.status != tc.status || e.Error != tc.code || !strings.Contains(e.Message, tc.says) {
				t.Errorf("= %d %s; want %d %s saying %q", r.status, r.body, tc.status, tc.code, tc.says)
			}
			if allow := r.header.Get("Allow"); (tc.status == 405) != (allow == "GET, HEAD") {
				t.Errorf("Allow = %q", allow)
			}
		})
	}

	// The first page after the cursor is the expected one, so the cursor tampered with
	// above was a working one.
	var next statementBody
	if f.get(t, "/cuentas/ES76/movimientos?limit=2&cursor="+url.QueryEscape(cur)).decode(t, &next); len(next.Movimientos) != 2 || *next.Movimientos[0].Seq != 3 {
		t.Errorf("page after the cursor = %+v, want seqs 3 and 2", next.Movimientos)
	}
}

// The lengths api/openapi.yaml gives ids and cursors are the API's: an id at its
// maxLength characters is looked up (404 here, multi-byte or not) and one character
// more is a 400; a cursor of any other length is a 400. The ids' bounds are the
// longest a table key can hold, so no stored id is ever out of reach.
func TestTheContractsLengthsAreTheAPIs(t *testing.T) {
	f := newFixture(t)
	spec := testenv.LoadOpenAPI(t)
	cuentaMax, idMax, cursorMax := spec.MaxLength(t, "CuentaID"), spec.MaxLength(t, "MovimientoID"), spec.MaxLength(t, "Cursor")
	if !items.Storable(strings.Repeat("a", cuentaMax), strings.Repeat("a", idMax)) ||
		items.Storable(strings.Repeat("a", cuentaMax+1), "") || items.Storable("a", strings.Repeat("a", idMax+1)) {
		t.Errorf("maxLength %d and %d are not the longest ids the table's keys hold", cuentaMax, idMax)
	}
	f.apply(t, mov(t, "ES76", "a", movimiento.Abono, "1", "EUR"), mov(t, "ES76", "b", movimiento.Abono, "1", "EUR"))
	var page statementBody
	if f.get(t, "/cuentas/ES76/movimientos?limit=1").decode(t, &page); page.Cursor == nil || len(*page.Cursor) != cursorMax {
		t.Fatalf("cursor %v, want one of %d characters", page.Cursor, cursorMax)
	}
	cuenta := func(s string, n int) string { return "/cuentas/" + url.PathEscape(strings.Repeat(s, n)) }
	for _, tc := range []struct {
		path   string
		status int
	}{
		{cuenta("a", cuentaMax), 404}, {cuenta("é", cuentaMax), 404},
		{cuenta("a", cuentaMax+1), 400}, {cuenta("é", cuentaMax+1), 400},
		{"/cuentas/ES76/movimientos/" + strings.Repeat("a", idMax), 404},
		{"/cuentas/ES76/movimientos/" + url.PathEscape(strings.Repeat("é", idMax)), 404},
		{"/cuentas/ES76/movimientos/" + strings.Repeat("a", idMax+1), 400},
		{"/cuentas/ES76/movimientos?cursor=" + *page.Cursor + "A", 400},
		{"/cuentas/ES76/movimientos?cursor=" + (*page.Cursor)[1:], 400},
	} {
		if r := f.get(t, tc.path); r.status != tc.status {
			t.Errorf("GET %.60s… = %d %.200s, want %d", tc.path, r.status, r.body, tc.status)
		}
	}
}

// HEAD is answered as GET is, status and headers, without a body: through the handler
// itself, as API Gateway calls it, since net/http's server would drop the body anyway.
func TestHeadIsServedLikeGetWithoutABody(t *testing.T) {
	f := newFixture(t)
	f.apply(t, mov(t, "ES76", "a", movimiento.Abono, "1", "EUR"))
	h := api.New(store.NewReader(f.env.Client, f.env.Table()), nil)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/cuentas/ES76", http.StatusOK},
		{"/cuentas/ES76/movimientos/a", http.StatusOK},
		{"/cuentas/nadie", http.StatusNotFound},
	} {
		get, head := httptest.NewRecorder(), httptest.NewRecorder()
		h.ServeHTTP(get, httptest.NewRequest(http.MethodGet, tc.path, nil))
		h.ServeHTTP(head, httptest.NewRequest(http.MethodHead, tc.path, nil))
		if head.Code != tc.status || get.Code != tc.status || get.Body.Len() == 0 {
			t.Errorf("%s: GET %d with %d bytes, HEAD %d; want %d", tc.path, get.Code, get.Body.Len(), head.Code, tc.status)
		}
		if head.Body.Len() != 0 || head.Header().Get("Content-Type") != "application/json" || head.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s: HEAD answered %q with %v, want no body and GET's headers", tc.path, head.Body, head.Header())
		}
	}
}

// A request for the server itself (`GET *`) gets the API's JSON 404, not ServeMux's
// empty 400.
func TestAnAsteriskRequestIsTheAPIsOwn404(t *testing.T) {
	rec := httptest.NewRecorder()
	api.New(failing{}, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "*", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `"error":"not_found"`) {
		t.Errorf("GET * = %d %q, want the API's 404", rec.Code, rec.Body)
	}
}

// failing is a Reader whose store is down; a nil err makes it panic instead.
type failing struct{ err error }

func (f failing) Cuenta(context.Context, string) (cuenta.Cuenta, error) {
	if f.err == nil {
		panic("reader bug")
	}
	return cuenta.Cuenta{}, f.err
}

func (f failing) Apunte(context.Context, string, string) (movimiento.Apunte, error) {
	return movimiento.Apunte{}, f.err
}

func (f failing) SaldoEn(context.Context, string, time.Time) (store.SaldoEn, error) {
	return store.SaldoEn{}, f.err
}

func (f failing) Rango(context.Context, string, time.Time, time.Time) (store.SeqRange, error) {
	return store.SeqRange{}, f.err
}

func (f failing) ExtractoRango(context.Context, string, int, store.SeqRange, store.Order) ([]movimiento.Apunte, bool, error) {
	return nil, false, f.err
}

func TestUnexpectedFailuresAreLoggedAnd500WithoutDetails(t *testing.T) {
	secret := errors.New("operation error DynamoDB: GetItem, https response error StatusCode: 400, table arn:aws:dynamodb:eu-west-1:123456789012:table/ledger-prod")
	f := serve(t, failing{err: secret}, nil)
	for _, path := range []string{"/cuentas/ES76", "/cuentas/ES76/movimientos", "/cuentas/ES76/movimientos/m-1"} {
		r := f.get(t, path)
		var e errorBody
		r.decode(t, &e)
		if r.status != http.StatusInternalServerError || e.Error != "internal" || strings.Contains(string(r.body), "arn:aws") {
			t.Errorf("GET %s = %d %s, want a 500 internal that reveals nothing", path, r.status, r.body)
		}
	}
	if n := strings.Count(f.logs.String(), "123456789012"); n != 3 {
		t.Errorf("%d of 3 failures logged:\n%s", n, f.logs)
	}

	p := serve(t, failing{}, nil)
	r := p.get(t, "/cuentas/ES76")
	if r.status != http.StatusInternalServerError || !strings.Contains(p.logs.String(), "reader bug") {
		t.Errorf("after a panic: %d %s, logs %s", r.status, r.body, p.logs)
	}
}

// An operator's limit and freeze show on the account; a transfer's legs answer on
// either account with their contrapartida; a reversal and the movement it undid name
// each other. Every response is held to api/openapi.yaml by the client.
func TestAccountOperationsTransfersAndReversalsShowInTheAPI(t *testing.T) {
	f := newFixture(t)
	tr, err := movimiento.New(movimiento.Datos{ID: "tr-1", Cuenta: "A", Destino: "B", Tipo: movimiento.Traspaso, Importe: "20", Moneda: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	an, err := movimiento.New(movimiento.Datos{ID: "an-1", Cuenta: "A", Tipo: movimiento.Anulacion, Anula: "pago"})
	if err != nil {
		t.Fatal(err)
	}
	f.apply(t, mov(t, "A", "a", movimiento.Abono, "100", "EUR"), mov(t, "A", "pago", movimiento.Cargo, "30", "EUR"), tr, an)
	if _, _, err := f.svc.Administrar(context.Background(), "A", func(c cuenta.Cuenta) (cuenta.Cuenta, error) {
		c.Bloqueada = true
		return c.ConLimite(decimal.NewFromInt(50))
	}); err != nil {
		t.Fatal(err)
	}

	var acct struct {
		Saldo, Limite string
		Bloqueada     bool
		Version       int64
	}
	f.get(t, "/cuentas/A").decode(t, &acct)
	if acct.Saldo != "80.00" || acct.Limite != "50.00" || !acct.Bloqueada || acct.Version != 3 {
		t.Errorf("account = %+v, want saldo 80.00, limite 50.00, bloqueada, version 3 (two transactions, one change)", acct)
	}
	var legs [2]struct{ Cuenta, Tipo, Contrapartida, Importe string }
	f.get(t, "/cuentas/A/movimientos/tr-1").decode(t, &legs[0])
	f.get(t, "/cuentas/B/movimientos/tr-1").decode(t, &legs[1])
	if legs[0] != (struct{ Cuenta, Tipo, Contrapartida, Importe string }{"A", "cargo", "B", "20.00"}) ||
		legs[1] != (struct{ Cuenta, Tipo, Contrapartida, Importe string }{"B", "abono", "A", "20.00"}) {
		t.Errorf("legs = %+v", legs)
	}
	var original, reversal struct {
		Tipo, Anula string
		AnuladoPor  string `json:"anulado_por"`
	}
	f.get(t, "/cuentas/A/movimientos/pago").decode(t, &original)
	f.get(t, "/cuentas/A/movimientos/an-1").decode(t, &reversal)
	if original.AnuladoPor != "an-1" || reversal.Anula != "pago" || reversal.Tipo != "abono" {
		t.Errorf("original = %+v, reversal = %+v", original, reversal)
	}
}

// An account with holds answers retenido and disponible (a lapsed hold no longer
// counts); a hold looked up by id shows what became of it, expirada once past expira.
// An account and a movement recorded under id rules since tightened (a space) are
// still found: today's message rules never hide yesterday's ledger. A later release's
// record is answered as recorded, and a fecha an older release stored in a spelling
// beside RFC 3339 is served as the date-time the contract promises.
func TestIdsRecordedUnderOlderRulesAreFound(t *testing.T) {
	f := newFixture(t)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	for _, item := range []map[string]types.AttributeValue{
		{"pk": s("CUENTA#HR 01"), "sk": s("CUENTA"), "saldo": n("5"), "moneda": s("EUR"), "version": n("1"), "movimientos": n("1"),
			"limite": n("0"), "creada": s("2024-01-01T00:00:00Z"), "actualizada": s("2024-01-01T00:00:00Z")},
		{"pk": s("CUENTA#HR 01"), "sk": s("MOV#pago viejo"), "tipo": s("abono"), "importe": n("5"), "moneda": s("EUR"), "huella": s("x"),
			"estado": s("aplicado"), "seq": n("1"), "saldo_tras": n("5"), "aplicado": s("2024-01-01T00:00:00Z"), "origen": s("msg-0"),
			"fecha": s("2024-01-01T10:15:00,5+24:00")},
		// A later release's kind of record, with an estado this one does not know.
		{"pk": s("CUENTA#HR 01"), "sk": s("MOV#ajuste-1"), "tipo": s("ajuste"), "importe": n("1"), "moneda": s("EUR"), "huella": s("y"),
			"estado": s("pendiente"), "aplicado": s("2024-01-02T00:00:00Z")},
	} {
		if _, err := f.env.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.env.Table()), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		"/cuentas/HR%2001":                          `"saldo":"5.00"`,
		"/cuentas/HR%2001/movimientos":              `"id":"pago viejo"`,
		"/cuentas/HR%2001/movimientos/pago%20viejo": `"saldo_tras":"5.00","aplicado"`, // a fecha that is not RFC 3339 is not served
		"/cuentas/HR%2001/movimientos/ajuste-1":     `"estado":"pendiente"`,
	} {
		if r := f.get(t, path); r.status != http.StatusOK || !strings.Contains(string(r.body), want) {
			t.Errorf("GET %s = %d %s, want 200 with %s", path, r.status, r.body, want)
		}
	}
}

func TestHoldsShowInTheAPI(t *testing.T) {
	// The API judges expiry by the real clock, so the holds are taken two hours ago.
	taken := time.Now().Add(-2 * time.Hour)
	f := newFixtureAt(t, taken)
	hold := func(id, importe string, expira time.Time) movimiento.Movimiento {
		m, err := movimiento.New(movimiento.Datos{ID: id, Cuenta: "H", Tipo: movimiento.Retencion, Importe: importe, Moneda: "EUR", Expira: expira.Format(time.RFC3339)})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	capture, err := movimiento.New(movimiento.Datos{ID: "cap", Cuenta: "H", Tipo: movimiento.Captura, Retencion: "aut-c", Importe: "5"})
	if err != nil {
		t.Fatal(err)
	}
	// These holds lapse an hour after they were taken (an hour ago) and four weeks after
	// (still held).
	f.apply(t, mov(t, "H", "a", movimiento.Abono, "100", "EUR"), hold("aut-gone", "10", taken.Add(time.Hour)),
		hold("aut-held", "30", taken.Add(28*24*time.Hour)), hold("aut-c", "20", taken.Add(28*24*time.Hour)))
	f.apply(t, capture)

	var acct struct{ Saldo, Retenido, Disponible string }
	f.get(t, "/cuentas/H").decode(t, &acct)
	if acct.Saldo != "95.00" || acct.Retenido != "30.00" || acct.Disponible != "65.00" {
		t.Errorf("account = %+v, want saldo 95.00, retenido 30.00 (the lapsed hold no longer counts), disponible 65.00", acct)
	}
	for id, want := range map[string]string{"aut-gone": "expirada", "aut-held": "retenida", "aut-c": "capturada"} {
		var h struct{ Estado, Expira, Tipo string }
		f.get(t, "/cuentas/H/movimientos/"+id).decode(t, &h)
		if h.Estado != want || h.Tipo != "retencion" || h.Expira == "" {
			t.Errorf("%s = %+v, want estado %s", id, h, want)
		}
	}
	var c struct {
		Tipo, Retencion string
		Seq             int64
	}
	f.get(t, "/cuentas/H/movimientos/cap").decode(t, &c)
	if c.Tipo != "cargo" || c.Retencion != "aut-c" || c.Seq != 2 {
		t.Errorf("capture = %+v", c)
	}
}

// hanging is a table that never answers; it notes the deadline each read was given.
type hanging struct{ deadline chan time.Time }

func (h hanging) wait(ctx context.Context) error {
	d, _ := ctx.Deadline()
	h.deadline <- d
	<-ctx.Done()
	return ctx.Err()
}

func (h hanging) Cuenta(ctx context.Context, _ string) (cuenta.Cuenta, error) {
	return cuenta.Cuenta{}, h.wait(ctx)
}

func (h hanging) Apunte(ctx context.Context, _, _ string) (movimiento.Apunte, error) {
	return movimiento.Apunte{}, h.wait(ctx)
}

func (h hanging) SaldoEn(ctx context.Context, _ string, _ time.Time) (store.SaldoEn, error) {
	return store.SaldoEn{}, h.wait(ctx)
}

func (h hanging) Rango(ctx context.Context, _ string, _, _ time.Time) (store.SeqRange, error) {
	return store.SeqRange{}, h.wait(ctx)
}

func (h hanging) ExtractoRango(ctx context.Context, _ string, _ int, _ store.SeqRange, _ store.Order) ([]movimiento.Apunte, bool, error) {
	return nil, false, h.wait(ctx)
}

// Under a deadline of its own (a Lambda invocation's), a request whose table does not
// answer gives up early enough to answer the API's own 503 and log it.
func TestAHungTableIsAnswered503BeforeTheInvocationsDeadline(t *testing.T) {
	logs := &testenv.Buffer{}
	table := hanging{deadline: make(chan time.Time, 1)}
	h := api.New(table, slog.New(slog.NewJSONHandler(logs, nil)))
	invocation := time.Now().Add(1500 * time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), invocation)
	defer cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/cuentas/ES76", nil).WithContext(ctx))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"error":"unavailable"`) || !strings.Contains(logs.String(), "ES76") {
		t.Errorf("status %d %s, logs %s; want the API's 503, logged", rec.Code, rec.Body, logs)
	}
	if read := <-table.deadline; invocation.Sub(read) < 500*time.Millisecond {
		t.Errorf("the read may run until %v, %v before the invocation's deadline: no time left to answer", read, invocation.Sub(read))
	}
}

// A table that throttles the read, or fails on its side, gets a 503 a client may
// retry; a read DynamoDB refuses is the API's fault, a 500. Both are logged and say
// nothing of the cause.
func TestAThrottledOrFailingTableIs503AndARefusedRead500(t *testing.T) {
	f := newFixture(t)
	f.apply(t, mov(t, "ES76", "a", movimiento.Abono, "1", "EUR"))
	ft := sim.NewTransport(nil)
	cfg := f.env.Config.Copy()
	cfg.HTTPClient = &http.Client{Transport: ft}
	cfg.RetryMaxAttempts = 1 // the SDK's retries would only make the test slower
	reader := store.NewReader(awsconf.DynamoDB(cfg, f.env.Endpoint), f.env.Table())
	g := serve(t, reader, nil)
	for _, tc := range []struct {
		op, path string
		fault    sim.Fault
		status   int
		code     string
	}{
		{"GetItem", "/cuentas/ES76", sim.Throttling, 503, "unavailable"},
		{"GetItem", "/cuentas/ES76/movimientos/a", sim.InternalError, 503, "unavailable"},
		{"Query", "/cuentas/ES76/movimientos", sim.Throttling, 503, "unavailable"},
		{"GetItem", "/cuentas/ES76", sim.Validation, 500, "internal"},
	} {
		ft.Inject(tc.op, tc.fault)
		r := g.get(t, tc.path)
		var e errorBody
		r.decode(t, &e)
		if r.status != tc.status || e.Error != tc.code || strings.Contains(e.Message, "injected") {
			t.Errorf("GET %s under %s = %d %s; want %d %s, no detail", tc.path, tc.fault, r.status, r.body, tc.status, tc.code)
		}
		if ok := g.get(t, tc.path); ok.status != http.StatusOK {
			t.Errorf("GET %s once the table answers = %d %s", tc.path, ok.status, ok.body)
		}
	}
	if n := strings.Count(g.logs.String(), `"msg":"request failed`); n != 4 {
		t.Errorf("%d of 4 failures logged:\n%s", n, g.logs)
	}

	// A table slower than the request's deadline (an invocation's) is a 503 as well.
	ft.SetRoundTrip(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	rec := httptest.NewRecorder()
	api.New(reader, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/cuentas/ES76", nil).WithContext(ctx))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"error":"unavailable"`) {
		t.Errorf("a read past the deadline = %d %s, want 503 unavailable", rec.Code, rec.Body)
	}
}
