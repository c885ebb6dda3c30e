package scan

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/microbatch"
	"github.com/pyiceberg-go/pyiceberg-go/core/refs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// incrementalEnd is the end snapshot of an incremental read: end_snapshot_id
// or main's head (nil: an empty table, no rows).
func incrementalEnd(t *table.Table, refSnap *int64, req *request.Request) (*table.Snapshot, error) {
	if refSnap != nil {
		return nil, fmt.Errorf("%w: %s: an incremental read takes no branch_/tag_ identifier (give end_snapshot_id)", errs.ErrInvalidArgument, req.Table)
	}
	if req.EndSnapshotID == nil {
		return t.CurrentSnapshot(), nil
	}
	sn := t.Metadata().SnapshotByID(*req.EndSnapshotID)
	if sn == nil {
		return nil, fmt.Errorf("%w: Cannot find end snapshot: %d", errs.ErrInvalidArgument, *req.EndSnapshotID)
	}
	return sn, nil
}

// appendedFiles plans the data files the append snapshots of (start, end]
// added, without delete files, as Java's IncrementalAppendScan: the
// entries ADDED by those snapshots in the manifests they wrote.
func appendedFiles(ctx context.Context, t *table.Table, end *table.Snapshot, req *request.Request) ([]table.FileScanTask, error) {
	snaps, err := refs.AppendsBetween(t.Metadata(), *req.StartSnapshotID, end, req.SkipOverwriteSnapshots, req.SkipDeleteSnapshots)
	if err != nil {
		return nil, err
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, req.Table, err)
	}
	var tasks []table.FileScanTask
	for _, sn := range snaps {
		files, err := refs.AddedDataFiles(fs, sn)
		if err != nil {
			return nil, err
		}
		for _, df := range files {
			tasks = append(tasks, table.FileScanTask{File: df, Start: 0, Length: df.FileSizeBytes()})
		}
	}
	return tasks, nil
}

// microBatchFiles plans the data files of the micro-batch a stream read
// names (core/microbatch), without delete files, as Spark's streaming read.
func microBatchFiles(ctx context.Context, t *table.Table, req *request.Request) ([]table.FileScanTask, error) {
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, req.Table, err)
	}
	mb := req.MicroBatch
	st := &microbatch.Stream{Meta: t.Metadata(), FS: fs, FromTimestampMs: mb.FromTimestampMs, SkipOverwrite: mb.SkipOverwriteSnapshots, SkipDelete: mb.SkipDeleteSnapshots}
	files, err := st.Files(ctx, mb.Start, *mb.End)
	if err != nil {
		return nil, err
	}
	tasks := make([]table.FileScanTask, 0, len(files))
	for _, df := range files {
		tasks = append(tasks, table.FileScanTask{File: df, Start: 0, Length: df.FileSizeBytes()})
	}
	return tasks, nil
}
