package request

import (
	"fmt"
	"regexp"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The operations of a distributed (two-phase) write: tasks write data
// files for their share of the input and describe them (write_files); a
// coordinator commits every task's descriptions as one snapshot of the
// write's Mode (commit_files) or removes the write's files (abort_files).
const (
	OpWriteFiles  = "write_files"
	OpCommitFiles = "commit_files"
	OpAbortFiles  = "abort_files"
)

// IsDistributed reports whether op is a part of a distributed write.
func IsDistributed(op string) bool {
	return op == OpWriteFiles || op == OpCommitFiles || op == OpAbortFiles
}

// Distributed is the part of a distributed write a request runs.
type Distributed struct {
	// Mode is the write's operation: append, overwritePartitions,
	// overwrite (with the request's filter), create, replace or
	// createOrReplace; the request is checked as a request of that op.
	Mode string `json:"mode"`
	// WriteID names the write; it is part of every file name the write's
	// tasks give their files, and recorded in the snapshot summary.
	WriteID string `json:"write_id"`
	// Task and Attempt (write_files) name the task and its attempt: a file
	// is named <task>-<attempt>-<write_id>-<n>.parquet, as Iceberg Java's
	// OutputFileFactory names Spark's task files.
	Task    *int64 `json:"task,omitempty"`
	Attempt *int64 `json:"attempt,omitempty"`
	// Files (commit_files, abort_files) are the descriptions the tasks'
	// write_files returned.
	Files []DataFile `json:"files,omitempty"`
}

// DataFile describes one data file a task of a distributed write wrote:
// what its manifest entry needs (Iceberg's data_file fields), plus the
// task that wrote it and the table shape it was written against.
type DataFile struct {
	FilePath string `json:"file_path"`
	Task     int64  `json:"task"`
	Attempt  int64  `json:"attempt"`
	// Plan is a digest of the schema (with field ids), partition spec,
	// sort order and data folder the file was written against.
	Plan        string `json:"plan"`
	SchemaID    int    `json:"schema_id"`
	SpecID      int    `json:"spec_id"`
	SortOrderID int    `json:"sort_order_id"`
	// Partition holds the file's partition tuple, one entry per field of
	// the spec: null, or the value's Iceberg single-value serialisation
	// (base64 in JSON).
	Partition       [][]byte       `json:"partition"`
	RecordCount     int64          `json:"record_count"`
	FileSizeInBytes int64          `json:"file_size_in_bytes"`
	ColumnSizes     map[int]int64  `json:"column_sizes,omitempty"`
	ValueCounts     map[int]int64  `json:"value_counts,omitempty"`
	NullValueCounts map[int]int64  `json:"null_value_counts,omitempty"`
	NanValueCounts  map[int]int64  `json:"nan_value_counts,omitempty"`
	LowerBounds     map[int][]byte `json:"lower_bounds,omitempty"`
	UpperBounds     map[int][]byte `json:"upper_bounds,omitempty"`
	SplitOffsets    []int64        `json:"split_offsets,omitempty"`
}

// writeIDRe is what a write id may be: it is part of file names.
var writeIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_]{0,63}$`)

var distributedModes = map[string]bool{
	OpAppend: true, OpOverwritePartitions: true, OpOverwrite: true,
	OpCreate: true, OpReplace: true, OpCreateOrReplace: true,
}

// validateDistributed checks Distributed against the operation and
// returns the request to validate as a request of the write's mode.
func (r *Request) validateDistributed() (*Request, error) {
	d := r.Distributed
	switch {
	case !IsDistributed(r.Op) && d != nil:
		return nil, fmt.Errorf("%w: operation %s takes no distributed", errs.ErrInvalidArgument, r.Op)
	case !IsDistributed(r.Op):
		return nil, nil
	case d == nil:
		return nil, fmt.Errorf("%w: %s needs distributed (mode, write_id, ...)", errs.ErrInvalidArgument, r.Op)
	case !distributedModes[d.Mode]:
		return nil, fmt.Errorf("%w: %s: distributed.mode %q is not append, overwritePartitions, overwrite, create, replace or createOrReplace", errs.ErrInvalidArgument, r.Op, d.Mode)
	case !writeIDRe.MatchString(d.WriteID):
		return nil, fmt.Errorf("%w: %s: distributed.write_id %q is not 1 to 64 letters, digits and underscores", errs.ErrInvalidArgument, r.Op, d.WriteID)
	case r.Op == OpWriteFiles && (d.Task == nil || d.Attempt == nil):
		return nil, fmt.Errorf("%w: write_files needs distributed.task and distributed.attempt", errs.ErrInvalidArgument)
	case r.Op == OpWriteFiles && (*d.Task < 0 || *d.Attempt < 0):
		return nil, fmt.Errorf("%w: write_files: distributed.task and distributed.attempt must be >= 0", errs.ErrInvalidArgument)
	case r.Op == OpWriteFiles && d.Files != nil:
		return nil, fmt.Errorf("%w: write_files takes no distributed.files", errs.ErrInvalidArgument)
	case r.Op != OpWriteFiles && (d.Task != nil || d.Attempt != nil):
		return nil, fmt.Errorf("%w: %s takes no distributed.task or distributed.attempt (each file names its own)", errs.ErrInvalidArgument, r.Op)
	case r.Op == OpAbortFiles && (r.Stream != nil || r.Filter != "" || len(r.Options) > 0 || len(r.PartitionBy) > 0 || len(r.SortOrder) > 0):
		return nil, fmt.Errorf("%w: abort_files takes table, distributed, location and properties only", errs.ErrInvalidArgument)
	}
	for i, f := range d.Files {
		if f.FilePath == "" || f.RecordCount < 0 || f.FileSizeInBytes < 0 || f.Task < 0 || f.Attempt < 0 {
			return nil, fmt.Errorf("%w: %s: distributed.files[%d]: empty file_path or a negative count", errs.ErrInvalidArgument, r.Op, i)
		}
	}
	inner := *r
	inner.Op, inner.Distributed = d.Mode, nil
	if r.Op == OpAbortFiles && (inner.Op == OpOverwrite) {
		inner.Filter = "true" // abort needs no filter
	}
	return &inner, nil
}
