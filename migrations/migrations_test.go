package migrations

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestAllLoadsTheLedgerTable(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || all[0].Name != "0001_ledger" || all[0].Table != "ledger" {
		t.Fatalf("first migration = %+v, want 0001_ledger on table ledger", all)
	}
	m := all[0]
	if m.Key != (Key{Partition: "pk", Sort: "sk"}) {
		t.Errorf("key = %+v", m.Key)
	}
	if len(m.Indexes) != 1 || m.Indexes[0].Name != "por_seq" || m.Indexes[0].Key != (Key{Partition: "pk", Sort: "seq"}) || m.Indexes[0].Projection != "ALL" {
		t.Errorf("indexes = %+v, want por_seq(pk, seq) ALL", m.Indexes)
	}
	if m.Attributes["seq"] != "N" {
		t.Errorf("seq must be a number so the statement sorts numerically, got %q", m.Attributes["seq"])
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Errorf("migrations out of order: %s before %s", all[i-1].Name, all[i].Name)
		}
	}
}

func TestLoadRejectsBrokenDefinitions(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"unknown field":      {`{"table":"ledger","attributes":{"pk":"S"},"key":{"partition":"pk"},"billing":"PAY_PER_REQUEST","ttl_days":3}`, "unknown field"},
		"provisioned":        {`{"table":"ledger","attributes":{"pk":"S"},"key":{"partition":"pk"},"billing":"PROVISIONED"}`, "on-demand"},
		"untyped key":        {`{"table":"ledger","attributes":{},"key":{"partition":"pk"},"billing":"PAY_PER_REQUEST"}`, `"pk"`},
		"unused attribute":   {`{"table":"ledger","attributes":{"pk":"S","x":"N"},"key":{"partition":"pk"},"billing":"PAY_PER_REQUEST"}`, `"x"`},
		"no table":           {`{"attributes":{"pk":"S"},"key":{"partition":"pk"},"billing":"PAY_PER_REQUEST"}`, "no logical table name"},
		"repeated index":     {`{"table":"ledger","attributes":{"pk":"S"},"key":{"partition":"pk"},"billing":"PAY_PER_REQUEST","indexes":[{"name":"i","partition":"pk","projection":"ALL"},{"name":"i","partition":"pk","projection":"ALL"}]}`, "repeated"},
		"ttl on the key":     {`{"table":"ledger","attributes":{"pk":"S"},"key":{"partition":"pk"},"ttl":"pk","billing":"PAY_PER_REQUEST"}`, "ttl"},
		"include projection": {`{"table":"ledger","attributes":{"pk":"S"},"key":{"partition":"pk"},"billing":"PAY_PER_REQUEST","indexes":[{"name":"i","partition":"pk","projection":"INCLUDE"}]}`, "projection"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := load(fstest.MapFS{"0001_x.json": {Data: []byte(tc.body)}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "0001_x.json") {
				t.Fatalf("err = %v, want one naming the file and %q", err, tc.want)
			}
		})
	}
}

func TestChecksumFollowsContent(t *testing.T) {
	a := `{"table":"ledger","attributes":{"pk":"S"},"key":{"partition":"pk"},"billing":"PAY_PER_REQUEST"}`
	b := `{"table":"ledger","attributes":{"pk":"S"},"key":{"partition":"pk"},"billing":"PAY_PER_REQUEST","description":"x"}`
	ma, err := load(fstest.MapFS{"1.json": {Data: []byte(a)}, "2.json": {Data: []byte(a)}, "3.json": {Data: []byte(b)}})
	if err != nil {
		t.Fatal(err)
	}
	if ma[0].Checksum != ma[1].Checksum || ma[0].Checksum == ma[2].Checksum {
		t.Errorf("checksums %s %s %s: equal content must match, changed content must differ", ma[0].Checksum, ma[1].Checksum, ma[2].Checksum)
	}
}
