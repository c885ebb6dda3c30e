package gotests

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

func rowOp(t testing.TB, s *session.Session, op, name, filter string, set map[string]string) (*ops.Result, error) {
	t.Helper()
	return write(ctxT(t), s, request.Request{Op: op, Table: name, Filter: filter, Set: set}, nil)
}

// keepIDs lists the ids in [lo, hi) for which keep holds.
func keepIDs(lo, hi int64, keep func(r row) bool) []int64 { return idRange(lo, hi, keep) }

// liveFiles counts the live data and delete files of a table's head, and
// the delete files per data file they reference.
func liveFiles(t testing.TB, tbl *table.Table) (data, deletes int, perFile map[string]int) {
	t.Helper()
	perFile = map[string]int{}
	for _, df := range headFiles(t, tbl) {
		if df.ContentType() == iceberg.EntryContentData {
			data++
			continue
		}
		deletes++
		if ref := df.ReferencedDataFile(); ref != nil {
			perFile[*ref]++
		}
	}
	return
}

// headFiles lists the live files (data and delete) of a table's head.
func headFiles(t testing.TB, tbl *table.Table) []iceberg.DataFile {
	t.Helper()
	fs, err := tbl.FS(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	sn := tbl.CurrentSnapshot()
	if sn == nil {
		return nil
	}
	manifests, err := sn.Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var out []iceberg.DataFile
	for _, m := range manifests {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e.DataFile())
		}
	}
	return out
}

func TestDeleteMetadataOnlyThenCopyOnWrite(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 150, 2))
	files := len(e.dataFiles(t, "t"))

	// Whole partition: dropped from metadata, nothing rewritten.
	res, err := rowOp(t, s, request.OpDelete, "db.t", "cat = 'c1'", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Operation != "delete" || res.Summary["added-data-files"] != "" || res.Metrics.Files != 0 {
		t.Fatalf("metadata-only delete: op %s summary %v metrics %+v", res.Operation, res.Summary, res.Metrics)
	}
	want := keepIDs(0, 300, func(r row) bool { return r.Cat != "c1" })
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
	if got := len(e.dataFiles(t, "t")); got != files {
		t.Errorf("a metadata-only delete wrote files: %d -> %d", files, got)
	}

	// Part of each remaining file: rewritten.
	res, err = rowOp(t, s, request.OpDelete, "db.t", "id % 4 = 1 OR name IS NULL", nil)
	if err != nil {
		t.Fatal(err)
	}
	want = keepIDs(0, 300, func(r row) bool { return r.Cat != "c1" && r.ID%4 != 1 && r.Name != nil })
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
	if res.Operation != "overwrite" || res.Summary["total-records"] != strconv.Itoa(len(want)) {
		t.Fatalf("copy-on-write delete: op %s summary %v", res.Operation, res.Summary)
	}

	// Nothing matches: nothing committed.
	before := snapshotCount(t, s, "db.t")
	res, err = rowOp(t, s, request.OpDelete, "db.t", "id > 100000", nil)
	if err != nil || res.SnapshotID != nil || snapshotCount(t, s, "db.t") != before {
		t.Fatalf("empty delete: %v %+v", err, res)
	}
}

func TestUpdateCopyOnWrite(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", PartitionBy: []request.PartitionField{{Transform: "day", Column: "ts"}}}, rowsReader(t, 0, 100, 2))
	res, err := rowOp(t, s, request.OpUpdate, "db.t", "id >= 150 AND cat = 'c0'", map[string]string{"name": "concat('u', cast(id AS string))", "cat": "'moved'"})
	if err != nil {
		t.Fatal(err)
	}
	got := readRows(t, s, "db.t", nil)
	want := rowsOf(keepIDs(0, 200, nil))
	n := 0
	for i := range want {
		if want[i].ID >= 150 && want[i].Cat == "c0" {
			name := "u" + strconv.FormatInt(want[i].ID, 10)
			want[i].Name, want[i].Cat = &name, "moved"
			n++
		}
	}
	equalRows(t, got, want)
	if n == 0 || res.Operation != "overwrite" || res.Summary["total-records"] != "200" {
		t.Fatalf("update: %d rows, op %s summary %v", n, res.Operation, res.Summary)
	}
}

