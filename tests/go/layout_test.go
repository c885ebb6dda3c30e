package gotests

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// headDataFiles lists the live data files of a table's head.
func headDataFiles(t testing.TB, tbl *table.Table) []iceberg.DataFile {
	t.Helper()
	var out []iceberg.DataFile
	for _, df := range headFiles(t, tbl) {
		if df.ContentType() == iceberg.EntryContentData {
			out = append(out, df)
		}
	}
	return out
}

// fileRows reads one data file's rows, in file order.
func fileRows(t testing.TB, path string) []row {
	t.Helper()
	tbl := readParquet(t, path)
	defer tbl.Release()
	var out []row
	tr := array.NewTableReader(tbl, 1<<20)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		tss := rec.Column(2).(*array.Timestamp)
		for i := range ids.Len() {
			r := expectRow(ids.Value(i))
			if tss.IsNull(i) != (r.TS == nil) || (r.TS != nil && int64(tss.Value(i)) != *r.TS) {
				t.Fatalf("%s: row %d has the wrong ts", path, ids.Value(i))
			}
			out = append(out, r)
		}
	}
	return out
}

// byTsDescID is the order "ts DESC NULLS LAST, id ASC NULLS FIRST".
func byTsDescID(a, b row) int {
	switch {
	case a.TS == nil && b.TS != nil:
		return 1
	case a.TS != nil && b.TS == nil:
		return -1
	case a.TS != nil && *a.TS != *b.TS:
		return -cmp.Compare(*a.TS, *b.TS)
	}
	return cmp.Compare(a.ID, b.ID)
}

// withID is r with its id replaced (to compare on the other keys only).
func (r row) withID(id int64) row { r.ID = id; return r }

// shuffledReader yields rows [0, n) in batches of size, batches in a
// scrambled order, so any sorted output is the writer's work.
func shuffledReader(t testing.TB, n, size int64) array.RecordReader {
	t.Helper()
	var recs []arrow.RecordBatch
	nb := n / size
	for i := range nb {
		j := (i * 7) % nb // 7 is coprime with the batch counts used
		recs = append(recs, batch(j*size, size))
	}
	rdr, err := array.NewRecordReader(baseSchema, recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		r.Release()
	}
	return rdr
}

func TestSortedTableWritesSortedFilesWithTheirOrderID(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.sorted", SortOrder: []string{"ts DESC", "id"},
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, shuffledReader(t, 3000, 300))
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.sorted"}, shuffledReader(t, 2400, 300))
	tbl := loadTable(t, s, "db.sorted")
	so := tbl.Metadata().SortOrder()
	if so.IsUnsorted() || so.Len() != 2 || so.Field(0).Direction != table.SortDESC || so.Field(0).NullOrder != table.NullsLast ||
		so.Field(1).NullOrder != table.NullsFirst {
		t.Fatalf("table sort order: %v", so)
	}
	files := headDataFiles(t, tbl)
	// range distribution: one file per partition per write.
	if len(files) != 6 {
		t.Errorf("%d data files, want 6 (3 partitions x 2 writes)", len(files))
	}
	var all []row
	for _, df := range files {
		if df.SortOrderID() == nil || *df.SortOrderID() != so.OrderID() {
			t.Errorf("%s: sort_order_id %v, want %d", df.FilePath(), df.SortOrderID(), so.OrderID())
		}
		rows := fileRows(t, df.FilePath())
		if !slices.IsSortedFunc(rows, byTsDescID) {
			t.Errorf("%s: rows are not in ts DESC, id order", df.FilePath())
		}
		for _, r := range rows[1:] {
			if r.Cat != rows[0].Cat {
				t.Fatalf("%s mixes partitions", df.FilePath())
			}
		}
		all = append(all, rows...)
	}
	slices.SortFunc(all, func(a, b row) int { return cmp.Compare(a.ID, b.ID) })
	want := expectRows([2]int64{0, 3000}, [2]int64{0, 2400})
	slices.SortStableFunc(want, func(a, b row) int { return cmp.Compare(a.ID, b.ID) })
	equalRows(t, all, want)
}

