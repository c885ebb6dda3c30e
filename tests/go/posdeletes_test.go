package gotests

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/rowlevel"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// rewritePosDeletes runs rewrite_position_delete_files on name through the
// request document, as the C API does (rw nil: no "rewrite" key).
func rewritePosDeletes(t testing.TB, s *session.Session, name string, rw map[string]any) (*rowlevel.RewritePositionDeletesResult, error) {
	t.Helper()
	doc := map[string]any{"op": "rewrite_position_delete_files", "table": name}
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
	r, ok := res.(*rowlevel.RewritePositionDeletesResult)
	if !ok {
		return nil, fmt.Errorf("rewrite_position_delete_files returned %T", res)
	}
	return r, nil
}

// posDeletesTable creates db.t partitioned by cat (c0, c1, c2) from two
// appends of 60 rows (two data files per partition), then runs the deletes
// of filters merge-on-read: each adds a position delete file per data file
// it touches. It returns the ids left.
func posDeletesTable(t *testing.T, s *session.Session, props map[string]string, filters ...string) []int64 {
	t.Helper()
	p := map[string]string{"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}
	for k, v := range props {
		p[k] = v
	}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", Properties: p,
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 60, 1))
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, 60, 60, 1))
	gone := map[int64]bool{}
	for _, f := range filters {
		if _, err := rowOp(t, s, request.OpDelete, "db.t", f, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The filters are "id = N" or "id % M = K"; compute what they leave.
	for id := int64(0); id < 120; id++ {
		for _, f := range filters {
			var n, m, k int64
			if _, err := fmt.Sscanf(f, "id = %d", &n); err == nil && id == n {
				gone[id] = true
			} else if _, err := fmt.Sscanf(f, "id %% %d = %d", &m, &k); err == nil && id%m == k {
				gone[id] = true
			}
		}
	}
	return keepIDs(0, 120, func(r row) bool { return !gone[r.ID] })
}

// posDeleteFiles lists the live position delete files of tbl's head by
// partition (cat).
func posDeleteFiles(t testing.TB, tbl *table.Table) map[string][]iceberg.DataFile {
	t.Helper()
	out := map[string][]iceberg.DataFile{}
	for _, df := range headFiles(t, tbl) {
		if df.ContentType() == iceberg.EntryContentPosDeletes {
			k := fmt.Sprint(df.Partition())
			out[k] = append(out[k], df)
		}
	}
	return out
}

// filePathFieldID is the reserved field id of a position delete file's
// file_path column.
const filePathFieldID = 2147483546

func countFiles(m map[string][]iceberg.DataFile) (n int) {
	for _, v := range m {
		n += len(v)
	}
	return n
}

// Each delete file of these tables is file-scoped: 6 deletes touching every
// data file leave 6 files per data file, 12 per partition. By default (5
// input files) every partition is rewritten into one file per data file;
// the rows are unchanged and the new files keep the largest data sequence
// number of those they replace.
func TestRewritePositionDeletesDefaults(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	filters := []string{"id % 7 = 0", "id % 7 = 1", "id % 7 = 2", "id % 7 = 3", "id % 7 = 4", "id % 7 = 5"}
	want := posDeletesTable(t, s, nil, filters...)
	before := posDeleteFiles(t, loadTable(t, s, "db.t"))
	if len(before) != 3 || countFiles(before) != 36 {
		t.Fatalf("delete files before: %d partitions, %d files", len(before), countFiles(before))
	}
	var bytes int64
	for _, fs := range before {
		for _, f := range fs {
			bytes += f.FileSizeBytes()
		}
	}
	headSeq := loadTable(t, s, "db.t").CurrentSnapshot().SequenceNumber
	res, err := rewritePosDeletes(t, s, "db.t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDeleteFilesCount != 36 || res.AddedDeleteFilesCount != 6 || res.RewrittenBytesCount != bytes || res.AddedBytesCount <= 0 || len(res.SnapshotIDs) != 1 {
		t.Fatalf("result %+v (rewritten bytes want %d)", res, bytes)
	}
	tbl := loadTable(t, s, "db.t")
	if op := tbl.CurrentSnapshot().Summary.Operation; op != table.OpReplace {
		t.Fatalf("head is %s", op)
	}
	after := posDeleteFiles(t, tbl)
	for k, fs := range after {
		if len(fs) != 2 {
			t.Errorf("partition %s has %d delete files, want 2 (one per data file)", k, len(fs))
		}
		for _, f := range fs {
			// File-scoped: its file_path bounds are the one data file.
			lo, hi := f.LowerBoundValues()[filePathFieldID], f.UpperBoundValues()[filePathFieldID]
			if lo == nil || string(lo) != string(hi) {
				t.Errorf("%s is not file-scoped: file_path bounds %q, %q", f.FilePath(), lo, hi)
			}
		}
	}
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
	// The new files carry the data sequence number of the last delete.
	seqs := deleteSeqs(t, tbl)
	for path, seq := range seqs {
		if seq != headSeq {
			t.Errorf("%s has data sequence number %d, want %d", path, seq, headSeq)
		}
	}
	// Nothing is left to do.
	again, err := rewritePosDeletes(t, s, "db.t", nil)
	if err != nil || again.RewrittenDeleteFilesCount != 0 || len(again.SnapshotIDs) != 0 {
		t.Fatalf("second run: %+v, %v", again, err)
	}
}

// deleteSeqs maps the live delete files of tbl's head to their data
// sequence numbers.
func deleteSeqs(t testing.TB, tbl *table.Table) map[string]int64 {
	t.Helper()
	fs, err := tbl.FS(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, m := range manifests {
		for en, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			if en.DataFile().ContentType() != iceberg.EntryContentData {
				out[en.DataFile().FilePath()] = en.SequenceNum()
			}
		}
	}
	return out
}

// The planner's rules (Java's SizeBasedFileRewritePlanner): too few files
// in a partition (fewer than min-input-files) are left alone unless
// rewrite-all; max-file-group-input-files splits a partition's files into
// groups, and a group of one file is not rewritten; where selects
// partitions; rewrite-job-order and partial progress commit the same.
func TestRewritePositionDeletesPlanning(t *testing.T) {
	// Two deletes touching every data file: 4 delete files per partition.
	filters := []string{"id % 7 = 0", "id % 7 = 1"}
	for _, c := range []struct {
		name              string
		rw                map[string]any
		rewritten, added  int
		snapshots, remain int
	}{
		{"defaults: 4 < 5 files", nil, 0, 0, 0, 12},
		{"min-input-files 4", map[string]any{"options": map[string]string{"min-input-files": "4"}}, 12, 6, 1, 6},
		{"rewrite-all", map[string]any{"options": map[string]string{"rewrite-all": "true"}}, 12, 6, 1, 6},
		{"groups of 3", map[string]any{"options": map[string]string{"min-input-files": "2", "max-file-group-input-files": "3"}}, 9, -1, 1, -1},
		{"groups of 2, partial progress in 2 commits", map[string]any{"options": map[string]string{
			"min-input-files": "2", "max-file-group-input-files": "2", "partial-progress.enabled": "true", "partial-progress.max-commits": "2"}}, 12, -1, 2, -1},
		{"where cat = 'c1'", map[string]any{"where": "cat = 'c1'", "options": map[string]string{"min-input-files": "2"}}, 4, 2, 1, 10},
		{"job order", map[string]any{"options": map[string]string{"rewrite-all": "true", "rewrite-job-order": "files-desc", "max-concurrent-file-group-rewrites": "1"}}, 12, 6, 1, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.session(t)
			want := posDeletesTable(t, s, nil, filters...)
			if n := countFiles(posDeleteFiles(t, loadTable(t, s, "db.t"))); n != 12 {
				t.Fatalf("%d delete files before, want 12", n)
			}
			res, err := rewritePosDeletes(t, s, "db.t", c.rw)
			if err != nil {
				t.Fatal(err)
			}
			if res.RewrittenDeleteFilesCount != c.rewritten || (c.added >= 0 && res.AddedDeleteFilesCount != c.added) || len(res.SnapshotIDs) != c.snapshots {
				t.Fatalf("result %+v", res)
			}
			left := countFiles(posDeleteFiles(t, loadTable(t, s, "db.t")))
			if c.remain >= 0 && left != c.remain {
				t.Fatalf("%d delete files left, want %d", left, c.remain)
			}
			if left != 12-res.RewrittenDeleteFilesCount+res.AddedDeleteFilesCount {
				t.Fatalf("%d delete files left after %+v", left, res)
			}
			equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
		})
	}
}

