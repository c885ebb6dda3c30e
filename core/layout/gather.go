package layout

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Rows is a sort buffer held for Gather: its batches as they came, each
// column read across the batches (by Arrow's take for primitive and binary
// columns, by fixedColumn for decimals and fixed-size binaries) or, for
// nested types, joined once into one array. Joining everything would hold
// the rows twice while it runs.
type Rows struct {
	Batches []arrow.RecordBatch
	cols    []column
	starts  []int64 // the first row of each batch, then the row count
}

// column is one column of Rows, taken a slice of the order at a time.
type column interface {
	take(ctx context.Context, idx arrow.Array, mem memory.Allocator) (arrow.Array, error)
	release()
}

// NewRows takes ownership of recs (one schema, at least one batch).
func NewRows(recs []arrow.RecordBatch, mem memory.Allocator) (*Rows, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: nothing to sort", errs.ErrInvalidArgument)
	}
	r := &Rows{Batches: slices.Clone(recs), starts: make([]int64, len(recs)+1)} // share replaces batches: not in the caller's slice
	for i, b := range recs {
		r.starts[i+1] = r.starts[i] + b.NumRows()
	}
	for i := range int(recs[0].NumCols()) {
		parts := make([]arrow.Array, len(r.Batches))
		for j, b := range r.Batches {
			parts[j] = b.Column(i)
		}
		dt := parts[0].DataType()
		_, fixed := dt.(arrow.FixedWidthDataType)
		switch {
		case len(parts) == 1 || arrow.IsPrimitive(dt.ID()) || arrow.IsBaseBinary(dt.ID()):
			ch := arrow.NewChunked(dt, parts)
			r.cols = append(r.cols, datumColumn{compute.NewDatum(ch)})
			ch.Release()
		case fixed && dt.ID() != arrow.EXTENSION:
			r.cols = append(r.cols, newFixedColumn(parts, r.starts))
		default:
			a, err := array.Concatenate(parts, mem)
			if err != nil {
				r.Release()
				return nil, fmt.Errorf("%w: joining batches of column %q: %v", errs.ErrNotSupported, r.Batches[0].ColumnName(i), err)
			}
			r.cols = append(r.cols, datumColumn{compute.NewDatum(a)})
			r.share(i, a)
			a.Release()
		}
	}
	return r, nil
}

// datumColumn is a column Arrow's take reads: chunked, or one array.
type datumColumn struct{ d compute.Datum }

func (c datumColumn) release() { c.d.Release() }

func (c datumColumn) take(ctx context.Context, idx arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	ix := compute.NewDatum(idx)
	defer ix.Release()
	out, err := compute.Take(ctx, *compute.DefaultTakeOptions(), c.d, ix)
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

// fixedColumn is a fixed-width column Arrow's take would join before
// reading (decimals, fixed-size binaries): its values are copied from the
// chunks here, a value's width at a time.
type fixedColumn struct {
	dt     arrow.DataType
	width  int
	chunks []arrow.Array
	values [][]byte // each chunk's value buffer, from its first value
	starts []int64  // Rows.starts
	nulls  bool
}

func newFixedColumn(chunks []arrow.Array, starts []int64) *fixedColumn {
	f := &fixedColumn{dt: chunks[0].DataType(), width: chunks[0].DataType().(arrow.FixedWidthDataType).BitWidth() / 8, starts: starts}
	for _, c := range chunks {
		c.Retain()
		f.chunks = append(f.chunks, c)
		f.values = append(f.values, c.Data().Buffers()[1].Bytes()[c.Data().Offset()*f.width:])
		f.nulls = f.nulls || c.NullN() > 0
	}
	return f
}

func (f *fixedColumn) release() {
	for _, c := range f.chunks {
		c.Release()
	}
}

func (f *fixedColumn) take(_ context.Context, idx arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	n, w := idx.Len(), f.width
	var at func(i int) int64
	switch x := idx.(type) {
	case *array.Int32:
		at = func(i int) int64 { return int64(x.Value(i)) }
	case *array.Int64:
		at = x.Value
	case *array.Uint32:
		at = func(i int) int64 { return int64(x.Value(i)) }
	case *array.Uint64: // sort_indices
		at = func(i int) int64 { return int64(x.Value(i)) }
	default:
		return nil, fmt.Errorf("indices of type %s", idx.DataType())
	}
	values := memory.NewResizableBuffer(mem)
	values.Resize(n * w)
	out := values.Bytes()
	var valid *memory.Buffer
	var bits []byte
	if f.nulls {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		bits = valid.Bytes()
		clear(bits)
	}
	nullCount, c := 0, 0
	for i := range n {
		g := at(i)
		if g < 0 || g >= f.starts[len(f.chunks)] {
			values.Release()
			if valid != nil {
				valid.Release()
			}
			return nil, fmt.Errorf("%w: row %d of %d", arrow.ErrIndex, g, f.starts[len(f.chunks)])
		}
		c = batchOf(f.starts, g, c)
		j := int(g - f.starts[c])
		copy(out[i*w:(i+1)*w], f.values[c][j*w:(j+1)*w])
		if bits != nil {
			if f.chunks[c].IsValid(j) {
				bitutil.SetBit(bits, i)
			} else {
				nullCount++
			}
		}
	}
	data := array.NewData(f.dt, n, []*memory.Buffer{valid, values}, nil, nullCount, 0)
	values.Release()
	if valid != nil {
		valid.Release()
	}
	defer data.Release()
	return array.MakeFromData(data), nil
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
func (r *Rows) NumRows() int64 { return r.starts[len(r.starts)-1] }

// batchOf returns the batch holding row g (0 <= g < NumRows), searching
// from batch hint first: the batch whose rows end after g (empty batches,
// which end where they start, are never it).
func batchOf(starts []int64, g int64, hint int) int {
	if hint < len(starts)-1 && starts[hint] <= g && g < starts[hint+1] {
		return hint
	}
	return sort.Search(len(starts)-1, func(k int) bool { return starts[k+1] > g })
}

// InOrder returns rows [lo, hi) as they are, up to the end of the batch
// holding row lo (a slice of it, nothing copied).
func (r *Rows) InOrder(lo, hi int64) arrow.RecordBatch {
	b := batchOf(r.starts, lo, 0)
	return r.Batches[b].NewSlice(lo-r.starts[b], min(hi, r.starts[b+1])-r.starts[b])
}

// Release releases the batches and the columns.
func (r *Rows) Release() {
	for _, c := range r.cols {
		c.release()
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
			cols[i], failed[i] = r.cols[i].take(ctx, idx, mem)
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

// indexArray wraps v, without copying, as an Int32 or Int64 array.
func indexArray[T int32 | int64](v []T) arrow.Array {
	var buf *memory.Buffer
	var dt arrow.DataType
	switch x := any(v).(type) {
	case []int32:
		buf, dt = memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(x)), arrow.PrimitiveTypes.Int32
	case []int64:
		buf, dt = memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(x)), arrow.PrimitiveTypes.Int64
	}
	data := array.NewData(dt, len(v), []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}
