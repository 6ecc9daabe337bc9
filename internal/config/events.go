package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// EnvEventBus names the event bus the events function publishes to (its name or ARN).
const EnvEventBus = "LEDGER_EVENT_BUS"

// Events is the events function's validated environment: Bus, the event bus to
// publish on, by name or ARN.
type Events struct {
	Bus string
}

// EventsFromEnv reads the events function's environment through getenv (os.Getenv when
// nil). The bus is required: publishing to the account's default bus by accident
// would announce the ledger to whatever rules it has.
func EventsFromEnv(getenv func(string) string) (Events, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	e := Events{Bus: getenv(EnvEventBus)}
	if err := ValidateEventBus(e.Bus); err != nil {
		return Events{}, fmt.Errorf("config: %s: %w", EnvEventBus, err)
	}
	return e, nil
}

// maxBusName is EventBridge's limit on an event bus's name; an ARN adds its prefix.
const maxBusName = 256

// ValidateEventBus checks an event bus's name (1–256 of A-Z a-z 0-9 . _ - /) or ARN
// (arn:PARTITION:events:REGION:ACCOUNT:event-bus/NAME); whether it exists only
// EventBridge can say.
func ValidateEventBus(bus string) error {
	name := bus
	if strings.HasPrefix(bus, "arn:") {
		parts := strings.SplitN(bus, ":", 6)
		if len(parts) != 6 || parts[2] != "events" || parts[3] == "" || len(parts[4]) != 12 || !strings.HasPrefix(parts[5], "event-bus/") {
			return fmt.Errorf("%q is not an event bus ARN (arn:aws:events:REGION:ACCOUNT:event-bus/NAME)", bus)
		}
		name = strings.TrimPrefix(parts[5], "event-bus/")
	}
	ok := name != "" && len(name) <= maxBusName
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/", c) >= 0
	}
	if !ok {
		if bus == "" {
			return errors.New("required: the event bus's name or ARN")
		}
		return fmt.Errorf("event bus %q: want a name of 1 to %d of A-Z a-z 0-9 . _ - / or an ARN", bus, maxBusName)
	}
	return nil
}
