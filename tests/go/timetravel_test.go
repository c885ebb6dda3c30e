package gotests

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/inspect"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// threeSnapshots writes 10, 20 and 30 rows in three commits and returns
// the snapshot ids and main's snapshot-log timestamps.
func threeSnapshots(t *testing.T, e *env) ([]int64, []int64) {
	t.Helper()
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.tt",
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 10, 1))
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.tt"}, rowsReader(t, 10, 10, 1))
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.tt"}, rowsReader(t, 20, 10, 1))
	var ids, ts []int64
	for entry := range loadTable(t, s, "local.db.tt").Metadata().SnapshotLogs() {
		ids, ts = append(ids, entry.SnapshotID), append(ts, entry.TimestampMs)
	}
	if len(ids) != 3 {
		t.Fatalf("snapshot log %v", ids)
	}
	return ids, ts
}

func TestScanAsOfTimestampAndRef(t *testing.T) {
	e := newEnv(t)
	ids, ts := threeSnapshots(t, e)
	ctx := ctxT(t)
	for i := range ids {
		at := ts[i]
		// The last log entry at or before the time (commits may share a millisecond).
		want := 0
		for j := range ts {
			if ts[j] <= at {
				want = j
			}
		}
		got, _, _, err := scanIDs(t, ctx, e, request.Request{Table: "local.db.tt", AsOfTimestampMs: &at})
		if err != nil || len(got) != 10*(want+1) {
			t.Fatalf("as of %d: %d rows, %v; want %d", at, len(got), err, 10*(want+1))
		}
	}
	before := ts[0] - 1
	if _, _, _, err := scanIDs(t, ctx, e, request.Request{Table: "local.db.tt", AsOfTimestampMs: &before}); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("before the first snapshot: %v", err)
	}
	s := e.session(t)
	if _, err := ops.Execute(ctx, s, &request.Request{Op: request.OpCreateTag, Table: "local.db.tt", Ref: "first", SnapshotID: &ids[0]}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, _, _, err := scanIDs(t, ctx, e, request.Request{Table: "local.db.tt", Ref: "first"}); err != nil || len(got) != 10 {
		t.Fatalf("ref: %d rows, %v", len(got), err)
	}
	if _, err := request.DecodeScan([]byte(`{"table": "db.t", "ref": "a", "snapshot_id": 1}`)); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("ref and snapshot_id: %v", err)
	}
}

func TestRollbackProcedures(t *testing.T) {
	e := newEnv(t)
	ids, ts := threeSnapshots(t, e)
	ctx := ctxT(t)
	s := e.session(t)
	run := func(req request.Request) (map[string]any, error) {
		req.Table = "local.db.tt"
		res, err := ops.Execute(ctx, s, &req, nil, nil)
		if err != nil {
			return nil, err
		}
		return res.(map[string]any), nil
	}
	res, err := run(request.Request{Op: request.OpRollbackToSnapshot, SnapshotID: &ids[0]})
	if err != nil || *res["previous_snapshot_id"].(*int64) != ids[2] || res["current_snapshot_id"] != ids[0] {
		t.Fatalf("rollback_to_snapshot: %v, %v", res, err)
	}
	if n := len(readRows(t, s, "local.db.tt", nil)); n != 10 {
		t.Fatalf("after rollback %d rows", n)
	}
	// ids[2] is no longer an ancestor of main.
	if _, err := run(request.Request{Op: request.OpRollbackToSnapshot, SnapshotID: &ids[2]}); !errors.Is(err, errs.ErrValidation) {
		t.Fatalf("non-ancestor: %v", err)
	}
	if _, err := run(request.Request{Op: request.OpSetCurrentSnapshot, SnapshotID: &ids[2]}); err != nil {
		t.Fatal(err)
	}
	// Strictly older than the third snapshot's time: the second (or the first, if they share a millisecond).
	at := ts[2]
	res, err = run(request.Request{Op: request.OpRollbackToTimestamp, AsOfTimestampMs: &at})
	if err != nil || (res["current_snapshot_id"] != ids[1] && res["current_snapshot_id"] != ids[0]) {
		t.Fatalf("rollback_to_timestamp: %v, %v", res, err)
	}
	first := ts[0]
	if _, err := run(request.Request{Op: request.OpRollbackToTimestamp, AsOfTimestampMs: &first}); !errors.Is(err, errs.ErrValidation) {
		t.Fatalf("nothing older: %v", err)
	}
}

func TestInspectTables(t *testing.T) {
	e := newEnv(t)
	ids, _ := threeSnapshots(t, e)
	ctx := ctxT(t)
	s := e.session(t)
	count := func(name string, snap *int64) int64 {
		t.Helper()
		rdr, err := inspect.Read(ctx, s, &request.Request{Op: request.OpInspect, Table: "local.db.tt", MetadataTable: name, SnapshotID: snap}, memory.DefaultAllocator, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer rdr.Release()
		var n int64
		for rdr.Next() {
			n += rdr.RecordBatch().NumRows()
		}
		return n
	}
	// rowsReader spreads rows over three categories: three files a commit.
	for name, want := range map[string]int64{"snapshots": 3, "history": 3, "refs": 1, "files": 9, "data_files": 9,
		"delete_files": 0, "manifests": 3, "entries": 9, "partitions": 3, "all_manifests": 6, "metadata_log_entries": 3} {
		if got := count(name, nil); got != want {
			t.Errorf("%s: %d rows, want %d", name, got, want)
		}
	}
	if got := count("files", &ids[0]); got != 3 {
		t.Errorf("files of the first snapshot: %d", got)
	}
	rdr, err := inspect.Read(ctx, s, &request.Request{Op: request.OpInspect, Table: "local.db.tt", MetadataTable: "partitions"}, memory.DefaultAllocator, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var records int64
	for rdr.Next() {
		rec := rdr.RecordBatch()
		col := rec.Column(rec.Schema().FieldIndices("record_count")[0]).(*array.Int64)
		for i := range col.Len() {
			records += col.Value(i)
		}
	}
	if records != 30 {
		t.Errorf("partitions count %d records, want 30", records)
	}
}
