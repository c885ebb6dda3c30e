package pqread

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	pq "github.com/pyiceberg-go/pyiceberg-go/core/parquet"
)

// allTypes has every type the reader takes, optional and required, with a
// low-cardinality string (dictionary-encoded) and decimals of each
// physical width.
func allTypes() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 3, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 4, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 5, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 6, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 7, Name: "t", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 8, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 9, Name: "tstz", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 10, Name: "cat", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 11, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 12, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 13, Name: "fx", Type: iceberg.FixedTypeOf(5)},
		iceberg.NestedField{ID: 14, Name: "d7", Type: iceberg.DecimalTypeOf(7, 2)},
		iceberg.NestedField{ID: 15, Name: "d15", Type: iceberg.DecimalTypeOf(15, 2)},
		iceberg.NestedField{ID: 16, Name: "d38", Type: iceberg.DecimalTypeOf(38, 4)},
		iceberg.NestedField{ID: 17, Name: "lowint", Type: iceberg.PrimitiveTypes.Int64},
	)
}

// allTypesBatches is allTypes with three random batches of 3,000 rows
// (seeds first, first+1, first+2).
func allTypesBatches(t *testing.T, first uint64) (*iceberg.Schema, *arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	sc := allTypes()
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	for k := range uint64(3) {
		recs = append(recs, randomBatch(t, asc, 3000, first+k))
	}
	return sc, asc, recs
}

// randomBatch builds n rows of sc's Arrow form asc: about one value in
// eight null in optional columns, negative numbers, empty strings.
func randomBatch(t *testing.T, asc *arrow.Schema, n int, seed uint64) arrow.RecordBatch {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	for row := range n {
		for i, f := range asc.Fields() {
			fb := b.Field(i)
			if f.Nullable && r.IntN(8) == 0 {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.Int64Builder:
				if f.Name == "lowint" {
					fb.Append(int64(r.IntN(5)) - 2)
				} else {
					fb.Append(int64(row)*1_000_003 - r.Int64N(1<<40))
				}
			case *array.BooleanBuilder:
				fb.Append(r.IntN(2) == 0)
			case *array.Int32Builder:
				fb.Append(r.Int32() - 1<<30)
			case *array.Float32Builder:
				fb.Append(r.Float32()*2e6 - 1e6)
			case *array.Float64Builder:
				fb.Append(r.NormFloat64() * 1e9)
			case *array.Date32Builder:
				fb.Append(arrow.Date32(r.IntN(40000) - 10000))
			case *array.Time64Builder:
				fb.Append(arrow.Time64(r.Int64N(86_400_000_000)))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(r.Int64N(4e15) - 1e15))
			case *array.StringBuilder:
				if f.Name == "cat" {
					fb.Append(fmt.Sprintf("category-%d", r.IntN(6)))
				} else {
					s := make([]byte, r.IntN(40))
					for k := range s {
						s[k] = byte('a' + r.IntN(26))
					}
					fb.Append(string(s))
				}
			case *array.BinaryBuilder:
				v := make([]byte, r.IntN(20))
				for k := range v {
					v[k] = byte(r.Uint32())
				}
				fb.Append(v)
			case *array.FixedSizeBinaryBuilder:
				v := make([]byte, 5)
				for k := range v {
					v[k] = byte(r.Uint32())
				}
				fb.Append(v)
			case *array.Decimal128Builder:
				p := f.Type.(*arrow.Decimal128Type).Precision
				var v decimal128.Num
				if p <= 18 {
					lim := int64(1)
					for range p {
						lim *= 10
					}
					v = decimal128.FromI64(r.Int64N(2*lim-1) - lim + 1)
				} else {
					v = decimal128.New(r.Int64N(1<<40)-1<<39, r.Uint64())
				}
				fb.Append(v)
			default:
				t.Fatalf("no generator for %s", f.Type)
			}
		}
	}
	return b.NewRecordBatch()
}

