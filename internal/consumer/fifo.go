package consumer

import (
	"fmt"
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

// inGroups gives each delivery its record's FIFO message group, which the ledger
// applies in order and stops at its first failure (store.Entrega.Grupo). A body that
// is not a movement is such a failure: the valid records behind it in its group leave
// the batch untried (store.ErrNotAttempted) and come back after it. valid maps each
// delivery to its record, as parse returns them.
func inGroups(recs []Record, entregas []store.Entrega, valid []int) ([]store.Entrega, []int) {
	stopped := map[string]bool{} // message groups with an invalid body so far
	var keptE []store.Entrega
	var keptV []int
	k := 0 // the next delivery, by record order
	for i := range recs {
		grupo := messageGroup(recs[i].Msg)
		isValid := k < len(valid) && valid[k] == i
		switch {
		case !isValid:
			if grupo != "" {
				stopped[grupo] = true
			}
			continue
		case stopped[grupo]:
			recs[i].Result = store.Result{Outcome: store.Failed, Err: store.Transient(fmt.Errorf("%w: message group %s", store.ErrNotAttempted, grupo))}
		default:
			e := entregas[k]
			e.Grupo = grupo
			keptE, keptV = append(keptE, e), append(keptV, i)
		}
		k++
	}
	return keptE, keptV
}
