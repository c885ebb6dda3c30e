package gotests

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

func span(first, n int64) []int64 {
	out := make([]int64, 0, n)
	for id := first; id < first+n; id++ {
		out = append(out, id)
	}
	return out
}

// Appends a (ids 0-9), b (10-19), an overwrite of id < 5 with 100-101
// (o), a delete of ids >= 100 (d, a whole file: a delete snapshot), then c
// (20-29); returns the snapshot ids.
func incrementalTable(t *testing.T, e *env) (a, b, o, d, c int64) {
	t.Helper()
	s := e.session(t)
	cur := func() int64 { return loadTable(t, s, "local.db.inc").CurrentSnapshot().SnapshotID }
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.inc"}, rowsReader(t, 0, 10, 1))
	a = cur()
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.inc"}, rowsReader(t, 10, 10, 1))
	b = cur()
	mustWrite(t, s, request.Request{Op: request.OpOverwrite, Table: "local.db.inc", Filter: "id < 5"}, rowsReader(t, 100, 2, 1))
	o = cur()
	mustWrite(t, s, request.Request{Op: request.OpDelete, Table: "local.db.inc", Filter: "id >= 100"}, nil)
	d = cur()
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.inc"}, rowsReader(t, 20, 10, 1))
	c = cur()
	return
}

func TestIncrementalReadOfAppends(t *testing.T) {
	e := newEnv(t)
	a, b, o, d, c := incrementalTable(t, e)
	ctx := ctxT(t)
	read := func(req request.Request) ([]int64, error) {
		req.Table = "local.db.inc"
		ids, _, _, err := scanIDs(t, ctx, e, req)
		return ids, err
	}
	// (a, b]: b's rows only.
	if ids, err := read(request.Request{StartSnapshotID: &a, EndSnapshotID: &b}); err != nil || !slices.Equal(ids, span(10, 10)) {
		t.Fatalf("(a, b]: %v %v", ids, err)
	}
	// An overwrite or a delete in the range fails the read, with Spark's words.
	for _, c := range []struct {
		end  int64
		what string
		snap int64
	}{{o, "overwrite", o}, {d, "overwrite", o}, {c, "overwrite", o}} {
		end := c.end
		_, err := read(request.Request{StartSnapshotID: &b, EndSnapshotID: &end})
		if !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "Cannot process "+c.what+" snapshot: ") {
			t.Fatalf("(b, %d]: %v", end, err)
		}
	}
	_, err := read(request.Request{StartSnapshotID: &o, EndSnapshotID: &d})
	if !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "Cannot process delete snapshot: ") {
		t.Fatalf("(o, d]: %v", err)
	}
	// Skipped, they add nothing: the appended rows come as appended (the
	// overwrite's rows 100-101 are not read, its removal of 0-4 does not
	// apply to b's rows).
	ids, err := read(request.Request{StartSnapshotID: &a, SkipOverwriteSnapshots: true, SkipDeleteSnapshots: true})
	if err != nil || !slices.Equal(ids, append(span(10, 10), span(20, 10)...)) {
		t.Fatalf("(a, head] skipping: %v %v", ids, err)
	}
	if ids, err := read(request.Request{StartSnapshotID: &d}); err != nil || !slices.Equal(ids, span(20, 10)) {
		t.Fatalf("(d, head]: %v %v", ids, err)
	}
	// Filter and projection apply as in any scan.
	if ids, err := read(request.Request{StartSnapshotID: &d, Filter: "id >= 25", Columns: []string{"id"}}); err != nil || !slices.Equal(ids, span(25, 5)) {
		t.Fatalf("(d, head] filtered: %v %v", ids, err)
	}
	// Errors: start not a parent ancestor of end (start = end, start after end).
	for _, r := range [][2]int64{{b, b}, {c, b}, {12345, c}} {
		_, err := read(request.Request{StartSnapshotID: &r[0], EndSnapshotID: &r[1]})
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "is not a parent ancestor of end snapshot") {
			t.Fatalf("(%d, %d]: %v", r[0], r[1], err)
		}
	}
}

func TestIncrementalRequestValidation(t *testing.T) {
	for doc, want := range map[string]string{
		`{"table": "db.t", "end_snapshot_id": 1}`:                                     "Cannot set only `end-snapshot-id`",
		`{"table": "db.t", "start_snapshot_id": 1, "snapshot_id": 2}`:                 "when either snapshot-id or as-of-timestamp is set",
		`{"table": "db.t", "start_snapshot_id": 1, "ref": "b"}`:                       "when either snapshot-id or as-of-timestamp is set",
		`{"table": "db.t", "skip_delete_snapshots": true}`:                            "apply to incremental scans",
		`{"op": "delete", "table": "db.t", "filter": "true", "start_snapshot_id": 1}`: "takes no start_snapshot_id",
	} {
		var err error
		if strings.Contains(doc, `"op"`) {
			_, err = request.Decode([]byte(doc))
		} else {
			_, err = request.DecodeScan([]byte(doc))
		}
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", doc, err)
		}
	}
}
