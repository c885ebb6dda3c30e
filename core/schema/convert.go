package schema

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/internal/memx"
)

// listConv plans a list column from any Arrow list-like input. The result is
// a list with 32-bit offsets that keeps the input's offset and validity.
func (p *planner) listConv(path string, in arrow.ListLikeType, t *iceberg.ListType, out *arrow.ListType) (conv, error) {
	ep := path + ".element"
	if err := p.nullability(ep, t.ElementRequired, in.ElemField().Nullable); err != nil {
		return nil, err
	}
	ec, err := p.typ(ep, in.Elem(), t.Element, out.Elem())
	if err != nil {
		return nil, err
	}
	// offsets returns the 32-bit offsets buffer of the result and the child
	// array they index: the input's, or (converted) the elements already
	// converted by ec.
	var offsets func(d arrow.ArrayData) (*memory.Buffer, arrow.Array, error)
	converted := false
	switch in := in.(type) {
	case *arrow.ListType:
		offsets = func(d arrow.ArrayData) (*memory.Buffer, arrow.Array, error) {
			return p.offsetsOf(d), array.MakeFromData(d.Children()[0]), nil
		}
	case *arrow.LargeListType:
		offsets = func(d arrow.ArrayData) (*memory.Buffer, arrow.Array, error) {
			src := values[int64](d.Buffers()[1])
			buf, dst := p.alloc32(d.Offset() + d.Len() + 1)
			for i := d.Offset(); i <= d.Offset()+d.Len() && i < len(src); i++ {
				if src[i] > math.MaxInt32 {
					buf.Release()
					return nil, nil, fmt.Errorf("column '%s': a batch holds more than 2^31-1 list elements; write smaller batches: %w",
						path, errs.ErrValidation)
				}
				dst[i] = int32(src[i])
			}
			return buf, array.MakeFromData(d.Children()[0]), nil
		}
	case *arrow.FixedSizeListType:
		width := int64(in.Len())
		offsets = func(d arrow.ArrayData) (*memory.Buffer, arrow.Array, error) {
			end := d.Offset() + d.Len()
			if int64(end)*width > math.MaxInt32 {
				return nil, nil, fmt.Errorf("column '%s': a batch holds more than 2^31-1 list elements; write smaller batches: %w",
					path, errs.ErrValidation)
			}
			buf, dst := p.alloc32(end + 1)
			for i := range dst {
				dst[i] = int32(int64(i) * width)
			}
			return buf, array.MakeFromData(d.Children()[0]), nil
		}
	case *arrow.ListViewType:
		converted = true
		offsets = func(d arrow.ArrayData) (*memory.Buffer, arrow.Array, error) {
			return p.flattenView(path, d, widen(values[int32](d.Buffers()[1])), widen(values[int32](d.Buffers()[2])), ec)
		}
	case *arrow.LargeListViewType:
		converted = true
		offsets = func(d arrow.ArrayData) (*memory.Buffer, arrow.Array, error) {
			return p.flattenView(path, d, values[int64](d.Buffers()[1]), values[int64](d.Buffers()[2]), ec)
		}
	default:
		return nil, mismatch(path, in, t)
	}
	return func(a arrow.Array) (arrow.Array, error) {
		d := a.Data()
		offs, raw, err := offsets(d)
		if err != nil {
			return nil, err
		}
		defer offs.Release()
		elems := raw
		if !converted {
			elems, err = ec(raw)
			raw.Release()
			if err != nil {
				return nil, err
			}
		}
		defer elems.Release()
		if o2, e2, err := p.dropNullElements(path, d, values[int32](offs), elems); err != nil {
			return nil, err
		} else if o2 != nil {
			defer o2.Release()
			defer e2.Release()
			offs, elems = o2, e2
		}
		return build(out, d, []*memory.Buffer{d.Buffers()[0], offs}, []arrow.ArrayData{elems.Data()}), nil
	}, nil
}

