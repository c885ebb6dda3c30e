package gotests

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/evolve"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/scan"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

func ptr[T any](v T) *T { return &v }

func updateTable(t testing.TB, s *session.Session, name string, allow bool, changes ...request.Change) (*evolve.Result, error) {
	t.Helper()
	res, err := ops.Execute(ctxT(t), s, &request.Request{Op: request.OpUpdateTable, Table: name, Changes: changes, AllowIncompatibleChanges: allow}, nil, nil)
	if err != nil {
		return nil, err
	}
	return res.(*evolve.Result), nil
}

func mustUpdate(t testing.TB, s *session.Session, name string, changes ...request.Change) *evolve.Result {
	t.Helper()
	r, err := updateTable(t, s, name, false, changes...)
	if err != nil {
		t.Fatalf("update_table %s: %v", name, err)
	}
	return r
}

// newEvolveTable creates local.db.<name> (id, name, ts, cat; partitioned
// by day(ts); format version v) with rows 0..9.
func newEvolveTable(t *testing.T, s *session.Session, name, v string) string {
	t.Helper()
	full := "local.db." + name
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: full, PartitionBy: []request.PartitionField{{Transform: "day", Column: "ts"}},
		Properties: map[string]string{"format-version": v}}, rowsReader(t, 0, 10, 1))
	return full
}

func fieldOf(t testing.TB, sc *iceberg.Schema, name string) iceberg.NestedField {
	t.Helper()
	f, ok := sc.FindFieldByName(name)
	if !ok {
		t.Fatalf("no column %s in %s", name, sc)
	}
	return f
}

func TestEvolveSchemaKeepsIDsAndAssignsNewOnes(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	name := newEvolveTable(t, s, "t", "2")
	before := loadTable(t, s, name).Metadata()
	last := before.LastColumnID()
	r := mustUpdate(t, s, name,
		request.Change{Action: request.ActionAddColumn, Path: []string{"extra"}, Type: "long", Doc: ptr("an extra")},
		request.Change{Action: request.ActionAddColumn, Path: []string{"addr"}, Type: "struct<city: string, zip: int>"},
		request.Change{Action: request.ActionRenameColumn, Path: []string{"name"}, NewName: "full_name"},
		request.Change{Action: request.ActionMoveFirst, Path: []string{"extra"}},
	)
	sc := r.Schema
	if got := sc.Field(0).Name; got != "extra" {
		t.Errorf("first column %s, want extra", got)
	}
	if f := fieldOf(t, sc, "extra"); f.ID != last+1 || f.Doc != "an extra" || f.Required {
		t.Errorf("extra = %+v, want id %d, doc, optional", f, last+1)
	}
	if f := fieldOf(t, sc, "addr.zip"); f.ID != last+4 {
		t.Errorf("addr.zip id %d, want %d (addr, city, zip after extra)", f.ID, last+4)
	}
	if old, renamed := fieldOf(t, before.CurrentSchema(), "name"), fieldOf(t, sc, "full_name"); old.ID != renamed.ID {
		t.Errorf("rename changed the id: %d -> %d", old.ID, renamed.ID)
	}
	if r.LastColumnID != last+4 || sc.ID != before.CurrentSchema().ID+1 {
		t.Errorf("last column id %d schema id %d", r.LastColumnID, sc.ID)
	}
	// No data file was rewritten: the snapshot is the same.
	after := loadTable(t, s, name)
	if after.CurrentSnapshot().SnapshotID != before.CurrentSnapshot().SnapshotID {
		t.Error("a schema change made a snapshot")
	}
	// Old rows read with the new schema: new names, new columns null.
	rdr, err := scan.Read(ctxT(t), s, &request.Request{Op: request.OpScan, Table: name}, memory.DefaultAllocator, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var names []string
	for _, f := range rdr.Schema().Fields() {
		names = append(names, f.Name)
	}
	if want := []string{"extra", "id", "full_name", "ts", "cat", "addr"}; !slices.Equal(names, want) {
		t.Errorf("read columns %v, want %v", names, want)
	}
	rows, nulls := 0, 0
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rows += int(rec.NumRows())
		nulls += rec.Column(0).NullN()
	}
	if rows != 10 || nulls != 10 {
		t.Errorf("read %d rows, %d null extras; want 10 and 10", rows, nulls)
	}
	// Time travel to the snapshot reads with the snapshot's schema, as Spark.
	snap := before.CurrentSnapshot().SnapshotID
	if got := readRows(t, s, name, &snap); len(got) != 10 {
		t.Errorf("time travel read %d rows with the old names, want 10", len(got))
	}
}

