package transform

import (
	"context"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/internal/memx"
)

// groups says where each row of a batch goes: row i becomes row pos[i] of
// group gid[i], which holds counts[g] rows.
type groups struct {
	gid    []uint32
	pos    []int32
	counts []int
	mem    memory.Allocator
	// out allocates the buffers newBuffers hands out, which the scatter
	// writes in full (a Recycler's are not zeroed).
	out memory.Allocator
	// rows lists each group's input rows in order, for arrow's Take; built
	// on first use.
	rows []arrow.Array
}

func (gr *groups) release() {
	for _, r := range gr.rows {
		r.Release()
	}
}

// scatter splits arr into one array per group, each with buffers of its own.
// Flat types (fixed width, boolean, string/binary, extensions over them) and
// structs of them are scattered here: reading the input in order and
// appending to one sequential stream per group misses the cache far less
// than a random-access gather, and is several times faster than arrow's
// Take kernel. Lists, maps and other types go through compute.TakeArray.
func (gr *groups) scatter(arr arrow.Array) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(gr.counts))
	if datas, ok := gr.scatterData(arr); ok {
		for g, d := range datas {
			out[g] = array.MakeFromData(d)
			d.Release()
		}
		return out, nil
	}
	if gr.rows == nil {
		gr.rows = make([]arrow.Array, len(gr.counts))
		idx := make([][]int32, len(gr.counts))
		for g, c := range gr.counts {
			idx[g] = make([]int32, 0, c)
		}
		for row, g := range gr.gid {
			idx[g] = append(idx[g], int32(row))
		}
		for g := range idx {
			b := array.NewInt32Builder(gr.mem)
			b.AppendValues(idx[g], nil)
			gr.rows[g] = b.NewArray()
			b.Release()
		}
	}
	ctx := compute.WithAllocator(context.Background(), gr.mem)
	for g := range out {
		taken, err := compute.TakeArray(ctx, arr, gr.rows[g])
		if err != nil {
			for _, o := range out[:g] {
				o.Release()
			}
			return nil, err
		}
		out[g] = taken
	}
	return out, nil
}

// newBuffers allocates one buffer per group of size(counts[g]) bytes, with
// undefined contents: the caller writes every byte.
func (gr *groups) newBuffers(size func(rows int) int) ([]*memory.Buffer, [][]byte) {
	bufs := make([]*memory.Buffer, len(gr.counts))
	raw := make([][]byte, len(gr.counts))
	mem := gr.out
	if mem == nil {
		mem = gr.mem
	}
	for g, c := range gr.counts {
		bufs[g] = memory.NewResizableBuffer(mem)
		bufs[g].Resize(size(c))
		raw[g] = bufs[g].Bytes()
	}
	return bufs, raw
}

// newBitmaps is newBuffers for one bit per row, the bits past the last
// row cleared (setting every row's bit then defines every byte).
func (gr *groups) newBitmaps() ([]*memory.Buffer, [][]byte) {
	bufs, dst := gr.newBuffers(func(n int) int { return int(bitutil.BytesForBits(int64(n))) })
	for _, d := range dst {
		if len(d) > 0 {
			d[len(d)-1] = 0
		}
	}
	return bufs, dst
}