// flattenView gathers the elements of a list view in row order so that plain
// offsets can index them, converted by ec first: the gather is arrow-go's
// take kernel, whose spans hold three buffers and so cannot take a view
// array with two data buffers or more (it panicked on a goroutine of its
// own); converted elements have none.
func (p *planner) flattenView(path string, d arrow.ArrayData, starts, sizes []int64, ec conv) (*memory.Buffer, arrow.Array, error) {
	raw := array.MakeFromData(d.Children()[0])
	child, err := ec(raw)
	raw.Release()
	if err != nil {
		return nil, nil, err
	}
	defer child.Release()
	return p.gather(path, d, starts, sizes, child)
}

// gather makes 32-bit offsets for d's slots and the elements they index:
// those of each valid slot i (sizes[i] of elems from starts[i]), in row
// order; a null slot gets none.
func (p *planner) gather(path string, d arrow.ArrayData, starts, sizes []int64, elems arrow.Array) (*memory.Buffer, arrow.Array, error) {
	off, n := d.Offset(), d.Len()
	valid := validity(d)
	buf, dst := p.alloc32(off + n + 1)
	var total int64
	for i := off; i < off+n; i++ {
		if valid(i) {
			total += sizes[i]
		}
		if total > math.MaxInt32 {
			buf.Release()
			return nil, nil, fmt.Errorf("column '%s': a batch holds more than 2^31-1 list elements; write smaller batches: %w",
				path, errs.ErrValidation)
		}
		dst[i+1] = int32(total)
	}
	ib := memory.NewResizableBuffer(p.mem)
	ib.Resize(int(total) * 8)
	idx := arrow.GetData[int64](ib.Bytes())
	k := 0
	for i := off; i < off+n; i++ {
		if valid(i) {
			for j := range sizes[i] {
				idx[k] = starts[i] + j
				k++
			}
		}
	}
	indices := array.NewData(arrow.PrimitiveTypes.Int64, int(total), []*memory.Buffer{nil, ib}, nil, 0, 0)
	ib.Release()
	defer indices.Release()
	ia := array.MakeFromData(indices)
	defer ia.Release()
	taken, err := compute.TakeArray(p.ctx, elems, ia)
	if err != nil {
		buf.Release()
		return nil, nil, fmt.Errorf("column '%s': gathering list elements: %v: %w", path, err, errs.ErrValidation)
	}
	return buf, taken, nil
}

// dropNullElements returns offsets and elements for list-like d (offsets
// o, elements elems) with the elements of null slots left out, or nil when
// no null slot has any. Arrow lets a null list slot span elements (a
// fixed-size list's always does); the Parquet writer refuses them.
func (p *planner) dropNullElements(path string, d arrow.ArrayData, o []int32, elems arrow.Array) (*memory.Buffer, arrow.Array, error) {
	if d.NullN() == 0 {
		return nil, nil, nil
	}
	off, n := d.Offset(), d.Len()
	valid := validity(d)
	spans := false
	for i := off; i < off+n && !spans; i++ {
		spans = !valid(i) && o[i+1] != o[i]
	}
	if !spans {
		return nil, nil, nil
	}
	starts, sizes := make([]int64, off+n), make([]int64, off+n)
	for i := off; i < off+n; i++ {
		starts[i], sizes[i] = int64(o[i]), int64(o[i+1]-o[i])
	}
	return p.gather(path, d, starts, sizes, elems)
}

// decode replaces dictionary indices by their values, converted by inner
// first (the take kernel cannot take views in several data buffers; see
// flattenView).
func (p *planner) decode(path string, a *array.Dictionary, inner conv) (arrow.Array, error) {
	dict, err := inner(a.Dictionary())
	if err != nil {
		return nil, err
	}
	defer dict.Release()
	out, err := compute.TakeArray(p.ctx, dict, a.Indices())
	if err != nil {
		return nil, fmt.Errorf("column '%s': decoding dictionary: %v: %w", path, err, errs.ErrValidation)
	}
	return out, nil
}

// unitNanos is the length of a time unit in nanoseconds.
func unitNanos(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1_000_000_000
	case arrow.Millisecond:
		return 1_000_000
	case arrow.Microsecond:
		return 1_000
	}
	return 1
}

