package gotests

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/rowlevel"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// rewriteFiles runs rewrite_data_files on name through the request
// document, as the C API does (rw nil: no "rewrite" key).
func rewriteFiles(t testing.TB, s *session.Session, name string, rw map[string]any) (*rowlevel.RewriteResult, error) {
	t.Helper()
	doc := map[string]any{"op": "rewrite_data_files", "table": name}
	if rw != nil {
		doc["rewrite"] = rw
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	req, err := request.Decode(b)
	if err != nil {
		return nil, err
	}
	res, err := ops.Execute(ctxT(t), s, req, nil, nil)
	if err != nil {
		return nil, err
	}
	r, ok := res.(*rowlevel.RewriteResult)
	if !ok {
		return nil, fmt.Errorf("rewrite_data_files returned %T", res)
	}
	return r, nil
}

// smallFilesTable creates db.t partitioned by cat (3 partitions) from n
// appends of 30 rows each (one file per partition and append), with
// merge-on-read deletes, and returns the ids it holds.
func smallFilesTable(t *testing.T, s *session.Session, props map[string]string, n int) []int64 {
	t.Helper()
	p := map[string]string{"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}
	for k, v := range props {
		p[k] = v
	}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", Properties: p,
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 30, 1))
	for i := 1; i < n; i++ {
		mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, int64(30*i), 30, 1))
	}
	if _, err := rowOp(t, s, request.OpDelete, "db.t", "id % 10 = 3", nil); err != nil {
		t.Fatal(err)
	}
	// An append after the deletes: the rewrite starts from a later sequence number.
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, int64(30*n), 30, 1))
	return keepIDs(0, int64(30*(n+1)), func(r row) bool { return r.ID%10 != 3 || r.ID >= int64(30*n) })
}