func TestEvolveWidensAndMakesOptional(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	name := newEvolveTable(t, s, "t", "2")
	mustUpdate(t, s, name,
		request.Change{Action: request.ActionAddColumn, Path: []string{"n"}, Type: "int"},
		request.Change{Action: request.ActionAddColumn, Path: []string{"f"}, Type: "float"},
		request.Change{Action: request.ActionAddColumn, Path: []string{"d"}, Type: "decimal(9, 2)"},
	)
	r := mustUpdate(t, s, name,
		request.Change{Action: request.ActionUpdateColumn, Path: []string{"n"}, Type: "long"},
		request.Change{Action: request.ActionUpdateColumn, Path: []string{"f"}, Type: "double", Doc: ptr("widened")},
		request.Change{Action: request.ActionUpdateColumn, Path: []string{"d"}, Type: "decimal(18, 2)"},
	)
	for col, want := range map[string]iceberg.Type{"n": iceberg.PrimitiveTypes.Int64, "f": iceberg.PrimitiveTypes.Float64, "d": iceberg.DecimalTypeOf(18, 2)} {
		if got := fieldOf(t, r.Schema, col).Type; !got.Equals(want) {
			t.Errorf("%s: %s, want %s", col, got, want)
		}
	}
}

// Each bad change is a typed error naming the column, and commits nothing.
func TestEvolveBadChangesNameTheColumnAndCommitNothing(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	name := newEvolveTable(t, s, "t", "2")
	// Adding a required column needs allow_incompatible_changes; so does the setup.
	if _, err := updateTable(t, s, name, true,
		request.Change{Action: request.ActionAddColumn, Path: []string{"key"}, Type: "long", Required: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, name, request.Change{Action: request.ActionSetIdentifierFields, Columns: [][]string{{"key"}}})
	cases := []struct {
		name   string
		column string
		change request.Change
	}{
		{"unknown column", "nope", request.Change{Action: request.ActionRenameColumn, Path: []string{"nope"}, NewName: "x"}},
		{"long to int", "id", request.Change{Action: request.ActionUpdateColumn, Path: []string{"id"}, Type: "int"}},
		{"string to int", "name", request.Change{Action: request.ActionUpdateColumn, Path: []string{"name"}, Type: "int"}},
		{"optional to required", "cat", request.Change{Action: request.ActionUpdateColumn, Path: []string{"cat"}, Required: ptr(true)}},
		{"drop partition source", "ts", request.Change{Action: request.ActionDeleteColumn, Path: []string{"ts"}}},
		{"drop identifier", "key", request.Change{Action: request.ActionDeleteColumn, Path: []string{"key"}}},
		{"add required", "req", request.Change{Action: request.ActionAddColumn, Path: []string{"req"}, Type: "int", Required: ptr(true)}},
		{"duplicate add", "cat", request.Change{Action: request.ActionAddColumn, Path: []string{"cat"}, Type: "string"}},
		{"rename onto another", "cat", request.Change{Action: request.ActionRenameColumn, Path: []string{"name"}, NewName: "cat"}},
		{"identifier on optional", "cat", request.Change{Action: request.ActionSetIdentifierFields, Columns: [][]string{{"cat"}}}},
		{"unknown partition field", "nope", request.Change{Action: request.ActionRemovePartitionField, Name: "nope"}},
		{"duplicate partition field", "ts", request.Change{Action: request.ActionAddPartitionField, Source: "ts", Transform: "day"}},
	}
	before := loadTable(t, s, name).MetadataLocation()
	for _, c := range cases {
		_, err := updateTable(t, s, name, false, c.change)
		t.Logf("%s: %v", c.name, err)
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.column) {
			t.Errorf("%s: err = %v, want invalid argument naming %s", c.name, err, c.column)
		}
	}
	if after := loadTable(t, s, name).MetadataLocation(); after != before {
		t.Errorf("a failed change committed: %s -> %s", before, after)
	}
}