// ratio returns the multiplier and divisor from unit from to unit to.
func ratio(from, to arrow.TimeUnit) (mul, div int64) {
	f, t := unitNanos(from), unitNanos(to)
	if f >= t {
		return f / t, 1
	}
	return 1, t / f
}

// leaf plans the conversion of a primitive Arrow type to the table's Arrow
// type out; the Iceberg-level compatibility was checked by the caller.
func (p *planner) leaf(path string, in, out arrow.DataType) (conv, error) {
	if arrow.TypeEqual(in, out) {
		return retain, nil
	}
	switch it := in.(type) {
	case *arrow.TimestampType:
		if _, ok := out.(*arrow.Date32Type); ok {
			return timestampToDate(p, path, it, out), nil
		}
		ot := out.(*arrow.TimestampType)
		mul, div := ratio(it.Unit, ot.Unit)
		if (it.TimeZone == "") != (ot.TimeZone == "") && !p.opts.Zone.IsUTC() {
			return zoneShift(p, path, out, mul, div, it.TimeZone == ""), nil
		}
		if mul == 1 && div == 1 {
			return retype(out), nil // only the time zone spelling differs
		}
		return rescaler[int64, int64](p, path, out, mul, div, math.MinInt64, math.MaxInt64), nil
	case *arrow.Date64Type:
		if ot, ok := out.(*arrow.TimestampType); ok {
			return dateToTimestamp[int64](p, path, ot, 86_400_000), nil
		}
		return rescaler[int64, int32](p, path, out, 1, 86_400_000, math.MinInt32, math.MaxInt32), nil
	case *arrow.Date32Type:
		if ot, ok := out.(*arrow.TimestampType); ok {
			return dateToTimestamp[int32](p, path, ot, 1), nil
		}
	case *arrow.Time32Type:
		mul, div := ratio(it.Unit, arrow.Microsecond)
		return rescaler[int32, int64](p, path, out, mul, div, math.MinInt64, math.MaxInt64), nil
	case *arrow.Time64Type:
		mul, div := ratio(it.Unit, arrow.Microsecond)
		return rescaler[int64, int64](p, path, out, mul, div, math.MinInt64, math.MaxInt64), nil
	case *arrow.Decimal32Type:
		return widenDecimal[int32](p, out), nil
	case *arrow.Decimal64Type:
		return widenDecimal[int64](p, out), nil
	case *arrow.Decimal128Type:
		return retype(out), nil // same scale, wider precision: same unscaled values
	case *arrow.StringViewType, *arrow.BinaryViewType:
		switch out.(type) {
		case *arrow.StringType, *arrow.BinaryType:
			return viewToOffsets[int32](p, path, out), nil
		case *arrow.LargeStringType, *arrow.LargeBinaryType:
			return viewToOffsets[int64](p, path, out), nil
		}
	case *arrow.FixedSizeBinaryType:
		if ext, ok := out.(arrow.ExtensionType); ok {
			return func(a arrow.Array) (arrow.Array, error) {
				return array.NewExtensionArrayWithStorage(ext, a), nil
			}, nil
		}
	}
	opts := compute.SafeCastOptions(out)
	return func(a arrow.Array) (arrow.Array, error) {
		r, err := compute.CastArray(p.ctx, a, opts)
		if err != nil {
			return nil, fmt.Errorf("column '%s': cannot convert %s to %s: %v: %w", path, in, out, err, errs.ErrValidation)
		}
		return r, nil
	}, nil
}

