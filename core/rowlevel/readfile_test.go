package rowlevel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// mixedBatch is n rows of many types, a null in about one value in six of
// the nullable columns.
func mixedBatch(n int, seed uint64) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
		{Name: "big", Type: &arrow.Decimal128Type{Precision: 38, Scale: 4}, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "small", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	r := rand.New(rand.NewPCG(seed, 3))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range n {
		for c, f := range sc.Fields() {
			fb := b.Field(c)
			if f.Nullable && r.IntN(6) == 0 {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.Int64Builder:
				fb.Append(int64(seed)*1_000_000 + int64(i))
			case *array.StringBuilder:
				fb.Append(fmt.Sprintf("name-%d", r.IntN(50)))
			case *array.Date32Builder:
				fb.Append(arrow.Date32(19000 + r.IntN(90)))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(r.Int64N(1 << 52)))
			case *array.Decimal128Builder:
				if f.Name == "amount" {
					fb.Append(decimal128.FromI64(r.Int64N(1e12) - 5e11))
				} else {
					fb.Append(decimal128.New(r.Int64N(1<<40)-1<<39, r.Uint64()))
				}
			case *array.Float64Builder:
				fb.Append(r.NormFloat64())
			case *array.BooleanBuilder:
				fb.Append(r.IntN(2) == 1)
			case *array.BinaryBuilder:
				fb.Append([]byte(fmt.Sprint(r.Uint32())))
			case *array.Int32Builder:
				fb.Append(r.Int32N(100))
			}
		}
	}
	return b.NewRecordBatch()
}

