package gotests

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// refOp runs a ref operation (create_branch, cherrypick, ...).
func refOp(t testing.TB, s *session.Session, req request.Request) (any, error) {
	t.Helper()
	return ops.Execute(ctxT(t), s, &req, nil, nil)
}

func mustRefOp(t testing.TB, s *session.Session, req request.Request) any {
	t.Helper()
	res, err := refOp(t, s, req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Op, req.Ref, err)
	}
	return res
}

// refsOf lists a table's refs through the refs operation.
func refsOf(t testing.TB, s *session.Session, name string) map[string]ops.RefInfo {
	t.Helper()
	res := mustRefOp(t, s, request.Request{Op: request.OpRefs, Table: name})
	return res.(map[string]any)["refs"].(map[string]ops.RefInfo)
}

// headOf is the snapshot id a ref of the table points at (0: no such ref).
func headOf(t testing.TB, s *session.Session, name, ref string) int64 {
	t.Helper()
	if sn := loadTable(t, s, name).Metadata().SnapshotByName(ref); sn != nil {
		return sn.SnapshotID
	}
	return 0
}

// model is the expected rows of a branch, by id.
type model map[int64]row

func modelOf(ids []int64) model {
	m := model{}
	for _, id := range ids {
		m[id] = expectRow(id)
	}
	return m
}

func (m model) rows() []row {
	out := slices.Collect(maps.Values(m))
	slices.SortFunc(out, func(a, b row) int { return int(a.ID - b.ID) })
	return out
}

func wantKind(t testing.TB, err error, kind error, text string) {
	t.Helper()
	if !errors.Is(err, kind) || !strings.Contains(err.Error(), text) {
		t.Fatalf("got error %v, want %v containing %q", err, kind, text)
	}
}

// TestBranchWritesLeaveMainUntouched runs every operation on db.t.branch_b
// and checks, after each, the branch's rows against a model, main's rows
// and head against what they were, and the snapshot's parent and totals
// against the branch's previous snapshot.
func TestBranchWritesLeaveMainUntouched(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 50, 2))
	mainRows := readRows(t, s, "db.t", nil)
	mainHead := headOf(t, s, "db.t", table.MainBranch)
	res := mustRefOp(t, s, request.Request{Op: request.OpCreateBranch, Table: "db.t", Ref: "b"}).(map[string]any)
	if res["snapshot_id"] != mainHead || res["type"] != "branch" {
		t.Fatalf("create_branch: %v (main head %d)", res, mainHead)
	}
	br := modelOf(idRange(0, 100, nil))

	check := func(what string, r *ops.Result, prev int64) int64 {
		t.Helper()
		equalRows(t, readRows(t, s, "db.t.branch_b", nil), br.rows())
		equalRows(t, readRows(t, s, "local.db.t.branch_b", nil), br.rows())
		equalRows(t, readRows(t, s, "db.t", nil), mainRows)
		if got := headOf(t, s, "db.t", table.MainBranch); got != mainHead {
			t.Fatalf("%s on the branch moved main: %d -> %d", what, mainHead, got)
		}
		head := headOf(t, s, "db.t", "b")
		if r.SnapshotID == nil || *r.SnapshotID != head {
			t.Fatalf("%s: result snapshot %v, branch head %d", what, r.SnapshotID, head)
		}
		sn := loadTable(t, s, "db.t").Metadata().SnapshotByID(head)
		if sn.ParentSnapshotID == nil || *sn.ParentSnapshotID != prev {
			t.Fatalf("%s: parent %v, want the branch's previous head %d", what, sn.ParentSnapshotID, prev)
		}
		if got := r.Summary["total-records"]; got != strconv.Itoa(len(br)) {
			t.Fatalf("%s: total-records %s, want %d (from the branch's previous snapshot)", what, got, len(br))
		}
		return head
	}

	prev := mainHead
	r := mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t.branch_b"}, rowsReader(t, 100, 50, 1))
	maps.Copy(br, modelOf(idRange(100, 150, nil)))
	prev = check("append", r, prev)

	// Dynamic overwrite with one row of partition c0.
	r = mustWrite(t, s, request.Request{Op: request.OpOverwritePartitions, Table: "db.t.branch_b"}, rowsReader(t, 300, 1, 1))
	maps.DeleteFunc(br, func(_ int64, x row) bool { return x.Cat == "c0" })
	br[300] = expectRow(300)
	prev = check("overwritePartitions", r, prev)

	r = mustWrite(t, s, request.Request{Op: request.OpOverwrite, Table: "db.t.branch_b", Filter: "id < 10"}, rowsReader(t, 400, 5, 1))
	maps.DeleteFunc(br, func(id int64, _ row) bool { return id < 10 })
	maps.Copy(br, modelOf(idRange(400, 405, nil)))
	prev = check("overwrite", r, prev)

	// main moves on: the branch's operations validate the branch's own
	// history, so they neither conflict nor see main's new rows.
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, 1000, 10, 1))
	mainRows = readRows(t, s, "db.t", nil)
	mainHead = headOf(t, s, "db.t", table.MainBranch)

	r, err := rowOp(t, s, request.OpDelete, "db.t.branch_b", "id % 5 = 0", nil)
	if err != nil {
		t.Fatal(err)
	}
	maps.DeleteFunc(br, func(id int64, _ row) bool { return id%5 == 0 })
	prev = check("delete", r, prev)

	r, err = rowOp(t, s, request.OpUpdate, "db.t.branch_b", "id >= 100 AND id < 120", map[string]string{"name": "'u'"})
	if err != nil {
		t.Fatal(err)
	}
	for id, x := range br {
		if id >= 100 && id < 120 {
			u := "u"
			x.Name = &u
			br[id] = x
		}
	}
	prev = check("update", r, prev)

	merge := &request.Merge{On: "source.id = target.id", Clauses: []request.MergeClause{
		{When: request.WhenMatched, Action: request.ActionUpdate, Set: map[string]string{"name": "'m'"}},
		{When: request.WhenNotMatched, Action: request.ActionInsertAll},
	}}
	r = mustWrite(t, s, request.Request{Op: request.OpMerge, Table: "db.t.branch_b", Merge: merge}, rowsReader(t, 140, 20, 1))
	for id := int64(140); id < 160; id++ {
		x, ok := br[id]
		if !ok {
			br[id] = expectRow(id)
			continue
		}
		m := "m"
		x.Name = &m
		br[id] = x
	}
	check("merge", r, prev)
}

