// Package gotests holds integration tests of the core: whole operations
// through session.Open and ops.Execute against a temporary SQLite catalog,
// read back through core/scan and checked against the files on disk.
package gotests

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/scan"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// Rows are a pure function of their id so that expectations are computed,
// not copied from the code under test:
//
//	name = "n<id>", null when id%7 == 0
//	ts   = tsBase + id*tsStep µs UTC, null when id%11 == 0
//	cat  = "c<id%3>"
const (
	tsBase = int64(1_700_000_000_000_000)
	tsStep = int64(5 * 3600 * 1_000_000)
)

// row is one table row as the tests compare it.
type row struct {
	ID   int64
	Name *string
	TS   *int64
	Cat  string
}

func expectRow(id int64) row {
	r := row{ID: id, Cat: fmt.Sprintf("c%d", id%3)}
	if id%7 != 0 {
		s := fmt.Sprintf("n%d", id)
		r.Name = &s
	}
	if id%11 != 0 {
		ts := tsBase + id*tsStep
		r.TS = &ts
	}
	return r
}

func expectRows(ids ...[2]int64) []row {
	var out []row
	for _, span := range ids {
		for id := span[0]; id < span[1]; id++ {
			out = append(out, expectRow(id))
		}
	}
	slices.SortFunc(out, func(a, b row) int { return int(a.ID - b.ID) })
	return out
}

