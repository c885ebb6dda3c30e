package gotests

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// idsReader is a reader over the rows with the given ids, in one batch.
func idsReader(t testing.TB, ids []int64) array.RecordReader {
	t.Helper()
	var recs []arrow.RecordBatch
	for _, id := range ids {
		recs = append(recs, batch(id, 1))
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

func idRange(lo, hi int64, keep func(row) bool) []int64 {
	var out []int64
	for id := lo; id < hi; id++ {
		if keep == nil || keep(expectRow(id)) {
			out = append(out, id)
		}
	}
	return out
}

func rowsOf(ids []int64) []row {
	out := make([]row, 0, len(ids))
	for _, id := range ids {
		out = append(out, expectRow(id))
	}
	slices.SortFunc(out, func(a, b row) int { return int(a.ID - b.ID) })
	return out
}

// day is the days transform computed independently: days since the epoch,
// rounded down; -1<<62 stands for a null timestamp's partition.
func day(r row) int64 {
	if r.TS == nil {
		return -1 << 62
	}
	us := *r.TS
	d := us / 86_400_000_000
	if us%86_400_000_000 < 0 {
		d--
	}
	return d
}

func TestOverwritePartitionsReplacesExactlyTheCoveredPartitions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		by    []request.PartitionField
		key   func(row) string
		input func(row) bool
	}{
		{"identity", []request.PartitionField{{Transform: "identity", Column: "cat"}},
			func(r row) string { return r.Cat }, func(r row) bool { return r.Cat == "c1" }},
		{"days+identity", []request.PartitionField{{Transform: "day", Column: "ts"}, {Transform: "identity", Column: "cat"}},
			func(r row) string { return strconv.FormatInt(day(r), 10) + "/" + r.Cat },
			func(r row) bool { return day(r)%3 == 0 && r.Cat != "c2" }},
		{"unpartitioned", nil, func(row) string { return "" }, func(row) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.session(t)
			mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", PartitionBy: tc.by}, rowsReader(t, 0, 200, 2))
			mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, 400, 100, 1))
			before := snapshotCount(t, s, "db.t")

			newIDs := idRange(1000, 1200, tc.input)
			res := mustWrite(t, s, request.Request{Op: request.OpOverwritePartitions, Table: "db.t"}, idsReader(t, newIDs))

			covered := map[string]bool{}
			for _, id := range newIDs {
				covered[tc.key(expectRow(id))] = true
			}
			want := slices.Clone(newIDs)
			kept := 0
			for _, id := range append(idRange(0, 400, nil), idRange(400, 500, nil)...) {
				if !covered[tc.key(expectRow(id))] {
					want = append(want, id)
					kept++
				}
			}
			if tc.name != "unpartitioned" && kept == 0 {
				t.Fatal("test data covers every partition; the test would prove nothing")
			}
			equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
			if res.Operation != "overwrite" || res.Summary["replace-partitions"] != "true" {
				t.Errorf("operation %q summary %v, want overwrite with replace-partitions=true", res.Operation, res.Summary)
			}
			if got := snapshotCount(t, s, "db.t"); got != before+1 {
				t.Errorf("%d snapshots after, %d before: want one new", got, before)
			}
			if res.Summary["total-records"] != strconv.Itoa(len(want)) {
				t.Errorf("total-records=%s, want %d", res.Summary["total-records"], len(want))
			}
			if res.Summary["added-records"] != strconv.Itoa(len(newIDs)) {
				t.Errorf("added-records=%s, want %d", res.Summary["added-records"], len(newIDs))
			}
			// Old rows stay readable by time travel.
			first := loadTable(t, s, "db.t").Metadata().Snapshots()[0].SnapshotID
			equalRows(t, readRows(t, s, "db.t", &first), expectRows([2]int64{0, 400}))
		})
	}
}

func TestOverwritePartitionsEmptyInputCommitsNothing(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 100, 1))
	res := mustWrite(t, s, request.Request{Op: request.OpOverwritePartitions, Table: "db.t"}, idsReader(t, nil))
	if res.SnapshotID != nil || snapshotCount(t, s, "db.t") != 1 {
		t.Fatalf("empty overwritePartitions committed: %+v", res)
	}
	equalRows(t, readRows(t, s, "db.t", nil), expectRows([2]int64{0, 100}))
}

func TestOverwritePartitionsIsolation(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	by := []request.PartitionField{{Transform: "identity", Column: "cat"}}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", PartitionBy: by}, rowsReader(t, 0, 90, 1))
	start := loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID
	// A concurrent append lands in c1 after the overwrite's start.
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t"}, idsReader(t, idRange(500, 530, func(r row) bool { return r.Cat == "c1" })))
	c1 := idRange(1000, 1030, func(r row) bool { return r.Cat == "c1" })
	c2 := idRange(1000, 1030, func(r row) bool { return r.Cat == "c2" })
	opts := func(level string) map[string]string {
		return map[string]string{"isolation-level": level, "validate-from-snapshot-id": strconv.FormatInt(start, 10)}
	}

	// serializable: new data in a replaced partition conflicts.
	before := snapshotCount(t, s, "db.t")
	_, err := write(ctxT(t), s, request.Request{Op: request.OpOverwritePartitions, Table: "db.t", Options: opts("serializable")}, idsReader(t, c1))
	if !errors.Is(err, errs.ErrCommitConflict) {
		t.Fatalf("serializable overwrite over a concurrent append: err %v, want a commit conflict", err)
	}
	if snapshotCount(t, s, "db.t") != before {
		t.Fatal("a failed overwrite committed a snapshot")
	}
	// ... but not in another partition.
	mustWrite(t, s, request.Request{Op: request.OpOverwritePartitions, Table: "db.t", Options: opts("serializable")}, idsReader(t, c2))
	// snapshot isolation ignores new data.
	mustWrite(t, s, request.Request{Op: request.OpOverwritePartitions, Table: "db.t", Options: opts("snapshot")}, idsReader(t, c1))
	want := append(append(slices.Clone(c1), c2...), idRange(0, 90, func(r row) bool { return r.Cat == "c0" })...)
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
	if n := len(e.dataFiles(t, "t")); n < 3 {
		t.Fatalf("%d data files on disk", n)
	}
}