// viewToOffsets converts a string or binary view array to out, the same
// values in the offset layout (String, Binary or their large forms), each
// value copied once. arrow-go's cast appends value by value through a
// builder: 1.3 of the 6.6 CPU-s of a 6M-row lineitem write whose five string
// columns came as views (pyarrow reads the file's strings so; polars hands
// its strings over as views). A view that points outside its data buffers
// is a validation error.
func viewToOffsets[O int32 | int64](p *planner, path string, out arrow.DataType) conv {
	return func(a arrow.Array) (arrow.Array, error) {
		d := a.Data()
		off, n := d.Offset(), d.Len()
		if d.Buffers()[1] == nil || d.Buffers()[1].Len() < (off+n)*viewBytes {
			return nil, fmt.Errorf("column '%s': %s array without its views: %w", path, a.DataType(), errs.ErrValidation)
		}
		views := unsafe.Slice((*view)(unsafe.Pointer(unsafe.SliceData(d.Buffers()[1].Bytes()))), off+n)[off:]
		blocks := make([][]byte, len(d.Buffers())-2)
		for i, b := range d.Buffers()[2:] {
			if b != nil {
				blocks[i] = b.Bytes()
			}
		}
		valid := validity(d)
		all := d.NullN() == 0
		total, longest := 0, int32(0)
		for i := range views {
			if all || valid(off+i) {
				if views[i].n < 0 {
					return nil, fmt.Errorf("column '%s': value %d has length %d: %w", path, i, views[i].n, errs.ErrValidation)
				}
				total += int(views[i].n)
				longest = max(longest, views[i].n)
			}
		}
		// Values not inline are copied as whole 16-byte words: as many as
		// the longest value needs when that is at most three (the same
		// count for every value, so the copy loop's exit is predicted; on
		// columns of mixed lengths one that followed each value's length
		// was mispredicted), else as many as each value needs.
		w := memx.FixedWords(int(longest))
		if unsafe.Sizeof(O(0)) == 4 && total > math.MaxInt32 {
			return nil, fmt.Errorf("column '%s': %d bytes of values in one batch exceed %s's 2 GB: %w", path, total, out, errs.ErrValidation)
		}
		offsets := memory.NewResizableBuffer(p.mem)
		defer offsets.Release()
		offsets.Resize((off + n + 1) * int(unsafe.Sizeof(O(0))))
		data := memory.NewResizableBuffer(p.mem)
		defer data.Release()
		data.Resize(total + max(w, memx.WordCopySlack))
		ends, bytes := arrow.GetData[O](offsets.Bytes()), data.Bytes()
		clear(ends[:off+1]) // entries before the slice's offset are never read
		ends = ends[off+1 : off+1+len(views)]
		pos := 0
		// Values are copied in words, running past their ends (into the
		// place of the next value, or the slack): inline values as the 12
		// bytes of their header, the others in w bytes (or, where no w
		// fits all, 16 at a time) where their block has the bytes to
		// read. A copy of each through memmove took 33-37 ns a value in
		// BenchmarkViewsToOffsets.
		for i := range views {
			if h := &views[i]; all || valid(off+i) {
				ln := int(h.n)
				if ln <= viewInline {
					dst := unsafe.Pointer(unsafe.SliceData(bytes[pos : pos+viewInline]))
					*(*uint64)(dst) = uint64(h.prefix) | uint64(uint32(h.buf))<<32
					*(*uint32)(unsafe.Add(dst, 8)) = uint32(h.off)
				} else {
					if uint(h.buf) >= uint(len(blocks)) || h.off < 0 || int(h.off)+ln > len(blocks[h.buf]) {
						return nil, fmt.Errorf("column '%s': value %d points past its data buffers: %w", path, i, errs.ErrValidation)
					}
					if b := blocks[h.buf]; w > 0 && int(h.off)+w <= len(b) {
						memx.Words(unsafe.Pointer(unsafe.SliceData(bytes[pos:pos+w])), unsafe.Pointer(&b[h.off]), w)
					} else {
						memx.CopyValue(bytes[pos:pos+ln+15], b, int(h.off), int(h.off)+ln)
					}
				}
				pos += ln
			}
			ends[i] = O(pos)
		}
		data.ResizeNoShrink(total) // the slack goes, with no copy
		return build(out, d, []*memory.Buffer{d.Buffers()[0], offsets, data}, nil), nil
	}
}

// view is an Arrow view header as the format lays it out: the value's
// length, then either the value itself (up to viewInline bytes, in
// prefix, buf and off) or its first four bytes, the index of the data
// buffer that holds it and its offset there. Little-endian, as Arrow is
// on the machines this runs on.
type view struct {
	n      int32
	prefix uint32
	buf    int32
	off    int32
}

const (
	viewBytes  = int(unsafe.Sizeof(view{}))
	viewInline = 12
)

