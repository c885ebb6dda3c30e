package request

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/layout"
)

// normalized drops the difference between an empty and a missing map or
// list, which the encoding's omitempty does not keep.
func normalized(r *Request) Request {
	c := *r
	emptyMap := func(m map[string]string) map[string]string {
		if len(m) == 0 {
			return nil
		}
		return m
	}
	c.Properties, c.Options, c.Set = emptyMap(c.Properties), emptyMap(c.Options), emptyMap(c.Set)
	if len(c.PartitionBy) == 0 {
		c.PartitionBy = nil
	}
	if len(c.Columns) == 0 {
		c.Columns = nil
	}
	if len(c.SortOrder) == 0 {
		c.SortOrder = nil
	}
	if c.Merge != nil {
		m := *c.Merge
		m.Clauses = slices.Clone(m.Clauses)
		for i := range m.Clauses {
			m.Clauses[i].Set = emptyMap(m.Clauses[i].Set)
		}
		c.Merge = &m
	}
	return c
}

var fuzzSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
	iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	iceberg.NestedField{ID: 3, Name: "level", Type: iceberg.PrimitiveTypes.String},
)

// texts are the request's expression texts, which the operations compile.
func texts(r *Request) []string {
	out := []string{r.Filter}
	out = append(out, slices.Sorted(maps.Values(r.Set))...)
	if r.Merge != nil {
		out = append(out, r.Merge.On)
		for _, c := range r.Merge.Clauses {
			out = append(out, c.Condition)
			out = append(out, slices.Sorted(maps.Values(c.Set))...)
		}
	}
	return out
}

// FuzzDecode: a request document either fails to decode with an invalid
// argument error or decodes to a request that encodes to a document that
// decodes to the same request; nothing it holds makes the identifier,
// transform, sort order or expression parsers panic, and their errors are
// typed.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"op":"create","table":"db.t","partition_by":[{"transform":"bucket[16]","column":"id"},{"transform":"day","column":"ts"}],"properties":{"k":"v"},"sort_order":["id DESC NULLS LAST","bucket(4, level)"]}`,
		`{"op":"append","table":"local.db.t","options":{"target-file-size-bytes":"1"},"input_in_memory":true}`,
		`{"op":"delete","table":"db.t","filter":"level = 'INFO' AND ts >= DATE '2024-01-01'"}`,
		`{"op":"update","table":"db.t","set":{"level":"upper(level)"},"filter":"id > 3"}`,
		`{"op":"merge","table":"db.t","merge":{"on":"t.id = s.id","source_alias":"s","target_alias":"t","clauses":[{"when":"matched","condition":"s.level = 'D'","action":"delete"},{"when":"not_matched","action":"insert_all"}]}}`,
		`{"op":"cherrypick","table":"db.t","snapshot_id":12}`,
		`{"op":"fast_forward","table":"db.t","ref":"main","to":"b"}`,
		`{"table":"db.t","columns":["id"],"snapshot_id":-1}`,
		`{"op":"create","table":"db.t"} {"op":"delete"}`,
		`{"op":"create","table":"db.t","Table":"x.y"}`,
		`{"op":"create","table":"db.t","op":"append"}`,
		`[{"op":"create"}]`, `null`, `{}`, `{"op":"list_tables","namespace":"db"}`,
	} {
		f.Add([]byte(s))
	}
	cats := map[string]bool{"local": true, "prod": true}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, scan := range []bool{false, true} {
			dec := Decode
			if scan {
				dec = DecodeScan
			}
			r, err := dec(doc)
			if err != nil {
				if !errors.Is(err, errs.ErrInvalidArgument) {
					t.Fatalf("%q: error %v is not an invalid argument", doc, err)
				}
				continue
			}
			again, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("%q: decoded request does not encode: %v", doc, err)
			}
			r2, err := dec(again)
			if err != nil {
				t.Fatalf("%q: re-encoded as %s, which fails: %v", doc, again, err)
			}
			if a, b := normalized(r), normalized(r2); !reflect.DeepEqual(a, b) {
				t.Fatalf("%q: decodes to %+v, re-encoded %s to %+v", doc, a, again, b)
			}
			if _, err := ParseIdentifier(r.Table, cats, "local"); err != nil && !errors.Is(err, errs.ErrInvalidArgument) {
				t.Fatalf("%q: identifier error %v", r.Table, err)
			}
			for _, pf := range r.PartitionBy {
				if _, err := iceberg.ParseTransform(pf.Transform); err != nil {
					t.Fatalf("%q: transform %q accepted by Decode, not by iceberg-go: %v", doc, pf.Transform, err)
				}
			}
			if _, err := layout.ParseOrder(r.SortOrder, fuzzSchema); err != nil &&
				!errors.Is(err, errs.ErrInvalidArgument) && !errors.Is(err, errs.ErrValidation) {
				t.Fatalf("%q: sort order error %v", r.SortOrder, err)
			}
			for _, text := range texts(r) {
				if strings.TrimSpace(text) == "" {
					continue
				}
				if _, err := expr.Compile(text, fuzzSchema); err != nil {
					var e *expr.Error
					if !errors.As(err, &e) || strings.Contains(err.Error(), "internal error") {
						t.Fatalf("%q: expression error %v", text, err)
					}
				}
			}
		}
	})
}

// Documents encoding/json would take but that are not what they seem.
func TestStrictDocuments(t *testing.T) {
	for _, bad := range []string{
		`{"op":"append","table":"db.t"} {"op":"delete"}`, // a second document
		`{"op":"append","table":"db.t"}x`,
		`{"op":"append","Table":"db.t"}`,                // only equal ignoring case
		`{"op":"append","table":"db.a","table":"db.b"}`, // the last would win
		`{"op":"append","table":"db.t","options":{"k":"1","k":"2"}}`,
		`{"op":"merge","table":"db.t","merge":{"on":"true","clauses":[{"when":"matched","action":"delete","Action":"update_all"}]}}`,
		`{"op":"create","table":"db.t","partition_by":[{"transform":"bucket[2147483648]","column":"id"}]}`,
		`{"op":"append","table":"db.t","properties":` + strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70) + `}`,
		``, `{`, `{"op":`,
	} {
		if _, err := Decode([]byte(bad)); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
	ok := `  {"op":"append","table":"db.t","options":{"k":"1","K":"2"}}` + "\n"
	if r, err := Decode([]byte(ok)); err != nil || len(r.Options) != 2 {
		t.Errorf("map keys differing in case are two keys: %+v %v", r, err)
	}
}
