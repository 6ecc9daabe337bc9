package config

import (
	"strings"
	"testing"
)

// The events function needs its bus, by name or ARN, and says what is wrong with one.
func TestEventsFromEnv(t *testing.T) {
	for _, bus := range []string{"ledger-prod", "ledger/events.v1", "arn:aws:events:eu-west-1:123456789012:event-bus/ledger-prod", "arn:aws-cn:events:cn-north-1:123456789012:event-bus/x"} {
		e, err := EventsFromEnv(func(k string) string { return map[string]string{EnvEventBus: bus}[k] })
		if err != nil || e.Bus != bus {
			t.Errorf("%s: %+v, %v", bus, e, err)
		}
	}
	for bus, why := range map[string]string{
		"":            "required",
		"ledger prod": "want a name",
		"arn:aws:sqs:eu-west-1:123456789012:ledger":           "not an event bus ARN",
		"arn:aws:events:eu-west-1:123456789012:rule/x":        "not an event bus ARN",
		"arn:aws:events:eu-west-1:1234:event-bus/ledger":      "not an event bus ARN",
		"arn:aws:events:eu-west-1:123456789012:event-bus/a b": "want a name",
		strings.Repeat("x", 257):                              "want a name",
	} {
		_, err := EventsFromEnv(func(k string) string { return map[string]string{EnvEventBus: bus}[k] })
		if err == nil || !strings.Contains(err.Error(), EnvEventBus) || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: err = %v, want one naming %s and saying %q", bus, err, EnvEventBus, why)
		}
	}
}
