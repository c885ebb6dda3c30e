package gotests

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/scan"
)

// scanIDs reads the ids a scan returns, its column names and its counts.
func scanIDs(t *testing.T, ctx context.Context, e *env, req request.Request) ([]int64, []string, *ops.Progress, error) {
	t.Helper()
	counts := &ops.Progress{}
	req.Op = request.OpScan
	rdr, err := scan.Read(ctx, e.session(t), &req, memory.DefaultAllocator, counts)
	if err != nil {
		return nil, nil, counts, err
	}
	defer rdr.Release()
	var names []string
	for _, f := range rdr.Schema().Fields() {
		names = append(names, f.Name)
	}
	var ids []int64
	for rdr.Next() {
		rec := rdr.RecordBatch()
		col := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		for i := range col.Len() {
			ids = append(ids, col.Value(i))
		}
	}
	slices.Sort(ids)
	return ids, names, counts, rdr.Err()
}

// idsWhere lists the ids in [0, n) whose row satisfies keep.
func idsWhere(n int64, keep func(row) bool) []int64 {
	var out []int64
	for id := range n {
		if keep(expectRow(id)) {
			out = append(out, id)
		}
	}
	return out
}

func TestScanProjectsAndFiltersRows(t *testing.T) {
	e := newEnv(t)
	mustWrite(t, e.session(t), request.Request{Op: request.OpCreate, Table: "local.db.s",
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 300, 4))
	for _, tc := range []struct {
		name, filter string
		columns      []string
		keep         func(row) bool
	}{
		{"partition column", "cat = 'c1'", []string{"id"}, func(r row) bool { return r.Cat == "c1" }},
		// Not expressible as an Iceberg predicate: pruned by nothing, filtered row by row.
		{"arithmetic", "id % 7 = 3 AND name IS NOT NULL", []string{"id", "ts"}, func(r row) bool { return r.ID%7 == 3 && r.Name != nil }},
		{"null rows", "ts IS NULL OR id < 5", []string{"id"}, func(r row) bool { return r.TS == nil || r.ID < 5 }},
		{"no row", "id > 100000", []string{"id"}, func(row) bool { return false }},
		{"every row, all columns", "", nil, func(row) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, names, _, err := scanIDs(t, ctxT(t), e, request.Request{Table: "local.db.s", Filter: tc.filter, Columns: tc.columns})
			if err != nil {
				t.Fatal(err)
			}
			want := idsWhere(1200, tc.keep)
			if !slices.Equal(ids, want) {
				t.Fatalf("%d ids, want %d (first %v vs %v)", len(ids), len(want), ids[:min(5, len(ids))], want[:min(5, len(want))])
			}
			wantNames := tc.columns
			if wantNames == nil {
				wantNames = []string{"id", "name", "ts", "cat"}
			}
			if !slices.Equal(names, wantNames) {
				t.Fatalf("columns %v, want %v (filter columns are read, not returned)", names, wantNames)
			}
		})
	}
}

