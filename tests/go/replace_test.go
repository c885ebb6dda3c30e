package gotests

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// replaceSchema reorders two old columns, drops ts and cat, adds score.
var replaceSchema = arrow.NewSchema([]arrow.Field{
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// replaceReader holds n rows: id = 10000+r, name = "r<r>", score = r/2.
func replaceReader(t *testing.T, n int) array.RecordReader {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, replaceSchema)
	defer b.Release()
	for r := range n {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("r%d", r))
		b.Field(1).(*array.Int64Builder).Append(int64(10000 + r))
		b.Field(2).(*array.Float64Builder).Append(float64(r) / 2)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(replaceSchema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

// plannedRows sums the record counts of the files a snapshot's scan plans.
func plannedRows(t *testing.T, tbl *table.Table, snap int64) int64 {
	t.Helper()
	tasks, err := tbl.Scan(table.WithSnapshotID(snap)).PlanFiles(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, task := range tasks {
		n += task.File.Count()
	}
	return n
}

func fieldID(t *testing.T, tbl *table.Table, name string) int {
	t.Helper()
	f, ok := tbl.Schema().FindFieldByName(name)
	if !ok {
		t.Fatalf("column %s missing from %s", name, tbl.Schema())
	}
	return f.ID
}

func TestReplaceKeepsHistoryResetsMainKeepsIDsMergesProperties(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	create := mustWrite(t, s, request.Request{
		Op: request.OpCreate, Table: "local.db.t",
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}},
		Properties:  map[string]string{"a": "1", "b": "1"},
	}, rowsReader(t, 0, 100, 2))
	app := mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.t"}, rowsReader(t, 200, 50, 1))
	old := loadTable(t, s, "local.db.t")
	oldIDs := map[string]int{"id": fieldID(t, old, "id"), "name": fieldID(t, old, "name")}
	oldLastColumn := old.Metadata().LastColumnID()
	oldSpec := old.Metadata().PartitionSpec()
	oldSpecField := oldSpec.Field(0).FieldID

	rep := mustWrite(t, s, request.Request{
		Op: request.OpReplace, Table: "local.db.t",
		PartitionBy: []request.PartitionField{{Transform: "bucket[2]", Column: "id"}},
		Properties:  map[string]string{"b": "2", "c": "3"},
	}, replaceReader(t, 30))

	tbl := loadTable(t, s, "local.db.t")
	m := tbl.Metadata()
	if m.TableUUID() != old.Metadata().TableUUID() {
		t.Error("replace changed the table uuid")
	}
	// History kept.
	if n := len(m.Snapshots()); n != 3 {
		t.Fatalf("%d snapshots after create, append, replace; want 3", n)
	}
	for _, id := range []int64{*create.SnapshotID, *app.SnapshotID} {
		if m.SnapshotByID(id) == nil {
			t.Errorf("snapshot %d lost by replace", id)
		}
	}
	if got := plannedRows(t, tbl, *app.SnapshotID); got != 250 {
		t.Errorf("time travel to the append: %d rows, want 250", got)
	}
	// main reset to a parentless snapshot holding only the new rows.
	cur := tbl.CurrentSnapshot()
	if cur == nil || cur.SnapshotID != *rep.SnapshotID {
		t.Fatalf("current snapshot %v, want %d", cur, *rep.SnapshotID)
	}
	if cur.ParentSnapshotID != nil {
		t.Errorf("replace snapshot has parent %d", *cur.ParentSnapshotID)
	}
	if main := m.SnapshotByName(table.MainBranch); main == nil || main.SnapshotID != cur.SnapshotID {
		t.Errorf("main does not point at the replace snapshot")
	}
	if got := cur.Summary.Properties["total-records"]; got != "30" {
		t.Errorf("replace total-records=%s, want 30 (old rows are gone from main)", got)
	}
	if got := cur.Summary.Properties["total-data-files"]; got != fmt.Sprint(len(tasksOf(t, tbl))) {
		t.Errorf("replace total-data-files=%s, current scan plans %d files", got, len(tasksOf(t, tbl)))
	}
	if got := plannedRows(t, tbl, cur.SnapshotID); got != 30 {
		t.Errorf("current snapshot plans %d rows, want 30", got)
	}
	// Same-named columns keep their ids; a new column gets a new one.
	for name, id := range oldIDs {
		if got := fieldID(t, tbl, name); got != id {
			t.Errorf("column %s: field id %d, was %d", name, got, id)
		}
	}
	if got := fieldID(t, tbl, "score"); got <= oldLastColumn {
		t.Errorf("new column score has id %d, not above the old last column id %d", got, oldLastColumn)
	}
	if _, ok := tbl.Schema().FindFieldByName("ts"); ok {
		t.Error("the replaced table still has column ts")
	}
	// Properties merged: none removed, new ones win.
	props := m.Properties()
	for k, v := range map[string]string{"a": "1", "b": "2", "c": "3", "write.parquet.compression-codec": "zstd"} {
		if props[k] != v {
			t.Errorf("property %s=%q, want %q", k, props[k], v)
		}
	}
	// The new spec is current; its field id continues after the old one.
	spec := m.PartitionSpec()
	if spec.NumFields() != 1 || spec.Field(0).Name != "id_bucket" {
		t.Fatalf("spec %s, want id_bucket", spec)
	}
	if spec.Field(0).FieldID <= oldSpecField {
		t.Errorf("new partition field id %d reuses the old range (%d)", spec.Field(0).FieldID, oldSpecField)
	}
	// Read back the new data through core/scan.
	rows := readScore(t, s, "local.db.t")
	if len(rows) != 30 {
		t.Fatalf("%d rows, want 30", len(rows))
	}
	for r, got := range rows {
		want := fmt.Sprintf("%d r%d %g", 10000+r, r, float64(r)/2)
		if got != want {
			t.Fatalf("row %d: %s, want %s", r, got, want)
		}
	}
	// Appending after the replace builds on the new main.
	app2 := mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.t"}, replaceReader(t, 5))
	if got := app2.Summary["total-records"]; got != "35" {
		t.Errorf("append after replace: total-records=%s, want 35", got)
	}
}

func tasksOf(t *testing.T, tbl *table.Table) []table.FileScanTask {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// readScore reads (id, name, score) rows as "id name score", ordered by id.
func readScore(t *testing.T, s *session.Session, name string) []string {
	t.Helper()
	tbl := loadTable(t, s, name)
	at, err := tbl.Scan(table.WithSelectedFields("id", "name", "score")).ToArrowTable(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	rdr := array.NewTableReader(at, 1<<16)
	defer rdr.Release()
	byID := map[int64]string{}
	var minID int64 = 1 << 62
	for rdr.Next() {
		rec := rdr.RecordBatch()
		ids := rec.Column(int(rec.Schema().FieldIndices("id")[0])).(*array.Int64)
		names := rec.Column(int(rec.Schema().FieldIndices("name")[0]))
		scores := rec.Column(int(rec.Schema().FieldIndices("score")[0])).(*array.Float64)
		for i := range int(rec.NumRows()) {
			id := ids.Value(i)
			byID[id] = fmt.Sprintf("%d %s %g", id, names.ValueStr(i), scores.Value(i))
			minID = min(minID, id)
		}
	}
	out := make([]string, len(byID))
	for id, v := range byID {
		if i := int(id - minID); i >= 0 && i < len(out) {
			out[i] = v
		}
	}
	return out
}

func TestCreateOrReplaceBothWays(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	first := mustWrite(t, s, request.Request{Op: request.OpCreateOrReplace, Table: "local.db.t"}, rowsReader(t, 0, 40, 1))
	tbl := loadTable(t, s, "local.db.t")
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Fatalf("createOrReplace of a missing table: %d snapshots, want 1", n)
	}
	equalRows(t, readRows(t, s, "local.db.t", nil), expectRows([2]int64{0, 40}))
	idBefore := fieldID(t, tbl, "id")

	second := mustWrite(t, s, request.Request{Op: request.OpCreateOrReplace, Table: "local.db.t"}, rowsReader(t, 500, 25, 1))
	tbl = loadTable(t, s, "local.db.t")
	m := tbl.Metadata()
	if n := len(m.Snapshots()); n != 2 || m.SnapshotByID(*first.SnapshotID) == nil {
		t.Fatalf("createOrReplace of an existing table: %d snapshots, want 2 including the first", n)
	}
	if cur := tbl.CurrentSnapshot(); cur.SnapshotID != *second.SnapshotID || cur.ParentSnapshotID != nil {
		t.Errorf("current snapshot %d parent %v; want %d without parent", cur.SnapshotID, cur.ParentSnapshotID, *second.SnapshotID)
	}
	if got := fieldID(t, tbl, "id"); got != idBefore {
		t.Errorf("id field id %d, was %d", got, idBefore)
	}
	if got := second.Summary["total-records"]; got != "25" {
		t.Errorf("createOrReplace total-records=%s, want 25", got)
	}
	equalRows(t, readRows(t, s, "local.db.t", nil), expectRows([2]int64{500, 525}))
}

// REPLACE may raise the format version, never lower it.
func TestReplaceRaisesFormatVersionNeverLowers(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t"}, rowsReader(t, 0, 40, 1))
	mustWrite(t, s, request.Request{Op: request.OpReplace, Table: "local.db.t", Properties: map[string]string{"format-version": "3"}}, rowsReader(t, 500, 25, 1))
	if v := loadTable(t, s, "local.db.t").Metadata().Version(); v != 3 {
		t.Fatalf("replace asked for format-version 3, table has %d", v)
	}
	equalRows(t, readRows(t, s, "local.db.t", nil), expectRows([2]int64{500, 525}))

	_, err := write(ctxT(t), s, request.Request{Op: request.OpReplace, Table: "local.db.t", Properties: map[string]string{"format-version": "2"}}, rowsReader(t, 0, 5, 1))
	if err == nil {
		if v := loadTable(t, s, "local.db.t").Metadata().Version(); v != 3 {
			t.Errorf("replace lowered format-version to %d", v)
		}
	} else if !errors.Is(err, errs.ErrInvalidArgument) && !errors.Is(err, errs.ErrValidation) {
		t.Errorf("lowering format-version failed with %v, want an argument or validation error", err)
	}
}

// REPLACE with the same layout keeps the partition field ids and the spec,
// as Java's buildReplacement does; a new transform gets a new field id.
func TestReplaceReusesPartitionFields(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	byCat := []request.PartitionField{{Transform: "identity", Column: "cat"}}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t", PartitionBy: byCat}, rowsReader(t, 0, 30, 1))
	specBefore := loadTable(t, s, "local.db.t").Metadata().PartitionSpec()

	mustWrite(t, s, request.Request{Op: request.OpReplace, Table: "local.db.t", PartitionBy: byCat}, rowsReader(t, 100, 30, 1))
	m := loadTable(t, s, "local.db.t").Metadata()
	specAfter := m.PartitionSpec()
	if !specAfter.Equals(specBefore) || specAfter.ID() != specBefore.ID() {
		t.Fatalf("replace with the same layout changed the spec: %v (id %d) -> %v (id %d)", specBefore, specBefore.ID(), specAfter, specAfter.ID())
	}

	both := append(byCat, request.PartitionField{Transform: "bucket[4]", Column: "id"})
	mustWrite(t, s, request.Request{Op: request.OpReplace, Table: "local.db.t", PartitionBy: both}, rowsReader(t, 200, 30, 1))
	spec := loadTable(t, s, "local.db.t").Metadata().PartitionSpec()
	ids := map[string]int{}
	for _, f := range spec.Fields() {
		ids[f.Name] = f.FieldID
	}
	if ids["cat"] != specBefore.Field(0).FieldID || ids["id_bucket"] <= ids["cat"] {
		t.Fatalf("field ids after adding a bucket: %v (cat was %d)", ids, specBefore.Field(0).FieldID)
	}
	equalRows(t, readRows(t, s, "local.db.t", nil), expectRows([2]int64{200, 230}))
}
