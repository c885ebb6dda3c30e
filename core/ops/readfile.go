package ops

import (
	"context"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/pqread"
)

// readTask reads every row of one data file as of snapshot at, for a
// rewrite: with core/pqread when the file is Parquet without delete files
// and in the shape pqread takes (flat schema, columns found by field ID
// with their own types), otherwise with iceberg-go's scan, which also
// applies delete files and schema evolution. Both give the same schema and
// rows (TestFastReaderMatchesIcebergScan).
func readTask(ctx context.Context, t *table.Table, at *table.Snapshot, task table.FileScanTask, batchRows int) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	sc := t.Scan(table.WithSnapshotID(at.SnapshotID), table.WithArrowBatchSize(batchRows))
	if useFastReader && task.File.FileFormat() == iceberg.ParquetFile && len(task.DeleteFiles) == 0 &&
		len(task.EqualityDeleteFiles) == 0 && len(task.DeletionVectorFiles) == 0 {
		if schema, batches, ok := fastRead(ctx, t, sc, task, batchRows); ok {
			return schema, batches, nil
		}
	}
	return sc.ReadTasks(ctx, []table.FileScanTask{task})
}

// useFastReader can switch pqread off (tests compare the two readers).
var useFastReader = true

// fastRead opens task's file with pqread; ok is false when it cannot be
// read that way, and the caller falls back.
func fastRead(ctx context.Context, t *table.Table, sc *table.Scan, task table.FileScanTask, batchRows int) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], bool) {
	proj, err := sc.Projection()
	if err != nil {
		return nil, nil, false
	}
	// The Arrow schema exactly as iceberg-go's scan gives it (no file is
	// read for an empty task list).
	asc, _, err := sc.ReadTasks(ctx, nil)
	if err != nil {
		return nil, nil, false
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, nil, false
	}
	f, err := fs.Open(task.File.FilePath())
	if err != nil {
		return nil, nil, false
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, false
	}
	rd, ok, err := pqread.Open(f, st.Size(), proj, asc)
	if err != nil || !ok {
		f.Close()
		return nil, nil, false
	}
	return asc, func(yield func(arrow.RecordBatch, error) bool) {
		defer f.Close()
		for rec, err := range rd.Batches(ctx, batchRows) {
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}, true
}
