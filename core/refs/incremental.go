package refs

import (
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// AppendsBetween returns the append snapshots of the range (start, end]
// of end's ancestry, oldest first: Spark's start-snapshot-id (exclusive)
// and end-snapshot-id (inclusive) read options. As Java's
// BaseIncrementalScan, start must be the parent of an ancestor of end (it
// may itself be expired). As Spark's streaming read
// (SparkMicroBatchStream.shouldProcess), replace snapshots (compactions)
// are passed over, and an overwrite or delete snapshot fails the read
// unless skipOverwrite / skipDelete says to pass over it too; Spark's
// batch read passes over both silently (both flags set).
func AppendsBetween(m table.Metadata, start int64, end *table.Snapshot, skipOverwrite, skipDelete bool) ([]*table.Snapshot, error) {
	var between []*table.Snapshot
	found := false
	for sn := end; sn != nil; {
		between = append(between, sn)
		if sn.ParentSnapshotID == nil {
			break
		}
		if *sn.ParentSnapshotID == start {
			found = true
			break
		}
		sn = m.SnapshotByID(*sn.ParentSnapshotID)
	}
	if !found {
		endID := int64(0)
		if end != nil {
			endID = end.SnapshotID
		}
		return nil, fmt.Errorf("%w: Starting snapshot (exclusive) %d is not a parent ancestor of end snapshot %d", errs.ErrInvalidArgument, start, endID)
	}
	slices.Reverse(between)
	var out []*table.Snapshot
	for _, sn := range between {
		op := table.OpAppend
		if sn.Summary != nil {
			op = sn.Summary.Operation
		}
		switch op {
		case table.OpAppend:
			out = append(out, sn)
		case table.OpReplace:
		case table.OpDelete:
			if !skipDelete {
				return nil, fmt.Errorf("%w: Cannot process delete snapshot: %d, to ignore deletes, set skip_delete_snapshots=true", errs.ErrValidation, sn.SnapshotID)
			}
		case table.OpOverwrite:
			if !skipOverwrite {
				return nil, fmt.Errorf("%w: Cannot process overwrite snapshot: %d, to ignore overwrites, set skip_overwrite_snapshots=true", errs.ErrValidation, sn.SnapshotID)
			}
		default:
			return nil, fmt.Errorf("%w: Cannot process unknown snapshot operation: %s (snapshot id %d)", errs.ErrValidation, op, sn.SnapshotID)
		}
	}
	return out, nil
}
