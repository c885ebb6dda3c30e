package parquet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// File describes one written data file and the metrics of an Iceberg
// DataFile. Metric maps are keyed by Iceberg field id (leaf columns).
type File struct {
	Path string
	Rows int64
	Size int64

	ColumnSizes, ValueCounts, NullCounts, NaNCounts map[int]int64
	// Lower and Upper are Iceberg single-value serialisations (spec
	// Appendix D). Strings and binary are truncated to 16 code points or
	// bytes; an upper bound that cannot be incremented is left out. Values in
	// lists and maps have no bounds.
	Lower, Upper map[int][]byte
	// SplitOffsets are the row groups' start offsets, ascending.
	SplitOffsets []int64
}

const (
	queueLen = 2
	// bufferBytes batches the many small page writes into larger FileIO writes.
	bufferBytes = 64 << 10
	// Rows per slice handed to the encoder: the file and row group sizes
	// are checked between slices.
	firstSliceRows = 4096
	minSliceRows   = 128
	maxSliceRows   = 65536
)

// Writer writes the record batches of one partition into rolling Parquet
// files. Encoding runs on one goroutine per Writer fed by a short queue, so
// several Writers used from one goroutine encode in parallel. Write, Close
// and Abort are called from one goroutine; BytesWritten from any. Every
// Writer must end with Close or Abort, which wait for its goroutine.
type Writer struct {
	ctx     context.Context
	fs      icebergio.WriteFileIO
	schema  *arrow.Schema
	opts    resolved
	optErr  error
	newPath func() string
	floats  bool
	// flat is set when the native encoder writes the files.
	flat []flatColumn
	plan columnPlan

	queue     chan queuedBatch
	stop      chan struct{}
	done      chan struct{}
	started   bool
	finished  bool
	queueOnce sync.Once // closes queue: no more batches
	stopOnce  sync.Once // closes stop: abort

	bytes atomic.Int64
	// queued is the Arrow size of the batches waiting in the queue and
	// rowGroup the estimated size of the buffered row group: together the
	// memory this Writer holds (Buffered).
	queued   atomic.Int64
	rowGroup atomic.Int64

	// Owned by the encoding goroutine; read by the caller after done closes.
	files     []File
	paths     []string
	cur       *openFile
	closing   *closingFile
	doneBytes int64
	perRow    float64 // encoded bytes per row of the last finished file
	err       error
}

// closingFile is a file being finished (its last row group, page index and
// footer written) on a goroutine of its own while the next one is encoded.
type closingFile struct {
	*task
	est int64 // its size when handed over, counted in doneBytes meanwhile
	f   File
}

// task is work on a goroutine of its own; a panic in it becomes its error.
type task struct {
	done chan struct{}
	err  error
}

// goTask runs f on a goroutine of its own.
func goTask(f func() error) *task {
	t := &task{done: make(chan struct{})}
	go func() {
		defer close(t.done)
		defer func() {
			if r := recover(); r != nil {
				t.err = fmt.Errorf("parquet writer: internal error: %v", r)
			}
		}()
		t.err = f()
	}()
	return t
}

// wait waits for the task to end and returns its error; nil for no task.
func (t *task) wait() error {
	if t == nil {
		return nil
	}
	<-t.done
	return t.err
}

// openFile is the file being written.
type openFile struct {
	path        string
	out         icebergio.FileWriter
	buf         *bufio.Writer
	cnt         *countingWriter
	fw          fileEncoder
	nan         map[int]int64
	rows        int64
	rgRows      int64 // rows in the buffered row group
	flushedRows int64 // rows in row groups already written out
	newRowGroup bool
}

// countingWriter counts the bytes handed to the file. It deliberately has
// no Close so that the Parquet writer leaves closing to the Writer.
type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil {
		return n, fmt.Errorf("%w: %w", errs.ErrIO, err)
	}
	return n, nil
}