// retype returns a conversion that relabels an array's buffers with type dt.
func retype(dt arrow.DataType) conv {
	return func(a arrow.Array) (arrow.Array, error) {
		d := a.Data()
		return build(dt, d, d.Buffers(), d.Children()), nil
	}
}

// rescaler converts fixed-width integer-coded values (timestamps, dates,
// times) as floor(v*mul/div), failing when a value leaves [lo, hi].
func rescaler[I, O int32 | int64](p *planner, path string, out arrow.DataType, mul, div, lo, hi int64) conv {
	return func(a arrow.Array) (arrow.Array, error) {
		d := a.Data()
		off, n := d.Offset(), d.Len()
		src := values[I](d.Buffers()[1])
		buf := memory.NewResizableBuffer(p.mem)
		buf.Resize((off + n) * int(unsafe.Sizeof(O(0))))
		defer buf.Release()
		dst := arrow.GetData[O](buf.Bytes())
		valid := validity(d)
		for i := off; i < off+n; i++ {
			if !valid(i) {
				continue
			}
			v, ok := rescale(int64(src[i]), mul, div)
			if !ok || v < lo || v > hi {
				return nil, outOfRange(path, int64(src[i]), a.DataType(), out)
			}
			dst[i] = O(v)
		}
		return build(out, d, []*memory.Buffer{d.Buffers()[0], buf}, nil), nil
	}
}

// rescale returns floor(v*mul/div); false when v*mul overflows.
func rescale(v, mul, div int64) (int64, bool) {
	if mul != 1 {
		if v > math.MaxInt64/mul || v < math.MinInt64/mul {
			return 0, false
		}
		v *= mul
	}
	if div != 1 {
		q := v / div
		if v%div != 0 && v < 0 {
			q-- // floor, not truncation toward zero
		}
		v = q
	}
	return v, true
}

// zoneShift converts timestamps between wall-clock times (no time zone)
// and instants (a time zone) in the session time zone, after rescaling
// them to out's unit as rescaler does: toInstant reads wall-clock times as
// Spark's cast from TIMESTAMP_NTZ to TIMESTAMP does (a time in a DST gap
// moves forward by the gap, one in an overlap takes the earlier offset),
// else instants become the wall-clock time they show in the zone.
func zoneShift(p *planner, path string, out arrow.DataType, mul, div int64, toInstant bool) conv {
	perSec := 1_000_000_000 / unitNanos(out.(*arrow.TimestampType).Unit)
	return func(a arrow.Array) (arrow.Array, error) {
		d := a.Data()
		off, n := d.Offset(), d.Len()
		src := values[int64](d.Buffers()[1])
		buf := memory.NewResizableBuffer(p.mem)
		buf.Resize((off + n) * 8)
		defer buf.Release()
		dst := arrow.GetData[int64](buf.Bytes())
		valid := validity(d)
		c := p.opts.Zone.Converter()
		for i := off; i < off+n; i++ {
			if !valid(i) {
				continue
			}
			v, ok := rescale(src[i], mul, div)
			if ok && toInstant {
				v, ok = c.ToInstant(v, perSec)
			} else if ok {
				v, ok = c.ToWall(v, perSec)
			}
			if !ok {
				return nil, fmt.Errorf("column '%s': value %d of %s is out of range for %s in time zone %s: %w",
					path, src[i], a.DataType(), out, p.opts.Zone, errs.ErrValidation)
			}
			dst[i] = v
		}
		return build(out, d, []*memory.Buffer{d.Buffers()[0], buf}, nil), nil
	}
}

func outOfRange(path string, v int64, from, to arrow.DataType) error {
	return fmt.Errorf("column '%s': value %d of %s is out of range for %s: %w", path, v, from, to, errs.ErrValidation)
}

