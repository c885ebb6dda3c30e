package request

import (
	"errors"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestParseIdentifier(t *testing.T) {
	cats := map[string]bool{"local": true, "prod": true}
	cases := []struct {
		in      string
		cat, ns string
		name    string
	}{
		{"local.db.t", "local", "db", "t"},
		{"db.t", "local", "db", "t"},
		{"prod.a.b.t", "prod", "a.b", "t"},
		{"other.db.t", "local", "other.db", "t"}, // not a catalog: part of the namespace
		{"PROD.db.t", "prod", "db", "t"},
	}
	for _, c := range cases {
		id, err := ParseIdentifier(c.in, cats, "local")
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if id.Catalog != c.cat || joinNS(id.Namespace) != c.ns || id.Name != c.name {
			t.Errorf("%s -> %+v", c.in, id)
		}
	}
	for _, bad := range []string{"t", "", "db..t", ".db.t", "db.t.", " db.t"} {
		if _, err := ParseIdentifier(bad, cats, "local"); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%q: err = %v, want invalid argument", bad, err)
		}
	}
}

func joinNS(ns []string) string {
	s := ""
	for i, p := range ns {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s
}

func TestDecodeValidates(t *testing.T) {
	ok := `{"op":"create","table":"db.t","partition_by":[{"transform":"bucket[16]","column":"id"},{"transform":"day","column":"ts"}]}`
	if _, err := Decode([]byte(ok)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"op":"create","table":"db.t","unknown":1}`,
		`{"op":"explode","table":"db.t"}`,
		`{"op":"append"}`,
		`{"op":"create","table":"db.t","partition_by":[{"transform":"bucket[0]","column":"id"}]}`,
		`{"op":"create","table":"db.t","partition_by":[{"transform":"days","column":"id"}]}`,
		`{"op":"create","table":"db.t","partition_by":[{"transform":"day","column":""}]}`,
		`{"op":"append","table":"db.t","partition_by":[{"transform":"day","column":"ts"}]}`,
		`not json`,
	} {
		if _, err := Decode([]byte(bad)); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
	r, err := DecodeScan([]byte(`{"table":"db.t","snapshot_id":5}`))
	if err != nil || r.Op != OpScan || *r.SnapshotID != 5 {
		t.Fatalf("scan: %+v %v", r, err)
	}
	if _, err := DecodeScan([]byte(`{"op":"create","table":"db.t"}`)); err == nil {
		t.Fatal("a scan document with another op must fail")
	}
}