// With write.delete.granularity=partition the deletes of a group go into
// one file per partition. Once a compaction has rewritten some of the
// data files those partition-scoped files apply to (the files stay: other
// data files of the partition still need them), a second rewrite drops
// the deletes of the data files that are gone (Spark's runner keeps only
// deletes of live data files).
func TestRewritePositionDeletesDangling(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	want := posDeletesTable(t, s, map[string]string{"write.delete.granularity": "partition"}, "id % 7 = 0", "id % 7 = 1")
	all := map[string]any{"options": map[string]string{"rewrite-all": "true"}}
	res, err := rewritePosDeletes(t, s, "db.t", all)
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDeleteFilesCount != 12 || res.AddedDeleteFilesCount != 3 {
		t.Fatalf("result %+v, want 12 rewritten into 3 (one per partition)", res)
	}
	var total int64
	for k, fs := range posDeleteFiles(t, loadTable(t, s, "db.t")) {
		lo, hi := fs[0].LowerBoundValues()[filePathFieldID], fs[0].UpperBoundValues()[filePathFieldID]
		if len(fs) != 1 || string(lo) >= string(hi) {
			t.Fatalf("partition %s: %d files, want one partition-scoped file", k, len(fs))
		}
		total += fs[0].Count()
	}
	if total != int64(120-len(want)) {
		t.Fatalf("%d deletes, want %d", total, 120-len(want))
	}
	// Compact the first append's data files (ids 0-59) only.
	if r, err := rewriteFiles(t, s, "db.t", map[string]any{"where": "id < 60", "options": map[string]string{"rewrite-all": "true"}}); err != nil || r.RewrittenDataFilesCount != 3 {
		t.Fatalf("compaction: %+v, %v", r, err)
	}
	if n := countFiles(posDeleteFiles(t, loadTable(t, s, "db.t"))); n != 3 {
		t.Fatalf("%d delete files after the compaction, want the 3 partition-scoped ones", n)
	}
	res, err = rewritePosDeletes(t, s, "db.t", all)
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDeleteFilesCount != 3 || res.AddedDeleteFilesCount != 3 {
		t.Fatalf("result %+v", res)
	}
	// Ids 60-119 with id % 7 in {0, 1}: 14 deletes are left, of live files only.
	var n int64
	for _, fs := range posDeleteFiles(t, loadTable(t, s, "db.t")) {
		for _, f := range fs {
			n += f.Count()
		}
	}
	if n != int64(len(keepIDs(60, 120, func(r row) bool { return r.ID%7 < 2 }))) {
		t.Fatalf("%d deletes left", n)
	}
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
}

