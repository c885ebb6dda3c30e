package gotests

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/maintenance"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// target resolves a table of s for core/maintenance.
func target(t testing.TB, s *session.Session, name string) maintenance.Target {
	t.Helper()
	id, err := s.Identifier(name)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := s.Catalog(ctxT(t), id.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	return maintenance.Target{Cat: cat, ID: id, Ident: append(append(table.Identifier{}, id.Namespace...), id.Name)}
}

// expire runs expire_snapshots with now one year after the table's newest
// snapshot, so that every age rule is decided by the test's inputs.
func expire(t testing.TB, s *session.Session, name string, req request.Request) (*maintenance.ExpireResult, error) {
	t.Helper()
	req.Op, req.Table = request.OpExpireSnapshots, name
	return maintenance.ExpireSnapshots(ctxT(t), target(t, s, name), &req, farFuture(t, s, name))
}

func farFuture(t testing.TB, s *session.Session, name string) time.Time {
	t.Helper()
	var newest int64
	for _, sn := range loadTable(t, s, name).Metadata().Snapshots() {
		newest = max(newest, sn.TimestampMs)
	}
	return time.UnixMilli(newest).Add(365 * 24 * time.Hour)
}

// diskFiles lists every regular file under a table's folder.
func diskFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
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

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// reachableOf lists the local paths of the files the snapshot reaches.
func reachableOf(t testing.TB, tbl *table.Table, id int64) []string {
	t.Helper()
	fsys, err := tbl.FS(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	files, err := maintenance.Reachable(ctxT(t), fsys, tbl.Metadata(), func(x int64) bool { return x == id })
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range files {
		out = append(out, strings.TrimPrefix(p, "file://"))
	}
	slices.Sort(out)
	return out
}

// snapshotRows reads every snapshot of a table.
func snapshotRows(t testing.TB, s *session.Session, name string) map[int64][]row {
	t.Helper()
	out := map[int64][]row{}
	for _, sn := range loadTable(t, s, name).Metadata().Snapshots() {
		id := sn.SnapshotID
		out[id] = readRows(t, s, name, &id)
	}
	return out
}

// TestExpireKeepsWhatRefsReach: a data file reachable only from a tag, one
// reachable only from a non-main branch, and one shared between an expired
// and a kept snapshot survive; the expired snapshot's own files go, and
// the result counts what left the disk.
func TestExpireKeepsWhatRefsReach(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	const name = "db.x"
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: name}, rowsReader(t, 0, 50, 1)) // S1: A
	s1 := headOf(t, s, name, "main")
	mustRefOp(t, s, request.Request{Op: request.OpCreateTag, Table: name, Ref: "t1"})
	mustWrite(t, s, request.Request{Op: request.OpOverwrite, Table: name, Filter: "true"}, rowsReader(t, 100, 50, 1)) // S2: B (A removed)
	s2 := headOf(t, s, name, "main")
	mustRefOp(t, s, request.Request{Op: request.OpCreateBranch, Table: name, Ref: "b"})
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: name + ".branch_b"}, rowsReader(t, 200, 50, 1))      // S3 on b: B + C
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: name}, rowsReader(t, 300, 50, 1))                    // S4: B + D
	mustWrite(t, s, request.Request{Op: request.OpOverwrite, Table: name, Filter: "true"}, rowsReader(t, 400, 50, 1)) // S5: E
	s4 := loadTable(t, s, name).Metadata().SnapshotByName("main").ParentSnapshotID

	before := snapshotRows(t, s, name)
	tbl := loadTable(t, s, name)
	s2Files, s4Files := reachableOf(t, tbl, s2), reachableOf(t, tbl, *s4)
	disk := diskFiles(t, e.tableDir("x"))

	res, err := expire(t, s, name, request.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{s2, *s4}; !slices.Equal(res.ExpiredSnapshotIDs, sortedIDs(want)) {
		t.Fatalf("expired %v, want %v (S1 is tagged, S3 heads b, S5 heads main)", res.ExpiredSnapshotIDs, want)
	}
	after := snapshotRows(t, s, name)
	for id, rows := range after {
		equalRows(t, rows, before[id])
	}
	if _, ok := after[s1]; !ok {
		t.Fatal("the tagged snapshot was expired")
	}
	// What left the disk is exactly what S2 and S4 reached and the kept
	// snapshots (S1, S3, S5) do not.
	kept := loadTable(t, s, name)
	var stillReached []string
	for _, sn := range kept.Metadata().Snapshots() {
		stillReached = append(stillReached, reachableOf(t, kept, sn.SnapshotID)...)
	}
	var want []string
	for _, f := range append(s2Files, s4Files...) {
		if !slices.Contains(stillReached, f) && !slices.Contains(want, f) {
			want = append(want, f)
		}
	}
	slices.Sort(want)
	gone := minus(disk, diskFiles(t, e.tableDir("x")))
	if !slices.Equal(gone, want) {
		t.Fatalf("deleted %v\nwant %v", gone, want)
	}
	// B (S2's data file) is still read by b's head; D only by S4.
	var dataGone int64
	for _, f := range gone {
		if strings.HasSuffix(f, ".parquet") {
			dataGone++
		}
	}
	if dataGone != 1 || res.DeletedDataFilesCount != 1 {
		t.Fatalf("data files deleted: %d on disk, %d counted; want 1 (D)", dataGone, res.DeletedDataFilesCount)
	}
	total := res.DeletedDataFilesCount + res.DeletedPositionDeleteFilesCount + res.DeletedEqualityDeleteFilesCount +
		res.DeletedManifestFilesCount + res.DeletedManifestListsCount + res.DeletedStatisticsFilesCount
	if total != int64(len(gone)) || res.DeletedManifestListsCount != 2 {
		t.Fatalf("counts %+v for %d files deleted", res, len(gone))
	}
	// Expiring again finds nothing.
	res, err = expire(t, s, name, request.Request{})
	if err != nil || len(res.ExpiredSnapshotIDs) != 0 {
		t.Fatalf("second expiry: %+v %v", res, err)
	}
}

func sortedIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// TestExpireSharedFileAndDeleteFiles: with merge-on-read, a delete file of
// an expired snapshot goes when no kept snapshot reaches it; a data file an
// expired snapshot shares with a kept one stays.
func TestExpireSharedFileAndDeleteFiles(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	const name = "db.m"
	props := map[string]string{"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: name, Properties: props}, rowsReader(t, 0, 100, 1)) // S1: A
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: name}, rowsReader(t, 100, 100, 1))                  // S2: A + B
	if _, err := rowOp(t, s, request.OpDelete, name, "id % 5 = 0", nil); err != nil {                                // S3: A + B + deletes
		t.Fatal(err)
	}
	s1 := loadTable(t, s, name).Metadata().Snapshots()[0].SnapshotID
	// Expiring S1 alone by id: its manifest list goes, A (shared) stays.
	disk := diskFiles(t, e.tableDir("m"))
	res, err := expire(t, s, name, request.Request{SnapshotIDs: []int64{s1}, OlderThanMs: new(int64)})
	if err != nil {
		t.Fatal(err)
	}
	gone := minus(disk, diskFiles(t, e.tableDir("m")))
	if len(gone) != 1 || !strings.Contains(filepath.Base(gone[0]), "snap-") || res.DeletedManifestListsCount != 1 || res.DeletedDataFilesCount != 0 {
		t.Fatalf("expiring S1 deleted %v (%+v); want its manifest list only", gone, res)
	}
	// Overwrite everything: the delete file and A, B are reachable only
	// from S2 and S3 until they expire.
	mustWrite(t, s, request.Request{Op: request.OpOverwrite, Table: name, Filter: "true"}, rowsReader(t, 500, 10, 1))
	before := snapshotRows(t, s, name)
	disk = diskFiles(t, e.tableDir("m"))
	s3 := loadTable(t, s, name).Metadata().SnapshotByName("main").ParentSnapshotID
	deleteFiles, _ := strconv.Atoi(loadTable(t, s, name).Metadata().SnapshotByID(*s3).Summary.Properties["total-delete-files"])
	res, err = expire(t, s, name, request.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ExpiredSnapshotIDs) != 2 || deleteFiles == 0 || res.DeletedPositionDeleteFilesCount != int64(deleteFiles) || res.DeletedDataFilesCount != 2 {
		t.Fatalf("got %+v; want 2 snapshots, %d position delete files, 2 data files", res, deleteFiles)
	}
	gone = minus(disk, diskFiles(t, e.tableDir("m")))
	total := res.DeletedDataFilesCount + res.DeletedPositionDeleteFilesCount + res.DeletedManifestFilesCount + res.DeletedManifestListsCount
	if total != int64(len(gone)) {
		t.Fatalf("counted %d, %d left the disk: %v", total, len(gone), gone)
	}
	for id, rows := range snapshotRows(t, s, name) {
		equalRows(t, rows, before[id])
	}
}

