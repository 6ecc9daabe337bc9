package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// EventSchema holds events to their contract: the detail to api/events.schema.json
// (formats asserted), and the detail-type to the one its estado has there.
type EventSchema struct {
	schema *jsonschema.Schema
}

// detailTypes is the contract's detail-type of each estado (api/events.schema.json).
var detailTypes = map[string]string{
	"aplicado": "movimiento", "rechazado": "movimiento",
	"retenida": "retencion", "capturada": "retencion", "liberada": "retencion", "expirada": "retencion",
	"administrada": "cuenta",
}

// LoadEventSchema compiles api/events.schema.json from the module's root.
func LoadEventSchema(t testing.TB) *EventSchema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile(ModuleFile(t, "api", "events.schema.json"))
	if err != nil {
		t.Fatalf("api/events.schema.json: %v", err)
	}
	return &EventSchema{schema: s}
}

// Check fails t unless detail is a valid event detail and detailType its estado's.
func (s *EventSchema) Check(t testing.TB, detailType string, detail []byte) {
	t.Helper()
	if err := s.Validate(detailType, detail); err != nil {
		t.Errorf("event %s %s: %v", detailType, detail, err)
	}
}

// Validate is Check's verdict: nil, or what is wrong with the event.
func (s *EventSchema) Validate(detailType string, detail []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(detail))
	if err != nil {
		return err
	}
	if err := s.schema.Validate(doc); err != nil {
		return err
	}
	var d struct{ Estado string }
	if err := json.Unmarshal(detail, &d); err != nil {
		return err
	}
	if want := detailTypes[d.Estado]; detailType != want {
		return fmt.Errorf("detail-type %q, want %q for estado %s", detailType, want, d.Estado)
	}
	return nil
}