// A filter on the partition column reads only the files of the matching
// partitions.
func TestScanPrunesFilesByPartition(t *testing.T) {
	e := newEnv(t)
	mustWrite(t, e.session(t), request.Request{Op: request.OpCreate, Table: "local.db.p",
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 300, 2))
	_, _, all, err := scanIDs(t, ctxT(t), e, request.Request{Table: "local.db.p"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, one, err := scanIDs(t, ctxT(t), e, request.Request{Table: "local.db.p", Filter: "cat = 'c2'"})
	if err != nil {
		t.Fatal(err)
	}
	if all.Files.Load() != 3 || one.Files.Load() != 1 {
		t.Fatalf("files planned: %d for all, %d for one partition; want 3 and 1", all.Files.Load(), one.Files.Load())
	}
	if one.Rows.Load() != int64(len(idsWhere(600, func(r row) bool { return r.Cat == "c2" }))) || one.Bytes.Load() <= 0 {
		t.Fatalf("counts: %d rows, %d bytes", one.Rows.Load(), one.Bytes.Load())
	}
}

func TestScanErrorsAreTyped(t *testing.T) {
	e := newEnv(t)
	mustWrite(t, e.session(t), request.Request{Op: request.OpCreate, Table: "local.db.e"}, rowsReader(t, 0, 10, 1))
	for _, tc := range []struct {
		req  request.Request
		want error
	}{
		{request.Request{Table: "local.db.e", Filter: "nope = 1"}, errs.ErrValidation},
		{request.Request{Table: "local.db.e", Filter: "id ="}, errs.ErrInvalidArgument},
		{request.Request{Table: "local.db.e", Filter: "id + 1"}, errs.ErrValidation},
		{request.Request{Table: "local.db.e", Columns: []string{"missing"}}, errs.ErrValidation},
		{request.Request{Table: "local.db.missing"}, errs.ErrNoSuchTable},
	} {
		if _, _, _, err := scanIDs(t, ctxT(t), e, tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%+v: err = %v, want %v", tc.req, err, tc.want)
		}
	}
}

// A cancelled read ends with ErrCancelled instead of reading on.
func TestScanStopsWhenCancelled(t *testing.T) {
	e := newEnv(t)
	mustWrite(t, e.session(t), request.Request{Op: request.OpCreate, Table: "local.db.c",
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 100, 1))
	ctx, cancel := context.WithCancel(ctxT(t))
	rdr, err := scan.Read(ctx, e.session(t), &request.Request{Op: request.OpScan, Table: "local.db.c"}, memory.DefaultAllocator, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	cancel()
	for rdr.Next() {
	}
	if !errors.Is(rdr.Err(), errs.ErrCancelled) {
		t.Fatalf("err after cancel = %v, want ErrCancelled", rdr.Err())
	}
}

// A table created empty has a schema and no rows.
func TestScanOfATableWithoutSnapshots(t *testing.T) {
	e := newEnv(t)
	empty, err := array.NewRecordReader(baseSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, e.session(t), request.Request{Op: request.OpCreate, Table: "local.db.empty"}, empty)
	ids, names, _, err := scanIDs(t, ctxT(t), e, request.Request{Table: "local.db.empty", Columns: []string{"id", "cat"}})
	if err != nil || len(ids) != 0 || !slices.Equal(names, []string{"id", "cat"}) {
		t.Fatalf("ids %v names %v err %v", ids, names, err)
	}
}

// A TIMESTAMP literal in a scan filter is a wall time in the session time
// zone, as in every other filter.
func TestScanFilterLiteralsFollowTheSessionZone(t *testing.T) {
	e := newEnv(t)
	mustWrite(t, e.session(t), request.Request{Op: request.OpCreate, Table: "local.db.z"}, rowsReader(t, 0, 50, 1))
	// ts = tsBase + id*5h (UTC); tsBase is 2023-11-14 22:13:20 UTC.
	cut := "TIMESTAMP '2023-11-15 12:00:00'"
	for _, tc := range []struct {
		zone  string
		cutUS int64 // the cut as an instant, µs since the epoch
	}{{"UTC", 1700049600_000000}, {"America/New_York", 1700049600_000000 + 5*3600_000000}} {
		s := e.sessionWithConf(t, map[string]string{"spark.sql.session.timeZone": tc.zone})
		rdr, err := scan.Read(ctxT(t), s, &request.Request{Op: request.OpScan, Table: "local.db.z", Filter: "ts < " + cut, Columns: []string{"id"}}, memory.DefaultAllocator, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rdr.Next() {
			n += int(rdr.RecordBatch().NumRows())
		}
		rdr.Release()
		want := len(idsWhere(50, func(r row) bool { return r.TS != nil && *r.TS < tc.cutUS }))
		if n != want {
			t.Errorf("%s: %d rows, want %d", tc.zone, n, want)
		}
	}
}
