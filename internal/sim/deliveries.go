package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Mix sets how many deliveries misbehave, as fractions of the movements. Duplicates
// are extra deliveries of a movement under a new message id, spelt as a producer might
// (amount "50" or "50.00", raw or in an SNS envelope). Conflicting reuse the id of an
// abono, cargo, transfer, reparto or hold for another amount (a reparto's last part
// takes the difference), a producer bug the ledger must refuse; the first reuses a
// transfer's when there is one. Malformed are not movements.
type Mix struct {
	Duplicates  float64
	Conflicting float64
	Malformed   float64
}

// Schedule is what a queue carries for a workload, phase by phase, each shuffled.
// Deliveries carry the movements before the workload's tail; Tail those of its tail,
// sent once the clock has passed the workload's Lapse. Late are sent last: the
// conflicting replays (so that the genuine movement is the one recorded) and the
// movements refused by design.
// Duplicates, Conflicting and Malformed count the misbehaving deliveries it carries, each
// a message of its own.
type Schedule struct {
	Deliveries []Message
	Tail       []Message
	Late       []Message

	Duplicates, Conflicting, Malformed int
}

// Deliveries turns w into a schedule with faults, reproducibly from seed.
func Deliveries(w Workload, f Mix, seed uint64) Schedule {
	rng := rand.New(rand.NewPCG(seed, 0x64656c6976)) // "deliv"
	n := len(w.Movements)
	var s Schedule
	next := 0
	deliver := func(to *[]Message, body string) {
		next++
		*to = append(*to, Message{ID: fmt.Sprintf("msg-%d-%07d", seed, next), Body: body})
	}
	phase := func(i int) *[]Message {
		if i >= n-w.Tail {
			return &s.Tail
		}
		return &s.Deliveries
	}
	for i, m := range w.Movements {
		deliver(phase(i), Body(m))
	}
	s.Duplicates, s.Malformed = int(float64(n)*f.Duplicates), int(float64(n)*f.Malformed)
	for range s.Duplicates {
		i := rng.IntN(n)
		deliver(phase(i), respell(w.Movements[i], rng))
	}
	for i := range s.Malformed {
		deliver(&s.Deliveries, malformed[i%len(malformed)])
	}
	for _, ds := range [][]Message{s.Deliveries, s.Tail} {
		rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	}
	amounts := slices.DeleteFunc(slices.Clone(w.Movements), func(m movimiento.Movimiento) bool {
		return m.Tipo != movimiento.Abono && m.Tipo != movimiento.Cargo && m.Tipo != movimiento.Traspaso && m.Tipo != movimiento.Reparto && m.Tipo != movimiento.Retencion
	})
	transfer := slices.IndexFunc(amounts, func(m movimiento.Movimiento) bool { return m.Tipo == movimiento.Traspaso })
	s.Conflicting = int(float64(n) * f.Conflicting)
	if len(amounts) == 0 {
		s.Conflicting = 0
	}
	for k := range s.Conflicting {
		m := amounts[rng.IntN(len(amounts))]
		if k == 0 && transfer >= 0 {
			m = amounts[transfer]
		}
		deliver(&s.Late, conflicting(m))
	}
	for _, m := range w.Refused {
		deliver(&s.Late, Body(m))
	}
	return s
}

// conflicting is a body that reuses m's key for 0.01 more; a reparto's last part takes
// the cent, so that the body is a valid movement.
func conflicting(m movimiento.Movimiento) string {
	cent := decimal.New(1, -2)
	m.Importe = m.Importe.Add(cent)
	if n := len(m.Partes); n > 0 {
		m.Partes = slices.Clone(m.Partes)
		m.Partes[n-1].Importe = m.Partes[n-1].Importe.Add(cent)
	}
	return mustJSON(wire(m, m.Importe.StringFixed(2)))
}

// respell is m as another producer (or the same one, retrying) might write it.
func respell(m movimiento.Movimiento, rng *rand.Rand) string {
	importe := m.ImporteTexto()
	if !m.Importe.IsZero() && m.Importe.IsInteger() && rng.IntN(2) == 0 {
		importe = m.Importe.StringFixed(0)
	}
	body := mustJSON(wire(m, importe))
	if rng.IntN(2) == 0 {
		return body
	}
	return SNSEnvelope("sns-"+m.ID, body)
}

var malformed = []string{
	`{"id":"bad-1","cuenta":"ES00-0000","tipo":"abono","importe":"1e3","moneda":"EUR"}`,
	`{"id":"bad-2","cuenta":"ES00-0000","tipo":"abono","importe":"10.001","moneda":"EUR"}`,
	`pago de 50 euros`,
	`{"id":"bad#4","cuenta":"ES00-0000","tipo":"cargo","importe":"5","moneda":"EUR"}`,
	`{"id":"bad-5","cuenta":"ES00-0000","tipo":"regalo","importe":"5","moneda":"EUR"}`,
}
