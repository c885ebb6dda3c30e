package gotests

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// CALL runs Iceberg's Spark procedures through the operations that
// implement them; each result carries Spark's columns.
func TestSQLCallRunsTheProcedures(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	rows := func() int {
		ids, _, _, err := scanIDs(t, ctxT(t), e, request.Request{Table: "local.db.t"})
		if err != nil {
			t.Fatal(err)
		}
		return len(ids)
	}
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t"}, rowsReader(t, 0, 10, 1))
	for i := int64(1); i < 4; i++ {
		mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.t"}, rowsReader(t, 10*i, 10, 1))
	}
	var first int64
	for e := range loadMeta(t, s, "local.db.t").SnapshotLogs() {
		first = e.SnapshotID
		break
	}
	res := mustSQL(t, s, "CALL local.system.rewrite_data_files(table => 'db.t', options => map('min-input-files', '2'))")
	out := res["result"]
	if res["statement"] != "CALL rewrite_data_files" || res["op"] != "rewrite_data_files" || !strings.Contains(jsonOf(out), `"rewritten_data_files_count":4`) {
		t.Fatalf("rewrite_data_files: %v", jsonOf(res))
	}
	if n := rows(); n != 40 {
		t.Fatalf("%d rows after compaction", n)
	}
	res = mustSQL(t, s, "CALL system.rewrite_manifests('db.t')")
	if !strings.Contains(jsonOf(res["result"]), "rewritten_manifests_count") {
		t.Fatalf("rewrite_manifests: %v", jsonOf(res))
	}
	res = mustSQL(t, s, "CALL local.system.rollback_to_snapshot('db.t', "+itoa(first)+")")
	if !strings.Contains(jsonOf(res["result"]), `"current_snapshot_id":`+itoa(first)) {
		t.Fatalf("rollback_to_snapshot: %v", jsonOf(res))
	}
	if n := rows(); n != 10 {
		t.Fatalf("%d rows after the rollback", n)
	}
	mustSQL(t, s, "ALTER TABLE local.db.t CREATE BRANCH b")
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.t.branch_b"}, rowsReader(t, 100, 5, 1))
	mustSQL(t, s, "CALL local.system.fast_forward(table => 'local.db.t', branch => 'main', to => 'b')")
	if n := rows(); n != 15 {
		t.Fatalf("%d rows after fast_forward", n)
	}
	mustSQL(t, s, "CALL local.system.set_current_snapshot(table => 'db.t', snapshot_id => "+itoa(first)+")")
	res = mustSQL(t, s, "CALL local.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1, clean_expired_metadata => true)")
	if !strings.Contains(jsonOf(res["result"]), "deleted_data_files_count") {
		t.Fatalf("expire_snapshots: %v", jsonOf(res))
	}
	res = mustSQL(t, s, "CALL local.system.remove_orphan_files(table => 'db.t', dry_run => true)")
	if !strings.Contains(jsonOf(res["result"]), `"dry_run":true`) {
		t.Fatalf("remove_orphan_files: %v", jsonOf(res))
	}

	before := loadMeta(t, s, "local.db.t").LastUpdatedMillis()
	for _, c := range []struct {
		stmt string
		kind error
		msg  string
	}{
		{"CALL local.system.nope('db.t')", errs.ErrNotSupported, "procedure nope"},
		{"CALL local.system.rollback_to_snapshot(table => 'db.t')", errs.ErrInvalidArgument, "needs the parameter snapshot_id"},
		{"CALL local.system.rollback_to_snapshot(table => 'db.t', snap => 1)", errs.ErrInvalidArgument, "no parameter snap"},
		{"CALL local.system.rollback_to_snapshot(table => 'db.t', 1)", errs.ErrInvalidArgument, "positional argument after named"},
		{"CALL local.system.rollback_to_snapshot('db.t', 'x')", errs.ErrInvalidArgument, "snapshot_id is an integer"},
		{"CALL local.system.expire_snapshots('db.t', '2020-01-01')", errs.ErrInvalidArgument, "older_than is a timestamp"},
		{"CALL local.system.expire_snapshots('db.t', TIMESTAMP '2020-13-01')", errs.ErrInvalidArgument, "invalid timestamp"},
		{"CALL local.system.expire_snapshots(table => 'db.t', table => 'db.t')", errs.ErrInvalidArgument, "given twice"},
		{"CALL local.system.rewrite_data_files(table => 'db.t', strategy => 'fast')", errs.ErrInvalidArgument, "unsupported strategy"},
		{"CALL local.system.rewrite_data_files(table => 'db.t', options => map('nope', '1'))", errs.ErrInvalidArgument, "nope"},
		{"CALL local.x.rewrite_data_files('db.t')", errs.ErrInvalidArgument, "system"},
		{"CALL local.system.rewrite_data_files(table => 'db.nope')", errs.ErrNoSuchTable, "nope"},
	} {
		_, err := runSQL(t, s, c.stmt)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %v naming %q", c.stmt, err, c.kind, c.msg)
		}
	}
	if loadMeta(t, s, "local.db.t").LastUpdatedMillis() != before {
		t.Errorf("a failed CALL changed the table")
	}
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
