package gotests

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// state is what a failed write must leave unchanged.
type state struct {
	metadataLocation string
	snapshots        int
	files            []string
}

func stateOf(t *testing.T, e *env, name string) state {
	t.Helper()
	tbl := loadTable(t, e.session(t), "local.db."+name)
	return state{tbl.MetadataLocation(), len(tbl.Metadata().Snapshots()), e.dataFiles(t, name)}
}

func unchanged(t *testing.T, e *env, name string, before state) {
	t.Helper()
	after := stateOf(t, e, name)
	if after.metadataLocation != before.metadataLocation {
		t.Errorf("metadata moved from %s to %s", before.metadataLocation, after.metadataLocation)
	}
	if after.snapshots != before.snapshots {
		t.Errorf("%d snapshots, had %d", after.snapshots, before.snapshots)
	}
	if !slices.Equal(after.files, before.files) {
		t.Errorf("data files changed:\nbefore %v\nafter  %v", before.files, after.files)
	}
}

func TestCreateExistingFailsAndChangesNothing(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t", PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 100, 1))
	before := stateOf(t, e, "t")
	in := newGenReader(1000, 100, 3, nil)
	_, err := write(ctxT(t), s, request.Request{Op: request.OpCreate, Table: "local.db.t"}, in)
	if !errors.Is(err, errs.ErrTableAlreadyExists) {
		t.Fatalf("create on an existing table: %v, want ErrTableAlreadyExists", err)
	}
	if !strings.Contains(err.Error(), "db.t") {
		t.Errorf("error does not name the table: %v", err)
	}
	if !in.released.Load() {
		t.Error("the input was not released")
	}
	unchanged(t, e, "t", before)
	equalRows(t, readRows(t, s, "local.db.t", nil), expectRows([2]int64{0, 100}))
}

func TestAppendToMissingTable(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	_, err := write(ctxT(t), s, request.Request{Op: request.OpAppend, Table: "local.db.missing"}, rowsReader(t, 0, 10, 1))
	if !errors.Is(err, errs.ErrNoSuchTable) {
		t.Fatalf("append to a missing table: %v, want ErrNoSuchTable", err)
	}
	_, err = write(ctxT(t), s, request.Request{Op: request.OpReplace, Table: "local.db.missing"}, rowsReader(t, 0, 10, 1))
	if !errors.Is(err, errs.ErrNoSuchTable) {
		t.Fatalf("replace of a missing table: %v, want ErrNoSuchTable", err)
	}
	if files := e.dataFiles(t, "missing"); len(files) != 0 {
		t.Errorf("files left for a missing table: %v", files)
	}
}

// otherReader is a single batch with the given schema: column i of type
// int64 or string holds row numbers.
func otherReader(t *testing.T, sc *arrow.Schema, n int) array.RecordReader {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i, f := range sc.Fields() {
		for r := range n {
			switch fb := b.Field(i).(type) {
			case *array.Int64Builder:
				fb.Append(int64(r))
			case *array.StringBuilder:
				fb.Append(f.Name + string(rune('a'+r%26)))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(tsBase + int64(r)*tsStep))
			case *array.Float64Builder:
				fb.Append(float64(r) / 2)
			default:
				t.Fatalf("otherReader: unsupported %T", fb)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

func TestAppendSchemaMismatchIsValidationErrorAndLeavesNothing(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t", PartitionBy: []request.PartitionField{{Transform: "day", Column: "ts"}}}, rowsReader(t, 0, 100, 1))
	before := stateOf(t, e, "t")

	cases := []struct {
		name, column string
		schema       *arrow.Schema
	}{
		{"extra column", "extra", arrow.NewSchema(append(baseSchema.Fields(), arrow.Field{Name: "extra", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), nil)},
		{"incompatible type", "id", arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "ts", Type: tsType, Nullable: true},
			{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
		}, nil)},
		{"long to double", "id", arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			{Name: "ts", Type: tsType, Nullable: true},
		}, nil)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := write(ctxT(t), s, request.Request{Op: request.OpAppend, Table: "local.db.t"}, otherReader(t, c.schema, 50))
			if !errors.Is(err, errs.ErrValidation) {
				t.Fatalf("%v, want ErrValidation", err)
			}
			if !strings.Contains(err.Error(), c.column) {
				t.Errorf("error does not name column %s: %v", c.column, err)
			}
			unchanged(t, e, "t", before)
		})
	}
}

func TestInputErrorMidStreamLeavesNoFiles(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t", PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 100, 1))
	before := stateOf(t, e, "t")
	boom := errors.New("producer broke")
	// Small target files so several are complete on disk before the failure.
	onDisk := 0
	in := newGenReader(1000, 20000, 10, func(i int) error {
		if i == 6 {
			onDisk = len(e.dataFiles(t, "t"))
			return boom
		}
		return nil
	})
	_, err := write(ctxT(t), s, request.Request{Op: request.OpAppend, Table: "local.db.t", Options: map[string]string{"target-file-size-bytes": "65536"}}, in)
	if err == nil || !strings.Contains(err.Error(), boom.Error()) {
		t.Fatalf("a failing input: %v, want an error carrying %q", err, boom)
	}
	if errs.StatusOf(err) == errs.StatusUnknown {
		t.Errorf("error wraps no error kind: %v", err)
	}
	if onDisk <= len(before.files) {
		t.Errorf("no file was on disk when the input failed (%d): the cleanup went untested", onDisk)
	}
	unchanged(t, e, "t", before)

	// Same for a create: no table, no files.
	in = newGenReader(1000, 20000, 10, func(i int) error {
		if i == 6 {
			return boom
		}
		return nil
	})
	_, err = write(ctxT(t), s, request.Request{Op: request.OpCreate, Table: "local.db.u", Options: map[string]string{"target-file-size-bytes": "65536"}}, in)
	if err == nil {
		t.Fatal("create from a failing input succeeded")
	}
	if _, err := write(ctxT(t), s, request.Request{Op: request.OpSnapshots, Table: "local.db.u"}, nil); !errors.Is(err, errs.ErrNoSuchTable) {
		t.Errorf("table u after a failed create: %v, want ErrNoSuchTable", err)
	}
	if files := e.dataFiles(t, "u"); len(files) != 0 {
		t.Errorf("files left by a failed create: %v", files)
	}
}

// Columns are matched by name: order does not matter, a missing optional
// column is written as null, int widens to long.
func TestAppendMatchesColumnsByName(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t"}, rowsReader(t, 0, 10, 1))
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: tsType, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: false},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	var want []row
	for id := int64(100); id < 130; id++ {
		r := expectRow(id)
		r.Cat = "" // missing column: null
		want = append(want, r)
		if r.TS == nil {
			b.Field(0).(*array.TimestampBuilder).AppendNull()
		} else {
			b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(*r.TS))
		}
		b.Field(1).(*array.Int32Builder).Append(int32(id))
		if r.Name == nil {
			b.Field(2).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(*r.Name)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.t"}, rdr)
	got := readRows(t, s, "local.db.t", nil)
	equalRows(t, got[10:], want)
	equalRows(t, got[:10], expectRows([2]int64{0, 10}))
}
