package request

import (
	"errors"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The time-travel keys of scans, the inspect op and the rollback
// procedures' keys.
func TestReadAndRollbackKeys(t *testing.T) {
	for _, doc := range []string{
		`{"table": "db.t", "as_of_timestamp_ms": 5}`,
		`{"table": "db.t", "ref": "b", "columns": ["id"]}`,
		`{"op": "inspect", "table": "db.t", "metadata_table": "files", "snapshot_id": 1}`,
		`{"op": "inspect", "table": "db.t", "metadata_table": "all_entries"}`,
	} {
		if _, err := DecodeScan([]byte(doc)); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
	for _, doc := range []string{
		`{"op": "rollback_to_snapshot", "table": "db.t", "snapshot_id": 1}`,
		`{"op": "rollback_to_timestamp", "table": "db.t", "as_of_timestamp_ms": 1}`,
		`{"op": "set_current_snapshot", "table": "db.t", "ref": "b"}`,
		`{"op": "set_current_snapshot", "table": "db.t", "snapshot_id": 1}`,
	} {
		if _, err := Decode([]byte(doc)); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
	for _, doc := range []string{
		`{"table": "db.t", "as_of_timestamp_ms": 5, "snapshot_id": 1}`,
		`{"table": "db.t", "as_of_timestamp_ms": 5, "ref": "b"}`,
		`{"table": "db.t", "snapshot_id": 5, "ref": "b"}`,
		`{"op": "inspect", "table": "db.t"}`,
		`{"op": "inspect", "table": "db.t", "metadata_table": "nope"}`,
		`{"op": "inspect", "table": "db.t", "metadata_table": "files", "ref": "b"}`,
		`{"op": "inspect", "table": "db.t", "metadata_table": "files", "filter": "id = 1"}`,
		`{"table": "db.t", "metadata_table": "files"}`,
	} {
		if _, err := DecodeScan([]byte(doc)); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want invalid argument", doc, err)
		}
	}
	for _, doc := range []string{
		`{"op": "rollback_to_snapshot", "table": "db.t"}`,
		`{"op": "rollback_to_timestamp", "table": "db.t"}`,
		`{"op": "set_current_snapshot", "table": "db.t"}`,
		`{"op": "set_current_snapshot", "table": "db.t", "ref": "b", "snapshot_id": 1}`,
		`{"op": "append", "table": "db.t", "as_of_timestamp_ms": 1}`,
		`{"op": "append", "table": "db.t", "ref": "b"}`,
	} {
		if _, err := Decode([]byte(doc)); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want invalid argument", doc, err)
		}
	}
}
