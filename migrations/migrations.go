// Package migrations holds the DynamoDB table definitions, one JSON file per migration
// applied in file-name order by `ledger migrate`. Each states the table it wants, not
// the steps to get there, so applying it again is a no-op.
package migrations

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

//go:embed *.json
var files embed.FS

// Ledger is the logical table the migrations define, the name a caller maps to a
// physical one (LEDGER_TABLE).
const Ledger = "ledger"

// Migration is one table definition. Table is a logical name (Ledger) the caller maps
// to a physical one (LEDGER_TABLE). TTL names the numeric attribute DynamoDB's time to
// live reads (empty: none); expired items go eventually, typically within days.
type Migration struct {
	Name        string            `json:"-"`
	Checksum    string            `json:"-"`
	Description string            `json:"description"`
	Table       string            `json:"table"`
	Attributes  map[string]string `json:"attributes"`
	Key         Key               `json:"key"`
	Indexes     []Index           `json:"indexes"`
	TTL         string            `json:"ttl,omitempty"`
	Billing     string            `json:"billing"`
}

// Key names a table's or an index's key attributes. Sort is empty for a hash-only key.
type Key struct {
	Partition string `json:"partition"`
	Sort      string `json:"sort,omitempty"`
}

// String is the key as its attributes, partition first: "(pk, sk)", "(id)".
func (k Key) String() string {
	if k.Sort == "" {
		return "(" + k.Partition + ")"
	}
	return "(" + k.Partition + ", " + k.Sort + ")"
}

// Index is a global secondary index. Projection is ALL or KEYS_ONLY.
type Index struct {
	Name string `json:"name"`
	Key
	Projection string `json:"projection"`
}

// All returns every migration in order, validated, so a broken definition fails at
// start-up rather than half-way through a run.
func All() ([]Migration, error) {
	return load(files)
}

func load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]Migration, 0, len(names))
	for _, name := range names {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		m, err := Parse(strings.TrimSuffix(name, ".json"), raw)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Parse reads and validates one table definition, named name, from its JSON: this
// package's, or another table a caller migrates beside them (the comparison's).
func Parse(name string, raw []byte) (Migration, error) {
	sum := sha256.Sum256(raw)
	m := Migration{Name: name, Checksum: hex.EncodeToString(sum[:])}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&m)
	if err == nil {
		err = m.validate()
	}
	if err != nil {
		return Migration{}, fmt.Errorf("migrations: %s.json: %w", name, err)
	}
	return m, nil
}

func (m Migration) validate() error {
	if m.Table == "" {
		return fmt.Errorf("no logical table name")
	}
	if m.Billing != "PAY_PER_REQUEST" {
		return fmt.Errorf("billing %q: only PAY_PER_REQUEST (on-demand) is supported", m.Billing)
	}
	keys := []Key{m.Key}
	seen := map[string]bool{}
	for _, ix := range m.Indexes {
		if ix.Name == "" || seen[ix.Name] {
			return fmt.Errorf("index name %q is empty or repeated", ix.Name)
		}
		seen[ix.Name] = true
		if ix.Projection != "ALL" && ix.Projection != "KEYS_ONLY" {
			return fmt.Errorf("index %s: projection %q: want ALL or KEYS_ONLY", ix.Name, ix.Projection)
		}
		keys = append(keys, ix.Key)
	}
	used := map[string]bool{}
	for _, k := range keys {
		if k.Partition == "" {
			return fmt.Errorf("a key has no partition attribute")
		}
		for _, a := range []string{k.Partition, k.Sort} {
			if a == "" {
				continue
			}
			if t := m.Attributes[a]; t != "S" && t != "N" && t != "B" {
				return fmt.Errorf("key attribute %q has no S, N or B type in attributes", a)
			}
			used[a] = true
		}
	}
	if used[m.TTL] { // a key attribute is on every item: a TTL on it would expire them all
		return fmt.Errorf("ttl attribute %q is a key attribute", m.TTL)
	}
	for a := range m.Attributes {
		if !used[a] { // DynamoDB rejects attribute definitions no key uses
			return fmt.Errorf("attribute %q is defined but used by no key", a)
		}
	}
	return nil
}