// TestBranchMergeOnReadDelete: merge-on-read writes its delete files on the
// branch and main keeps every row.
func TestBranchMergeOnReadDelete(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.m", Properties: map[string]string{"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}}, rowsReader(t, 0, 100, 1))
	mustRefOp(t, s, request.Request{Op: request.OpCreateBranch, Table: "db.m", Ref: "b"})
	if _, err := rowOp(t, s, request.OpDelete, "db.m.branch_b", "id % 3 = 1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := rowOp(t, s, request.OpUpdate, "db.m.branch_b", "id < 10", map[string]string{"cat": "'x'"}); err != nil {
		t.Fatal(err)
	}
	want := rowsOf(idRange(0, 100, func(r row) bool { return r.ID%3 != 1 }))
	for i := range want {
		if want[i].ID < 10 {
			want[i].Cat = "x"
		}
	}
	equalRows(t, readRows(t, s, "db.m.branch_b", nil), want)
	equalRows(t, readRows(t, s, "db.m", nil), rowsOf(idRange(0, 100, nil)))
	tbl := loadTable(t, s, "db.m")
	sn := tbl.Metadata().SnapshotByName("b")
	if sn.Summary.Properties["total-position-deletes"] == "" || sn.Summary.Properties["total-position-deletes"] == "0" {
		t.Fatalf("branch head wrote no delete files: %v", sn.Summary.Properties)
	}
	if main := tbl.Metadata().SnapshotByName(table.MainBranch); main.Summary.Properties["total-delete-files"] != "0" {
		t.Fatalf("main got delete files: %v", main.Summary.Properties)
	}
}