// readWith reads task with pqread (fast) or iceberg-go's scan, as a table.
func readWith(t *testing.T, ctx context.Context, tbl *table.Table, task table.FileScanTask, fast bool) arrow.Table {
	t.Helper()
	defer func(was bool) { useFastReader = was }(useFastReader)
	useFastReader = fast
	sc, batches, err := readTask(ctx, tbl, tbl.CurrentSnapshot(), task, 700)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	for rec, err := range batches {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	out := array.NewTableFromRecords(sc, recs)
	for _, r := range recs {
		r.Release()
	}
	return out
}

// monthTable creates a table of recs partitioned by month(day) on a
// fresh SQLite catalog and loads it.
func monthTable(t *testing.T, ctx context.Context, recs ...arrow.RecordBatch) *table.Table {
	t.Helper()
	dir := t.TempDir()
	s, err := session.Open(config.Session{
		Catalogs: map[string]map[string]string{"local": {
			"type": "sql", "uri": "sqlite:///" + filepath.Join(dir, "c.db"), "warehouse": "file://" + filepath.Join(dir, "wh")}},
		Env: map[string]string{}, Home: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	req := &request.Request{Op: request.OpCreate, Table: "local.db.t",
		PartitionBy: []request.PartitionField{{Transform: "month", Column: "day"}}}
	in, err := array.NewRecordReader(recs[0].Schema(), recs)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Identifier(req.Table)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := s.Catalog(ctx, id.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	w := write.New(s, cat, id, req, in, &report.Progress{})
	op, _, p, err := w.Prepare(ctx)
	if err == nil {
		_, err = w.Write(ctx, op, p)
	}
	in.Release()
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, w.Ident)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// The fast reader gives, file by file, the schema and rows iceberg-go's
// scan gives, on files our writer made for a partitioned table.
func TestFastReaderMatchesIcebergScan(t *testing.T) {
	ctx := context.Background()
	a, b := mixedBatch(4000, 1), mixedBatch(3000, 2)
	defer a.Release()
	defer b.Release()
	tbl := monthTable(t, ctx, a, b)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil || len(tasks) < 3 {
		t.Fatalf("%d files, %v", len(tasks), err)
	}
	rows := int64(0)
	for _, task := range tasks {
		if _, _, _, ok := fastRead(ctx, tbl, tbl.Scan(), task, 700, nil); !ok {
			t.Fatalf("%s: the fast reader declined it", task.File.FilePath())
		}
		fast, slow := readWith(t, ctx, tbl, task, true), readWith(t, ctx, tbl, task, false)
		if !fast.Schema().Equal(slow.Schema()) {
			t.Fatalf("schemas differ:\n%s\n%s", fast.Schema(), slow.Schema())
		}
		if fast.NumRows() != slow.NumRows() || fast.NumRows() == 0 {
			t.Fatalf("%d rows against %d", fast.NumRows(), slow.NumRows())
		}
		for i := range int(fast.NumCols()) {
			if !array.ChunkedEqual(fast.Column(i).Data(), slow.Column(i).Data()) {
				t.Fatalf("%s: column %s differs", task.File.FilePath(), fast.Schema().Field(i).Name)
			}
		}
		rows += fast.NumRows()
		fast.Release()
		slow.Release()
	}
	if rows != 7000 {
		t.Fatalf("%d rows read, wrote 7000", rows)
	}
}

// readTaskSelect on pqread's files yields just the rows its selection
// keeps, decided from the columns it names, and says so; iceberg-go's scan
// of the same file filtered afterwards gives the same rows.
func TestReadTaskSelectDropsRowsWhileReading(t *testing.T) {
	ctx := context.Background()
	a := mixedBatch(5000, 3)
	defer a.Release()
	tbl := monthTable(t, ctx, a)
	small, ok := tbl.Schema().FindFieldByName("small")
	if !ok {
		t.Fatal("no column small")
	}
	// keep rows whose small is NULL or not a multiple of 3
	kept := func(arr *array.Int32, j int) bool { return arr.IsNull(j) || arr.Value(j)%3 != 0 }
	rs := &rowSelect{pred: []int{small.ID}, sel: func(pred arrow.RecordBatch) ([]int32, bool, error) {
		if pred.NumCols() != 1 {
			t.Fatalf("predicate batch of %d columns", pred.NumCols())
		}
		col := pred.Column(0).(*array.Int32)
		var keep []int32
		for j := range col.Len() {
			if kept(col, j) {
				keep = append(keep, int32(j))
			}
		}
		return keep, len(keep) == col.Len(), nil
	}}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil || len(tasks) < 3 {
		t.Fatalf("%d files, %v", len(tasks), err)
	}
	var got, want int64
	for _, task := range tasks {
		sc, batches, selected, err := readTaskSelect(ctx, tbl, tbl.CurrentSnapshot(), task, 700, rs)
		if err != nil || !selected {
			t.Fatalf("selected %v, %v", selected, err)
		}
		var recs []arrow.RecordBatch
		for rec, err := range batches {
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, rec)
		}
		fast := array.NewTableFromRecords(sc, recs)
		for _, r := range recs {
			r.Release()
		}
		slow := readWith(t, ctx, tbl, task, false)
		mb := array.NewBooleanBuilder(memory.DefaultAllocator)
		col := slow.Column(slow.Schema().FieldIndices("small")[0]).Data()
		for _, ch := range col.Chunks() {
			for j := range ch.Len() {
				mb.Append(kept(ch.(*array.Int32), j))
			}
		}
		mask := mb.NewBooleanArray()
		mb.Release()
		ref, err := compute.FilterTable(ctx, slow, compute.NewDatumWithoutOwning(mask), compute.DefaultFilterOptions())
		if err != nil {
			t.Fatal(err)
		}
		if fast.NumRows() != ref.NumRows() || ref.NumRows() == slow.NumRows() {
			t.Fatalf("%d rows, want %d of %d", fast.NumRows(), ref.NumRows(), slow.NumRows())
		}
		for i := range int(fast.NumCols()) {
			if !array.ChunkedEqual(fast.Column(i).Data(), ref.Column(i).Data()) {
				t.Fatalf("%s: column %s differs", task.File.FilePath(), fast.Schema().Field(i).Name)
			}
		}
		got += fast.NumRows()
		want += ref.NumRows()
		for _, x := range []interface{ Release() }{fast, slow, mask, ref} {
			x.Release()
		}
	}
	if got != want || got == 0 {
		t.Fatalf("%d rows kept, want %d", got, want)
	}
}