func TestRewritePositionDeletesBadInput(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	posDeletesTable(t, s, nil, "id % 7 = 0", "id % 7 = 1")
	head := loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID
	for _, c := range []struct {
		rw   map[string]any
		kind error
		text string
	}{
		{map[string]any{"options": map[string]string{"min-input-file": "2"}}, errs.ErrInvalidArgument, "Cannot use options [min-input-file], they are not supported by the action or the rewriter BIN-PACK"},
		{map[string]any{"options": map[string]string{"delete-file-threshold": "2"}}, errs.ErrInvalidArgument, "Cannot use options [delete-file-threshold]"},
		{map[string]any{"options": map[string]string{"min-input-files": "two"}}, errs.ErrInvalidArgument, "min-input-files"},
		{map[string]any{"options": map[string]string{"min-input-files": "0"}}, errs.ErrInvalidArgument, "'min-input-files' is set to 0 but must be > 0"},
		{map[string]any{"options": map[string]string{"target-file-size-bytes": "100", "min-file-size-bytes": "200"}}, errs.ErrInvalidArgument, "must be > 'min-file-size-bytes'"},
		{map[string]any{"options": map[string]string{"max-file-group-input-files": "0"}}, errs.ErrInvalidArgument, "max-file-group-input-files"},
		{map[string]any{"options": map[string]string{"rewrite-job-order": "random"}}, errs.ErrInvalidArgument, "Invalid rewrite job order name: random"},
		{map[string]any{"options": map[string]string{"max-concurrent-file-group-rewrites": "0"}}, errs.ErrInvalidArgument, "max-concurrent-file-group-rewrites"},
		{map[string]any{"options": map[string]string{"partial-progress.enabled": "true", "partial-progress.max-commits": "0"}}, errs.ErrInvalidArgument, "must be positive when partial-progress.enabled is true"},
		{map[string]any{"options": map[string]string{"rewrite-all": "yes"}}, errs.ErrInvalidArgument, "rewrite-all"},
		{map[string]any{"where": "nope > 1"}, errs.ErrValidation, "nope"},
		{map[string]any{"where": "id +"}, errs.ErrInvalidArgument, "id +"},
		{map[string]any{"where": "id + 1"}, errs.ErrValidation, "not a boolean expression"},
		{map[string]any{"strategy": "binpack"}, errs.ErrInvalidArgument, "takes no strategy"},
		{map[string]any{"sort_order": "id"}, errs.ErrInvalidArgument, "takes no strategy or sort_order"},
	} {
		_, err := rewritePosDeletes(t, s, "db.t", c.rw)
		wantKind(t, err, c.kind, c.text)
	}
	if got := loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID; got != head {
		t.Fatalf("a failed rewrite committed snapshot %d", got)
	}
	if _, err := request.Decode([]byte(`{"op": "rewrite_position_delete_files", "table": "db.t", "options": {"rewrite-all": "true"}}`)); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("options outside rewrite: %v", err)
	}
}