func TestBranchMissingOrMisusedIsAnErrorWithNothingWritten(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t"}, rowsReader(t, 0, 20, 1))
	mustRefOp(t, s, request.Request{Op: request.OpCreateTag, Table: "db.t", Ref: "v1"})
	snaps, files := snapshotCount(t, s, "db.t"), len(e.dataFiles(t, "t"))
	nothing := func(what string) {
		t.Helper()
		if snapshotCount(t, s, "db.t") != snaps || len(e.dataFiles(t, "t")) != files {
			t.Fatalf("%s left a snapshot or files behind", what)
		}
	}

	_, err := write(ctxT(t), s, request.Request{Op: request.OpAppend, Table: "db.t.branch_nope"}, rowsReader(t, 100, 5, 1))
	wantKind(t, err, errs.ErrValidation, "Cannot use branch (does not exist): nope")
	nothing("append to a missing branch")
	_, err = rowOp(t, s, request.OpDelete, "local.db.t.branch_nope", "id = 1", nil)
	wantKind(t, err, errs.ErrValidation, "Cannot use branch (does not exist): nope")
	_, err = write(ctxT(t), s, request.Request{Op: request.OpOverwritePartitions, Table: "db.t.branch_v1"}, rowsReader(t, 100, 5, 1))
	wantKind(t, err, errs.ErrValidation, "not a branch")
	_, err = write(ctxT(t), s, request.Request{Op: request.OpAppend, Table: "db.t.tag_v1"}, rowsReader(t, 100, 5, 1))
	wantKind(t, err, errs.ErrValidation, "tags are read-only")
	_, err = write(ctxT(t), s, request.Request{Op: request.OpCreateOrReplace, Table: "db.t.branch_main"}, rowsReader(t, 100, 5, 1))
	wantKind(t, err, errs.ErrInvalidArgument, "cannot target branch")
	nothing("writes to refs that cannot take them")

	// Reads: a tag reads its snapshot; a missing branch is the same error.
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, 20, 5, 1))
	equalRows(t, readRows(t, s, "db.t.tag_v1", nil), rowsOf(idRange(0, 20, nil)))
	equalRows(t, readRows(t, s, "db.t.branch_main", nil), rowsOf(idRange(0, 25, nil)))
	_, _, err = ops.LoadRef(ctxT(t), s, "db.t.branch_nope")
	wantKind(t, err, errs.ErrValidation, "Cannot use branch (does not exist): nope")

	// A table literally named branch_x is a table, as Spark resolves it.
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.branch_lit"}, rowsReader(t, 0, 3, 1))
	equalRows(t, readRows(t, s, "db.branch_lit", nil), rowsOf(idRange(0, 3, nil)))
}

func TestWapBranch(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", Properties: map[string]string{"write.wap.enabled": "true"}}, rowsReader(t, 0, 20, 1))
	mustRefOp(t, s, request.Request{Op: request.OpCreateBranch, Table: "db.t", Ref: "b"})
	mainHead := headOf(t, s, "db.t", table.MainBranch)
	snaps := snapshotCount(t, s, "db.t")

	ws := e.sessionWithConf(t, map[string]string{"wap.branch": "audit"})
	_, err := write(ctxT(t), ws, request.Request{Op: request.OpAppend, Table: "db.t.branch_b"}, rowsReader(t, 100, 5, 1))
	wantKind(t, err, errs.ErrValidation, "Cannot write to both branch and WAP branch, but got branch [b] and WAP branch [audit]")
	both := e.sessionWithConf(t, map[string]string{"wap.branch": "audit", "wap.id": "w1"})
	_, err = rowOp(t, both, request.OpDelete, "db.t", "id = 1", nil)
	wantKind(t, err, errs.ErrValidation, "Cannot set both WAP ID and branch")
	if snapshotCount(t, s, "db.t") != snaps {
		t.Fatal("a rejected WAP write committed")
	}

	// The WAP branch does not exist: the write creates it from main's head.
	r := mustWrite(t, ws, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, 100, 5, 1))
	audit := headOf(t, s, "db.t", "audit")
	if audit == 0 || r.SnapshotID == nil || *r.SnapshotID != audit || headOf(t, s, "db.t", table.MainBranch) != mainHead {
		t.Fatalf("WAP branch write: result %v, audit %d, main %d (was %d)", r.SnapshotID, audit, headOf(t, s, "db.t", table.MainBranch), mainHead)
	}
	equalRows(t, readRows(t, s, "db.t.branch_audit", nil), rowsOf(idRange(0, 105, func(r row) bool { return r.ID < 20 || r.ID >= 100 })))
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(idRange(0, 20, nil)))

	// A row-level operation on a WAP branch that does not exist yet reads main.
	ws2 := e.sessionWithConf(t, map[string]string{"spark.wap.branch": "audit2"})
	if _, err := rowOp(t, ws2, request.OpDelete, "db.t", "id < 5", nil); err != nil {
		t.Fatal(err)
	}
	equalRows(t, readRows(t, s, "db.t.branch_audit2", nil), rowsOf(idRange(5, 20, nil)))
	if headOf(t, s, "db.t", table.MainBranch) != mainHead {
		t.Fatal("the WAP branch delete moved main")
	}

	// Without write.wap.enabled the WAP settings are ignored (Spark).
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.plain"}, rowsReader(t, 0, 5, 1))
	r = mustWrite(t, both, request.Request{Op: request.OpAppend, Table: "db.plain"}, rowsReader(t, 5, 5, 1))
	if r.Summary["wap.id"] != "" || *r.SnapshotID != headOf(t, s, "db.plain", table.MainBranch) || len(refsOf(t, s, "db.plain")) != 1 {
		t.Fatalf("WAP settings applied to a table without write.wap.enabled: %+v", r)
	}
}