// TestMergeOnReadThenCopyOnWriteKeepsDeletedRowsDeleted: rows removed by
// delete files stay removed when a later copy-on-write update rewrites
// their file (iceberg-go resurrects them).
func TestMergeOnReadThenCopyOnWriteKeepsDeletedRowsDeleted(t *testing.T) {
	for _, fv := range []string{"2", "3"} {
		t.Run("v"+fv, func(t *testing.T) {
			e := newEnv(t)
			s := e.session(t)
			mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t",
				Properties: map[string]string{"format-version": fv, "write.delete.mode": "merge-on-read"}}, rowsReader(t, 0, 100, 3))
			files := len(e.dataFiles(t, "t"))

			res, err := rowOp(t, s, request.OpDelete, "db.t", "id % 5 = 0", nil)
			if err != nil {
				t.Fatal(err)
			}
			want := keepIDs(0, 300, func(r row) bool { return r.ID%5 != 0 })
			equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
			if res.Operation != "delete" || res.Summary["added-delete-files"] == "" {
				t.Fatalf("merge-on-read delete: op %s summary %v", res.Operation, res.Summary)
			}
			tbl := loadTable(t, s, "db.t")
			data, deletes, _ := liveFiles(t, tbl)
			if data != files || deletes == 0 {
				t.Fatalf("after a merge-on-read delete: %d data files (had %d), %d delete files", data, files, deletes)
			}

			// A second merge-on-read delete on the same files: on v3 each data
			// file keeps exactly one deletion vector.
			if _, err := rowOp(t, s, request.OpDelete, "db.t", "id % 7 = 1", nil); err != nil {
				t.Fatal(err)
			}
			want = keepIDs(0, 300, func(r row) bool { return r.ID%5 != 0 && r.ID%7 != 1 })
			equalRows(t, readRows(t, s, "db.t", nil), rowsOf(want))
			_, _, perFile := liveFiles(t, loadTable(t, s, "db.t"))
			for f, n := range perFile {
				if fv == "3" && n != 1 {
					t.Errorf("data file %s has %d live deletion vectors", f, n)
				}
			}

			// Copy-on-write update rewrites every file: deleted rows stay deleted.
			if _, err := rowOp(t, s, request.OpUpdate, "db.t", "true", map[string]string{"cat": "upper(cat)"}); err != nil {
				t.Fatal(err)
			}
			got := readRows(t, s, "db.t", nil)
			exp := rowsOf(want)
			for i := range exp {
				exp[i].Cat = "C" + exp[i].Cat[1:]
			}
			equalRows(t, got, exp)
		})
	}
}

func TestUpdateMergeOnRead(t *testing.T) {
	for _, fv := range []string{"2", "3"} {
		t.Run("v"+fv, func(t *testing.T) {
			e := newEnv(t)
			s := e.session(t)
			mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t",
				Properties: map[string]string{"format-version": fv, "write.update.mode": "merge-on-read"}}, rowsReader(t, 0, 100, 2))
			res, err := rowOp(t, s, request.OpUpdate, "db.t", "cat = 'c2'", map[string]string{"name": "'x'"})
			if err != nil {
				t.Fatal(err)
			}
			want := rowsOf(keepIDs(0, 200, nil))
			for i := range want {
				if want[i].Cat == "c2" {
					x := "x"
					want[i].Name = &x
				}
			}
			equalRows(t, readRows(t, s, "db.t", nil), want)
			// As in Java, total-records counts the rows of live data files; the
			// replaced rows show up as position deletes.
			changed := 0
			for _, r := range want {
				if r.Cat == "c2" {
					changed++
				}
			}
			if res.Operation != "overwrite" || res.Summary["added-delete-files"] == "" ||
				res.Summary["total-records"] != strconv.Itoa(200+changed) || res.Summary["total-position-deletes"] != strconv.Itoa(changed) {
				t.Fatalf("merge-on-read update: op %s summary %v", res.Operation, res.Summary)
			}
		})
	}
}

// concurrently runs slow and, once it waits before committing, fast; slow
// commits after fast has. It returns slow's error. The order comes from
// the test hooks' signal and release files, not from sleeps, so it holds
// on a loaded machine.
func concurrently(t *testing.T, e *env, slow func(s *session.Session) error, fast func(s *session.Session) error) error {
	t.Helper()
	needHooks(t)
	dir := t.TempDir()
	signal, release := filepath.Join(dir, "waiting"), filepath.Join(dir, "release")
	slowSess := e.sessionWithConf(t, map[string]string{"test.hooks": "true",
		"test.commit-delay-signal": signal, "test.commit-delay-release": release})
	done := make(chan error, 1)
	go func() { done <- slow(slowSess) }()
	// Only a hang is bounded here: the wait ends as soon as slow waits.
	for bound := time.Now().Add(5 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(signal); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the slow operation ended before its commit pause: %v", err)
		default:
		}
		if time.Now().After(bound) {
			t.Fatal("the slow operation never reached its commit pause")
		}
	}
	if err := fast(e.session(t)); err != nil {
		t.Fatalf("the concurrent operation failed: %v", err)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return <-done
}

