package events

import (
	"errors"
	"fmt"
	"strings"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/items"
)

// ErrNoImage reports a stream record without the image its change needs: the stream
// must carry new and old images (NEW_AND_OLD_IMAGES).
var ErrNoImage = errors.New("events: the stream record lacks an image (the stream must be NEW_AND_OLD_IMAGES)")

// The stream's names for a change (a record's eventName).
const (
	insert = "INSERT"
	modify = "MODIFY"
)

// FromRecord is what one stream record announces, in the order it is published. A
// movement's record announces itself once, when it is created: the settling of a hold
// and the reversal of a movement are announced from the records that settle and
// reverse, so the rewrite of the record they mark announces nothing. An account's new
// image announces the holds a write dropped as lapsed, and a change of its limite or
// bloqueada; any other rewrite of it announces nothing (its movements announce
// themselves). Removals, and items that are neither (a migration's), announce nothing.
// An image the ledger cannot read, or a record without the images it needs, is an
// error: the record cannot be announced, and must not be skipped.
func FromRecord(rec lambdaevents.DynamoDBEventRecord) ([]Event, error) {
	old, err := items.FromStream(rec.Change.OldImage)
	if err != nil {
		return nil, err
	}
	now, err := items.FromStream(rec.Change.NewImage)
	if err != nil {
		return nil, err
	}
	var evs []Event
	pk, sk := key(rec, items.AttrPK), key(rec, items.AttrSK)
	switch {
	case rec.EventName != insert && rec.EventName != modify:
		return nil, nil
	case sk == items.CuentaSK:
		evs, err = fromCuenta(rec.EventName, old, now)
	case strings.HasPrefix(sk, items.MovSK) && rec.EventName == insert:
		evs, err = fromApunte(now)
	}
	if err != nil {
		return nil, fmt.Errorf("events: %s %s/%s: %w", strings.ToLower(rec.EventName), pk, sk, err)
	}
	return evs, nil
}

// TableARN is the ARN of the table whose stream a record comes from (its
// eventSourceARN up to "/stream/"), the resource its events concern; "" when the
// record names none.
func TableARN(rec lambdaevents.DynamoDBEventRecord) string {
	table, _, found := strings.Cut(rec.EventSourceArn, "/stream/")
	if !found {
		return ""
	}
	return table
}

// key is the string key attribute name of the record's item, or "".
func key(rec lambdaevents.DynamoDBEventRecord, name string) string {
	v, ok := rec.Change.Keys[name]
	if !ok || v.DataType() != lambdaevents.DataTypeString {
		return ""
	}
	return v.String()
}