func TestWapStagePublishAndCherrypick(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t", Properties: map[string]string{"write.wap.enabled": "true"}}, rowsReader(t, 0, 20, 1))
	main0 := headOf(t, s, "db.t", table.MainBranch)
	stage := func(id string, req request.Request, first, n int64) *ops.Result {
		t.Helper()
		ws := e.sessionWithConf(t, map[string]string{"wap.id": id})
		var in = rowsReader(t, first, n, 1)
		if !request.IsWrite(req.Op) {
			in.Release()
			in = nil
		}
		before := headOf(t, s, "db.t", table.MainBranch)
		r, err := write(ctxT(t), ws, req, in)
		if err != nil {
			t.Fatal(err)
		}
		if r.SnapshotID == nil || r.Summary["wap.id"] != id || headOf(t, s, "db.t", table.MainBranch) != before {
			t.Fatalf("staged %s: %+v; main %d -> %d", id, r, before, headOf(t, s, "db.t", table.MainBranch))
		}
		return r
	}
	publish := func(id string) (*ops.Result, error) {
		res, err := refOp(t, s, request.Request{Op: request.OpPublish, Table: "db.t", WapID: id})
		if err != nil {
			return nil, err
		}
		return res.(*ops.Result), nil
	}

	s1 := stage("w1", request.Request{Op: request.OpAppend, Table: "db.t"}, 100, 10)
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(idRange(0, 20, nil)))
	equalRows(t, readRows(t, s, "db.t", s1.SnapshotID), rowsOf(append(idRange(0, 20, nil), idRange(100, 110, nil)...)))
	if sn := loadTable(t, s, "db.t").Metadata().SnapshotByID(*s1.SnapshotID); *sn.ParentSnapshotID != main0 {
		t.Fatal("a staged snapshot's parent is not main's head")
	}
	_, err := publish("nope")
	wantKind(t, err, errs.ErrValidation, "Cannot apply unknown WAP ID 'nope'")

	// Parent is main's head: published by fast-forward.
	r, err := publish("w1")
	if err != nil || *r.SnapshotID != *s1.SnapshotID || headOf(t, s, "db.t", table.MainBranch) != *s1.SnapshotID {
		t.Fatalf("publish w1: %v %+v", err, r)
	}
	_, err = publish("w1")
	wantKind(t, err, errs.ErrValidation, "published already: w1")

	// Two staged appends on the same head: the second one picked is
	// re-committed with its files and names its source.
	s2 := stage("w2", request.Request{Op: request.OpAppend, Table: "db.t"}, 200, 10)
	s3 := stage("w3", request.Request{Op: request.OpAppend, Table: "db.t"}, 300, 10)
	if _, err := publish("w3"); err != nil || headOf(t, s, "db.t", table.MainBranch) != *s3.SnapshotID {
		t.Fatalf("publish w3: %v", err)
	}
	snaps := snapshotCount(t, s, "db.t")
	r, err = publish("w2")
	if err != nil {
		t.Fatal(err)
	}
	if *r.SnapshotID == *s2.SnapshotID || snapshotCount(t, s, "db.t") != snaps+1 || r.Operation != "append" ||
		r.Summary["source-snapshot-id"] != strconv.FormatInt(*s2.SnapshotID, 10) || r.Summary["published-wap-id"] != "w2" ||
		r.Summary["added-records"] != "10" || r.Summary["total-records"] != "50" {
		t.Fatalf("cherry-pick of w2: %+v", r)
	}
	all := append(append(append(idRange(0, 20, nil), idRange(100, 110, nil)...), idRange(200, 210, nil)...), idRange(300, 310, nil)...)
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(all))
	_, err = refOp(t, s, request.Request{Op: request.OpCherrypick, Table: "db.t", SnapshotID: s2.SnapshotID})
	wantKind(t, err, errs.ErrValidation, "published already: w2")
	_, err = refOp(t, s, request.Request{Op: request.OpCherrypick, Table: "db.t", SnapshotID: &main0})
	wantKind(t, err, errs.ErrValidation, "already an ancestor")
	bad := int64(12345)
	_, err = refOp(t, s, request.Request{Op: request.OpCherrypick, Table: "db.t", SnapshotID: &bad})
	wantKind(t, err, errs.ErrValidation, "unknown snapshot ID: 12345")

	// A staged delete on main's head is fast-forwarded; one whose parent
	// moved on is not an append and cannot be picked.
	d1 := stage("w4", request.Request{Op: request.OpDelete, Table: "db.t", Filter: "id < 5"}, 0, 0)
	d2 := stage("w5", request.Request{Op: request.OpDelete, Table: "db.t", Filter: "id >= 300"}, 0, 0)
	if _, err := refOp(t, s, request.Request{Op: request.OpCherrypick, Table: "db.t", SnapshotID: d1.SnapshotID}); err != nil {
		t.Fatal(err)
	}
	head := headOf(t, s, "db.t", table.MainBranch)
	_, err = refOp(t, s, request.Request{Op: request.OpCherrypick, Table: "db.t", SnapshotID: d2.SnapshotID})
	wantKind(t, err, errs.ErrValidation, "not an append and not a fast-forward")
	if headOf(t, s, "db.t", table.MainBranch) != head {
		t.Fatal("a refused cherry-pick moved main")
	}
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(slices.DeleteFunc(all, func(id int64) bool { return id < 5 })))
}

