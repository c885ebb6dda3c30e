package parquet

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// There are two encoders. Flat schemas (top-level primitive columns, see
// flatSchema) are written by the native encoder (native.go), straight from
// the Arrow buffers; nested schemas by arrow-go's pqarrow. Options.Pqarrow
// makes pqarrow write flat schemas too (tests and benchmarks compare them).

// fileEncoder encodes the batches of one Parquet file. Both encoders buffer
// one row group at a time.
type fileEncoder interface {
	// write appends rec to the buffered row group.
	write(rec arrow.RecordBatch) error
	// newRowGroup writes out the buffered row group.
	newRowGroup() error
	// rowGroupBytes is the encoded size of the buffered row group so far.
	rowGroupBytes(written int64) int64
	// overestimates reports whether rowGroupBytes counts data not yet
	// compressed (an upper bound) rather than lagging behind.
	overestimates() bool
	// close writes the footer and returns the file's metadata.
	close() (*metadata.FileMetaData, error)
	// discard drops the file unfinished, releasing what the encoder holds.
	discard()
	// fixMetrics adds to f, after footerMetrics, the bounds the encoder
	// computed itself instead of writing them into the footer.
	fixMetrics(f *File)
}

// pqarrowEncoder is the arrow-go encoder, which handles every schema.
type pqarrowEncoder struct{ fw *pqarrow.FileWriter }

func (e pqarrowEncoder) write(rec arrow.RecordBatch) error {
	if pushed, ok := pushRecordNulls(rec, memory.DefaultAllocator); ok {
		defer pushed.Release()
		rec = pushed
	}
	return e.fw.WriteBuffered(rec)
}
func (e pqarrowEncoder) newRowGroup() error { return e.fw.NewBufferedRowGroupChecked() }
func (e pqarrowEncoder) rowGroupBytes(int64) int64 {
	return e.fw.RowGroupTotalCompressedBytes()
}

func (e pqarrowEncoder) fixMetrics(*File) {}

func (e pqarrowEncoder) overestimates() bool { return false }

func (e pqarrowEncoder) discard() {}

func (e pqarrowEncoder) close() (*metadata.FileMetaData, error) {
	if err := e.fw.Close(); err != nil {
		return nil, withIO(err)
	}
	return e.fw.FileMetadata()
}
