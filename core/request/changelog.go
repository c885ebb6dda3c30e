package request

import (
	"fmt"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// OpChangelog reads the row changes of a range of main's snapshots with
// the columns and rules of Spark's create_changelog_view (core/changelog);
// only through pig_scan / pig_read, as OpScan.
const OpChangelog = "changelog"

// Changelog holds create_changelog_view's arguments: the range (Spark's
// changelog read options start-snapshot-id (exclusive), end-snapshot-id
// (inclusive), start-timestamp, end-timestamp), net_changes,
// compute_updates (default: whether identifier_columns are given) and
// identifier_columns (default: the table's identifier fields).
type Changelog struct {
	StartSnapshotID   *int64   `json:"start_snapshot_id,omitempty"`
	EndSnapshotID     *int64   `json:"end_snapshot_id,omitempty"`
	StartTimestampMs  *int64   `json:"start_timestamp_ms,omitempty"`
	EndTimestampMs    *int64   `json:"end_timestamp_ms,omitempty"`
	NetChanges        bool     `json:"net_changes,omitempty"`
	ComputeUpdates    *bool    `json:"compute_updates,omitempty"`
	IdentifierColumns []string `json:"identifier_columns,omitempty"`
}

// validateChangelog checks Changelog against the operation.
func (r *Request) validateChangelog() error {
	switch {
	case r.Op == OpChangelog && r.Changelog == nil:
		r.Changelog = &Changelog{}
	case r.Op != OpChangelog && r.Changelog != nil:
		return fmt.Errorf("%w: operation %s takes no changelog", errs.ErrInvalidArgument, r.Op)
	}
	if r.Op == OpChangelog && (r.SnapshotID != nil || r.AsOfTimestampMs != nil || r.Ref != "" || len(r.Columns) > 0 || r.Filter != "") {
		return fmt.Errorf("%w: changelog takes its range in changelog; no snapshot_id, as_of_timestamp_ms, ref, columns or filter", errs.ErrInvalidArgument)
	}
	return nil
}
