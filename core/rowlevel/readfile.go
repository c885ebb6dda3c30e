package rowlevel

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
	schema, batches, _, err := readTaskSelect(ctx, t, at, task, batchRows, nil)
	return schema, batches, err
}

// rowSelect drops rows while a file is read: sel decides from the columns
// whose field IDs pred lists (pqread.FilteredBatches).
type rowSelect struct {
	pred []int
	sel  pqread.Select
}

// readTaskSelect is readTask that, when rs is set and pqread reads the file,
// yields only the rows rs keeps (selected true); otherwise every row.
func readTaskSelect(ctx context.Context, t *table.Table, at *table.Snapshot, task table.FileScanTask, batchRows int, rs *rowSelect) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], bool, error) {
	sc := t.Scan(table.WithSnapshotID(at.SnapshotID), table.WithArrowBatchSize(batchRows))
	if useFastReader && task.File.FileFormat() == iceberg.ParquetFile && len(task.DeleteFiles) == 0 &&
		len(task.EqualityDeleteFiles) == 0 && len(task.DeletionVectorFiles) == 0 {
		if schema, batches, selected, ok := fastRead(ctx, t, sc, task, batchRows, rs); ok {
			return schema, batches, selected, nil
		}
	}
	schema, batches, err := sc.ReadTasks(ctx, []table.FileScanTask{task})
	return schema, batches, false, err
}

// useFastReader can switch pqread off (tests compare the two readers).
var useFastReader = true

// fastRead opens task's file with pqread, selecting rows with rs when set
// and possible (selected); ok is false when it cannot be read that way,
// and the caller falls back.
func fastRead(ctx context.Context, t *table.Table, sc *table.Scan, task table.FileScanTask, batchRows int, rs *rowSelect) (_ *arrow.Schema, _ iter.Seq2[arrow.RecordBatch, error], selected, ok bool) {
	proj, err := sc.Projection()
	if err != nil {
		return nil, nil, false, false
	}
	// The Arrow schema exactly as iceberg-go's scan gives it (no file is
	// read for an empty task list).
	asc, _, err := sc.ReadTasks(ctx, nil)
	if err != nil {
		return nil, nil, false, false
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, nil, false, false
	}
	f, err := fs.Open(task.File.FilePath())
	if err != nil {
		return nil, nil, false, false
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, false, false
	}
	rd, ok, err := pqread.Open(f, st.Size(), proj, asc)
	if err != nil || !ok {
		f.Close()
		return nil, nil, false, false
	}
	batches := rd.Batches(ctx, batchRows)
	if rs != nil {
		if fb, err := rd.FilteredBatches(ctx, batchRows, rs.pred, rs.sel); err == nil {
			batches, selected = fb, true
		}
	}
	return asc, func(yield func(arrow.RecordBatch, error) bool) {
		defer f.Close()
		for rec, err := range batches {
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}, selected, true
}
