package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
)

// isFIFO reports whether a queue's URL or a topic's ARN names a FIFO queue or topic:
// its name ends in .fifo, as SQS and SNS require of one.
func isFIFO(name string) bool { return strings.HasSuffix(name, ".fifo") }

// invalidGroup is the message group, on a FIFO queue or topic, of a body that is not a
// movement: the consumer parks it, and it holds up no account.
const invalidGroup = "ledger-not-a-movement"

// fifoIDs is the message group and deduplication id body is sent with to a FIFO queue
// or topic: the movement's (movimiento.MessageGroup, movimiento.DeduplicationID). A
// body that is not a movement goes in invalidGroup, deduplicated by its content.
func fifoIDs(body string) (group, dedup string) {
	m, err := movimiento.Parse([]byte(body))
	if err != nil {
		sum := sha256.Sum256([]byte(body))
		return invalidGroup, hex.EncodeToString(sum[:])
	}
	return m.MessageGroup(), m.DeduplicationID()
}

// fifoFields is the message group and deduplication id of body sent to the queue or
// topic name (fifoIDs), or nil for both when name is not FIFO.
func fifoFields(name, body string) (group, dedup *string) {
	if !isFIFO(name) {
		return nil, nil
	}
	g, d := fifoIDs(body)
	return &g, &d
}

// inOrder is a batch's entry ids ("0", "1", …) in the order of the bodies they carry:
// the order a FIFO queue keeps within a message group.
func inOrder(batch map[string]string) []string {
	ids := make([]string, 0, len(batch))
	for id := range batch {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		x, _ := strconv.Atoi(a) // batchSend numbers them
		y, _ := strconv.Atoi(b)
		return cmp.Compare(x, y)
	})
	return ids
}

// byWorkload orders msgs by the place in w of the movement each carries, a copy right
// after its original. A FIFO queue hands each account's movements over in the order
// they were sent, so a debit sent before the credit it draws on would hold its account
// up; in w's order each movement finds what it needs of its own account already sent.
func byWorkload(w sim.Workload, msgs []sim.Message) []sim.Message {
	at := make(map[[2]string]int, len(w.Movements))
	for i, m := range w.Movements {
		at[[2]string{m.Cuenta, m.ID}] = i
	}
	type placed struct {
		msg   sim.Message
		place int
	}
	all := make([]placed, len(msgs))
	for i, msg := range msgs {
		all[i] = placed{msg, len(w.Movements)} // not a movement: last
		if m, err := movimiento.Parse([]byte(msg.Body)); err == nil {
			all[i].place = at[[2]string{m.Cuenta, m.ID}]
		}
	}
	slices.SortStableFunc(all, func(a, b placed) int { return cmp.Compare(a.place, b.place) })
	out := make([]sim.Message, len(all))
	for i, p := range all {
		out[i] = p.msg
	}
	return out
}