func TestRangeDistributionWritesDisjointSortedFiles(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	// Small files so that the sorted run is cut into several.
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.ranged", SortOrder: []string{"id DESC"},
		Options: map[string]string{"target-file-size-bytes": "40000"}}, shuffledReader(t, 20000, 1000))
	files := headDataFiles(t, loadTable(t, s, "db.ranged"))
	if len(files) < 3 {
		t.Fatalf("%d files, want several", len(files))
	}
	type span struct{ lo, hi int64 }
	var spans []span
	total := 0
	for _, df := range files {
		rows := fileRows(t, df.FilePath())
		if !slices.IsSortedFunc(rows, func(a, b row) int { return cmp.Compare(b.ID, a.ID) }) {
			t.Errorf("%s is not sorted by id DESC", df.FilePath())
		}
		spans = append(spans, span{rows[len(rows)-1].ID, rows[0].ID})
		total += len(rows)
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo <= spans[i-1].hi {
			t.Errorf("files overlap: %v and %v", spans[i-1], spans[i])
		}
	}
	if total != 20000 {
		t.Errorf("%d rows, want 20000", total)
	}
}

func TestSortBufferLimitWritesSortedRuns(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.runs", SortOrder: []string{"ts DESC"},
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}},
		Options:     map[string]string{"max-buffered-bytes": "60000", "distribution-mode": "hash"}}, shuffledReader(t, 12000, 500))
	files := headDataFiles(t, loadTable(t, s, "db.runs"))
	if len(files) <= 3 {
		t.Fatalf("%d files: the buffer limit should have cut each partition into several sorted runs", len(files))
	}
	n := 0
	for _, df := range files {
		rows := fileRows(t, df.FilePath())
		if !slices.IsSortedFunc(rows, func(a, b row) int { return byTsDescID(a, b.withID(a.ID)) }) {
			t.Errorf("%s is not sorted by ts DESC", df.FilePath())
		}
		n += len(rows)
	}
	if n != 12000 {
		t.Errorf("%d rows, want 12000", n)
	}
	equalRows(t, readRows(t, s, "db.runs", nil), expectRows([2]int64{0, 12000}))
}

func TestHashGivesEachPartitionOneFileAndMaxOpenFilesCloses(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	part := []request.PartitionField{{Transform: "identity", Column: "cat"}}
	// Every batch holds all three partitions.
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.hashed", PartitionBy: part}, rowsReader(t, 0, 500, 20))
	if n := len(headDataFiles(t, loadTable(t, s, "db.hashed"))); n != 3 {
		t.Errorf("hash: %d files, want one per partition (3)", n)
	}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.capped", PartitionBy: part,
		Options: map[string]string{"max-open-files": "2"}}, rowsReader(t, 0, 500, 20))
	files := headDataFiles(t, loadTable(t, s, "db.capped"))
	if len(files) <= 3 {
		t.Errorf("max-open-files=2 over 3 interleaved partitions: %d files, want more than 3", len(files))
	}
	for _, df := range files {
		if df.SortOrderID() == nil || *df.SortOrderID() != 0 {
			t.Errorf("unsorted table: sort_order_id %v, want 0", df.SortOrderID())
		}
	}
	equalRows(t, readRows(t, s, "db.capped", nil), expectRows([2]int64{0, 10000}))
}

