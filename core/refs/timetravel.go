package refs

import (
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
)

// FormatMillis formats epoch milliseconds as Java's
// DateTimeUtil.formatTimestampMillis does (ISO, UTC, no zone suffix).
func FormatMillis(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000")
}

// SnapshotAsOf returns the snapshot that was main's current one at tsMs,
// as Spark's as-of-timestamp (Java's SnapshotUtil.snapshotIdAsOfTime):
// the last snapshot-log entry at or before tsMs.
func SnapshotAsOf(m table.Metadata, tsMs int64) (int64, error) {
	var id *int64
	for e := range m.SnapshotLogs() {
		if e.TimestampMs <= tsMs {
			sid := e.SnapshotID
			id = &sid
		}
	}
	if id == nil {
		return 0, fmt.Errorf("%w: Cannot find a snapshot older than %s", errs.ErrInvalidArgument, FormatMillis(tsMs))
	}
	return *id, nil
}

// ReadSnapshot returns the snapshot a scan of t reads: refSnap (the
// identifier's branch_/tag_ suffix), or the request's snapshot_id,
// as_of_timestamp_ms or ref (at most one of all these), else main's head
// (nil for a table without one).
func ReadSnapshot(t *table.Table, refSnap *int64, req *request.Request) (*table.Snapshot, error) {
	m := t.Metadata()
	id := refSnap
	given := 0
	if refSnap != nil {
		given++
	}
	if req.SnapshotID != nil {
		given++
		id = req.SnapshotID
	}
	if req.AsOfTimestampMs != nil {
		given++
		sid, err := SnapshotAsOf(m, *req.AsOfTimestampMs)
		if err != nil {
			return nil, fmt.Errorf("reading %s as of %d: %w", req.Table, *req.AsOfTimestampMs, err)
		}
		id = &sid
	}
	if req.Ref != "" {
		given++
		r, ok := stage.RefOf(m, req.Ref)
		if !ok {
			return nil, fmt.Errorf("%w: Cannot find ref %s of table %s", errs.ErrValidation, req.Ref, req.Table)
		}
		sid := r.SnapshotID
		id = &sid
	}
	if given > 1 {
		return nil, fmt.Errorf("%w: %s: a read takes one of a branch_/tag_ identifier, snapshot_id, as_of_timestamp_ms and ref", errs.ErrInvalidArgument, req.Table)
	}
	if id == nil {
		return t.CurrentSnapshot(), nil
	}
	sn := m.SnapshotByID(*id)
	if sn == nil {
		return nil, fmt.Errorf("%w: table %s has no snapshot %d", errs.ErrInvalidArgument, req.Table, *id)
	}
	return sn, nil
}

// rollback plans Spark's rollback_to_snapshot, rollback_to_timestamp and
// set_current_snapshot procedures as Java's SetSnapshotOperation: main is
// set to the target snapshot (the snapshot log gains an entry); rolling
// back requires an ancestor of main's head, setting does not. Errors
// follow Java's (ValidationException -> validation).
func (c *committer) rollback(t *table.Table, req *request.Request) ([]table.Requirement, []table.Update, error) {
	m := t.Metadata()
	c.previous = nil
	main := m.SnapshotByName(table.MainBranch)
	if main != nil {
		id := main.SnapshotID
		c.previous = &id
	}
	var target int64
	switch req.Op {
	case request.OpRollbackToSnapshot:
		target = *req.SnapshotID
		if m.SnapshotByID(target) == nil {
			return nil, nil, fmt.Errorf("%w: Cannot roll back to unknown snapshot id: %d (table %s)", errs.ErrValidation, target, c.ID)
		}
		if main == nil || !isAncestor(m, main.SnapshotID, target) {
			return nil, nil, fmt.Errorf("%w: Cannot roll back to snapshot, not an ancestor of the current state: %d (table %s)", errs.ErrValidation, target, c.ID)
		}
	case request.OpRollbackToTimestamp:
		// Java's findLatestAncestorOlderThan: strictly older.
		var found *table.Snapshot
		for sn := main; sn != nil; {
			if sn.TimestampMs < *req.AsOfTimestampMs && (found == nil || sn.TimestampMs > found.TimestampMs) {
				found = sn
			}
			if sn.ParentSnapshotID == nil {
				break
			}
			sn = m.SnapshotByID(*sn.ParentSnapshotID)
		}
		if found == nil {
			return nil, nil, fmt.Errorf("%w: Cannot roll back, no valid snapshot older than: %d (%s; table %s)", errs.ErrValidation, *req.AsOfTimestampMs, FormatMillis(*req.AsOfTimestampMs), c.ID)
		}
		target = found.SnapshotID
	case request.OpSetCurrentSnapshot:
		if req.Ref != "" {
			r, ok := stage.RefOf(m, req.Ref)
			if !ok {
				return nil, nil, fmt.Errorf("%w: Cannot find matching snapshot ID for ref %s (table %s)", errs.ErrInvalidArgument, req.Ref, c.ID)
			}
			target = r.SnapshotID
		} else {
			target = *req.SnapshotID
		}
		if m.SnapshotByID(target) == nil {
			return nil, nil, fmt.Errorf("%w: Cannot roll back to unknown snapshot id: %d (table %s)", errs.ErrValidation, target, c.ID)
		}
	}
	if c.previous != nil && *c.previous == target {
		return nil, nil, nil
	}
	return []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, c.previous)},
		[]table.Update{setBranch(m, t.MetadataLocation(), table.MainBranch, target)}, nil
}
