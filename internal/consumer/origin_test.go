package consumer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// delivered is a message as SQS delivers it: taken from sender at when, received receives times.
func delivered(id, body, sender string, when time.Time, receives int) events.SQSMessage {
	m := msg(id, body)
	m.Attributes = map[string]string{"SenderId": sender, "SentTimestamp": strconv.FormatInt(when.UnixMilli(), 10),
		"ApproximateReceiveCount": strconv.Itoa(receives)}
	return m
}

// snsBody is the movement body inside an SNS notification the topic took at when.
func snsBody(t *testing.T, movement string, when time.Time) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"Type": "Notification", "MessageId": "n-1", "Message": movement,
		"TopicArn": "arn:aws:sns:eu-west-1:111122223333:movimientos", "Timestamp": when.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A capture is judged at when the transport took it: sent before its hold's expira, it
// is honoured when retries bring it after; an SNS notification's time counts when it is
// the earlier. Each record keeps who sent it as SQS states it, and its envelope's claim.
func TestACaptureSentBeforeExpiraIsHonouredWhenRedeliveredAfterIt(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	clock := testenv.Clock()
	svc, err := store.New(env.Client, store.Config{Table: env.Table(), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	parker := &memParker{parked: map[string]consumer.Reason{}}
	h := consumer.New(svc, consumer.Options{Logger: slog.New(slog.DiscardHandler), Parker: parker})
	const producer = "AROAEXAMPLEPRODUCER:orders"
	expira := clock.Now().Add(time.Hour)
	hold := func(id string) string {
		return fmt.Sprintf(`{"id":%q,"cuenta":"H","tipo":"retencion","importe":"20","moneda":"EUR","expira":%q}`, id, expira.Format(time.RFC3339))
	}
	capture := func(id, hold string) string {
		return fmt.Sprintf(`{"id":%q,"cuenta":"H","tipo":"captura","retencion":%q}`, id, hold)
	}
	setup := []events.SQSMessage{delivered("m1", body("a", "H", "abono", "100"), producer, clock.Now(), 1)}
	for i := range 5 {
		setup = append(setup, delivered(fmt.Sprintf("h%d", i+1), hold(fmt.Sprintf("aut-%d", i+1)), producer, clock.Now(), 1))
	}
	if resp, err := h.Handle(context.Background(), events.SQSEvent{Records: setup}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("setup: %+v, %v", resp, err)
	}

	clock.AdvanceTo(expira.Add(10 * time.Minute)) // every hold has lapsed
	before, after := expira.Add(-time.Minute), expira.Add(cuenta.ToleranciaReloj)
	batch := []events.SQSMessage{
		delivered("in-time", capture("cap-1", "aut-1"), producer, before, 4),
		delivered("via-sns", snsBody(t, capture("cap-2", "aut-2"), before), "AIDASNSSERVICE", after, 2),
		delivered("too-late", capture("cap-3", "aut-3"), producer, after, 1),
		// Claims no transport backs: an SNS Timestamp far earlier than SQS took it, an
		// EventBridge time (the caller's to set).
		delivered("sns-claim", snsBody(t, capture("cap-4", "aut-4"), before.Add(-cuenta.GraciaCaptura)), producer, after, 1),
		delivered("eb-claim", ebBody(t, capture("cap-5", "aut-5"), before), producer, after, 1),
	}
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: batch})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("resp = %+v, err = %v; want every message settled", resp, err)
	}
	for _, id := range []string{"too-late", "sns-claim", "eb-claim"} {
		if r, ok := parker.parked[id]; !ok || !strings.Contains(r.Error, "expired at") {
			t.Errorf("%s: parked %v (%+v), want parked as expired: an envelope's word does not move when it was sent", id, ok, r)
		}
	}
	if len(parker.parked) != 3 {
		t.Errorf("parked %v, want only the three captures sent too late", parker.parked)
	}
	if got := f(env).saldo(t, "H"); got != "60" {
		t.Errorf("saldo %s, want 60: both captures sent in time posted, the late one nothing", got)
	}
	rd := store.NewReader(env.Client, env.Table())
	for id, want := range map[string][2]string{
		"cap-1": {producer, ""},
		"cap-2": {"AIDASNSSERVICE", "sns:arn:aws:sns:eu-west-1:111122223333:movimientos"},
	} {
		a, err := rd.Apunte(context.Background(), "H", id)
		if err != nil || a.Remitente != want[0] || a.Via != want[1] {
			t.Errorf("%s recorded from %q via %q (%v), want from %q via %q", id, a.Remitente, a.Via, err, want[0], want[1])
		}
	}
}

// ebBody is the movement body inside an EventBridge event whose time claims when.
func ebBody(t *testing.T, movement string, when time.Time) string {
	t.Helper()
	return fmt.Sprintf(`{"version":"0","id":"e-1","detail-type":"movimiento","source":"shop.orders","account":"111122223333","time":%q,"detail":%s}`,
		when.UTC().Format(time.RFC3339), movement)
}

// f is a fixture over env, for its helpers.
func f(env *testenv.DynamoDB) *fixture { return &fixture{env: env} }
