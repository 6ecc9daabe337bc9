package consumer

import (
	"errors"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

// withheld is err as a log line says it: without the amounts, balances and account ids
// that a rule's detail, a field's value or rule and a conflicting duplicate's key carry:
// the rule's name, the field's. The parked message's ledger.error and the movement's
// record keep the whole text.
func withheld(err error) string {
	class := store.ErrTransient
	if errors.Is(err, store.ErrPermanent) {
		class = store.ErrPermanent
	}
	kind := class.Error() + ": "
	var re *cuenta.RuleError
	var fe *movimiento.FieldError
	var cd *store.ConflictingDuplicateError
	switch {
	case errors.As(err, &re):
		return kind + "rule " + string(re.Rule)
	case errors.As(err, &fe): // its rule may quote amounts: the DLQ's ledger.error has it
		return kind + "movimiento: invalid " + fieldName(fe)
	case errors.As(err, &cd):
		return kind + "store: conflicting duplicate: recorded with fingerprint " + cd.Stored + ", this delivery has " + cd.Received
	}
	return err.Error()
}

// fieldName is the field fe names, or "body".
func fieldName(fe *movimiento.FieldError) string {
	if fe.Field == "" {
		return "body"
	}
	return fe.Field
}
