package request

import (
	"fmt"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// OpStreamOffset plans the next micro-batch of a table read as a stream
// (core/microbatch): from MicroBatch.Start (absent: the stream's start) to
// the end its limits allow. A scan with MicroBatch.Start and .End then
// reads that micro-batch's rows.
const OpStreamOffset = "stream_offset"

// Offset is a position in a table's stream, the JSON of Spark's
// StreamingOffset: a snapshot of main's history, the position of the next
// data file among those it added, and whether every live file of the
// snapshot is streamed rather than those it added (old Spark checkpoints
// only). Version, when given, is 1.
type Offset struct {
	Version      int   `json:"version,omitempty"`
	SnapshotID   int64 `json:"snapshot_id"`
	Position     int64 `json:"position"`
	ScanAllFiles bool  `json:"scan_all_files"`
}

// MicroBatch holds a stream read's offsets and read options (Spark's
// streaming-* read options).
type MicroBatch struct {
	// Start is the end of the previous micro-batch (absent: the stream's
	// first); End, for scans, the end of the one read.
	Start *Offset `json:"start,omitempty"`
	End   *Offset `json:"end,omitempty"`
	// FromTimestampMs is stream-from-timestamp: a new stream starts at the
	// oldest snapshot committed at or after it.
	FromTimestampMs *int64 `json:"from_timestamp_ms,omitempty"`
	// MaxFiles (hard) and MaxRows (soft: whole files, at least one) bound
	// a micro-batch planned by stream_offset; the first reached ends it.
	MaxFiles int64 `json:"max_files,omitempty"`
	MaxRows  int64 `json:"max_rows,omitempty"`
	// UntilSnapshotID stops planning at that snapshot (Trigger.AvailableNow
	// fixes it when a query starts).
	UntilSnapshotID        *int64 `json:"until_snapshot_id,omitempty"`
	SkipOverwriteSnapshots bool   `json:"skip_overwrite_snapshots,omitempty"`
	SkipDeleteSnapshots    bool   `json:"skip_delete_snapshots,omitempty"`
}

// validateMicroBatch checks MicroBatch against the operation.
func (r *Request) validateMicroBatch() error {
	mb := r.MicroBatch
	switch {
	case r.Op == OpStreamOffset && mb == nil:
		return fmt.Errorf("%w: stream_offset needs micro_batch", errs.ErrInvalidArgument)
	case mb == nil:
		return nil
	case r.Op != OpStreamOffset && r.Op != OpScan:
		return fmt.Errorf("%w: operation %s takes no micro_batch (scan, stream_offset)", errs.ErrInvalidArgument, r.Op)
	case mb.MaxFiles < 0 || mb.MaxRows < 0:
		return fmt.Errorf("%w: micro_batch max_files and max_rows must be positive", errs.ErrInvalidArgument)
	case r.Op == OpStreamOffset && mb.End != nil:
		return fmt.Errorf("%w: stream_offset plans micro_batch.end; it takes none", errs.ErrInvalidArgument)
	case r.Op == OpScan && mb.End == nil:
		return fmt.Errorf("%w: a micro-batch scan needs micro_batch.end (from stream_offset)", errs.ErrInvalidArgument)
	case r.Op == OpScan && (mb.MaxFiles != 0 || mb.MaxRows != 0 || mb.UntilSnapshotID != nil):
		return fmt.Errorf("%w: a micro-batch scan reads start..end; max_files, max_rows and until_snapshot_id are stream_offset's", errs.ErrInvalidArgument)
	case r.SnapshotID != nil || r.AsOfTimestampMs != nil || r.Ref != "" || r.StartSnapshotID != nil:
		return fmt.Errorf("%w: a micro-batch read takes no snapshot_id, as_of_timestamp_ms, ref or start_snapshot_id", errs.ErrInvalidArgument)
	}
	for _, o := range []*Offset{mb.Start, mb.End} {
		if o != nil && (o.Version != 0 && o.Version != 1 || o.Position < 0) {
			return fmt.Errorf("%w: micro_batch offset %+v: version must be 1 and position >= 0", errs.ErrInvalidArgument, *o)
		}
	}
	return nil
}