// NewWriter returns a Writer for batches of schema, which must carry Iceberg
// field ids in "PARQUET:field_id" field metadata. newPath names each new
// file. Invalid opts are reported by the first Write and by Close.
func NewWriter(ctx context.Context, fs icebergio.WriteFileIO, schema *arrow.Schema, opts Options, newPath func() string) *Writer {
	r, err := opts.resolve()
	w := &Writer{
		ctx: ctx, fs: fs, schema: schema, opts: r, optErr: err, newPath: newPath,
		queue: make(chan queuedBatch, queueLen),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	for _, f := range schema.Fields() {
		w.floats = w.floats || hasFloat(f.Type)
	}
	if err == nil {
		w.plan, err = planColumns(schema, r)
		if err != nil {
			w.optErr = fmt.Errorf("parquet writer: %w", err)
		}
	}
	if err == nil && !r.Pqarrow {
		if cols, _, ok := flatSchema(schema); ok {
			w.flat = cols
		}
	}
	return w
}

// KeepsNoInput reports whether Writers of schema with opts keep nothing of
// a batch once they have encoded it: the native encoder copies every value
// (into pages, dictionaries and bounds), so a batch's buffers can be reused
// as soon as it is released. pqarrow may keep references.
func KeepsNoInput(schema *arrow.Schema, opts Options) bool {
	r, err := opts.resolve()
	if err != nil || r.Pqarrow {
		return false
	}
	_, _, ok := flatSchema(schema)
	return ok
}

// BytesWritten is the number of bytes written so far, counting the
// buffered row group of the open file. It is safe from any goroutine.
func (w *Writer) BytesWritten() int64 { return w.bytes.Load() }

// Buffered estimates the memory the Writer holds: batches queued for
// encoding plus the row group being built. It is safe from any goroutine.
func (w *Writer) Buffered() int64 { return w.queued.Load() + w.rowGroup.Load() }

// Flush asks the encoder to write out the buffered row group once the
// batches queued before it are encoded, releasing its memory; the file
// stays open. Called from the goroutine that calls Write.
func (w *Writer) Flush() error {
	if w.optErr != nil || w.finished || !w.started {
		return w.optErr
	}
	select {
	case w.queue <- queuedBatch{}:
		return nil
	case <-w.done:
		return w.doneErr()
	case <-w.ctx.Done():
		return fmt.Errorf("parquet writer: %w: %w", errs.ErrCancelled, w.ctx.Err())
	}
}

// queuedBatch is a batch waiting for the encoder; a nil rec asks for the
// buffered row group to be written out (Flush).
type queuedBatch struct {
	rec      arrow.RecordBatch
	borrowed bool // WriteBorrowed
}

// Write queues rec for encoding, retaining it until it is written. It
// blocks while the queue is full and returns the encoder's error, if any.
func (w *Writer) Write(rec arrow.RecordBatch) error { return w.write(rec, false) }

// WriteBorrowed is Write for a batch whose memory the caller keeps alive
// and unchanged until Close or Abort returns (a table the caller holds in
// memory): the native encoder keeps such batches rather than their
// encoded pages until their row group is complete, then encodes the row
// group column by column, each column chunk going straight to the file.
func (w *Writer) WriteBorrowed(rec arrow.RecordBatch) error { return w.write(rec, true) }

func (w *Writer) write(rec arrow.RecordBatch, borrowed bool) error {
	if w.optErr != nil {
		return w.optErr
	}
	if w.finished {
		return fmt.Errorf("parquet writer: write after Close or Abort: %w", errs.ErrInvalidArgument)
	}
	if !rec.Schema().Equal(w.schema) {
		return fmt.Errorf("parquet writer: batch schema %s does not match writer schema %s: %w",
			rec.Schema(), w.schema, errs.ErrInvalidArgument)
	}
	if !w.started {
		w.started = true
		go w.run()
	}
	select {
	case <-w.done:
		return w.doneErr()
	default:
	}
	rec.Retain()
	n := RecordBytes(rec)
	w.queued.Add(n)
	select {
	case w.queue <- queuedBatch{rec, borrowed}:
		return nil
	case <-w.done:
		w.queued.Add(-n)
		rec.Release()
		return w.doneErr()
	case <-w.ctx.Done():
		w.queued.Add(-n)
		rec.Release()
		return fmt.Errorf("parquet writer: %w: %w", errs.ErrCancelled, w.ctx.Err())
	}
}

func (w *Writer) doneErr() error {
	if w.err != nil {
		return w.err
	}
	return fmt.Errorf("parquet writer: aborted: %w", errs.ErrCancelled)
}

// Close writes what is queued, closes the open file and returns every file
// written. On error it also returns the files that exist (partial ones with
// only Path set) so that the caller can delete them.
func (w *Writer) Close() ([]File, error) {
	if w.optErr != nil {
		return nil, w.optErr
	}
	w.shutdown(false)
	if w.err == nil {
		return w.files, nil
	}
	out := append([]File(nil), w.files...)
	for _, p := range w.paths[len(w.files):] {
		out = append(out, File{Path: p})
	}
	return out, w.err
}

// Drain says no more batches will come, without waiting: the encoding
// goroutine finishes the queue and the file on its own. Calling Drain on
// every writer before closing them one by one lets their last pages and
// buffered row groups be written at the same time instead of in turn.
// After Drain only Close and Abort may be called.
func (w *Writer) Drain() {
	w.finished = true
	if w.started {
		w.queueOnce.Do(func() { close(w.queue) })
	}
}

// Abort stops encoding, closes the open file without finishing it and
// returns the paths of all files created, for the caller to delete.
func (w *Writer) Abort() []string {
	w.shutdown(true)
	return append([]string(nil), w.paths...)
}

// shutdown ends the goroutine (after the queue drains unless abort) and
// releases batches left in the queue.
func (w *Writer) shutdown(abort bool) {
	w.finished = true
	if !w.started {
		return
	}
	if abort {
		w.stopOnce.Do(func() { close(w.stop) })
	}
	w.queueOnce.Do(func() { close(w.queue) })
	<-w.done
	for q := range w.queue {
		if q.rec != nil {
			q.rec.Release()
		}
	}
	w.queued.Store(0)
	w.rowGroup.Store(0)
}

// run is the encoding goroutine.
func (w *Writer) run() {
	defer close(w.done)
	defer func() {
		if r := recover(); r != nil {
			w.err = fmt.Errorf("parquet writer: internal error: %v", r)
			w.discard()
		}
	}()
	for {
		select {
		case <-w.stop:
			w.discard()
			return
		case q, ok := <-w.queue:
			if !ok {
				select {
				case <-w.stop:
					w.discard()
					return
				default:
				}
				// A cancelled write must not leave a finished file behind.
				if err := w.ctx.Err(); err != nil {
					w.err = fmt.Errorf("parquet writer: %w: %w", errs.ErrCancelled, err)
					w.discard()
					return
				}
				if err := w.finishFile(); err != nil {
					w.err = err
					w.discard()
				}
				return
			}
			rec := q.rec
			if rec == nil {
				if err := w.flushRowGroup(); err != nil {
					w.err = err
					w.discard()
					return
				}
				continue
			}
			err := w.writeBatch(rec, q.borrowed)
			w.queued.Add(-RecordBytes(rec))
			rec.Release()
			if err != nil {
				w.err = err
				w.discard()
				return
			}
		}
	}
}

// writeBatch encodes rec in slices, starting row groups and files as the
// bytes written reach their limits; borrowed (WriteBorrowed) slices are
// held when the encoder can hold them.
func (w *Writer) writeBatch(rec arrow.RecordBatch, borrowed bool) error {
	if err := w.ctx.Err(); err != nil {
		return fmt.Errorf("parquet writer: %w: %w", errs.ErrCancelled, err)
	}
	n := rec.NumRows()
	prior := w.perRow
	if prior == 0 {
		prior = arrowBytesPerRow(rec)
	}
	for off := int64(0); off < n; {
		select {
		case <-w.stop:
			return fmt.Errorf("parquet writer: aborted: %w", errs.ErrCancelled)
		default:
		}
		if w.cur == nil {
			if err := w.openFile(rec, off); err != nil {
				return err
			}
		}
		size := min(w.sliceRows(prior), n-off)
		sl := rec.NewSlice(off, off+size)
		err := w.cur.write(sl, w.floats, borrowed)
		sl.Release()
		if err != nil {
			return writeErr(w.cur.path, err)
		}
		off += size
		est, rg := w.estimate()
		if rg >= w.opts.RowGroupBytes {
			w.cur.newRowGroup = true
		}
		// An encoder that over-estimates (the native one counts its open
		// pages and dictionaries uncompressed) would roll the first file early:
		// cut a first, small row group to learn the real bytes per row.
		if w.cur.fw.overestimates() && w.perRow == 0 && w.cur.flushedRows == 0 && rg >= w.opts.TargetFileSize/4 {
			w.cur.newRowGroup = true
			est = w.cur.written()
		}
		w.bytes.Store(w.doneBytes + est)
		// Memory held is the encoder's own count of what it buffers (open
		// pages not yet compressed) when larger than the estimate of their
		// encoded size.
		w.rowGroup.Store(max(rg, w.cur.fw.rowGroupBytes(w.cur.written())))
		if est >= w.opts.TargetFileSize {
			if err := w.rollFile(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flushRowGroup writes out the open file's buffered row group now.
func (w *Writer) flushRowGroup() error {
	c := w.cur
	if c == nil || c.rgRows == 0 {
		return nil
	}
	if err := c.fw.newRowGroup(); err != nil {
		return writeErr(c.path, err)
	}
	c.flushedRows += c.rgRows
	c.rgRows = 0
	c.newRowGroup = false
	w.rowGroup.Store(0)
	return nil
}

// estimate returns the expected size of the open file and of its buffered
// row group. The compressed bytes of the row group lag behind, since pages
// still being filled and dictionaries are not counted until cut, so the
// row group is also sized by its rows times the bytes per row of the row
// groups already flushed (or of the previous file), whichever is larger.
func (w *Writer) estimate() (file, rowGroup int64) {
	c := w.cur
	written := c.written()
	rowGroup = c.fw.rowGroupBytes(written)
	perRow := w.perRow
	if c.flushedRows > 0 {
		perRow = float64(written) / float64(c.flushedRows)
	}
	if c.fw.overestimates() && perRow > 0 {
		rowGroup = int64(float64(c.rgRows) * perRow)
	} else {
		rowGroup = max(rowGroup, int64(float64(c.rgRows)*perRow))
	}
	return written + rowGroup, rowGroup
}

// lagging is an encoder that writes its file on goroutines of its own (the
// native one): written is the file's size once what it handed over is
// written. The file's own count lags behind, and is those goroutines' to
// update meanwhile.
type lagging interface{ written() int64 }

// written is the size of the open file once what its encoder has handed
// over is written.
func (f *openFile) written() int64 {
	if l, ok := f.fw.(lagging); ok {
		return l.written()
	}
	return f.cnt.n
}

// sliceRows sizes the next slice so that it roughly fills what is left of
// the row group or file. Bytes per row are the larger of the open file's
// estimated bytes per row so far and prior.
func (w *Writer) sliceRows(prior float64) int64 {
	c := w.cur
	est, rg := w.estimate()
	perRow := prior
	if c.rows > 0 {
		perRow = max(perRow, float64(est)/float64(c.rows))
	}
	if perRow <= 0 {
		return firstSliceRows
	}
	left := min(w.opts.RowGroupBytes-rg, w.opts.TargetFileSize-est)
	rows := int64(float64(left) / perRow)
	return max(minSliceRows, min(maxSliceRows, rows))
}

// arrowBytesPerRow is the in-memory size of rec's rows, the prior for the
// first file before any encoded size is known.
func arrowBytesPerRow(rec arrow.RecordBatch) float64 {
	return float64(RecordBytes(rec)) / float64(max(rec.NumRows(), 1))
}

// holder is an encoder that can keep borrowed batches (nativeEncoder.hold).
type holder interface {
	hold(rec arrow.RecordBatch) error
}

func (f *openFile) write(rec arrow.RecordBatch, floats, borrowed bool) error {
	if f.newRowGroup {
		f.newRowGroup = false
		if err := f.fw.newRowGroup(); err != nil {
			return err
		}
		f.flushedRows += f.rgRows
		f.rgRows = 0
	}
	var err error
	if h, ok := f.fw.(holder); ok && borrowed {
		err = h.hold(rec)
	} else {
		err = f.fw.write(rec)
	}
	if err != nil {
		return err
	}
	f.rows += rec.NumRows()
	f.rgRows += rec.NumRows()
	if floats {
		for i, fld := range rec.Schema().Fields() {
			if hasFloat(fld.Type) {
				countNaN(fld, rec.Column(i), nil, f.nan)
			}
		}
	}
	return nil
}

// openFile creates the next file; rec from row off is the sample for the
// dictionary decision.
func (w *Writer) openFile(rec arrow.RecordBatch, off int64) error {
	path := w.newPath()
	out, err := w.fs.Create(path)
	if err != nil {
		return fmt.Errorf("parquet writer: creating %s: %w: %w", path, errs.ErrIO, err)
	}
	w.paths = append(w.paths, path)
	noDict, raw := w.opts.NoDictionary, w.opts.Incompressible
	if noDict == nil || raw == nil {
		sample := rec.NewSlice(off, min(rec.NumRows(), off+dictSampleMax))
		if noDict == nil {
			noDict = noDictionaryColumns(sample, w.opts)
		}
		if raw == nil {
			raw = incompressibleColumns(sample, w.opts)
		}
		sample.Release()
	}
	noDict = w.plan.noDictionary(noDict)

	buf := bufio.NewWriterSize(out, bufferBytes)
	cnt := &countingWriter{w: buf}
	f := &openFile{path: path, out: out, buf: buf, cnt: cnt, nan: map[int]int64{}}
	w.cur = f
	if w.flat != nil {
		enc, err := newNativeEncoder(cnt, w.schema, w.flat, w.opts, noDict, raw, w.plan.bloom)
		if err != nil {
			return fmt.Errorf("parquet writer: %s: %w", path, err)
		}
		f.fw = enc
	} else {
		fw, err := pqarrow.NewFileWriter(w.schema, cnt, w.opts.writerProps(noDict, w.plan.props...), pqarrow.DefaultWriterProps())
		if err != nil {
			return fmt.Errorf("parquet writer: %s: %w", path, err)
		}
		f.fw = pqarrowEncoder{fw}
	}
	for _, fld := range w.schema.Fields() {
		floatIDs(fld, f.nan)
	}
	return nil
}

// finishFile writes the footer of the open file, closes it and records its
// metrics, after the file being finished in the background, if any.
func (w *Writer) finishFile() error {
	if err := w.collect(); err != nil {
		return err
	}
	c := w.cur
	if c == nil {
		return nil
	}
	w.cur = nil
	f, err := c.finish()
	if err != nil {
		return err
	}
	w.add(f)
	w.bytes.Store(w.doneBytes)
	w.rowGroup.Store(0)
	return nil
}

// rollFile finishes the open file, which reached its target size, to go on
// with the next. A native encoder's file is finished on a goroutine of its
// own: its last row group is still being written out (150-200 ms for
// 128 MB), and the files of a spread append reach their target size
// together, so waiting for it stalled every writer at once while the input
// piled up in their queues (bench/run.py W5, docs/decisions.md). One file
// at a time is finished so.
func (w *Writer) rollFile() error {
	c := w.cur
	if _, ok := c.fw.(lagging); !ok {
		return w.finishFile()
	}
	if err := w.collect(); err != nil {
		return err
	}
	w.cur = nil
	j := &closingFile{est: c.written()}
	w.closing = j
	// Until its footer is known, the next file is sized with what this
	// one wrote per row.
	if c.rows > 0 {
		w.perRow = float64(j.est) / float64(c.rows)
	}
	w.doneBytes += j.est
	w.bytes.Store(w.doneBytes)
	w.rowGroup.Store(0)
	j.task = goTask(func() (err error) {
		j.f, err = c.finish()
		return err
	})
	return nil
}

// collect waits for the file being finished in the background, if any,
// and records it.
func (w *Writer) collect() error {
	j := w.closing
	if j == nil {
		return nil
	}
	w.closing = nil
	w.doneBytes -= j.est
	if err := j.wait(); err != nil {
		return err
	}
	w.add(j.f)
	return nil
}

// add records a finished file.
func (w *Writer) add(f File) {
	w.files = append(w.files, f)
	w.doneBytes += f.Size
	if f.Rows > 0 {
		w.perRow = float64(f.Size) / float64(f.Rows)
	}
}

// finish writes the file's footer, closes it and returns its metrics; a
// file whose footer cannot be written is dropped unfinished.
func (c *openFile) finish() (File, error) {
	meta, err := c.fw.close()
	if err != nil {
		c.drop()
		return File{}, fmt.Errorf("parquet writer: closing %s: %w", c.path, err)
	}
	if err := c.buf.Flush(); err != nil {
		c.drop()
		return File{}, fmt.Errorf("parquet writer: writing %s: %w: %w", c.path, errs.ErrIO, err)
	}
	if err := c.out.Close(); err != nil {
		return File{}, fmt.Errorf("parquet writer: closing %s: %w: %w", c.path, errs.ErrIO, err)
	}
	f := File{Path: c.path, Size: c.cnt.n, NaNCounts: c.nan}
	if err := footerMetrics(meta, &f); err != nil {
		return File{}, fmt.Errorf("parquet writer: metrics of %s: %w", c.path, err)
	}
	c.fw.fixMetrics(&f)
	return f, nil
}

// drop closes the file without finishing it.
func (c *openFile) drop() {
	if c.fw != nil {
		c.fw.discard()
	}
	_ = c.out.Close()
}

// discard closes the open file without finishing it, after the file being
// finished in the background, if any; their paths stay listed.
func (w *Writer) discard() {
	_ = w.collect()
	if c := w.cur; c != nil {
		w.cur = nil
		c.drop()
	}
}

// withIO marks an error as an I/O error unless it already has a kind.
func withIO(err error) error {
	if errs.StatusOf(err) != errs.StatusUnknown {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %w", errs.ErrIO, err)
}

// writeErr is an error from encoding rows into the file at path. One that
// arrow-go's encoder calls invalid (a decimal beyond its precision) is
// about the data: a validation error.
func writeErr(path string, err error) error {
	if errors.Is(err, arrow.ErrInvalid) && errs.StatusOf(err) == errs.StatusUnknown {
		return fmt.Errorf("parquet writer: writing %s: %w: %w", path, errs.ErrValidation, err)
	}
	return fmt.Errorf("parquet writer: writing %s: %w", path, err)
}