// v3 tables keep deletion vectors, which need no rewrite: nothing happens
// (Java's action returns an empty result).
func TestRewritePositionDeletesNothingToDo(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	posDeletesTable(t, s, map[string]string{"format-version": "3"}, "id % 7 = 0", "id % 7 = 1", "id % 7 = 2", "id % 7 = 3", "id % 7 = 4")
	head := loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID
	res, err := rewritePosDeletes(t, s, "db.t", map[string]any{"options": map[string]string{"rewrite-all": "true"}})
	if err != nil || res.RewrittenDeleteFilesCount != 0 || len(res.SnapshotIDs) != 0 {
		t.Fatalf("v3: %+v, %v", res, err)
	}
	if got := loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID; got != head {
		t.Fatalf("v3: committed snapshot %d", got)
	}
}

// A delete committed while the rewrite runs is kept (its new delete file
// stays beside the rewritten ones); a compaction committed meanwhile that
// removed the delete files being rewritten fails the rewrite with a
// conflict, leaving the table as the compaction made it and no file of the
// rewrite behind. No delete is ever lost.
func TestRewritePositionDeletesConcurrent(t *testing.T) {
	filters := []string{"id % 7 = 0", "id % 7 = 1", "id % 7 = 2", "id % 7 = 3", "id % 7 = 4"}
	rewrite := func(s *session.Session) error {
		_, err := rewritePosDeletes(t, s, "db.t", nil)
		return err
	}
	t.Run("delete", func(t *testing.T) {
		e := newEnv(t)
		s := e.session(t)
		want := posDeletesTable(t, s, nil, filters...)
		err := concurrently(t, e, rewrite, func(s *session.Session) error {
			_, err := rowOp(t, s, request.OpDelete, "db.t", "id = 7", nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		equalRows(t, readRows(t, s, "db.t", nil), rowsOf(slices.DeleteFunc(want, func(id int64) bool { return id == 7 })))
		if op := loadTable(t, s, "db.t").CurrentSnapshot().Summary.Operation; op != table.OpReplace {
			t.Fatalf("head is %s", op)
		}
	})
	t.Run("compaction", func(t *testing.T) {
		e := newEnv(t)
		s := e.session(t)
		want := posDeletesTable(t, s, nil, filters...)
		before := snapshotCount(t, s, "db.t")
		err := concurrently(t, e, rewrite, func(s *session.Session) error {
			_, err := rewriteFiles(t, s, "db.t", map[string]any{"options": map[string]string{"rewrite-all": "true"}})
			return err
		})
		if !errors.Is(err, errs.ErrCommitConflict) {
			t.Fatalf("rewrite against a concurrent compaction: %v, want a commit conflict", err)
		}
		if got := snapshotCount(t, s, "db.t"); got != before+1 {
			t.Fatalf("%d snapshots, want %d", got, before+1)
		}
		equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
		reached := reachedFiles(t, loadTable(t, s, "db.t"))
		for _, f := range e.dataFiles(t, "db.t") {
			if !reached[f] {
				t.Errorf("file %s of the failed rewrite is left", f)
			}
		}
	})
}
