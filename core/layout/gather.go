package layout

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Rows is a sort buffer held for Gather: its batches as they came, with
// each column either read across the batches (Arrow's take reads chunked
// primitive and binary columns) or joined once into one array (the other
// types). Joining everything would hold the rows twice while it runs.
type Rows struct {
	Batches []arrow.RecordBatch
	cols    []compute.Datum
	n       int64
}

// NewRows takes ownership of recs (one schema, at least one batch).
func NewRows(recs []arrow.RecordBatch, mem memory.Allocator) (*Rows, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: nothing to sort", errs.ErrInvalidArgument)
	}
	r := &Rows{Batches: slices.Clone(recs)} // share replaces batches: not in the caller's slice
	for _, b := range recs {
		r.n += b.NumRows()
	}
	parts := make([]arrow.Array, len(recs))
	for i := range int(recs[0].NumCols()) {
		for j, b := range r.Batches {
			parts[j] = b.Column(i)
		}
		dt := parts[0].DataType()
		if len(parts) == 1 || arrow.IsPrimitive(dt.ID()) || arrow.IsBaseBinary(dt.ID()) {
			ch := arrow.NewChunked(dt, parts)
			r.cols = append(r.cols, compute.NewDatum(ch))
			ch.Release()
			continue
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			r.Release()
			return nil, fmt.Errorf("%w: joining batches of column %q: %v", errs.ErrNotSupported, r.Batches[0].ColumnName(i), err)
		}
		r.cols = append(r.cols, compute.NewDatum(a))
		r.share(i, a)
		a.Release()
	}
	return r, nil
}

// share makes column i of the batches slices of a, their values joined,
// so that the batches' own copies of them are let go.
func (r *Rows) share(i int, a arrow.Array) {
	var at int64
	for j, b := range r.Batches {
		cols := slices.Clone(b.Columns())
		n := b.NumRows()
		cols[i] = array.NewSlice(a, at, at+n)
		r.Batches[j] = array.NewRecordBatch(b.Schema(), cols, n)
		cols[i].Release()
		b.Release()
		at += n
	}
}

// NumRows is the rows of all the batches.
func (r *Rows) NumRows() int64 { return r.n }

// Release releases the batches and the columns.
func (r *Rows) Release() {
	for _, c := range r.cols {
		c.Release()
	}
	for _, b := range r.Batches {
		b.Release()
	}
	r.cols, r.Batches = nil, nil
}

// Gather returns the rows at idx (an integer array of row numbers across
// the batches), in that order, each column taken on a goroutine of its
// own, up to one per core. A sorted buffer is written a slice of idx at a
// time, so only that slice's rows are ever copied.
func (r *Rows) Gather(ctx context.Context, idx arrow.Array, mem memory.Allocator) (arrow.RecordBatch, error) {
	ctx = compute.WithAllocator(ctx, mem)
	cols := make([]arrow.Array, len(r.cols))
	failed := make([]error, len(cols))
	sem := make(chan struct{}, workers())
	var wg sync.WaitGroup
	for i := range cols {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cols[i], failed[i] = take(ctx, r.cols[i], idx, mem)
		}()
	}
	wg.Wait()
	for i, err := range failed {
		if err != nil {
			for _, c := range cols {
				if c != nil {
					c.Release()
				}
			}
			return nil, fmt.Errorf("%w: reordering column %q: %v", errs.ErrNotSupported, r.Batches[0].ColumnName(i), err)
		}
	}
	out := array.NewRecordBatch(r.Batches[0].Schema(), cols, int64(idx.Len()))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

// take is one column's values at idx, as one array.
func take(ctx context.Context, values compute.Datum, idx arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	ix := compute.NewDatum(idx)
	defer ix.Release()
	out, err := compute.Take(ctx, *compute.DefaultTakeOptions(), values, ix)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	switch o := out.(type) {
	case *compute.ArrayDatum:
		return o.MakeArray(), nil
	case *compute.ChunkedDatum:
		chunks := o.Chunks()
		if len(chunks) == 1 {
			chunks[0].Retain()
			return chunks[0], nil
		}
		return array.Concatenate(chunks, mem)
	}
	return nil, fmt.Errorf("take returned a %s", out.Kind())
}

// workers is the goroutines a parallel step uses: one per core.
func workers() int { return max(1, runtime.GOMAXPROCS(0)) }

// ranges cuts [0, n) into up to one contiguous range per core.
func ranges(n int) [][2]int {
	w := min(workers(), max(1, n))
	out := make([][2]int, 0, w)
	for i := range w {
		if lo, hi := n*i/w, n*(i+1)/w; lo < hi {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

// parallel calls fn for each of ranges(n) at once and waits for them.
func parallel(n int, fn func(lo, hi int)) {
	var wg sync.WaitGroup
	for _, r := range ranges(n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(r[0], r[1])
		}()
	}
	wg.Wait()
}

// int64Array wraps v, without copying, as an Int64 array.
func int64Array(v []int64) arrow.Array {
	buf := memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(v))
	data := array.NewData(arrow.PrimitiveTypes.Int64, len(v), []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}
