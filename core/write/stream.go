package write

import (
	"errors"
	"fmt"
	"iter"
	"runtime"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// RewriteBatchRows is the batch size a rewrite reads its file in. A
// rewrite holds about ten batches at once (read ahead, queued for the
// writer, being encoded); iceberg-go's default of 128k rows made that
// ~0.5 GB for two TPC-H lineitem rewrites, 32k rows a quarter of it at the
// same speed (bench/dml.py M3, unpartitioned).
const RewriteBatchRows = 32 << 10

// RewriteSpread is how many files each of n rewrites running at once may
// encode at once: the cores are shared out between them.
func RewriteSpread(n int) int { return max(1, Workers()/max(1, n)) }

// RewriteStream rewrites one file's rows as they are read: step turns each
// batch read into the batches to write back and says whether the file
// changes. Output is held only until the first change; from then on it
// flows through a channel into WriteData running beside the reader, so a
// rewrite holds a few batches rather than a whole file, and reading and
// encoding overlap. A file that never changes writes nothing
// (changed false). path names the file in read errors;
// write is the writer's side (WriteData with the operation's plan).
func RewriteStream(sch *arrow.Schema, batches iter.Seq2[arrow.RecordBatch, error], path string,
	step func(arrow.RecordBatch) ([]arrow.RecordBatch, bool, error),
	write func(array.RecordReader) (Written, error),
) (out Written, changed bool, err error) {
	var (
		held []arrow.RecordBatch
		pipe *batchPipe
	)
	defer func() { ReleaseAll(held) }()
	fail := func(e error) (Written, bool, error) {
		if pipe != nil {
			if _, perr := pipe.close(e); e == nil {
				e = perr // the writer stopped first: its error
			}
		}
		return Written{}, false, e
	}
	for rec, rerr := range batches {
		var se StepError
		if errors.As(rerr, &se) {
			return fail(se.Err)
		}
		if rerr != nil {
			return fail(fmt.Errorf("%w: reading %s: %v", errs.ErrIO, path, rerr))
		}
		parts, ch, serr := step(rec)
		rec.Release()
		if serr != nil {
			ReleaseAll(parts)
			return fail(serr)
		}
		if pipe == nil {
			held = append(held, parts...)
			if !ch {
				continue
			}
			pipe = startPipe(sch, write)
			parts, held = held, nil
		}
		for i, part := range parts {
			if !pipe.send(part) {
				ReleaseAll(parts[i+1:])
				return fail(nil)
			}
		}
	}
	if pipe == nil {
		return Written{}, false, nil
	}
	if out, err = pipe.close(nil); err != nil {
		return Written{}, false, err
	}
	return out, true, nil
}

// StepError is an error of the operation's own met while reading (a
// filter evaluated as the rows are decoded), passed on as it is rather than
// as a read error.
type StepError struct{ Err error }

func (e StepError) Error() string { return e.Err.Error() }
func (e StepError) Unwrap() error { return e.Err }

// batchPipe feeds WriteData, running in its own goroutine, batch by batch.
type batchPipe struct {
	rdr     *chanReader
	stopped chan struct{} // WriteData returned
	done    chan struct{} // and the channel is drained
	out     Written
	err     error
}

func startPipe(sch *arrow.Schema, write func(array.RecordReader) (Written, error)) *batchPipe {
	bp := &batchPipe{
		rdr:     &chanReader{schema: sch, ch: make(chan arrow.RecordBatch, 2)},
		stopped: make(chan struct{}), done: make(chan struct{}),
	}
	bp.rdr.refs.Store(1)
	go func() {
		defer close(bp.done)
		defer func() {
			// Release what was queued when the writer stopped early.
			for r := range bp.rdr.ch {
				r.Release()
			}
			bp.rdr.Release()
		}()
		defer close(bp.stopped)
		bp.out, bp.err = write(bp.rdr)
	}()
	return bp
}

// send hands rec (and its reference) to the writer; false when the writer
// has already stopped with an error.
func (bp *batchPipe) send(rec arrow.RecordBatch) bool {
	select {
	case bp.rdr.ch <- rec:
		return true
	case <-bp.stopped:
		rec.Release()
		return false
	}
}

// close ends the input, with cause when the producer failed (the writer
// then deletes what it wrote), and waits for the writer. It returns the
// writer's result, or cause, or the writer's error.
func (bp *batchPipe) close(cause error) (Written, error) {
	bp.rdr.err = cause
	close(bp.rdr.ch)
	<-bp.done
	if cause != nil {
		return Written{}, cause
	}
	if bp.err != nil {
		return Written{}, bp.err
	}
	return bp.out, nil
}

// chanReader is an array.RecordReader over a channel. err is set before
// the channel is closed, so Next's receive orders it before Err's read.
type chanReader struct {
	refs   atomic.Int64
	schema *arrow.Schema
	ch     chan arrow.RecordBatch
	cur    arrow.RecordBatch
	err    error
}

func (r *chanReader) Retain() { r.refs.Add(1) }
func (r *chanReader) Release() {
	if r.refs.Add(-1) == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}
func (r *chanReader) Schema() *arrow.Schema { return r.schema }
func (r *chanReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	rec, ok := <-r.ch
	if !ok {
		return false
	}
	r.cur = rec
	return true
}
func (r *chanReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *chanReader) Record() arrow.RecordBatch      { return r.cur }
func (r *chanReader) Err() error                     { return r.err }

// Workers is how many files are read or rewritten at once.
func Workers() int { return max(1, runtime.GOMAXPROCS(0)) }

// EmptyColumns are empty arrays of sc's columns.
func EmptyColumns(sc *arrow.Schema) []arrow.Array {
	cols := make([]arrow.Array, sc.NumFields())
	for i := range cols {
		cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, sc.Field(i).Type, 0)
	}
	return cols
}

// ConcatBatches concatenates batches of schema sc into one.
func ConcatBatches(sc *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	if len(recs) == 0 {
		cols := EmptyColumns(sc)
		defer ReleaseArrays(cols)
		return array.NewRecordBatch(sc, cols, 0), nil
	}
	cols := make([]arrow.Array, sc.NumFields())
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	parts := make([]arrow.Array, len(recs))
	for i := range cols {
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			ReleaseArrays(cols[:i])
			return nil, fmt.Errorf("%w: gathering merge source rows: %v", errs.ErrValidation, err)
		}
		cols[i] = c
	}
	defer ReleaseArrays(cols)
	return array.NewRecordBatch(sc, cols, n), nil
}

// ReleaseAll releases every batch of recs.
func ReleaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// ReleaseArrays releases every array of as.
func ReleaseArrays(as []arrow.Array) {
	for _, a := range as {
		a.Release()
	}
}