func TestFastForwardAndRefManagement(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t"}, rowsReader(t, 0, 10, 1))
	first := headOf(t, s, "db.t", table.MainBranch)
	mustRefOp(t, s, request.Request{Op: request.OpCreateBranch, Table: "db.t", Ref: "b"})
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t.branch_b"}, rowsReader(t, 10, 10, 1))

	// main is an ancestor of b: fast-forwarded.
	res := mustRefOp(t, s, request.Request{Op: request.OpFastForward, Table: "db.t", Ref: "main", To: "b"}).(map[string]any)
	if res["snapshot_id"] != headOf(t, s, "db.t", "b") || headOf(t, s, "db.t", table.MainBranch) != headOf(t, s, "db.t", "b") {
		t.Fatalf("fast_forward: %v", res)
	}
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(idRange(0, 20, nil)))

	// Diverged: refused either way, nothing moves.
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, 20, 5, 1))
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t.branch_b"}, rowsReader(t, 30, 5, 1))
	refs := refsOf(t, s, "db.t")
	_, err := refOp(t, s, request.Request{Op: request.OpFastForward, Table: "db.t", Ref: "main", To: "b"})
	wantKind(t, err, errs.ErrInvalidArgument, "Cannot fast-forward: main is not an ancestor of b")
	_, err = refOp(t, s, request.Request{Op: request.OpFastForward, Table: "db.t", Ref: "b", To: "main"})
	wantKind(t, err, errs.ErrInvalidArgument, "Cannot fast-forward: b is not an ancestor of main")
	_, err = refOp(t, s, request.Request{Op: request.OpFastForward, Table: "db.t", Ref: "main", To: "nope"})
	wantKind(t, err, errs.ErrInvalidArgument, "Ref does not exist: nope")
	if got := refsOf(t, s, "db.t"); !maps.Equal(got, refs) {
		t.Fatalf("refused fast-forwards changed refs: %v -> %v", refs, got)
	}

	// Tags and branches at an older snapshot.
	mustRefOp(t, s, request.Request{Op: request.OpCreateTag, Table: "db.t", Ref: "v0", SnapshotID: &first})
	mustRefOp(t, s, request.Request{Op: request.OpCreateBranch, Table: "db.t", Ref: "old", SnapshotID: &first})
	equalRows(t, readRows(t, s, "db.t.tag_v0", nil), rowsOf(idRange(0, 10, nil)))
	equalRows(t, readRows(t, s, "db.t.branch_old", nil), rowsOf(idRange(0, 10, nil)))
	refs = refsOf(t, s, "db.t")
	want := map[string]ops.RefInfo{
		"main": {Type: "branch", SnapshotID: headOf(t, s, "db.t", "main")},
		"b":    {Type: "branch", SnapshotID: headOf(t, s, "db.t", "b")},
		"old":  {Type: "branch", SnapshotID: first},
		"v0":   {Type: "tag", SnapshotID: first},
	}
	if !maps.Equal(refs, want) {
		t.Fatalf("refs %v, want %v", refs, want)
	}
	bad := int64(999)
	for _, c := range []struct {
		req  request.Request
		text string
	}{
		{request.Request{Op: request.OpCreateTag, Table: "db.t", Ref: "v0"}, "Ref v0 already exists"},
		{request.Request{Op: request.OpCreateBranch, Table: "db.t", Ref: "b"}, "Ref b already exists"},
		{request.Request{Op: request.OpCreateBranch, Table: "db.t", Ref: "x", SnapshotID: &bad}, "no snapshot 999"},
		{request.Request{Op: request.OpRemoveBranch, Table: "db.t", Ref: "main"}, "Cannot remove main branch"},
		{request.Request{Op: request.OpRemoveBranch, Table: "db.t", Ref: "v0"}, "is a tag, not a branch"},
		{request.Request{Op: request.OpRemoveTag, Table: "db.t", Ref: "b"}, "is a branch, not a tag"},
		{request.Request{Op: request.OpRemoveTag, Table: "db.t", Ref: "nope"}, "Tag does not exist: nope"},
		{request.Request{Op: request.OpFastForward, Table: "db.t", Ref: "v0", To: "b"}, "is a tag not a branch"},
		{request.Request{Op: request.OpCreateBranch, Table: "db.t.branch_b", Ref: "y"}, "takes a table identifier"},
	} {
		if _, err := refOp(t, s, c.req); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s %s: got %v, want %q", c.req.Op, c.req.Ref, err, c.text)
		}
	}
	if got := refsOf(t, s, "db.t"); !maps.Equal(got, want) {
		t.Fatalf("refused ref operations changed refs: %v", got)
	}
	mustRefOp(t, s, request.Request{Op: request.OpRemoveTag, Table: "db.t", Ref: "v0"})
	mustRefOp(t, s, request.Request{Op: request.OpRemoveBranch, Table: "db.t", Ref: "old"})
	delete(want, "v0")
	delete(want, "old")
	if got := refsOf(t, s, "db.t"); !maps.Equal(got, want) {
		t.Fatalf("after removals: %v, want %v", got, want)
	}
	// A fast-forward of a missing branch creates it at the target (Java).
	mustRefOp(t, s, request.Request{Op: request.OpFastForward, Table: "db.t", Ref: "new", To: "b"})
	if headOf(t, s, "db.t", "new") != want["b"].SnapshotID {
		t.Fatal("fast_forward did not create the missing branch at b")
	}
}

