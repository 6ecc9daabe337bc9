package events

import (
	"errors"
	"fmt"

	"github.com/aws/smithy-go"
)

// The two kinds of publishing failure. ErrUnavailable: EventBridge failed entries or
// calls for a while (throttling, an internal failure, the network), and retrying may
// succeed. ErrRefused: it refused them for good (access denied, no such bus, a detail
// it cannot read), and retrying within the invocation would not help. Either way the
// record comes back: Lambda retries it, then sends it to the failure destination.
var (
	ErrUnavailable = errors.New("events: EventBridge unavailable")
	ErrRefused     = errors.New("events: EventBridge refused")
)

// transientCodes are the PutEvents entry error codes worth retrying: every other code
// refuses the entry for good.
var transientCodes = map[string]bool{"InternalFailure": true, "ThrottlingException": true}

// entryError classifies a failed entry's error code and message.
func entryError(code, message string) error {
	kind := ErrRefused
	if transientCodes[code] {
		kind = ErrUnavailable
	}
	return fmt.Errorf("%w: entry failed: %s: %s", kind, code, message)
}

// callError classifies a PutEvents call that failed as a whole, after the SDK's own
// retries: a fault of the service, throttling or the network is transient; a fault of
// the request (access denied, no such bus, invalid input) is for good.
func callError(err error) error {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorFault() != smithy.FaultServer && !transientCodes[api.ErrorCode()] {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
