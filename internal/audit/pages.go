package audit

import (
	"errors"
	"reflect"

	"github.com/ledger-dev/ledger/internal/versioned"
)

// ErrPageRepeated stops a paginated Scan or Query whose backend answered a page with the
// same LastEvaluatedKey as the page before it: the SDK's paginator would ask for that
// page again, forever.
var ErrPageRepeated = errors.New("audit: the backend answered the same LastEvaluatedKey twice in a row")

// CheckPage is ErrPageRepeated when a page's LastEvaluatedKey, next, equals the previous
// page's, prev (nil before the first page); else nil. The last page's key is nil.
func CheckPage(prev, next versioned.Item) error {
	if next != nil && reflect.DeepEqual(prev, next) {
		return ErrPageRepeated
	}
	return nil
}