func TestRewriteDataFilesBinpack(t *testing.T) {
	for _, fv := range []string{"2", "3"} {
		t.Run("v"+fv, func(t *testing.T) {
			e := newEnv(t)
			s := e.session(t)
			want := smallFilesTable(t, s, map[string]string{"format-version": fv}, 6)
			before := loadTable(t, s, "db.t")
			data, deletes, _ := liveFiles(t, before)
			if data != 21 || deletes == 0 {
				t.Fatalf("setup: %d data and %d delete files, want 21 and some", data, deletes)
			}
			startSeq := before.CurrentSnapshot().SequenceNumber
			var oldBytes int64
			for _, df := range headFiles(t, before) {
				if df.ContentType() == iceberg.EntryContentData {
					oldBytes += df.FileSizeBytes()
				}
			}
			res, err := rewriteFiles(t, s, "db.t", nil)
			if err != nil {
				t.Fatal(err)
			}
			after := loadTable(t, s, "db.t")
			data2, deletes2, _ := liveFiles(t, after)
			if res.RewrittenDataFilesCount != 21 || res.AddedDataFilesCount != 3 || data2 != 3 ||
				res.RewrittenBytesCount != oldBytes || res.RemovedDeleteFilesCount != 0 || deletes2 != 0 || res.FailedDataFilesCount != 0 {
				t.Fatalf("result %+v; %d data and %d delete files left (had %d deletes, %d bytes)", res, data2, deletes2, deletes, oldBytes)
			}
			sn := after.CurrentSnapshot()
			// The delete files of the rewritten files go with them (counted in the
			// summary, not in removed_delete_files_count, as Spark's).
			removed := sn.Summary.Properties["removed-position-delete-files"]
			if fv == "3" {
				removed = sn.Summary.Properties["removed-dvs"]
			}
			if removed != strconv.Itoa(deletes) {
				t.Fatalf("summary %v, want %d delete files removed", sn.Summary.Properties, deletes)
			}
			if sn.Summary.Operation != table.OpReplace || len(res.SnapshotIDs) != 1 || res.SnapshotIDs[0] != sn.SnapshotID {
				t.Fatalf("snapshot %d operation %s, result %v", sn.SnapshotID, sn.Summary.Operation, res.SnapshotIDs)
			}
			if _, ok := after.Metadata().Properties()[table.DefaultNameMappingKey]; ok {
				t.Fatal("the rewrite set a name mapping")
			}
			equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
			// The new files keep the starting snapshot's data sequence number.
			fs, err := after.FS(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			manifests, err := sn.Manifests(fs)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range manifests {
				for en, err := range m.Entries(fs, true) {
					if err != nil {
						t.Fatal(err)
					}
					if en.SnapshotID() == sn.SnapshotID && en.Status() == iceberg.EntryStatusADDED && en.SequenceNum() != startSeq {
						t.Fatalf("new file %s has data sequence number %d, want %d", en.DataFile().FilePath(), en.SequenceNum(), startSeq)
					}
				}
			}
			// A second run finds nothing to do.
			res, err = rewriteFiles(t, s, "db.t", nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.RewrittenDataFilesCount != 0 || res.AddedDataFilesCount != 0 || len(res.SnapshotIDs) != 0 {
				t.Fatalf("second run: %+v", res)
			}
			if got := loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID; got != sn.SnapshotID {
				t.Fatalf("second run committed snapshot %d", got)
			}
		})
	}
}

// Java's group rules: fewer than min-input-files small files stay unless
// rewrite-all; where limits the files considered.
func TestRewriteDataFilesOptionsAndWhere(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	want := smallFilesTable(t, s, nil, 3) // 4 files per partition
	head := loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID
	res, err := rewriteFiles(t, s, "db.t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDataFilesCount != 0 || loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID != head {
		t.Fatalf("4 small files per partition were rewritten: %+v", res)
	}
	res, err = rewriteFiles(t, s, "db.t", map[string]any{"where": "cat = 'c1'", "options": map[string]string{"min-input-files": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDataFilesCount != 4 || res.AddedDataFilesCount != 1 {
		t.Fatalf("where cat = 'c1': %+v", res)
	}
	res, err = rewriteFiles(t, s, "db.t", map[string]any{"options": map[string]string{"rewrite-all": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDataFilesCount != 9 || res.AddedDataFilesCount != 3 {
		t.Fatalf("rewrite-all: %+v", res)
	}
	// Nothing dangles (the delete files went with their data files): no second snapshot.
	res, err = rewriteFiles(t, s, "db.t", map[string]any{"options": map[string]string{"rewrite-all": "true", "remove-dangling-deletes": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.SnapshotIDs) != 1 || res.RemovedDeleteFilesCount != 0 {
		t.Fatalf("remove-dangling-deletes: %+v", res)
	}
	// partial progress: one commit per group with max-commits 3.
	before := snapshotCount(t, s, "db.t")
	res, err = rewriteFiles(t, s, "db.t", map[string]any{"options": map[string]string{"rewrite-all": "true", "partial-progress.enabled": "true", "partial-progress.max-commits": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.SnapshotIDs) != 3 || snapshotCount(t, s, "db.t") != before+3 {
		t.Fatalf("partial progress: %+v", res)
	}
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
}

func TestRewriteDataFilesSort(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	want := smallFilesTable(t, s, nil, 6)
	_, err := rewriteFiles(t, s, "db.t", map[string]any{"strategy": "sort"})
	wantKind(t, err, errs.ErrInvalidArgument, "Cannot sort data without a valid sort order, table 'local.db.t' is unsorted and no sort order is provided")
	_, err = rewriteFiles(t, s, "db.t", map[string]any{"sort_order": "zorder(id, nope)"})
	wantKind(t, err, errs.ErrValidation, "nope")
	res, err := rewriteFiles(t, s, "db.t", map[string]any{"sort_order": "name DESC NULLS LAST, id"})
	if err != nil {
		t.Fatal(err)
	}
	if res.AddedDataFilesCount != 3 {
		t.Fatalf("%+v", res)
	}
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
	for _, df := range headFiles(t, loadTable(t, s, "db.t")) {
		if df.SortOrderID() == nil || *df.SortOrderID() != 0 {
			t.Fatalf("file sorted by an order the table does not have records sort order %v", df.SortOrderID())
		}
		tbl := readParquet(t, df.FilePath())
		names := tbl.Column(tbl.Schema().FieldIndices("name")[0]).Data()
		ids := tbl.Column(tbl.Schema().FieldIndices("id")[0]).Data()
		type key struct {
			name *string
			id   int64
		}
		var keys []key
		for i, ch := range names.Chunks() {
			sc, ic := ch.(*array.String), ids.Chunks()[i].(*array.Int64)
			for j := range sc.Len() {
				k := key{id: ic.Value(j)}
				if !sc.IsNull(j) {
					v := sc.Value(j)
					k.name = &v
				}
				keys = append(keys, k)
			}
		}
		tbl.Release()
		sorted := slices.IsSortedFunc(keys, func(a, b key) int {
			switch {
			case a.name == nil && b.name == nil:
			case a.name == nil:
				return 1 // nulls last
			case b.name == nil:
				return -1
			default:
				if c := strings.Compare(*b.name, *a.name); c != 0 {
					return c
				}
			}
			return int(a.id - b.id)
		})
		if !sorted || len(keys) == 0 {
			t.Fatalf("%s is not sorted by name DESC NULLS LAST, id (%d rows)", df.FilePath(), len(keys))
		}
	}
}

// zorder(...) sorts each file by z-value (the bits checked in core/layout,
// the order against Spark's in tests/py); no row changes.
func TestRewriteDataFilesZOrder(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	want := smallFilesTable(t, s, nil, 6)
	res, err := rewriteFiles(t, s, "db.t", map[string]any{"strategy": "sort", "sort_order": "zorder(id, name)"})
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDataFilesCount != 21 || res.AddedDataFilesCount != 3 {
		t.Fatalf("%+v", res)
	}
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
	for _, df := range headFiles(t, loadTable(t, s, "db.t")) {
		if df.SortOrderID() == nil || *df.SortOrderID() != 0 {
			t.Fatalf("a z-ordered file records sort order %v", df.SortOrderID())
		}
	}
}

func TestRewriteDataFilesBadInput(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	smallFilesTable(t, s, nil, 6)
	head := loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID
	for _, c := range []struct {
		rw   map[string]any
		kind error
		text string
	}{
		{map[string]any{"options": map[string]string{"min-input-file": "2"}}, errs.ErrInvalidArgument, "Cannot use options [min-input-file]"},
		{map[string]any{"options": map[string]string{"min-input-files": "two"}}, errs.ErrInvalidArgument, "min-input-files"},
		{map[string]any{"options": map[string]string{"target-file-size-bytes": "100", "min-file-size-bytes": "200"}}, errs.ErrInvalidArgument, "must be > 'min-file-size-bytes'"},
		{map[string]any{"options": map[string]string{"delete-ratio-threshold": "2"}}, errs.ErrInvalidArgument, "delete-ratio-threshold"},
		{map[string]any{"strategy": "zorder"}, errs.ErrInvalidArgument, "unsupported strategy: zorder"},
		{map[string]any{"strategy": "binpack", "sort_order": "id"}, errs.ErrInvalidArgument, "needs strategy sort"},
		{map[string]any{"where": "nope > 1"}, errs.ErrValidation, "nope"},
		{map[string]any{"where": "id +"}, errs.ErrInvalidArgument, "id +"},
		{map[string]any{"sort_order": "nope DESC"}, errs.ErrValidation, "nope"},
		{map[string]any{"unknown": 1}, errs.ErrInvalidArgument, "unknown"},
	} {
		_, err := rewriteFiles(t, s, "db.t", c.rw)
		wantKind(t, err, c.kind, c.text)
	}
	if got := loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID; got != head {
		t.Fatalf("a failed rewrite committed snapshot %d", got)
	}
	if _, err := request.Decode([]byte(`{"op": "append", "table": "db.t", "rewrite": {}}`)); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("append with rewrite: %v", err)
	}
}

// An append committed while the rewrite runs is kept; a concurrent delete
// of rows of a rewritten file fails the rewrite with a conflict, leaving
// the table as the delete made it and no file of the rewrite behind.
func TestRewriteDataFilesConcurrent(t *testing.T) {
	rewrite := func(s *session.Session) error {
		_, err := rewriteFiles(t, s, "db.t", nil)
		return err
	}
	t.Run("append", func(t *testing.T) {
		e := newEnv(t)
		s := e.session(t)
		want := smallFilesTable(t, s, nil, 6)
		err := concurrently(t, e, rewrite, func(s *session.Session) error {
			_, err := write(ctxT(t), s, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, 1000, 30, 1))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		equalRows(t, readRows(t, s, "db.t", nil), rowsOf(append(want, keepIDs(1000, 1030, nil)...)))
		if op := loadTable(t, s, "db.t").CurrentSnapshot().Summary.Operation; op != table.OpReplace {
			t.Fatalf("head is %s", op)
		}
	})
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		t.Run("delete/"+mode, func(t *testing.T) {
			e := newEnv(t)
			s := e.session(t)
			want := smallFilesTable(t, s, map[string]string{"write.delete.mode": mode}, 6)
			before := snapshotCount(t, s, "db.t")
			err := concurrently(t, e, rewrite, func(s *session.Session) error {
				_, err := rowOp(t, s, request.OpDelete, "db.t", "id = 1", nil)
				return err
			})
			if !errors.Is(err, errs.ErrCommitConflict) {
				t.Fatalf("rewrite against a concurrent delete: %v, want a commit conflict", err)
			}
			if got := snapshotCount(t, s, "db.t"); got != before+1 {
				t.Fatalf("%d snapshots, want %d", got, before+1)
			}
			equalRows(t, readRows(t, s, "db.t", nil), rowsOf(slices.DeleteFunc(want, func(id int64) bool { return id == 1 })))
			reached := reachedFiles(t, loadTable(t, s, "db.t"))
			for _, f := range e.dataFiles(t, "db.t") {
				if !reached[f] {
					t.Errorf("file %s of the failed rewrite is left", f)
				}
			}
		})
	}
}

// reachedFiles is every data and delete file any snapshot of tbl lists.
func reachedFiles(t testing.TB, tbl *table.Table) map[string]bool {
	t.Helper()
	fs, err := tbl.FS(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, sn := range tbl.Metadata().Snapshots() {
		manifests, err := sn.Manifests(fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range manifests {
			for en, err := range m.Entries(fs, false) {
				if err != nil {
					t.Fatal(err)
				}
				out[strings.TrimPrefix(en.DataFile().FilePath(), "file://")] = true
			}
		}
	}
	return out
}
