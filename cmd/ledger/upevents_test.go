package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/ledger-dev/ledger/internal/events"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// With --events, what up's consumer writes is announced into the file by the events
// Lambda's own handler, from the embedded store's stream: each event once, as a rule's
// target receives it, valid against the contract, each account's posted movements seq
// 1..n with the balances the API shows; a duplicate announces nothing, a rejection
// and a hold's capture do. The last writes are announced when up stops.
func TestUpAnnouncesItsWritesIntoTheEventsFile(t *testing.T) {
	t.Setenv("LEDGER_INSUFFICIENT_FUNDS", "reject")
	dir := t.TempDir()
	file, eventsPath := filepath.Join(dir, "movimientos.jsonl"), filepath.Join(dir, "events.jsonl")
	expira := time.Now().UTC().Add(48 * time.Hour).Format(time.RFC3339)
	lines := strings.Join([]string{
		`{"id":"a1","cuenta":"ES76","tipo":"abono","importe":"100.00","moneda":"EUR"}`,
		`{"id":"a1","cuenta":"ES76","tipo":"abono","importe":"100","moneda":"EUR"}`,
		`{"id":"t1","cuenta":"ES76","tipo":"traspaso","destino":"ES91","importe":"30.00","moneda":"EUR"}`,
		`{"id":"h1","cuenta":"ES76","tipo":"retencion","importe":"20.00","moneda":"EUR","expira":"` + expira + `"}`,
		`{"id":"c1","cuenta":"ES76","tipo":"captura","retencion":"h1","importe":"15.00"}`,
		`{"id":"x1","cuenta":"ES91","tipo":"cargo","importe":"999.00","moneda":"EUR"}`,
	}, "\n") + "\n"
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	up := startUp(t, &strings.Builder{}, "--from", file, "--events", eventsPath)
	up.waitFor(t, "balance 55.00", func() bool { return up.saldo("ES76") == "55.00" })
	up.stop(t)
	got := readEventsFile(t, eventsPath)
	// Batches of the stream follow the writes; within them, and from one to the next,
	// each account's events keep its order.
	slices.SortStableFunc(got, func(a, b string) int { return strings.Compare(a[:4], b[:4]) })
	want := []string{"ES76 aplicado a1 1 100.00", "ES76 aplicado t1 2 70.00", "ES76 retenida h1", "ES76 aplicado c1 3 55.00", "ES76 capturada c1→h1",
		"ES91 aplicado t1 1 30.00", "ES91 rechazado x1"}
	if !slices.Equal(got, want) {
		t.Errorf("events file:\n%q\nwant\n%q", got, want)
	}
	if log := up.stderr.String(); !strings.Contains(log, "ledger up: 7 events in "+eventsPath) || strings.Contains(log, "not announced") || strings.Contains(log, "gave up") {
		t.Errorf("stderr does not count the events, or says a record was not announced:\n%s", log)
	}
}

// readEventsFile reads --events' lines, checks each against the contract, and sums each
// up as "cuenta estado id [seq saldo_tras]".
func readEventsFile(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	schema := testenv.LoadEventSchema(t)
	var out []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var env envelope
		if err := json.Unmarshal(sc.Bytes(), &env); err != nil || env.Source != events.Source || env.Version != "0" {
			t.Fatalf("line %s: %v", sc.Text(), err)
		}
		schema.Check(t, env.DetailType, env.Detail)
		var d events.Detail
		if err := json.Unmarshal(env.Detail, &d); err != nil {
			t.Fatal(err)
		}
		line := d.Cuenta + " " + d.Estado + " " + d.ID
		switch {
		case d.Seq > 0:
			line += " " + strconv.FormatInt(d.Seq, 10) + " " + d.SaldoTras
		case d.CapturadaPor != "":
			line = d.Cuenta + " " + d.Estado + " " + d.CapturadaPor + "→" + d.ID
		}
		out = append(out, line)
	}
	return out
}

// The events file answers the publisher as EventBridge does, and holds each entry as a
// rule's target receives it: an id of its own (a new one for every publication), the
// detail-type, source, time, resources and the detail as sent.
func TestTheEventsFileStandsForEventBridge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := openEventsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 2, 10, 15, 0, 0, time.UTC)
	entry := types.PutEventsRequestEntry{Source: aws.String("ledger"), DetailType: aws.String("movimiento"), Detail: aws.String(`{"event_id":"e1"}`), Time: aws.Time(t0)}
	out, err := f.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry, entry}})
	if err != nil || len(out.Entries) != 2 || out.FailedEntryCount != 0 {
		t.Fatalf("answer %+v, %v", out, err)
	}
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var env envelope
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			t.Fatal(err)
		}
		if !uuid.MatchString(env.ID) || env.ID != aws.ToString(out.Entries[i].EventId) || env.DetailType != "movimiento" ||
			env.Time != "2026-12-02T10:15:00Z" || string(env.Detail) != `{"event_id":"e1"}` || env.Resources == nil {
			t.Errorf("line %d = %s; answered %s", i, line, aws.ToString(out.Entries[i].EventId))
		}
	}
	if aws.ToString(out.Entries[0].EventId) == aws.ToString(out.Entries[1].EventId) {
		t.Error("two publications share an id")
	}
}

// The event docs/events.md shows is one that up writes for the tour's file: the same
// envelope and detail, but for the values written "…" (a publication's id, the times).
func TestTheDocumentedEventIsReal(t *testing.T) {
	raw, err := os.ReadFile(testenv.ModuleFile(t, "docs", "events.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, found := strings.Cut(string(raw), "<!-- docs-event -->\n```json\n")
	block, _, closed := strings.Cut(after, "\n```")
	if !found || !closed {
		t.Fatal("docs/events.md has no event after <!-- docs-event -->")
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(block), &want); err != nil {
		t.Fatalf("the event in docs/events.md: %v", err)
	}
	eventsPath := filepath.Join(t.TempDir(), "events.jsonl")
	up := startUp(t, &strings.Builder{}, "--from", testenv.ModuleFile(t, "examples", "movimientos.jsonl"), "--events", eventsPath)
	up.waitFor(t, "the tour's balance", func() bool { return up.saldo("ES7620770024003102575766") == "665.00" })
	up.stop(t)
	lines, err := os.ReadFile(eventsPath)
	if err != nil {
		t.Fatal(err)
	}
	wantID := want["detail"].(map[string]any)["event_id"]
	for _, line := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatal(err)
		}
		if got["detail"].(map[string]any)["event_id"] != wantID {
			continue
		}
		if !sameBut(got, want) {
			t.Errorf("up wrote\n%s\ndocs/events.md shows\n%s", line, block)
		}
		return
	}
	t.Errorf("up wrote no event %v:\n%s", wantID, lines)
}

// sameBut reports whether got is want, values written "…" in want aside (their keys
// must be there).
func sameBut(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		switch wv := w.(type) {
		case string:
			if !ok || (wv != "…" && g != wv) {
				return false
			}
		case map[string]any:
			gm, isMap := g.(map[string]any)
			if !isMap || !sameBut(gm, wv) {
				return false
			}
		default:
			b1, _ := json.Marshal(g)
			b2, _ := json.Marshal(w)
			if string(b1) != string(b2) {
				return false
			}
		}
	}
	return true
}
