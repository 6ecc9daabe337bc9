package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/ledger-dev/ledger/internal/sim"
)

// isFIFO reports whether a queue's URL or a topic's ARN names a FIFO queue or topic:
// its name ends in .fifo, as SQS and SNS require of one.
func isFIFO(name string) bool { return strings.HasSuffix(name, ".fifo") }

// invalidGroup is the message group, on a FIFO queue or topic, of a body that is not a
// movement: the consumer parks it, and it holds up no account.
const invalidGroup = "ledger-not-a-movement"

// fifoIDs is the message group and deduplication id m is sent with to a FIFO queue or
// topic: its movement's (movimiento.MessageGroup, movimiento.DeduplicationID). A body
// that is not a movement goes in invalidGroup, deduplicated by its content.
func fifoIDs(m message) (group, dedup string) {
	if !m.valid {
		sum := sha256.Sum256([]byte(m.body))
		return invalidGroup, hex.EncodeToString(sum[:])
	}
	return m.mov.MessageGroup(), m.mov.DeduplicationID()
}

// fifoFields is the message group and deduplication id of m sent to the queue or topic
// name (fifoIDs), or nil for both when name is not FIFO.
func fifoFields(name string, m message) (group, dedup *string) {
	if !isFIFO(name) {
		return nil, nil
	}
	g, d := fifoIDs(m)
	return &g, &d
}

// byWorkload orders msgs, in place, by the place in w of the movement each carries, a
// copy right after its original. A FIFO queue hands each account's movements over in
// the order they were sent, so a debit sent before the credit it draws on would hold
// its account up; in w's order each movement finds what it needs of its own account
// already sent.
func byWorkload(w sim.Workload, msgs []message) {
	at := make(map[[2]string]int, len(w.Movements))
	for i, m := range w.Movements {
		at[[2]string{m.Cuenta, m.ID}] = i
	}
	place := func(m message) int {
		if !m.valid {
			return len(w.Movements) // not a movement: last
		}
		return at[[2]string{m.mov.Cuenta, m.mov.ID}]
	}
	slices.SortStableFunc(msgs, func(a, b message) int { return cmp.Compare(place(a), place(b)) })
}