// TestExpireRefAgeAndErrors: a tag older than history.expire.max-ref-age-ms
// (measured from the injected now) is removed with its snapshot; bad
// arguments are typed errors and change nothing.
func TestExpireRefAgeAndErrors(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	const name = "db.r"
	props := map[string]string{maintenance.PropMaxRefAgeMs: "86400000"} // one day
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: name, Properties: props}, rowsReader(t, 0, 10, 1))
	first := headOf(t, s, name, "main")
	mustRefOp(t, s, request.Request{Op: request.OpCreateTag, Table: name, Ref: "old"})
	mustWrite(t, s, request.Request{Op: request.OpOverwrite, Table: name, Filter: "true"}, rowsReader(t, 10, 10, 1))

	// expire() measures from a year later: the tag is too old by then, so
	// these run with now = the tag's own snapshot time.
	at := time.UnixMilli(loadTable(t, s, name).Metadata().SnapshotByID(first).TimestampMs)
	expire := func(t testing.TB, s *session.Session, name string, req request.Request) (*maintenance.ExpireResult, error) {
		req.Op, req.Table = request.OpExpireSnapshots, name
		return maintenance.ExpireSnapshots(ctxT(t), target(t, s, name), &req, at)
	}
	_, err := expire(t, s, name, request.Request{SnapshotIDs: []int64{first}})
	wantKind(t, err, errs.ErrInvalidArgument, "Still referenced by refs: [old]")
	_, err = expire(t, s, name, request.Request{SnapshotIDs: []int64{12345}})
	wantKind(t, err, errs.ErrInvalidArgument, "no such snapshot")
	if _, ok := refsOf(t, s, name)["old"]; !ok || snapshotCount(t, s, name) != 2 {
		t.Fatal("a rejected expiry changed the table")
	}

	tbl := loadTable(t, s, name)
	now := time.UnixMilli(tbl.Metadata().SnapshotByID(first).TimestampMs).Add(48 * time.Hour)
	// With older_than = now, only a kept tag could keep the first snapshot.
	tg := target(t, s, name)
	cut := now.UnixMilli()
	res, err := maintenance.ExpireSnapshots(ctxT(t), tg, &request.Request{Op: request.OpExpireSnapshots, Table: name, OlderThanMs: &cut}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.RemovedRefs, []string{"old"}) || !slices.Equal(res.ExpiredSnapshotIDs, []int64{first}) {
		t.Fatalf("got %+v; want tag old and snapshot %d removed", res, first)
	}
	if _, ok := refsOf(t, s, name)["old"]; ok {
		t.Fatal("tag old is still there")
	}
}

// TestRemoveOrphanFiles: only old files nothing reaches are listed; a dry
// run deletes nothing; the real run deletes exactly them and every
// snapshot still reads back.
func TestRemoveOrphanFiles(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	const name = "db.o"
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: name, PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 30, 1))
	mustWrite(t, s, request.Request{Op: request.OpOverwrite, Table: name, Filter: "cat = 'c1'"}, rowsReader(t, 100, 3, 1))
	dir := e.tableDir("o")
	before := snapshotRows(t, s, name)
	now := farFuture(t, s, name)
	olderThan := now.Add(-48 * time.Hour)
	oldT, newT := olderThan.Add(-time.Hour), olderThan.Add(time.Hour)
	// Every file of the table is old: only reachability protects them.
	for _, f := range diskFiles(t, dir) {
		if err := os.Chtimes(f, oldT, oldT); err != nil {
			t.Fatal(err)
		}
	}
	plant := func(rel string, mt time.Time) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		return p
	}
	oldOrphans := []string{plant("data/cat=c1/orphan-old.parquet", oldT), plant("metadata/stray.avro", oldT), plant("elsewhere/x.bin", oldT)}
	plant("data/cat=c1/orphan-new.parquet", newT)
	plant("data/.hidden.crc", oldT)
	plant("data/_temporary/part-0.parquet", oldT)
	slices.Sort(oldOrphans)

	run := func(dry bool) *maintenance.OrphanResult {
		t.Helper()
		ms := olderThan.UnixMilli()
		res, err := maintenance.RemoveOrphanFiles(ctxT(t), target(t, s, name), &request.Request{Op: request.OpRemoveOrphanFiles, Table: name, OlderThanMs: &ms, DryRun: dry}, now)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	diskBefore := diskFiles(t, dir)
	res := run(true)
	var got []string
	for _, l := range res.OrphanFileLocations {
		got = append(got, strings.TrimPrefix(l, "file://"))
	}
	if !slices.Equal(got, oldOrphans) {
		t.Fatalf("orphans %v\nwant %v", got, oldOrphans)
	}
	if !slices.Equal(diskFiles(t, dir), diskBefore) {
		t.Fatal("a dry run deleted files")
	}
	res = run(false)
	if len(res.OrphanFileLocations) != len(oldOrphans) || len(res.FailedDeletes) != 0 {
		t.Fatalf("got %+v", res)
	}
	if gone := minus(diskBefore, diskFiles(t, dir)); !slices.Equal(gone, oldOrphans) {
		t.Fatalf("deleted %v, want %v", gone, oldOrphans)
	}
	for id, rows := range snapshotRows(t, s, name) {
		equalRows(t, rows, before[id])
	}
	// A cutoff less than a day before now is refused.
	ms := now.Add(-time.Hour).UnixMilli()
	_, err := maintenance.RemoveOrphanFiles(ctxT(t), target(t, s, name), &request.Request{Op: request.OpRemoveOrphanFiles, Table: name, OlderThanMs: &ms}, now)
	wantKind(t, err, errs.ErrInvalidArgument, "less than 24 hours")
}