// writeFile writes recs with core/parquet's writer and returns the path
// of the single file.
func writeFile(t *testing.T, dir string, asc *arrow.Schema, opts pq.Options, recs []arrow.RecordBatch) string {
	t.Helper()
	n := 0
	w := pq.NewWriter(context.Background(), icebergio.LocalFS{}, asc, opts, func() string {
		n++
		return filepath.Join(dir, fmt.Sprintf("f%d.parquet", n))
	})
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	files, err := w.Close()
	if err != nil || len(files) != 1 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	return files[0].Path
}

// openPath opens the file at path with pqread (closed when the test ends).
func openPath(t *testing.T, path string, sc *iceberg.Schema, asc *arrow.Schema) *Reader {
	t.Helper()
	return openPathWhole(t, path, sc, asc, wholeFileBytes)
}

// openPathWhole is openPath reading files of up to whole bytes whole.
func openPathWhole(t *testing.T, path string, sc *iceberg.Schema, asc *arrow.Schema, whole int64) *Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	rd, ok, err := open(f, st.Size(), sc, asc, whole)
	if err != nil || !ok {
		t.Fatalf("Open: ok %v, %v", ok, err)
	}
	return rd
}

// readAll reads path with pqread in batches of rows and checks every batch.
func readAll(t *testing.T, path string, sc *iceberg.Schema, asc *arrow.Schema, rows int, whole int64) (arrow.Table, int) {
	t.Helper()
	rd := openPathWhole(t, path, sc, asc, whole)
	var recs []arrow.RecordBatch
	for rec, err := range rd.Batches(context.Background(), rows) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.NumRows() > int64(rows) {
			t.Fatalf("batch of %d rows, asked for %d", rec.NumRows(), rows)
		}
		for i, c := range rec.Columns() {
			if err := array.ValidateFull(c); err != nil {
				t.Fatalf("column %d: %v", i, err)
			}
		}
		recs = append(recs, rec)
	}
	tbl := array.NewTableFromRecords(asc, recs)
	for _, r := range recs {
		r.Release()
	}
	return tbl, len(recs)
}

// Every value, null and type comes back as written, whatever the encoder
// (the native one with dictionaries and delta encodings or PLAIN, arrow-go's
// pqarrow), the page and row-group boundaries, and the batch size.
func TestReadsBackWhatWasWritten(t *testing.T) {
	t.Parallel()
	sc, asc, recs := allTypesBatches(t, 0)
	want := array.NewTableFromRecords(asc, recs)
	defer want.Release()
	cases := []struct {
		name string
		opts pq.Options
	}{
		{"native", pq.Options{PageRowLimit: 700, RowGroupBytes: 100 << 10}},
		{"native plain", pq.Options{PageRowLimit: 1000, PlainEncodings: true,
			Dictionary: map[string]bool{"cat": false, "lowint": false}}},
		{"native dictionaries", pq.Options{Dictionary: map[string]bool{
			"id": true, "i": true, "s": true, "bin": true, "fx": true, "d7": true, "d15": true, "d38": true, "day": true, "ts": true}}},
		{"pqarrow", pq.Options{Pqarrow: true, PageBytes: 8 << 10, RowGroupBytes: 150 << 10}},
	}
	for _, c := range cases {
		for _, whole := range []int64{0, 32 << 20} {
			t.Run(fmt.Sprintf("%s/whole=%d", c.name, whole), func(t *testing.T) {
				readsBack(t, c.opts, whole, recs, want, sc, asc)
			})
		}
	}
	for _, r := range recs {
		r.Release()
	}
}

// readsBack writes recs with opts and reads them back whole in batches of
// several sizes, comparing with want.
func readsBack(t *testing.T, opts pq.Options, whole int64, recs []arrow.RecordBatch, want arrow.Table, sc *iceberg.Schema, asc *arrow.Schema) {
	path := writeFile(t, t.TempDir(), asc, opts, recs)
	for _, rows := range []int{1, 333, 4096, 1 << 20} {
		got, batches := readAll(t, path, sc, asc, rows, whole)
		if got.NumRows() != want.NumRows() {
			t.Fatalf("%d rows, want %d", got.NumRows(), want.NumRows())
		}
		if rows == 1 && batches != int(want.NumRows()) {
			t.Fatalf("%d batches of one row", batches)
		}
		for i := range int(want.NumCols()) {
			if !array.ChunkedEqual(got.Column(i).Data(), want.Column(i).Data()) {
				t.Fatalf("batches of %d: column %s differs", rows, asc.Field(i).Name)
			}
		}
		got.Release()
	}
}

