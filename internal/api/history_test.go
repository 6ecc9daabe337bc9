package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// historyFixture is the API over an account ES76 that took one abono of n.00 a minute
// for six minutes, from a day ago (the API refuses instants in the future), in batches
// of two at one instant for the last two: seq 5 and 6 share one.
func historyFixture(t *testing.T) (*fixture, time.Time) {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	// Yesterday at noon UTC: in the past, and its six minutes within one day whatever
	// the time the test runs, so a date names all of them or none.
	base := time.Now().UTC().Truncate(24 * time.Hour).Add(-12 * time.Hour)
	at := base
	svc := testenv.Ledger(t, env, cuenta.Retry, func() time.Time { return at })
	f := serve(t, store.NewReader(env.Client, env.Table()), svc)
	f.env = env
	for i, minute := range []int{0, 1, 2, 3, 4, 4} {
		at = base.Add(time.Duration(minute) * time.Minute)
		f.apply(t, mov(t, "ES76", fmt.Sprintf("m-%d", i+1), movimiento.Abono, fmt.Sprintf("%d.00", i+1), "EUR"))
	}
	return f, base
}

type saldoEnBody struct {
	Cuenta, Moneda, En, Saldo string
	Seq                       int64
	Version                   *int64
	Aplicado                  *string
}

func TestBalanceAtAnInstant(t *testing.T) {
	f, base := historyFixture(t)
	utc := func(d time.Duration) string { return base.Add(d).Format(time.RFC3339Nano) }
	// The same instant in another offset, its + sent as %2B.
	cet := url.QueryEscape(base.Add(150 * time.Second).In(time.FixedZone("", 3600)).Format(time.RFC3339))
	for _, tc := range []struct {
		en           string
		seq          int64
		saldo, echo  string
		aplicadoFrom time.Duration
	}{
		{utc(0), 1, "1.00", utc(0), 0},
		{utc(time.Minute - time.Nanosecond), 1, "1.00", utc(time.Minute - time.Nanosecond), 0},
		{cet, 3, "6.00", utc(150 * time.Second), 2 * time.Minute},
		{utc(4 * time.Minute), 6, "21.00", utc(4 * time.Minute), 4 * time.Minute},
		{utc(time.Hour), 6, "21.00", utc(time.Hour), 4 * time.Minute},
	} {
		r := f.get(t, "/cuentas/ES76?en="+tc.en)
		var b saldoEnBody
		r.decode(t, &b)
		if r.status != http.StatusOK || b.Cuenta != "ES76" || b.Moneda != "EUR" || b.Seq != tc.seq || b.Saldo != tc.saldo || b.En != tc.echo {
			t.Errorf("en=%s: %d %s; want seq %d, saldo %s, en echoed %s", tc.en, r.status, r.body, tc.seq, tc.saldo, tc.echo)
			continue
		}
		var m struct{ Aplicado string }
		f.get(t, fmt.Sprintf("/cuentas/ES76/movimientos/m-%d", tc.seq)).decode(t, &m)
		if b.Aplicado == nil || *b.Aplicado != m.Aplicado || *b.Aplicado != utc(tc.aplicadoFrom) || b.Version == nil || *b.Version < 1 {
			t.Errorf("en=%s: aplicado %v, version %v; want movement %d's aplicado %s and its version", tc.en, b.Aplicado, b.Version, tc.seq, m.Aplicado)
		}
	}
	var now struct{ Version int64 }
	f.get(t, "/cuentas/ES76").decode(t, &now)
	var last saldoEnBody
	if f.get(t, "/cuentas/ES76?en="+utc(time.Hour)).decode(t, &last); *last.Version != now.Version {
		t.Errorf("after the last movement: version %d, want the account's, %d", *last.Version, now.Version)
	}
}

func TestBalanceAtAnInstantRefusesWhatItCannotAnswer(t *testing.T) {
	f, base := historyFixture(t)
	for _, tc := range []struct {
		query  string
		status int
		code   string
		says   string
	}{
		{"en=" + base.Add(-time.Nanosecond).Format(time.RFC3339Nano), 404, "not_yet_open", "account ES76 was not open yet at " + base.Add(-time.Nanosecond).Format(time.RFC3339Nano)},
		{"en=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339), 400, "bad_request", "is in the future"},
		{"en=2026-11-30", 400, "bad_request", `en "2026-11-30" must be an RFC 3339 date-time`},
		{"en=2026-11-30T23:59:59+01:00", 400, "bad_request", "send a + in an offset as %2B"},
		{"en=", 400, "bad_request", "en \"\" must be"},
		{"en=2026-11-30T23:59:59Z&en=2026-11-30T23:59:59Z", 400, "bad_request", "en must be given once"},
		{"en=%zz", 400, "bad_request", "query string is malformed"},
	} {
		r := f.get(t, "/cuentas/ES76?"+tc.query)
		var e errorBody
		r.decode(t, &e)
		if r.status != tc.status || e.Error != tc.code || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: %d %s; want %d %s saying %q", tc.query, r.status, r.body, tc.status, tc.code, tc.says)
		}
	}
	var e errorBody
	r := f.get(t, "/cuentas/ES99?en="+base.Format(time.RFC3339))
	if r.decode(t, &e); r.status != 404 || e.Error != "not_found" {
		t.Errorf("an unknown account at an instant: %d %s, want 404 not_found", r.status, r.body)
	}
}