// dateToTimestamp converts dates (days, or milliseconds when perDay is
// 86_400_000; date64 values are floored to days) to timestamps of type out
// as Spark casts DATE: midnight without a time zone, the day's first
// instant in the session time zone with one (midnight, or the end of a DST
// gap midnight falls in).
func dateToTimestamp[I int32 | int64](p *planner, path string, out *arrow.TimestampType, perDay int64) conv {
	perSec := 1_000_000_000 / unitNanos(out.Unit)
	zoned := out.TimeZone != "" && !p.opts.Zone.IsUTC()
	return func(a arrow.Array) (arrow.Array, error) {
		d := a.Data()
		off, n := d.Offset(), d.Len()
		src := values[I](d.Buffers()[1])
		buf := memory.NewResizableBuffer(p.mem)
		buf.Resize((off + n) * 8)
		defer buf.Release()
		dst := arrow.GetData[int64](buf.Bytes())
		valid := validity(d)
		c := p.opts.Zone.Converter()
		for i := off; i < off+n; i++ {
			if !valid(i) {
				continue
			}
			day, _ := rescale(int64(src[i]), 1, perDay)
			sec := day * 86400
			if zoned {
				sec = c.StartOfDay(day)
			}
			v, ok := rescale(sec, perSec, 1)
			if !ok {
				return nil, outOfRange(path, int64(src[i]), a.DataType(), out)
			}
			dst[i] = v
		}
		return build(out, d, []*memory.Buffer{d.Buffers()[0], buf}, nil), nil
	}
}

// timestampToDate converts timestamps to dates as Spark casts them: the
// date of the wall-clock time, an instant's in the session time zone.
func timestampToDate(p *planner, path string, in *arrow.TimestampType, out arrow.DataType) conv {
	perSec := 1_000_000_000 / unitNanos(in.Unit)
	zoned := in.TimeZone != "" && !p.opts.Zone.IsUTC()
	return func(a arrow.Array) (arrow.Array, error) {
		d := a.Data()
		off, n := d.Offset(), d.Len()
		src := values[int64](d.Buffers()[1])
		buf := memory.NewResizableBuffer(p.mem)
		buf.Resize((off + n) * 4)
		defer buf.Release()
		dst := arrow.GetData[int32](buf.Bytes())
		valid := validity(d)
		c := p.opts.Zone.Converter()
		for i := off; i < off+n; i++ {
			if !valid(i) {
				continue
			}
			v, ok := src[i], true
			if zoned {
				v, ok = c.ToWall(v, perSec)
			}
			day, _ := rescale(v, 1, perSec*86400)
			if !ok || day < math.MinInt32 || day > math.MaxInt32 {
				return nil, outOfRange(path, src[i], a.DataType(), out)
			}
			dst[i] = int32(day)
		}
		return build(out, d, []*memory.Buffer{d.Buffers()[0], buf}, nil), nil
	}
}

// widenDecimal converts decimal32/decimal64 values to decimal128 of the same
// scale.
func widenDecimal[I int32 | int64](p *planner, out arrow.DataType) conv {
	return func(a arrow.Array) (arrow.Array, error) {
		d := a.Data()
		off, n := d.Offset(), d.Len()
		src := values[I](d.Buffers()[1])
		buf := memory.NewResizableBuffer(p.mem)
		buf.Resize((off + n) * 16)
		defer buf.Release()
		dst := arrow.Decimal128Traits.CastFromBytes(buf.Bytes())
		for i := off; i < off+n; i++ {
			dst[i] = decimal128.FromI64(int64(src[i]))
		}
		return build(out, d, []*memory.Buffer{d.Buffers()[0], buf}, nil), nil
	}
}

// values views a buffer as a slice of T (nil for a missing buffer).
func values[T int32 | int64](b *memory.Buffer) []T {
	if b == nil {
		return nil
	}
	return arrow.GetData[T](b.Bytes())
}

func widen(v []int32) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// offsetsOf returns d's 32-bit offsets buffer, retained, or a zeroed one
// when the producer left it out (allowed for an empty array).
func (p *planner) offsetsOf(d arrow.ArrayData) *memory.Buffer {
	if b := d.Buffers()[1]; b != nil && b.Len() >= (d.Offset()+d.Len()+1)*4 {
		b.Retain()
		return b
	}
	buf, _ := p.alloc32(d.Offset() + d.Len() + 1)
	return buf
}

