package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Delivery is one message on the queue: its id and body. Several deliveries may carry
// the same movement (a producer retry, an SNS fan-out), each with its own message id.
type Delivery struct {
	MessageID string
	Body      string
}

// Mix sets how many of the deliveries misbehave, as fractions of the movements.
// Duplicates are extra deliveries of a movement under a new message id, spelt as the
// producer likes (amount "50" or "50.00", raw or in an SNS envelope). Conflicting are
// deliveries reusing a movement's id for another amount (a producer bug the ledger must
// refuse). Malformed are bodies that are not valid movements.
type Mix struct {
	Duplicates  float64
	Conflicting float64
	Malformed   float64
}

// Schedule is what a queue carries for a workload. Deliveries are shuffled: duplicates
// and reordering included. Late are the conflicting deliveries, sent once the rest is
// done (a producer bug replaying an old id), so that the genuine movement is the one
// recorded first and the conflicting one is the one refused.
type Schedule struct {
	Deliveries []Delivery
	Late       []Delivery
}

// Deliveries turns w into a schedule with faults, reproducibly from seed.
func Deliveries(w Workload, f Mix, seed uint64) Schedule {
	rng := rand.New(rand.NewPCG(seed, 0x64656c6976)) // "deliv"
	n := len(w.Movements)
	var s Schedule
	next := 0
	deliver := func(to *[]Delivery, body string) {
		next++
		*to = append(*to, Delivery{MessageID: fmt.Sprintf("msg-%d-%07d", seed, next), Body: body})
	}
	for _, m := range w.Movements {
		deliver(&s.Deliveries, Body(m))
	}
	for range int(float64(n) * f.Duplicates) {
		deliver(&s.Deliveries, respell(w.Movements[rng.IntN(n)], rng))
	}
	for i := range int(float64(n) * f.Malformed) {
		deliver(&s.Deliveries, malformed[i%len(malformed)])
	}
	rng.Shuffle(len(s.Deliveries), func(i, j int) { s.Deliveries[i], s.Deliveries[j] = s.Deliveries[j], s.Deliveries[i] })
	for range int(float64(n) * f.Conflicting) {
		m := w.Movements[rng.IntN(n)]
		other := m.Importe.Add(decimal.New(1, -2)).StringFixed(2) // same id, another amount
		deliver(&s.Late, mustJSON(wire(m, other)))
	}
	return s
}

// respell is m as another producer (or the same one, retrying) might write it.
func respell(m movimiento.Movimiento, rng *rand.Rand) string {
	importe := m.ImporteTexto()
	if m.Importe.IsInteger() && rng.IntN(2) == 0 {
		importe = m.Importe.StringFixed(0)
	}
	body := mustJSON(wire(m, importe))
	if rng.IntN(2) == 0 {
		return body
	}
	return mustJSON(map[string]string{
		"Type":      "Notification",
		"MessageId": fmt.Sprintf("sns-%s", m.ID),
		"TopicArn":  "arn:aws:sns:us-east-1:123456789012:movimientos",
		"Message":   body,
	})
}

var malformed = []string{
	`{"id":"bad-1","cuenta":"ES00-0000","tipo":"abono","importe":"1e3","moneda":"EUR"}`,
	`{"id":"bad-2","cuenta":"ES00-0000","tipo":"abono","importe":"10.001","moneda":"EUR"}`,
	`pago de 50 euros`,
	`{"id":"bad#4","cuenta":"ES00-0000","tipo":"cargo","importe":"5","moneda":"EUR"}`,
	`{"id":"bad-5","cuenta":"ES00-0000","tipo":"regalo","importe":"5","moneda":"EUR"}`,
}
