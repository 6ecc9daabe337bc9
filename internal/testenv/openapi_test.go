package testenv

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// recorder is a testing.TB that keeps the failures Check reports.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func TestCheckRejectsWhatTheContractDoesNotDescribe(t *testing.T) {
	spec := LoadOpenAPI(t)
	jsonHeader := http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}}
	balance := `{"cuenta":"ES76","saldo":"50.00","moneda":"EUR","limite":"0.00","bloqueada":false,"retenido":"0.00","disponible":"50.00","version":1,"movimientos":1,"actualizada":"2026-12-02T10:15:00Z"}`
	atInstant := `{"cuenta":"ES76","moneda":"EUR","en":"2026-11-30T22:59:59Z","saldo":"50.00","seq":1,"version":1,"aplicado":"2026-11-30T10:00:00Z"}`
	cases := []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		ok           bool
	}{
		{"a documented balance", "GET", "/cuentas/ES76", 200, jsonHeader, balance, true},
		{"saldo as a JSON number", "GET", "/cuentas/ES76", 200, jsonHeader, `{"cuenta":"ES76","saldo":50.0,"moneda":"EUR","limite":"0.00","bloqueada":false,"retenido":"0.00","disponible":"50.00","version":1,"movimientos":1,"actualizada":"2026-12-02T10:15:00Z"}`, false},
		{"an undocumented status", "GET", "/cuentas/ES76", 418, jsonHeader, `{"error":"internal","message":"x"}`, false},
		{"no Cache-Control", "GET", "/cuentas/ES76", 200, http.Header{"Content-Type": {"application/json"}}, balance, false},
		{"an applied movement without seq", "GET", "/cuentas/ES76/movimientos/m-1", 200, jsonHeader,
			`{"id":"m-1","cuenta":"ES76","tipo":"abono","importe":"1.00","moneda":"EUR","estado":"aplicado","saldo_tras":"1.00","aplicado":"2026-12-02T10:15:00Z"}`, false},
		{"a rejected movement without motivo", "GET", "/cuentas/ES76/movimientos/m-1", 200, jsonHeader,
			`{"id":"m-1","cuenta":"ES76","tipo":"cargo","importe":"1.00","moneda":"EUR","estado":"rechazado","aplicado":"2026-12-02T10:15:00Z"}`, false},
		{"a movement with its sender and envelope", "GET", "/cuentas/ES76/movimientos/m-1", 200, jsonHeader,
			`{"id":"m-1","cuenta":"ES76","tipo":"abono","importe":"1.00","moneda":"EUR","estado":"rechazado","motivo":"x","aplicado":"2026-12-02T10:15:00Z",` +
				`"remitente":"AROA3XFRBF23EXAMPLE:pagos","via":"sns:arn:aws:sns:eu-west-1:123456789012:movimientos"}`, true},
		{"a 503 from a table that is unavailable", "GET", "/cuentas/ES76/movimientos", 503, jsonHeader, `{"error":"unavailable","message":"x"}`, true},
		{"a cursor of another length", "GET", "/cuentas/ES76/movimientos", 200, jsonHeader, `{"cuenta":"ES76","movimientos":[],"cursor":"AAAA"}`, false},
		{"a 404 on an unknown path", "GET", "/nope", 404, jsonHeader, `{"error":"not_found","message":"no such path"}`, true},
		{"a 200 on an unknown path", "GET", "/nope", 200, jsonHeader, balance, false},
		{"a 405 with its Allow header", "POST", "/cuentas/ES76", 405, http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}, "Allow": {"GET, HEAD"}},
			`{"error":"method_not_allowed","message":"no"}`, true},
		{"a 405 without Allow", "POST", "/cuentas/ES76", 405, jsonHeader, `{"error":"method_not_allowed","message":"no"}`, false},
		{"an unknown error code", "GET", "/cuentas/ES76", 404, jsonHeader, `{"error":"gone","message":"x"}`, false},
		{"a balance at an instant", "GET", "/cuentas/ES76?en=2026-11-30T23:59:59%2B01:00", 200, jsonHeader, atInstant, true},
		{"the account, asked at an instant", "GET", "/cuentas/ES76?en=2026-11-30T23:59:59Z", 200, jsonHeader, balance[:len(balance)-1] + `,"en":"2026-11-30T23:59:59Z"}`, false},
		{"a version before anything was applied", "GET", "/cuentas/ES76?en=2026-11-30T23:59:59Z", 200, jsonHeader, `{"cuenta":"ES76","moneda":"EUR","en":"2026-11-30T23:59:59Z","saldo":"0.00","seq":0,"version":1}`, false},
		{"not open yet", "GET", "/cuentas/ES76?en=2020-01-01T00:00:00Z", 404, jsonHeader, `{"error":"not_yet_open","message":"x"}`, true},
		{"a 200 to an en that is no date-time", "GET", "/cuentas/ES76?en=2026-11-30", 200, jsonHeader, atInstant, false},
		{"a 400 to an en that is no date-time", "GET", "/cuentas/ES76?en=2026-11-30", 400, jsonHeader, `{"error":"bad_request","message":"en"}`, true},
		{"a 404 to a desde that is no date", "GET", "/cuentas/ES76/movimientos?desde=ayer", 404, jsonHeader, `{"error":"not_found","message":"x"}`, false},
		{"a 200 to a limit out of range", "GET", "/cuentas/ES76/movimientos?limit=0", 200, jsonHeader, `{"cuenta":"ES76","movimientos":[]}`, false},
		{"a statement by dates", "GET", "/cuentas/ES76/movimientos?desde=2026-11-01&hasta=2026-12-01T00:00:00Z", 200, jsonHeader, `{"cuenta":"ES76","movimientos":[]}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			spec.Check(rec, httptest.NewRequest(tc.method, "http://127.0.0.1:1"+tc.path, nil), tc.status, tc.header, []byte(tc.body))
			if ok := len(rec.failures) == 0; ok != tc.ok {
				t.Errorf("accepted = %v, want %v; failures %v", ok, tc.ok, rec.failures)
			}
		})
	}
}
