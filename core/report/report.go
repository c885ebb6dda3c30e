// Package report holds what an operation reports to its caller: Progress,
// counted while it runs and safe to read from another goroutine, and
// Result with its Metrics, returned when a write or row-level change ends.
// It holds no operation logic: the write path (core/write), row-level
// changes (core/rowlevel), ref operations (core/refs) and scans
// (core/scan) fill these in.
package report

import (
	"maps"
	"sync/atomic"

	"github.com/apache/iceberg-go/table"
)

// Progress counts what an operation did so far; safe to read concurrently.
type Progress struct {
	Rows, Bytes, Files atomic.Int64
}

// Result is what a write returns.
type Result struct {
	Table      string            `json:"table"`
	Operation  string            `json:"operation,omitempty"`
	SnapshotID *int64            `json:"snapshot_id"`
	Summary    map[string]string `json:"summary,omitempty"`
	Metrics    Metrics           `json:"metrics"`
	// Merge holds a merge's row counts (num-target-rows-* without the
	// spark.merge-into. prefix).
	Merge map[string]int64 `json:"merge,omitempty"`
	// Skipped says a streaming write's batch was committed before by its
	// query on the target branch: nothing was committed (SnapshotID nil),
	// and LastBatchID is the query's last committed batch.
	Skipped     bool   `json:"skipped,omitempty"`
	LastBatchID *int64 `json:"last_batch_id,omitempty"`
}

// Metrics of a write.
type Metrics struct {
	Rows    int64   `json:"rows"`
	Files   int64   `json:"files"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
}

// SnapshotSummary is sn's operation and a copy of its summary properties
// ("" and nil for no snapshot or no summary).
func SnapshotSummary(sn *table.Snapshot) (string, map[string]string) {
	if sn == nil || sn.Summary == nil {
		return "", nil
	}
	return string(sn.Summary.Operation), maps.Clone(sn.Summary.Properties)
}