// Files the reader does not take are reported as such, not misread: a
// column missing from the file (added later), a promoted type, a type it
// does not decode.
func TestDeclinesFilesItCannotReadExactly(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 2, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
	)
	asc, _ := table.SchemaToArrowSchema(sc, nil, true, false)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	b.Field(0).(*array.Int32Builder).Append(1)
	b.Field(1).AppendNull()
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	path := writeFile(t, t.TempDir(), asc, pq.Options{Pqarrow: true}, []arrow.RecordBatch{rec})
	f, _ := os.Open(path)
	defer f.Close()
	st, _ := f.Stat()
	declined := func(name string, s *iceberg.Schema) {
		a, err := table.SchemaToArrowSchema(s, nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := Open(f, st.Size(), s, a); ok || err != nil {
			t.Errorf("%s: ok %v, %v", name, ok, err)
		}
	}
	declined("uuid", sc)
	onlyID := func(typ iceberg.Type, id int) *iceberg.Schema {
		return iceberg.NewSchema(1, iceberg.NestedField{ID: id, Name: "id", Type: typ, Required: true})
	}
	declined("int promoted to long", onlyID(iceberg.PrimitiveTypes.Int64, 1))
	declined("column added later", iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 3, Name: "added", Type: iceberg.PrimitiveTypes.String}))
	if _, ok, err := Open(f, st.Size(), onlyID(iceberg.PrimitiveTypes.Int32, 1), func() *arrow.Schema {
		a, _ := table.SchemaToArrowSchema(onlyID(iceberg.PrimitiveTypes.Int32, 1), nil, true, false)
		return a
	}()); !ok || err != nil {
		t.Errorf("the int column alone: ok %v, %v", ok, err)
	}
}

// countingReader counts ReadAt calls: on object stores each is a request.
type countingReader struct {
	r     *os.File
	calls int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.calls++
	return c.r.ReadAt(p, off)
}

// The file is read in large requests, not parquet-go's default of 4 KB:
// a few per column chunk, or a small file in one.
func TestReadsInLargeRequests(t *testing.T) {
	sc := allTypes()
	asc, _ := table.SchemaToArrowSchema(sc, nil, true, false)
	var recs []arrow.RecordBatch
	for k := range 8 {
		recs = append(recs, randomBatch(t, asc, 5000, uint64(k)))
	}
	path := writeFile(t, t.TempDir(), asc, pq.Options{}, recs)
	for _, r := range recs {
		r.Release()
	}
	f, _ := os.Open(path)
	defer f.Close()
	st, _ := f.Stat()
	for _, whole := range []int64{0, 32 << 20} {
		cr := &countingReader{r: f}
		rd, ok, err := open(cr, st.Size(), sc, asc, whole)
		if err != nil || !ok {
			t.Fatalf("Open: ok %v, %v", ok, err)
		}
		rows := 0
		for rec, err := range rd.Batches(context.Background(), 4096) {
			if err != nil {
				t.Fatal(err)
			}
			rows += int(rec.NumRows())
			rec.Release()
		}
		chunks := len(rd.file.RowGroups()) * len(rd.cols)
		t.Logf("whole up to %d bytes: %d reads for %d column chunks", whole, cr.calls, chunks)
		limit := 3*chunks + 4
		if whole > 0 {
			limit = 1 // one read of the whole file
		}
		if rows != 40000 || st.Size() < 1<<20 || cr.calls > limit {
			t.Fatalf("%d rows of a %d-byte file in %d reads (%d column chunks)", rows, st.Size(), cr.calls, chunks)
		}
	}
}