func specJSON(t testing.TB, raw json.RawMessage) iceberg.PartitionSpec {
	t.Helper()
	var spec iceberg.PartitionSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// v1 tables (which void removed fields) cannot be created here; the Python
// tests evolve one Spark created.
func TestEvolveSpecReusesRemovedFieldIDs(t *testing.T) {
	for _, v := range []string{"2", "3"} {
		t.Run("v"+v, func(t *testing.T) {
			e := newEnv(t)
			s := e.session(t)
			name := newEvolveTable(t, s, "t", v)
			r := mustUpdate(t, s, name, request.Change{Action: request.ActionAddPartitionField, Source: "id", Transform: "bucket[4]"})
			spec := specJSON(t, r.Spec)
			if spec.NumFields() != 2 || spec.Field(1).Name != "id_bucket_4" || spec.Field(1).FieldID != 1001 {
				t.Fatalf("spec after add: %s", spec)
			}
			r = mustUpdate(t, s, name, request.Change{Action: request.ActionRemovePartitionField, Name: "id_bucket_4"})
			spec = specJSON(t, r.Spec)
			if spec.NumFields() != 1 {
				t.Fatalf("spec after remove: %s", spec)
			}
			r = mustUpdate(t, s, name, request.Change{Action: request.ActionAddPartitionField, Source: "id", Transform: "bucket[4]"})
			spec = specJSON(t, r.Spec)
			if spec.NumFields() != 2 || spec.Field(1).FieldID != 1001 {
				t.Fatalf("re-added field: %s, want field id 1001 again", spec)
			}
			// A write after the change uses the new spec.
			mustWrite(t, s, request.Request{Op: request.OpAppend, Table: name}, rowsReader(t, 10, 10, 1))
			if got := len(readRows(t, s, name, nil)); got != 20 {
				t.Errorf("read %d rows, want 20", got)
			}
		})
	}
}

func TestEvolveSortOrderAndProperties(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	name := newEvolveTable(t, s, "t", "2")
	r := mustUpdate(t, s, name,
		request.Change{Action: request.ActionReplaceSortOrder, Terms: []string{"id DESC", "days(ts)"}},
		request.Change{Action: request.ActionSetProperties, Properties: map[string]string{"write.distribution-mode": "range", "k": "v"}},
	)
	if !strings.Contains(string(r.SortOrder), `"direction":"desc"`) || r.Properties["write.distribution-mode"] != "range" {
		t.Fatalf("order %s properties %v", r.SortOrder, r.Properties)
	}
	r = mustUpdate(t, s, name,
		request.Change{Action: request.ActionReplaceSortOrder},
		request.Change{Action: request.ActionRemoveProperties, Keys: []string{"k"}},
	)
	if !strings.Contains(string(r.SortOrder), `"order-id":0`) || r.Properties["k"] != "" {
		t.Fatalf("unsorted: order %s properties %v", r.SortOrder, r.Properties)
	}
}

func TestEvolveRequestValidation(t *testing.T) {
	bad := []string{
		`{"op": "update_table", "table": "db.t"}`,
		`{"op": "update_table", "table": "db.t", "changes": [{"action": "nope"}]}`,
		`{"op": "update_table", "table": "db.t", "changes": [{"action": "add_column", "path": ["a"]}]}`,
		`{"op": "update_table", "table": "db.t", "changes": [{"action": "delete_column", "path": ["a"], "type": "int"}]}`,
		`{"op": "update_table", "table": "db.t", "changes": [{"action": "add_partition_field", "source": "a", "transform": "bucket[0]"}]}`,
		`{"op": "append", "table": "db.t", "changes": [{"action": "delete_column", "path": ["a"]}]}`,
	}
	for _, doc := range bad {
		if _, err := request.Decode([]byte(doc)); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want invalid argument", doc, err)
		}
	}
}