// TestRefRequestsDecode: the ref operations' fields are checked once, in
// the request document.
func TestRefRequestsDecode(t *testing.T) {
	for doc, text := range map[string]string{
		`{"op":"create_branch","table":"db.t"}`:                     "create_branch needs ref",
		`{"op":"fast_forward","table":"db.t","ref":"main"}`:         "fast_forward needs to",
		`{"op":"cherrypick","table":"db.t"}`:                        "cherrypick needs snapshot_id",
		`{"op":"publish","table":"db.t"}`:                           "publish needs wap_id",
		`{"op":"append","table":"db.t","ref":"b"}`:                  "append takes no ref",
		`{"op":"remove_tag","table":"db.t","ref":"a","wap_id":"x"}`: "remove_tag takes no wap_id",
	} {
		if _, err := request.Decode([]byte(doc)); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), text) {
			t.Errorf("%s: got %v, want %q", doc, err, text)
		}
	}
	r, err := request.Decode([]byte(`{"op":"fast_forward","table":"db.t","ref":"main","to":"b"}`))
	if err != nil || r.Ref != "main" || r.To != "b" {
		t.Fatalf("%v %+v", err, r)
	}
}

// TestBranchDeleteWhileMainMoves: a branch operation validates the
// branch's history only, so a commit on main while it runs neither
// conflicts with it nor leaks into the branch.
func TestBranchDeleteWhileMainMoves(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t"}, rowsReader(t, 0, 20, 1))
	mustRefOp(t, s, request.Request{Op: request.OpCreateBranch, Table: "db.t", Ref: "b"})
	err := concurrently(t, e, func(s *session.Session) error {
		_, err := rowOp(t, s, request.OpDelete, "db.t.branch_b", "id < 5", nil)
		return err
	}, func(s *session.Session) error {
		_, err := write(ctxT(t), s, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, 100, 5, 1))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	equalRows(t, readRows(t, s, "db.t.branch_b", nil), rowsOf(idRange(5, 20, nil)))
	equalRows(t, readRows(t, s, "db.t", nil), rowsOf(append(idRange(0, 20, nil), idRange(100, 105, nil)...)))
}
