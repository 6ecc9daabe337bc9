package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

const cta = "ES7620770024003102575766"

// seed applies three movements to cta: a credit of 100.00, the cargo pago-8f2c of
// 50.00 from docs/design.md, and a credit of 0.25; and to another account a credit
// whose id holds "/".
func seed(t *testing.T, env *testenv.DynamoDB) {
	t.Helper()
	svc, err := store.New(env.Client, store.Config{Table: env.Table(), Now: func() time.Time { return time.Date(2026, 12, 2, 10, 15, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	var batch []store.Entrega
	for _, d := range []movimiento.Datos{
		{ID: "nomina-11", Tipo: movimiento.Abono, Importe: "100.00"},
		{ID: "pago-8f2c", Tipo: movimiento.Cargo, Importe: "50.00", Concepto: "Pedido 1234", Fecha: "2026-12-02T10:15:00Z"},
		{ID: "interes-12", Tipo: movimiento.Abono, Importe: "0.25"},
	} {
		d.Cuenta, d.Moneda = cta, "EUR"
		m, err := movimiento.New(d)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, store.Entrega{Mov: m, Origen: "msg-" + d.ID})
	}
	slashed, err := movimiento.New(movimiento.Datos{ID: "ref/2026/7", Cuenta: "ES1000000000000000000001", Tipo: movimiento.Abono, Importe: "7.00", Moneda: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	batch = append(batch, store.Entrega{Mov: slashed, Origen: "msg-ref"})
	for _, r := range svc.Apply(context.Background(), batch) {
		if r.Outcome != store.Applied {
			t.Fatalf("seeding: %+v", r)
		}
	}
}

func event(t *testing.T, name string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// asHTTP is the request an event stands for, for the contract check.
func asHTTP(t *testing.T, ev events.APIGatewayV2HTTPRequest) *http.Request {
	t.Helper()
	target := "https://" + ev.RequestContext.DomainName + routedPath(ev)
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	}
	req, err := http.NewRequest(ev.RequestContext.HTTP.Method, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestHandlerAnswersAPIGatewayEvents(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	seed(t, env)
	spec := testenv.LoadOpenAPI(t)
	var logs bytes.Buffer
	h := handler(store.NewReader(env.Client, env.Table()), &logs)

	cases := []struct {
		event   string
		status  int
		want    []string // fragments of the body
		rawPath string   // when set, the event's path, as API Gateway decoded it
	}{
		{"balance.json", 200, []string{`"cuenta":"` + cta + `"`, `"saldo":"50.25"`, `"moneda":"EUR"`, `"movimientos":3`}, ""},
		{"statement.json", 200, []string{`"id":"interes-12"`, `"id":"pago-8f2c"`, `"seq":3`, `"seq":2`, `"cursor":"`}, ""},
		{"movement.json", 200, []string{`"id":"pago-8f2c"`, `"estado":"aplicado"`, `"importe":"50.00"`, `"seq":2`, `"saldo_tras":"50.00"`, `"concepto":"Pedido 1234"`}, ""},
		{"not-found.json", 404, []string{`"error":"not_found"`}, ""},
		// Routed on the id with its "/" decoded: it comes back from pathParameters.
		{"movement-slash.json", 200, []string{`"id":"ref/2026/7"`, `"importe":"7.00"`}, ""},
		// Sent encoded twice (%252F), it arrives encoded once.
		{"movement-slash-twice.json", 200, []string{`"id":"ref/2026/7"`, `"importe":"7.00"`}, ""},
		{"post.json", 405, []string{`"error":"method_not_allowed"`}, ""},
		{"unrouted.json", 404, []string{`"error":"not_found"`, "no such path"}, ""},
		// A path decoded to a lone "%" is no URL: still the API's own 404, not a failure.
		{"unrouted-percent.json", 404, []string{`"error":"not_found"`}, ""},
		// Sent as %7F and %09, decoded to control characters: no URL either.
		{"unrouted.json", 404, []string{`"error":"not_found"`}, "/saldos\x7f"},
		{"unrouted.json", 404, []string{`"error":"not_found"`}, "/saldos/a\tb"},
	}
	for _, tc := range cases {
		t.Run(tc.event+tc.rawPath, func(t *testing.T) {
			ev := event(t, tc.event)
			if tc.rawPath != "" {
				ev.RawPath, ev.RequestContext.HTTP.Path = tc.rawPath, tc.rawPath
			}
			resp, err := h(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			header := http.Header{}
			for k, v := range resp.Headers {
				header.Set(k, v)
			}
			spec.Check(t, asHTTP(t, ev), resp.StatusCode, header, []byte(resp.Body))
			if resp.StatusCode != tc.status || resp.IsBase64Encoded {
				t.Fatalf("status %d (base64 %v), want %d: %s", resp.StatusCode, resp.IsBase64Encoded, tc.status, resp.Body)
			}
			if resp.StatusCode == http.StatusMethodNotAllowed && header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q, want GET, HEAD", header.Get("Allow"))
			}
			for _, w := range tc.want {
				if !strings.Contains(resp.Body, w) {
					t.Errorf("body lacks %s: %s", w, resp.Body)
				}
			}
		})
	}
	if logs.Len() != 0 {
		t.Errorf("failures logged: %s", logs.String())
	}
}

// API Gateway passes on the body a handler writes, so the answer to HEAD must have none.
func TestHeadEventsAreAnsweredWithoutABody(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	seed(t, env)
	h := handler(store.NewReader(env.Client, env.Table()), io.Discard)
	ev := event(t, "balance.json")
	ev.RequestContext.HTTP.Method = http.MethodHead
	resp, err := h(context.Background(), ev)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Body != "" || resp.Headers["Content-Type"] != "application/json" {
		t.Errorf("HEAD = %d %v %q (%v), want 200 with GET's headers and no body", resp.StatusCode, resp.Headers, resp.Body, err)
	}
}

func TestRoutedPathEncodesEachParameterAgain(t *testing.T) {
	route := func(key string, params map[string]string) events.APIGatewayV2HTTPRequest {
		return events.APIGatewayV2HTTPRequest{RouteKey: key, RawPath: "/as/api/gateway/sent/it", PathParameters: params}
	}
	const mov = "ANY /cuentas/{cuenta}/movimientos/{id}"
	for _, tc := range []struct {
		ev   events.APIGatewayV2HTTPRequest
		want string
	}{
		{route(mov, map[string]string{"cuenta": "ES76", "id": "a/b"}), "/cuentas/ES76/movimientos/a%2Fb"},
		{route(mov, map[string]string{"cuenta": "ES76", "id": "a%2Fb"}), "/cuentas/ES76/movimientos/a%2Fb"}, // still encoded: not twice
		{route(mov, map[string]string{"cuenta": ".", "id": ".."}), "/cuentas/%2E/movimientos/%2E%2E"},
		{route(mov, map[string]string{"cuenta": "ES76", "id": "x:1@y+z="}), "/cuentas/ES76/movimientos/x:1@y+z="},
		{route("ANY /cuentas/{cuenta}", map[string]string{"cuenta": "ES76"}), "/cuentas/ES76"},
		{route("$default", nil), "/as/api/gateway/sent/it"},
	} {
		if got := routedPath(tc.ev); got != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.ev.RouteKey, tc.ev.PathParameters, got, tc.want)
		}
	}
}

// TestBootstrapUnderTheRuntimeEmulator runs the real bootstrap as Lambda would: the
// configuration is read at init and an API Gateway event is answered.
func TestBootstrapUnderTheRuntimeEmulator(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	fn := testenv.StartLambda(t, testenv.BuildLambda(t, "."), testenv.LambdaEnv(env.Endpoint, env.Table())...)
	seed(t, env)
	payload, err := json.Marshal(event(t, "balance.json"))
	if err != nil {
		t.Fatal(err)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(fn.Invoke(t, payload), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.Contains(resp.Body, `"saldo":"50.25"`) || resp.Headers["Cache-Control"] != "no-store" {
		t.Fatalf("response = %+v", resp)
	}
}