func TestStatementByDatesPagesWithinTheRange(t *testing.T) {
	f, base := historyFixture(t)
	at := func(d time.Duration) string { return url.QueryEscape(base.Add(d).Format(time.RFC3339Nano)) }
	for _, tc := range []struct {
		query string
		seqs  []int64 // newest first, over every page
	}{
		{"desde=" + at(time.Minute) + "&hasta=" + at(4*time.Minute), []int64{4, 3, 2}},
		{"desde=" + at(time.Minute), []int64{6, 5, 4, 3, 2}},
		{"hasta=" + at(2*time.Minute), []int64{2, 1}},
		{"hasta=" + at(2*time.Minute+time.Nanosecond), []int64{3, 2, 1}},
		{"desde=" + at(4*time.Minute) + "&hasta=" + at(5*time.Minute), []int64{6, 5}},
		{"desde=" + at(5*time.Minute), nil},
		{"desde=" + base.Add(24*time.Hour).Format(time.DateOnly), nil},
		{"hasta=" + base.Format(time.DateOnly), nil},
	} {
		var got []int64
		path := "/cuentas/ES76/movimientos?limit=2&" + tc.query
		for range 10 {
			r := f.get(t, path)
			var page statementBody
			if r.decode(t, &page); r.status != http.StatusOK {
				t.Fatalf("%s: %d %s", path, r.status, r.body)
			}
			for _, m := range page.Movimientos {
				got = append(got, *m.Seq)
			}
			if page.Cursor == nil {
				break
			}
			path = "/cuentas/ES76/movimientos?limit=2&" + tc.query + "&cursor=" + url.QueryEscape(*page.Cursor)
		}
		if !slices.Equal(got, tc.seqs) {
			t.Errorf("%s: seqs %v, want %v", tc.query, got, tc.seqs)
		}
	}
	var e errorBody
	r := f.get(t, "/cuentas/ES99/movimientos?desde=2026-01-01")
	if r.decode(t, &e); r.status != 404 || e.Error != "not_found" {
		t.Errorf("an unknown account by dates: %d %s, want 404 not_found", r.status, r.body)
	}
}

func TestStatementByDatesRefusesABadRangeNamingTheParameter(t *testing.T) {
	f := newFixture(t)
	f.apply(t, mov(t, "ES76", "m-1", movimiento.Abono, "1", "EUR"))
	for _, tc := range []struct{ query, says string }{
		{"desde=ayer", `desde "ayer" must be an RFC 3339 date-time such as 2026-11-30T23:59:59Z or a date such as 2026-12-01`},
		{"hasta=2026-13-01", `hasta "2026-13-01" must be`},
		{"desde=2026-12-01&hasta=2026-12-01", "hasta 2026-12-01 must be later than desde 2026-12-01"},
		{"desde=2026-12-02&hasta=2026-12-01T23:59:59Z", "hasta 2026-12-01T23:59:59Z must be later than desde 2026-12-02"},
		{"desde=2026-12-01T00:00:00+01:00", "send a + in an offset as %2B"},
		{"hasta=2026-12-01&hasta=2026-12-02", "hasta must be given once"},
	} {
		r := f.get(t, "/cuentas/ES76/movimientos?"+tc.query)
		var e errorBody
		r.decode(t, &e)
		if r.status != http.StatusBadRequest || e.Error != "bad_request" || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: %d %s; want 400 saying %q", tc.query, r.status, r.body, tc.says)
		}
	}
}

// The reads behind the new answers fail as every read does: a logged 500 that
// reveals nothing.
func TestHistoryReadsFailLikeEveryRead(t *testing.T) {
	f := serve(t, failing{err: fmt.Errorf("table arn:aws:dynamodb:eu-west-1:123456789012:table/ledger-prod is gone")}, nil)
	for _, path := range []string{"/cuentas/ES76?en=2026-01-01T00:00:00Z", "/cuentas/ES76/movimientos?desde=2026-01-01"} {
		r := f.get(t, path)
		var e errorBody
		if r.decode(t, &e); r.status != http.StatusInternalServerError || e.Error != "internal" || strings.Contains(string(r.body), "arn:aws") {
			t.Errorf("GET %s = %d %s, want a 500 internal that reveals nothing", path, r.status, r.body)
		}
	}
	if n := strings.Count(f.logs.String(), "123456789012"); n != 2 {
		t.Errorf("%d of 2 failures logged:\n%s", n, f.logs)
	}
}