func releaseBuffers(bufs []*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// scatterData is scatter's array data; false when the type is not handled
// here.
func (gr *groups) scatterData(arr arrow.Array) ([]arrow.ArrayData, bool) {
	dt := arr.DataType()
	if !isFlat(dt) {
		return nil, false
	}
	ng := len(gr.counts)
	out := make([]arrow.ArrayData, ng)
	if ext, ok := dt.(arrow.ExtensionType); ok {
		storage, ok := gr.scatterData(arr.(array.ExtensionArray).Storage())
		if !ok {
			return nil, false
		}
		for g, s := range storage {
			d := s.(*array.Data)
			out[g] = array.NewData(ext, d.Len(), d.Buffers(), d.Children(), d.NullN(), 0)
			s.Release()
		}
		return out, true
	}
	src := arr.Data()
	valid, nulls := gr.scatterValidity(arr)
	defer releaseBuffers(valid)
	validOf := func(g int) *memory.Buffer {
		if valid == nil {
			return nil
		}
		return valid[g]
	}
	nullsOf := func(g int) int {
		if nulls == nil {
			return 0
		}
		return nulls[g]
	}
	off := src.Offset()
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		var o, v []*memory.Buffer
		if id := dt.ID(); id == arrow.STRING || id == arrow.BINARY {
			offs, vals := varWidth32(arr)
			o, v = scatterVar(gr, offs, vals)
		} else {
			offs, vals := varWidth64(arr)
			o, v = scatterVar(gr, offs, vals)
		}
		defer releaseBuffers(o)
		defer releaseBuffers(v)
		for g := range out {
			out[g] = array.NewData(dt, gr.counts[g], []*memory.Buffer{validOf(g), o[g], v[g]}, nil, nullsOf(g), 0)
		}
		return out, true
	case arrow.BOOL:
		bufs, dst := gr.newBitmaps()
		defer releaseBuffers(bufs)
		bits := src.Buffers()[1].Bytes()
		for i, p := range gr.pos {
			bitutil.SetBitTo(dst[gr.gid[i]], int(p), bitutil.BitIsSet(bits, off+i))
		}
		for g := range out {
			out[g] = array.NewData(dt, gr.counts[g], []*memory.Buffer{validOf(g), bufs[g]}, nil, nullsOf(g), 0)
		}
		return out, true
	case arrow.STRUCT:
		st := arr.(*array.Struct)
		children := make([][]arrow.ArrayData, st.NumField())
		defer func() {
			for _, c := range children {
				for _, d := range c {
					d.Release()
				}
			}
		}()
		for i := range children {
			var ok bool
			if children[i], ok = gr.scatterData(st.Field(i)); !ok {
				return nil, false
			}
		}
		for g := range out {
			kids := make([]arrow.ArrayData, len(children))
			for i := range children {
				kids[i] = children[i][g]
			}
			out[g] = array.NewData(dt, gr.counts[g], []*memory.Buffer{validOf(g)}, kids, nullsOf(g), 0)
		}
		return out, true
	}
	// fixed width, byte aligned
	w := dt.(arrow.FixedWidthDataType).BitWidth() / 8
	bufs, dst := gr.newBuffers(func(n int) int { return n * w })
	defer releaseBuffers(bufs)
	var vals []byte
	if b := src.Buffers()[1]; b != nil {
		vals = b.Bytes()[off*w:]
	}
	switch w {
	case 1:
		scatterFixed(gr, vals, dst)
	case 2:
		scatterFixed(gr, castSlice[uint16](vals), castAll[uint16](dst))
	case 4:
		scatterFixed(gr, castSlice[uint32](vals), castAll[uint32](dst))
	case 8:
		scatterFixed(gr, castSlice[uint64](vals), castAll[uint64](dst))
	case 16:
		scatterFixed(gr, castSlice[[2]uint64](vals), castAll[[2]uint64](dst))
	default:
		for i, p := range gr.pos {
			copy(dst[gr.gid[i]][int(p)*w:(int(p)+1)*w], vals[i*w:(i+1)*w])
		}
	}
	for g := range out {
		out[g] = array.NewData(dt, gr.counts[g], []*memory.Buffer{validOf(g), bufs[g]}, nil, nullsOf(g), 0)
	}
	return out, true
}

// isFlat reports whether scatterData handles dt (structs recursively).
func isFlat(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.BOOL:
		return true
	case arrow.STRUCT:
		for _, f := range dt.(*arrow.StructType).Fields() {
			if !isFlat(f.Type) {
				return false
			}
		}
		return true
	case arrow.EXTENSION:
		return isFlat(dt.(arrow.ExtensionType).StorageType())
	case arrow.DICTIONARY, arrow.NULL:
		return false
	}
	fw, ok := dt.(arrow.FixedWidthDataType)
	return ok && fw.BitWidth() >= 8 && fw.BitWidth()%8 == 0
}

func castSlice[T any](b []byte) []T {
	var zero T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
}

func castAll[T any](bs [][]byte) [][]T {
	out := make([][]T, len(bs))
	for g, b := range bs {
		out[g] = castSlice[T](b)
	}
	return out
}

func scatterFixed[T any](gr *groups, src []T, dst [][]T) {
	src = src[:len(gr.pos)]
	gid := gr.gid[:len(src)]
	for i, p := range gr.pos {
		dst[gid[i]][p] = src[i]
	}
}

