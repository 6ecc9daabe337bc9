package idempotencia

import (
	"errors"
	"fmt"
	"time"
)

// ErrInProgress matches a delivery refused because its key is reserved by another
// delivery that has neither marked it hecho nor let it expire: it comes back later.
// After a crash between reserve and mark, every delivery of that movement is refused
// until the in-progress expiry.
var ErrInProgress = errors.New("idempotencia: the key is in progress")

// InProgressError is ErrInProgress with the key and the time its reservation expires.
type InProgressError struct {
	Key   string
	Until time.Time
}

func (e *InProgressError) Error() string {
	return fmt.Sprintf("idempotencia: key %s is in progress until %s", e.Key, e.Until.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrInProgress) true.
func (e *InProgressError) Is(target error) bool { return target == ErrInProgress }

// ErrNotMarked matches a delivery whose effect was made but whose record could not be
// marked hecho: the delivery fails (as Powertools raises), the message comes back, and
// once the in-progress expiry passes a redelivery applies the effect again.
var ErrNotMarked = errors.New("idempotencia: effect made, record not marked")

// ErrUnsupported matches a movement the separate-table strategy does not apply:
// reversals and holds need the ledger's records, which this design does not keep.
var ErrUnsupported = errors.New("idempotencia: the separate-table strategy applies abonos, cargos and transfers only, not")