func TestBadLayoutOptionsCommitNothing(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	for _, c := range []struct {
		req  request.Request
		kind error
	}{
		{request.Request{Op: request.OpCreate, Table: "db.bad1", Options: map[string]string{"distribution-mode": "random"}}, errs.ErrInvalidArgument},
		{request.Request{Op: request.OpCreate, Table: "db.bad2", SortOrder: []string{"nope"}}, errs.ErrValidation},
		{request.Request{Op: request.OpCreate, Table: "db.bad3", SortOrder: []string{"bucket(id)"}}, errs.ErrInvalidArgument},
		{request.Request{Op: request.OpCreate, Table: "db.bad4", Options: map[string]string{"max-open-files": "none"}}, errs.ErrInvalidArgument},
	} {
		_, err := write(ctxT(t), s, c.req, rowsReader(t, 0, 10, 1))
		if !errors.Is(err, c.kind) {
			t.Errorf("%v: err = %v, want %v", c.req, err, c.kind)
		}
		if _, err := os.Stat(e.tableDir(c.req.Table[3:])); err == nil {
			t.Errorf("%s: files were left behind", c.req.Table)
		}
	}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.ok"}, rowsReader(t, 0, 10, 1))
	_, err := write(ctxT(t), s, request.Request{Op: request.OpAppend, Table: "db.ok", SortOrder: []string{"id"}}, rowsReader(t, 0, 10, 1))
	if !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("sort order on append: %v", err)
	}
	if n := snapshotCount(t, s, "db.ok"); n != 1 {
		t.Errorf("%d snapshots, want 1", n)
	}
}

// streamPeak writes nbatches lazily produced batches into 100 bucket
// partitions with a buffer limit and returns the peak Go heap in use above
// the start (with a low GC percent, so the heap tracks live data). The heap
// is sampled as each batch is produced, the same points of the write
// whatever the machine's load (a sampler on a timer, starved on a loaded
// machine, could miss one run's peak and not the other's).
func streamPeak(t *testing.T, name string, limit int64, batchRows int64, nbatches int) uint64 {
	e := newEnv(t)
	s := e.session(t)
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	sample := func(int) error {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapInuse)
		return nil
	}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db." + name,
		PartitionBy: []request.PartitionField{{Transform: "bucket[100]", Column: "id"}},
		Options:     map[string]string{"max-buffered-bytes": fmt.Sprint(limit)}}, newGenReader(0, batchRows, nbatches, sample))
	_ = sample(nbatches)
	files := headDataFiles(t, loadTable(t, s, "db."+name))
	if len(files) != 100 {
		t.Errorf("%s: %d files, want one per bucket (100)", name, len(files))
	}
	var rows int64
	for _, df := range files {
		rows += df.Count()
	}
	if rows != batchRows*int64(nbatches) {
		t.Errorf("%s: %d rows, want %d", name, rows, batchRows*int64(nbatches))
	}
	return peak - min(peak, base.HeapInuse)
}

// TestStreamingIntoManyPartitionsHasBoundedMemory streams 15x more Arrow
// data than the writer's buffer limit into 100 partitions, and 3x that
// (45x), from lazy readers (the smaller run is past the warm-up of the
// encoders' per-file state). The peak must not grow with the input, and stays
// under a bound from the configuration: the buffer limit, plus per open
// file its encoder state (output buffer, zstd history, page buffers: about
// 3 MB for this 4-column schema, measured with pprof), plus a few input
// batches in flight.
func TestStreamingIntoManyPartitionsHasBoundedMemory(t *testing.T) {
	const limit = 8 << 20
	const batchRows = 20_000 // ~60 bytes/row in Arrow
	small := streamPeak(t, "small", limit, batchRows, 100)
	large := streamPeak(t, "large", limit, batchRows, 300) // ~360 MB of Arrow data
	batchBytes := uint64(batchRows * 60)
	bound := uint64(limit) + 100*(3<<20) + 4*batchBytes + 32<<20
	t.Logf("peak heap above the start: %d MB for 100 batches, %d MB for 300 (bound %d MB)", small>>20, large>>20, bound>>20)
	if large > bound {
		t.Errorf("peak heap %d MB above the bound %d MB derived from the configuration", large>>20, bound>>20)
	}
	if large > small+small/4+(32<<20) {
		t.Errorf("peak heap grew with the input: %d MB for 3x the data of a %d MB run", large>>20, small>>20)
	}
}