// FilteredBatches gives exactly the rows its Select keeps, in order, with
// every value, null and type as written: for every encoder, batch size
// and selection (none kept, all kept by flag, every row listed, sparse,
// runs), whatever the page and dictionary boundaries.
func TestFilteredBatchesGiveTheKeptRows(t *testing.T) {
	sc, asc, recs := allTypesBatches(t, 10)
	want := array.NewTableFromRecords(asc, recs)
	defer want.Release()
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	cases := []struct {
		name string
		opts pq.Options
	}{
		{"native", pq.Options{PageRowLimit: 700, RowGroupBytes: 100 << 10}},
		{"native dictionaries", pq.Options{PageRowLimit: 900, Dictionary: map[string]bool{
			"id": true, "i": true, "s": true, "bin": true, "fx": true, "d7": true, "d15": true, "d38": true, "day": true, "b": true}}},
		{"pqarrow", pq.Options{Pqarrow: true, PageBytes: 8 << 10, RowGroupBytes: 150 << 10}},
	}
	for _, c := range cases {
		path := writeFile(t, t.TempDir(), asc, c.opts, recs)
		for _, rows := range []int{1, 333, 4096} {
			t.Run(fmt.Sprintf("%s/%d", c.name, rows), func(t *testing.T) {
				rd := openPath(t, path, sc, asc)
				kept := map[int64]bool{}
				batch := 0
				sel := func(pred arrow.RecordBatch) ([]int32, bool, error) {
					if pred.NumCols() != 2 || pred.Schema().Field(0).Name != "id" || pred.Schema().Field(1).Name != "lowint" {
						t.Fatalf("predicate columns %v", pred.Schema())
					}
					ids := pred.Column(0).(*array.Int64)
					low := pred.Column(1).(*array.Int64)
					batch++
					var keep []int32
					all := batch%7 == 3
					for j := range ids.Len() {
						var in bool
						switch {
						case all:
							in = true
						case batch%5 == 1:
							in = false // none kept
						case batch%5 == 2:
							in = true // every row listed
						case batch%5 == 3:
							in = (j/50)%2 == 0 // runs
						default:
							in = ids.Value(j)%3 != 0 && !(low.IsValid(j) && low.Value(j) == 1)
						}
						if in {
							kept[ids.Value(j)] = true
							keep = append(keep, int32(j))
						}
					}
					return keep, all, nil
				}
				batches, err := rd.FilteredBatches(context.Background(), rows, []int{17, 1, 17}, sel)
				if err != nil {
					t.Fatal(err)
				}
				var got []arrow.RecordBatch
				for rec, err := range batches {
					if err != nil {
						t.Fatal(err)
					}
					for i, c := range rec.Columns() {
						if c.Len() != int(rec.NumRows()) {
							t.Fatalf("column %d has %d rows, the batch %d", i, c.Len(), rec.NumRows())
						}
						if err := array.ValidateFull(c); err != nil {
							t.Fatalf("column %d: %v", i, err)
						}
					}
					got = append(got, rec)
				}
				gt := array.NewTableFromRecords(asc, got)
				defer gt.Release()
				for _, r := range got {
					r.Release()
				}
				// The reference: want's rows whose id was kept, by arrow's filter.
				mb := array.NewBooleanBuilder(memory.DefaultAllocator)
				defer mb.Release()
				ids := 0
				for _, ch := range want.Column(0).Data().Chunks() {
					for j := range ch.Len() {
						mb.Append(kept[ch.(*array.Int64).Value(j)])
						ids++
					}
				}
				mask := mb.NewBooleanArray()
				defer mask.Release()
				ref, err := compute.FilterTable(context.Background(), want, compute.NewDatumWithoutOwning(mask), compute.DefaultFilterOptions())
				if err != nil {
					t.Fatal(err)
				}
				refT := ref
				defer refT.Release()
				if len(kept) == 0 || len(kept) == ids || gt.NumRows() != refT.NumRows() {
					t.Fatalf("%d rows, want %d (kept %d of %d)", gt.NumRows(), refT.NumRows(), len(kept), ids)
				}
				for i := range int(want.NumCols()) {
					if !array.ChunkedEqual(gt.Column(i).Data(), refT.Column(i).Data()) {
						t.Fatalf("column %s differs", asc.Field(i).Name)
					}
				}
			})
		}
	}
}
