// Package pin calls an imported Arrow stream's producer from one OS thread.
//
// The host's ArrowArrayStream is pulled by Go, and a goroutine moves
// between OS threads: every get_next could come from another one. A
// Python producer (a pyarrow RecordBatchReader over a generator, a polars
// or DuckDB stream) then takes the GIL from each of those threads, and the
// batches it builds come from each thread's own heap of pyarrow's
// allocator (mimalloc), while Go frees them from yet other threads. Such
// frees are only reclaimed when the thread that allocated allocates again,
// so memory freed on heaps of threads that no longer pull stayed with the
// process: a 10x streamed append (bench/run.py W5) peaked with 40-60 MB
// more in pyarrow's allocator than when one thread pulls every batch.
package pin

import (
	"runtime"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// Reader is a RecordReader whose Next and final Release run on one OS
// thread, locked to a goroutine of its own while the reader lives.
type Reader struct {
	array.RecordReader
	refs  atomic.Int64
	calls chan func()
	done  chan any // what the call panicked with, or nil
}

// NewReader takes over r's reference.
func NewReader(r array.RecordReader) *Reader {
	p := &Reader{RecordReader: r, calls: make(chan func()), done: make(chan any)}
	p.refs.Store(1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for f := range p.calls {
			p.done <- run(f)
		}
	}()
	return p
}

func run(f func()) (panicked any) {
	defer func() { panicked = recover() }()
	f()
	return nil
}

// on runs f on the reader's thread and waits; a panic in f is raised again
// in the caller.
func (p *Reader) on(f func()) {
	p.calls <- f
	if v := <-p.done; v != nil {
		panic(v)
	}
}

// Next pulls the next batch on the reader's thread.
func (p *Reader) Next() (ok bool) {
	p.on(func() { ok = p.RecordReader.Next() })
	return ok
}

func (p *Reader) Retain() { p.refs.Add(1) }

// Release releases the stream on the reader's thread after the last
// reference, and ends the goroutine.
func (p *Reader) Release() {
	if p.refs.Add(-1) != 0 {
		return
	}
	defer close(p.calls)
	p.on(p.RecordReader.Release)
}
