package gotests

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// codecs returns the compression of every column chunk of every file.
func codecs(t *testing.T, files []string) map[compress.Compression]int {
	t.Helper()
	out := map[compress.Compression]int{}
	for _, p := range files {
		r, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		md := r.MetaData()
		for rg := range md.NumRowGroups() {
			for c := range md.RowGroup(rg).NumColumns() {
				cc, err := md.RowGroup(rg).ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				out[cc.Compression()]++
			}
		}
		r.Close()
	}
	return out
}

// Write option > session configuration > table property > default.
func TestOptionPrecedence(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t"}, rowsReader(t, 0, 100, 1))
	if got := codecs(t, e.dataFiles(t, "t")); len(got) != 1 || got[compress.Codecs.Zstd] == 0 {
		t.Fatalf("default codec: %v, want zstd only", got)
	}

	conf, err := session.Open(config.Session{
		Catalogs: map[string]map[string]string{"local": maps.Clone(e.props)},
		Env:      map[string]string{}, Home: e.dir,
		Conf: map[string]string{"compression-codec": "snappy", "snapshot-property.src": "session", "snapshot-property.only-session": "yes"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conf.Close()
	before := e.dataFiles(t, "t")
	res := mustWrite(t, conf, request.Request{Op: request.OpAppend, Table: "local.db.t"}, rowsReader(t, 100, 100, 1))
	if got := codecs(t, newFiles(before, e.dataFiles(t, "t"))); len(got) != 1 || got[compress.Codecs.Snappy] == 0 {
		t.Errorf("session compression-codec=snappy over table zstd: %v", got)
	}
	if res.Summary["src"] != "session" || res.Summary["only-session"] != "yes" {
		t.Errorf("session snapshot properties: %v", res.Summary)
	}

	before = e.dataFiles(t, "t")
	res = mustWrite(t, conf, request.Request{Op: request.OpAppend, Table: "local.db.t",
		Options: map[string]string{"compression-codec": "gzip", "snapshot-property.src": "option"}}, rowsReader(t, 200, 100, 1))
	if got := codecs(t, newFiles(before, e.dataFiles(t, "t"))); len(got) != 1 || got[compress.Codecs.Gzip] == 0 {
		t.Errorf("write option compression-codec=gzip over session snappy: %v", got)
	}
	if res.Summary["src"] != "option" || res.Summary["only-session"] != "yes" {
		t.Errorf("write option over session snapshot property: %v", res.Summary)
	}
	equalRows(t, readRows(t, s, "local.db.t", nil), expectRows([2]int64{0, 300}))
}

func newFiles(before, after []string) []string {
	old := map[string]bool{}
	for _, f := range before {
		old[f] = true
	}
	var out []string
	for _, f := range after {
		if !old[f] {
			out = append(out, f)
		}
	}
	return out
}

func TestBadOptionsAreArgumentErrors(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t"}, rowsReader(t, 0, 10, 1))
	before := stateOf(t, e, "t")
	for _, c := range []struct{ key, value string }{
		{"snapshot-property.total-records", "1"},
		{"no-such-option", "x"},
		{"check-nullability", "maybe"},
		{"compression-codec", "brotli-9000"},
	} {
		_, err := write(ctxT(t), s, request.Request{Op: request.OpAppend, Table: "local.db.t", Options: map[string]string{c.key: c.value}}, rowsReader(t, 10, 10, 1))
		if !errors.Is(err, errs.ErrInvalidArgument) && !errors.Is(err, errs.ErrNotSupported) {
			t.Errorf("option %s=%s: %v, want an argument error", c.key, c.value, err)
			continue
		}
		if !strings.Contains(err.Error(), c.key) && !strings.Contains(err.Error(), c.value) {
			t.Errorf("option %s=%s: error names neither: %v", c.key, c.value, err)
		}
	}
	unchanged(t, e, "t", before)
}

// Catalog properties table-default.<k> give a property unless the create
// sets it; table-override.<k> always win; use-nullable-query-schema=false
// keeps the input's nullability.
func TestCatalogTableDefaultsAndOverrides(t *testing.T) {
	e := newEnv(t)
	e.props["table-default.a"] = "default"
	e.props["table-default.b"] = "default"
	e.props["table-override.c"] = "override"
	e.props["use-nullable-query-schema"] = "false"
	s := e.session(t)
	in := otherReader(t, arrow.NewSchema([]arrow.Field{
		{Name: "req", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
		{Name: "opt", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil), 10)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t", Properties: map[string]string{"b": "mine", "c": "mine"}}, in)
	tbl := loadTable(t, s, "local.db.t")
	props := tbl.Metadata().Properties()
	for k, v := range map[string]string{"a": "default", "b": "mine", "c": "override"} {
		if props[k] != v {
			t.Errorf("property %s=%q, want %q", k, props[k], v)
		}
	}
	for name, required := range map[string]bool{"req": true, "opt": false} {
		f, ok := tbl.Schema().FindFieldByName(name)
		if !ok || f.Required != required {
			t.Errorf("column %s: required=%v, want %v", name, f.Required, required)
		}
	}
}