var tsType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// baseSchema is the input schema of most tests.
var baseSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: tsType, Nullable: true},
	{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// batch builds rows first..first+n-1 with baseSchema.
func batch(first, n int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, baseSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	names := b.Field(1).(*array.StringBuilder)
	tss := b.Field(2).(*array.TimestampBuilder)
	cats := b.Field(3).(*array.StringBuilder)
	for id := first; id < first+n; id++ {
		r := expectRow(id)
		ids.Append(r.ID)
		if r.Name == nil {
			names.AppendNull()
		} else {
			names.Append(*r.Name)
		}
		if r.TS == nil {
			tss.AppendNull()
		} else {
			tss.Append(arrow.Timestamp(*r.TS))
		}
		cats.Append(r.Cat)
	}
	return b.NewRecordBatch()
}

// rowsReader returns a reader over nbatches batches of size rows from first.
func rowsReader(t testing.TB, first, size int64, nbatches int) array.RecordReader {
	t.Helper()
	var recs []arrow.RecordBatch
	for i := range int64(nbatches) {
		recs = append(recs, batch(first+i*size, size))
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

// genReader produces batches lazily, so inputs of any size cost no memory
// up front; hook runs before each batch is produced (cancel, fail, pace).
type genReader struct {
	refs     atomic.Int64
	schema   *arrow.Schema
	first    int64
	size     int64
	nbatches int
	i        int
	cur      arrow.RecordBatch
	err      error
	hook     func(i int) error
	released atomic.Bool
}

func newGenReader(first, size int64, nbatches int, hook func(i int) error) *genReader {
	g := &genReader{schema: baseSchema, first: first, size: size, nbatches: nbatches, hook: hook}
	g.refs.Store(1)
	return g
}

func (g *genReader) Retain()               { g.refs.Add(1) }
func (g *genReader) Schema() *arrow.Schema { return g.schema }
func (g *genReader) Err() error            { return g.err }
func (g *genReader) RecordBatch() arrow.RecordBatch {
	return g.cur
}
func (g *genReader) Record() arrow.RecordBatch { return g.cur }
func (g *genReader) Release() {
	if g.refs.Add(-1) == 0 {
		if g.cur != nil {
			g.cur.Release()
			g.cur = nil
		}
		g.released.Store(true)
	}
}
func (g *genReader) Next() bool {
	if g.cur != nil {
		g.cur.Release()
		g.cur = nil
	}
	if g.err != nil || g.i >= g.nbatches {
		return false
	}
	if g.hook != nil {
		if err := g.hook(g.i); err != nil {
			g.err = err
			return false
		}
	}
	g.cur = batch(g.first+int64(g.i)*g.size, g.size)
	g.i++
	return true
}

// env is one test's catalog: a fresh SQLite file and warehouse.
type env struct {
	dir   string
	props map[string]string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	dir := t.TempDir()
	return &env{dir: dir, props: map[string]string{
		"type":      "sql",
		"uri":       "sqlite:///" + filepath.Join(dir, "catalog.db"),
		"warehouse": "file://" + filepath.Join(dir, "wh"),
	}}
}

// session opens a new session on the env's catalog, closed at cleanup.
func (e *env) session(t testing.TB) *session.Session { return e.sessionWithConf(t, nil) }

// sessionWithConf opens a session with session configuration conf.
func (e *env) sessionWithConf(t testing.TB, conf map[string]string) *session.Session {
	t.Helper()
	s, err := session.Open(config.Session{
		Catalogs: map[string]map[string]string{"local": maps.Clone(e.props)},
		Env:      map[string]string{}, // the process environment must not leak in
		Home:     e.dir,
		Conf:     conf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// tableDir is where a table's files live: <warehouse>/db.db/<name>.
func (e *env) tableDir(name string) string {
	return filepath.Join(e.dir, "wh", "db.db", name)
}

// dataFiles lists the regular files under a table's data folder.
func (e *env) dataFiles(t testing.TB, name string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(e.tableDir(name), "data")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// write runs a write operation and returns its result.
func write(ctx context.Context, s *session.Session, req request.Request, in array.RecordReader) (*ops.Result, error) {
	res, err := ops.Execute(ctx, s, &req, in, nil)
	if err != nil {
		return nil, err
	}
	r, ok := res.(*ops.Result)
	if !ok {
		return nil, fmt.Errorf("write returned %T, want *ops.Result", res)
	}
	return r, nil
}

func mustWrite(t testing.TB, s *session.Session, req request.Request, in array.RecordReader) *ops.Result {
	t.Helper()
	r, err := write(ctxT(t), s, req, in)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Op, req.Table, err)
	}
	return r
}

func loadTable(t testing.TB, s *session.Session, name string) *table.Table {
	t.Helper()
	tbl, err := ops.LoadTable(ctxT(t), s, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// readRows reads a table (a snapshot when snap != nil) through core/scan.
func readRows(t testing.TB, s *session.Session, name string, snap *int64) []row {
	t.Helper()
	rdr, err := scan.Read(ctxT(t), s, &request.Request{Op: request.OpScan, Table: name, SnapshotID: snap}, memory.DefaultAllocator, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var out []row
	for rdr.Next() {
		rec := rdr.RecordBatch()
		sc := rec.Schema()
		col := func(n string) arrow.Array {
			idx := sc.FieldIndices(n)
			if len(idx) != 1 {
				t.Fatalf("column %s missing from %s", n, sc)
			}
			return rec.Column(idx[0])
		}
		ids := col("id").(*array.Int64)
		names := col("name")
		tss := col("ts").(*array.Timestamp)
		var cats arrow.Array
		if len(sc.FieldIndices("cat")) == 1 {
			cats = col("cat")
		}
		for i := range int(rec.NumRows()) {
			r := row{ID: ids.Value(i)}
			if names.IsValid(i) {
				s := names.ValueStr(i)
				r.Name = &s
			}
			if tss.IsValid(i) {
				v := int64(tss.Value(i))
				r.TS = &v
			}
			if cats != nil && cats.IsValid(i) {
				r.Cat = cats.ValueStr(i)
			}
			out = append(out, r)
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b row) int { return int(a.ID - b.ID) })
	return out
}

func equalRows(t testing.TB, got, want []row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	show := func(r row) string { b, _ := json.Marshal(r); return string(b) }
	for i := range got {
		if show(got[i]) != show(want[i]) {
			t.Fatalf("row %d: got %s, want %s", i, show(got[i]), show(want[i]))
		}
	}
}

// snapshotCount counts a table's snapshots.
func snapshotCount(t testing.TB, s *session.Session, name string) int {
	t.Helper()
	return len(loadTable(t, s, name).Metadata().Snapshots())
}

// withoutPrefix reports whether no summary key starts with prefix.
func withoutPrefix(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return false
		}
	}
	return true
}

// readParquet reads one Parquet data file directly; the caller releases it.
func readParquet(t testing.TB, path string) arrow.Table {
	t.Helper()
	rdr, err := file.OpenParquetFile(strings.TrimPrefix(path, "file://"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// fileIDs reads the id column of one Parquet data file directly.
func fileIDs(t testing.TB, path string) []int64 {
	t.Helper()
	tbl := readParquet(t, path)
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices("id")
	if len(idx) != 1 {
		t.Fatalf("%s has no id column", path)
	}
	var ids []int64
	for _, c := range tbl.Column(idx[0]).Data().Chunks() {
		ids = append(ids, c.(*array.Int64).Int64Values()...)
	}
	return ids
}