func TestNoneWithoutFanoutClustersLikeSparkTasks(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	part := []request.PartitionField{{Transform: "identity", Column: "cat"}}
	opts := map[string]string{"distribution-mode": "none", "max-buffered-bytes": "100000"}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.clustered", PartitionBy: part, Options: opts}, rowsReader(t, 0, 500, 20))
	clustered := headDataFiles(t, loadTable(t, s, "db.clustered"))
	opts["fanout-enabled"] = "true"
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.fanout", PartitionBy: part, Options: opts}, rowsReader(t, 0, 500, 20))
	fanout := headDataFiles(t, loadTable(t, s, "db.fanout"))
	if len(fanout) != 3 {
		t.Errorf("fanout: %d files, want one per partition (3)", len(fanout))
	}
	// Each buffer-full of rows is written out partition by partition.
	if len(clustered) <= 3 || len(clustered)%3 != 0 {
		t.Errorf("clustered: %d files, want 3 per buffer flush", len(clustered))
	}
	for _, df := range clustered {
		rows := fileRows(t, df.FilePath())
		for _, r := range rows {
			if r.Cat != rows[0].Cat {
				t.Fatalf("%s mixes partitions", df.FilePath())
			}
		}
	}
	equalRows(t, readRows(t, s, "db.clustered", nil), expectRows([2]int64{0, 10000}))
}

// TestDictionaryDecisionWaitsForEnoughRows: an input whose first batch is
// tiny (as a copy-on-write rewrite's first output often is) still gets the
// per-operation dictionary decision from enough rows: the unique "name"
// column is written without a dictionary, the three-valued "cat" with one,
// on an unpartitioned and a partitioned table.
func TestDictionaryDecisionWaitsForEnoughRows(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	for _, c := range []struct {
		name string
		part []request.PartitionField
	}{
		{"unpart", nil},
		{"bycat", []request.PartitionField{{Transform: "identity", Column: "cat"}}},
	} {
		recs := []arrow.RecordBatch{batch(0, 300), batch(300, 20000), batch(20300, 20000)}
		rdr, err := array.NewRecordReader(baseSchema, recs)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			r.Release()
		}
		mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db." + c.name, PartitionBy: c.part}, rdr)
		files := e.dataFiles(t, c.name)
		if len(files) == 0 {
			t.Fatalf("%s: no data files", c.name)
		}
		for _, path := range files {
			f, err := file.OpenParquetFile(path, false)
			if err != nil {
				t.Fatal(err)
			}
			dict := map[string]bool{}
			sc := f.MetaData().Schema
			for i := range sc.NumColumns() {
				cc, err := f.MetaData().RowGroup(0).ColumnChunk(i)
				if err != nil {
					t.Fatal(err)
				}
				dict[sc.Column(i).Name()] = cc.HasDictionaryPage()
			}
			f.Close()
			if dict["name"] || !dict["cat"] {
				t.Errorf("%s %s: dictionary pages %v, want none for name and one for cat", c.name, filepath.Base(path), dict)
			}
		}
	}
}

// TestLargeUnpartitionedWriteSplitsWorkEvenly: a large unpartitioned
// write opens a second file only after its first 64 MB; the writers then
// take batches by the bytes given to them so far, so the two files end
// within one batch of each other (taking turns left the first file with
// the rows it had alone on top, and the second core idle at the end).
func TestLargeUnpartitionedWriteSplitsWorkEvenly(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	const rows, batches = 100_000, 48
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.big"}, newGenReader(0, rows, batches, nil))
	files := headDataFiles(t, loadTable(t, s, "db.big"))
	if len(files) != 2 {
		t.Fatalf("%d data files, want 2 (one per core)", len(files))
	}
	a, b := files[0].Count(), files[1].Count()
	if a+b != rows*batches {
		t.Fatalf("files hold %d + %d rows, want %d", a, b, rows*batches)
	}
	if d := a - b; d > rows || d < -rows {
		t.Errorf("files hold %d and %d rows: more than a batch apart", a, b)
	}
}