// alloc32 allocates a zeroed buffer of n int32 values.
func (p *planner) alloc32(n int) (*memory.Buffer, []int32) {
	buf := memory.NewResizableBuffer(p.mem)
	buf.Resize(n * 4)
	b := buf.Bytes()
	clear(b)
	return buf, arrow.GetData[int32](b)
}

// validity returns whether the value at absolute index i of d is non-null.
func validity(d arrow.ArrayData) func(i int) bool {
	bm := d.Buffers()[0]
	if d.NullN() == 0 || bm == nil {
		return func(int) bool { return true }
	}
	bits := bm.Bytes()
	return func(i int) bool { return bitutil.BitIsSet(bits, i) }
}

// hasNestedRequired reports whether a required field sits below type t.
func hasNestedRequired(t iceberg.Type) bool {
	switch t := t.(type) {
	case *iceberg.StructType:
		for _, f := range t.FieldList {
			if f.Required || hasNestedRequired(f.Type) {
				return true
			}
		}
	case *iceberg.ListType:
		return t.ElementRequired || hasNestedRequired(t.Element)
	case *iceberg.MapType:
		return true // keys are always required
	}
	return false
}

// checkRequired reports a null in a required field below arr (of table type
// t) in a row that counts: live[i] (nil: every row) and every enclosing value
// non-null. A null struct, list or map hides what it would contain.
func checkRequired(arr arrow.Array, t iceberg.Type, path string, live []bool) error {
	switch tt := t.(type) {
	case *iceberg.StructType:
		sa := arr.(*array.Struct)
		rows := liveRows(sa, live)
		for j, f := range tt.FieldList {
			ch, fp := sa.Field(j), join(path, f.Name)
			if f.Required && anyNull(ch, rows) {
				return nullInRequired(fp)
			}
			if hasNestedRequired(f.Type) {
				if err := checkRequired(ch, f.Type, fp, rows); err != nil {
					return err
				}
			}
		}
	case *iceberg.ListType:
		la := arr.(*array.List)
		elems := la.ListValues()
		if !(tt.ElementRequired && elems.NullN() > 0) && !hasNestedRequired(tt.Element) {
			return nil
		}
		rows := elementRows(la, live, elems.Len())
		if tt.ElementRequired && anyNull(elems, rows) {
			return nullInRequired(path + ".element")
		}
		return checkRequired(elems, tt.Element, path+".element", rows)
	case *iceberg.MapType:
		ma := arr.(*array.Map)
		keys, items := ma.Keys(), ma.Items()
		deep := hasNestedRequired(tt.KeyType) || hasNestedRequired(tt.ValueType)
		if keys.NullN() == 0 && !(tt.ValueRequired && items.NullN() > 0) && !deep {
			return nil
		}
		rows := elementRows(ma, live, keys.Len())
		if anyNull(keys, rows) {
			return nullInRequired(path + ".key")
		}
		if tt.ValueRequired && anyNull(items, rows) {
			return nullInRequired(path + ".value")
		}
		if err := checkRequired(keys, tt.KeyType, path+".key", rows); err != nil {
			return err
		}
		return checkRequired(items, tt.ValueType, path+".value", rows)
	}
	return nil
}

// liveRows combines live with a's validity; nil means every row counts.
func liveRows(a arrow.Array, live []bool) []bool {
	if live == nil && a.NullN() == 0 {
		return nil
	}
	rows := make([]bool, a.Len())
	for i := range rows {
		rows[i] = (live == nil || live[i]) && a.IsValid(i)
	}
	return rows
}

// elementRows marks the elements of the lists that count.
func elementRows(la array.ListLike, live []bool, n int) []bool {
	rows := make([]bool, n)
	for i := range la.Len() {
		if (live == nil || live[i]) && la.IsValid(i) {
			start, end := la.ValueOffsets(i)
			for k := start; k < end; k++ {
				rows[k] = true
			}
		}
	}
	return rows
}

func anyNull(a arrow.Array, rows []bool) bool {
	if a.NullN() == 0 {
		return false
	}
	for i := range a.Len() {
		if (rows == nil || rows[i]) && a.IsNull(i) {
			return true
		}
	}
	return false
}