func TestConcurrentDeletesOnOneFileConflict(t *testing.T) {
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		for _, level := range []string{"serializable", "snapshot"} {
			t.Run(mode+"/"+level, func(t *testing.T) {
				e := newEnv(t)
				s := e.session(t)
				mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", Properties: map[string]string{
					"write.delete.mode": mode, "write.delete.isolation-level": level, "format-version": "3"}}, rowsReader(t, 0, 100, 1))
				before := snapshotCount(t, s, "db.t")
				err := concurrently(t, e,
					func(s *session.Session) error {
						_, err := rowOp(t, s, request.OpDelete, "db.t", "id < 10", nil)
						return err
					},
					func(s *session.Session) error {
						_, err := rowOp(t, s, request.OpDelete, "db.t", "id >= 90", nil)
						return err
					})
				if !errors.Is(err, errs.ErrCommitConflict) {
					t.Fatalf("second delete on one file: err %v, want a commit conflict", err)
				}
				// The concurrent delete survives; the failed one left nothing.
				equalRows(t, readRows(t, s, "db.t", nil), rowsOf(keepIDs(0, 90, nil)))
				if got := snapshotCount(t, s, "db.t"); got != before+1 {
					t.Fatalf("%d snapshots, want %d", got, before+1)
				}
			})
		}
	}
}

func TestDeleteIsolationAgainstConcurrentAppend(t *testing.T) {
	for _, level := range []string{"serializable", "snapshot"} {
		t.Run(level, func(t *testing.T) {
			e := newEnv(t)
			s := e.session(t)
			mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", Properties: map[string]string{
				"write.delete.isolation-level": level}, PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 90, 1))
			err := concurrently(t, e,
				func(s *session.Session) error {
					_, err := rowOp(t, s, request.OpDelete, "db.t", "cat = 'c1' AND id % 2 = 0", nil)
					return err
				},
				func(s *session.Session) error {
					_, err := write(context.Background(), s, request.Request{Op: request.OpAppend, Table: "db.t"}, idsReader(t, []int64{1000, 1001, 1003}))
					return err
				})
			rows := readRows(t, s, "db.t", nil)
			if level == "serializable" {
				// 1000 is c1 and even: it may match, so serializable fails.
				if !errors.Is(err, errs.ErrCommitConflict) {
					t.Fatalf("serializable delete over a matching concurrent append: %v", err)
				}
				equalRows(t, rows, rowsOf(append(keepIDs(0, 90, nil), 1000, 1001, 1003)))
				return
			}
			if err != nil {
				t.Fatalf("snapshot delete over a concurrent append: %v", err)
			}
			// Snapshot isolation: the appended rows are not deleted.
			equalRows(t, rows, rowsOf(append(keepIDs(0, 90, func(r row) bool { return !(r.Cat == "c1" && r.ID%2 == 0) }), 1000, 1001, 1003)))
		})
	}
}

func TestNonConflictingConcurrentOperationsBothCommit(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 90, 1))
	err := concurrently(t, e,
		func(s *session.Session) error {
			_, err := rowOp(t, s, request.OpDelete, "db.t", "cat = 'c0' AND id < 30", nil)
			return err
		},
		func(s *session.Session) error {
			_, err := rowOp(t, s, request.OpDelete, "db.t", "cat = 'c2' AND id > 60", nil)
			return err
		})
	if err != nil {
		t.Fatalf("deletes in different partitions must both commit: %v", err)
	}
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(keepIDs(0, 90, func(r row) bool {
		return !(r.Cat == "c0" && r.ID < 30) && !(r.Cat == "c2" && r.ID > 60)
	})))
}

func TestBadFilters(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t"}, rowsReader(t, 0, 10, 1))
	for filter, kind := range map[string]error{
		"id = = 1":     errs.ErrInvalidArgument,
		"nope = 1":     errs.ErrValidation,
		"name = 1":     errs.ErrValidation,
		"id + 1":       errs.ErrValidation,
		"frob(id) = 1": errs.ErrValidation,
	} {
		_, err := rowOp(t, s, request.OpDelete, "db.t", filter, nil)
		if !errors.Is(err, kind) {
			t.Errorf("delete %q: err %v, want %v", filter, err, kind)
		}
	}
	if snapshotCount(t, s, "db.t") != 1 {
		t.Fatal("a failed delete committed")
	}
}
