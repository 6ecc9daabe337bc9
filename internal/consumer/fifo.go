package consumer

import (
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/store"
)

// attrMessageGroupID is the SQS system attribute that names a FIFO message's group.
const attrMessageGroupID = "MessageGroupId"

// unnamedGroup is the group of a record that comes from a FIFO queue (its event
// source's ARN ends in .fifo) without a MessageGroupId, which SQS always sends: every
// such record of a batch shares it, the strictest order.
const unnamedGroup = "(no MessageGroupId)"

// messageGroup is the FIFO message group msg came in, or "" for a standard queue's.
func messageGroup(msg events.SQSMessage) string {
	if g := msg.Attributes[attrMessageGroupID]; g != "" {
		return g
	}
	if strings.HasSuffix(msg.EventSourceARN, ".fifo") {
		return unnamedGroup
	}
	return ""
}

// notAttempted is the failure of a valid record whose FIFO message group grupo had an
// invalid body before it: the ledger applies a group in order and stops at its first
// failure (store.Entrega.Grupo), so the record leaves the batch untried and comes back
// after it.
func notAttempted(grupo string) store.Result {
	return store.Result{Outcome: store.Failed, Err: store.NotAttempted(grupo)}
}