// scatterValidity returns each group's validity bitmap and null count, or
// nils when arr has no nulls.
func (gr *groups) scatterValidity(arr arrow.Array) ([]*memory.Buffer, []int) {
	if arr.NullN() == 0 {
		return nil, nil
	}
	bm, off := validBits(arr)
	bufs, dst := gr.newBitmaps()
	nulls := make([]int, len(gr.counts))
	for i, p := range gr.pos {
		g := gr.gid[i]
		v := bitutil.BitIsSet(bm, off+i)
		bitutil.SetBitTo(dst[g], int(p), v)
		if !v {
			nulls[g]++
		}
	}
	return bufs, nulls
}

// scatterVar scatters variable-width values: each group's bytes are
// summed first, then one pass copies every value to the end of its group's
// bytes and writes its end offset there. (Scattering the lengths, then a
// prefix sum per group, then the bytes took a pass more over random places.)
func scatterVar[O int32 | int64](gr *groups, offs []O, vals []byte) (offBufs, dataBufs []*memory.Buffer) {
	var zero O
	offBufs, raw := gr.newBuffers(func(n int) int { return (n + 1) * int(unsafe.Sizeof(zero)) })
	outOffs := make([][]O, len(raw))
	for g := range raw {
		outOffs[g] = castSlice[O](raw[g])[:gr.counts[g]+1]
		outOffs[g][0] = 0
	}
	size := make([]int, len(raw))
	longest := 0
	for i, g := range gr.gid {
		n := int(offs[i+1] - offs[i])
		size[g] += n
		longest = max(longest, n)
	}
	// Each group's bytes get slack past their end while they are written:
	// values are copied in whole blocks that run past their end, into the
	// place of the group's next value (written after this one) or the
	// slack. Go's copy of a short string cost a call to memmove each.
	dataBufs, dst := gr.newBuffers(func(int) int { return 0 })
	// Where every value fits in 16, 32 or 48 bytes, each is copied as that
	// many: the copy loop runs the same count for every value, where a
	// count that followed the value's length mispredicted its exit on
	// columns of mixed lengths (lineitem's comments are 10 to 43 bytes).
	w := memx.FixedWords(longest)
	for g := range raw {
		dataBufs[g].Resize(size[g] + max(w, memx.WordCopySlack))
		dst[g] = dataBufs[g].Bytes()
	}
	if w > 0 {
		scatterBlocks(gr, offs, vals, dst, outOffs, w)
	} else {
		ends := make([]O, len(raw))
		for i, p := range gr.pos {
			g := gr.gid[i]
			from, to := int(offs[i]), int(offs[i+1])
			at := ends[g]
			memx.CopyValue(dst[g][at:], vals, from, to)
			at += O(to - from)
			ends[g] = at
			outOffs[g][p+1] = at
		}
	}
	for g := range raw {
		dataBufs[g].Resize(size[g])
	}
	return offBufs, dataBufs
}

// scatterBlocks is scatterVar's copy where no value is longer than w bytes
// of whole words (memx.FixedWords): each value is copied as w bytes,
// running past its end into room dst has. The last values, whose words
// would read past vals, are copied exactly.
func scatterBlocks[O int32 | int64](gr *groups, offs []O, vals []byte, dst [][]byte, outOffs [][]O, w int) {
	n := len(gr.pos)
	safe := n
	for safe > 0 && int(offs[safe-1])+w > len(vals) {
		safe--
	}
	ends := make([]O, len(dst))
	base := unsafe.Pointer(unsafe.SliceData(vals))
	for i, p := range gr.pos[:safe] {
		g := gr.gid[i]
		from, to := offs[i], offs[i+1]
		at := ends[g]
		memx.Words(unsafe.Pointer(&dst[g][at]), unsafe.Add(base, from), w)
		at += to - from
		ends[g] = at
		outOffs[g][p+1] = at
	}
	for i := safe; i < n; i++ {
		g := gr.gid[i]
		from, to := offs[i], offs[i+1]
		at := ends[g]
		copy(dst[g][at:], vals[from:to])
		at += to - from
		ends[g] = at
		outOffs[g][gr.pos[i]+1] = at
	}
}
