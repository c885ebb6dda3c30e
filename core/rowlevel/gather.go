package rowlevel

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// rowRun is rows [lo, hi) of a batch.
type rowRun struct{ lo, hi int }

// minRunRows is the mean run length from which copying runs beats a take
// for every column: a rewrite keeps most rows of a file, in long runs
// between the few rows it changes. Strings and wide fixed-width values
// (decimals) are copied by runs even when every run is one row: arrow-go's
// take appends them one value at a time through a builder.
const minRunRows = 4

// indexRuns splits row numbers, in any order and with repeats, into runs
// of consecutive rows; long reports whether the runs are long enough on
// average to copy every column by runs.
func indexRuns(idx []int32) (runs []rowRun, long bool) {
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && idx[j] == idx[j-1]+1 {
			j++
		}
		runs = append(runs, rowRun{int(idx[i]), int(idx[j-1]) + 1})
		i = j
	}
	return runs, len(runs) > 0 && len(idx) >= minRunRows*len(runs)
}

// takesWell reports whether arrow's take beats one copy per row for dt:
// fixed-width values of at most 8 bytes, which it moves in a typed loop.
func takesWell(dt arrow.DataType) bool {
	fw, ok := dt.(arrow.FixedWidthDataType)
	return ok && fw.BitWidth() <= 64
}

// copyRuns copies the rows of runs (n in all) of a into a new array with
// one bulk copy per run and buffer. false for types it does not handle
// (nested, dictionary, view and extension types): the caller takes.
func copyRuns(a arrow.Array, runs []rowRun, n int, mem memory.Allocator) (arrow.Array, bool) {
	dt := a.DataType()
	d := a.Data()
	off := d.Offset()
	bufs := d.Buffers()
	var out []*memory.Buffer
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		offs, data := copyVarRuns[int32](bufs, off, runs, n, mem)
		out = []*memory.Buffer{nil, offs, data}
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		offs, data := copyVarRuns[int64](bufs, off, runs, n, mem)
		out = []*memory.Buffer{nil, offs, data}
	case arrow.DICTIONARY, arrow.EXTENSION:
		return nil, false
	default:
		fw, ok := dt.(arrow.FixedWidthDataType)
		if !ok || len(bufs) != 2 || bufs[1] == nil {
			return nil, false
		}
		bits := fw.BitWidth()
		vals := memory.NewResizableBuffer(mem)
		switch {
		case bits == 1:
			vals.Resize(int(bitutil.BytesForBits(int64(n))))
			copyBitRuns(bufs[1].Bytes(), off, runs, vals.Bytes())
		case bits > 0 && bits%8 == 0:
			w := bits / 8
			vals.Resize(n * w)
			dst, src, pos := vals.Bytes(), bufs[1].Bytes(), 0
			for _, r := range runs {
				pos += copy(dst[pos:], src[(off+r.lo)*w:(off+r.hi)*w])
			}
		default:
			vals.Release()
			return nil, false
		}
		out = []*memory.Buffer{nil, vals}
	}
	nulls := 0
	if a.NullN() > 0 && bufs[0] != nil {
		valid := memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		copyBitRuns(bufs[0].Bytes(), off, runs, valid.Bytes())
		nulls = n - bitutil.CountSetBits(valid.Bytes(), 0, n)
		out[0] = valid
	}
	data := array.NewData(dt, n, out, nil, nulls, 0)
	for _, b := range out {
		if b != nil {
			b.Release()
		}
	}
	defer data.Release()
	return array.MakeFromData(data), true
}

// copyBitRuns copies the bits of runs (bitmap starting at bit off) to dst.
func copyBitRuns(src []byte, off int, runs []rowRun, dst []byte) {
	pos := 0
	for _, r := range runs {
		bitutil.CopyBitmap(src, off+r.lo, r.hi-r.lo, dst, pos)
		pos += r.hi - r.lo
	}
}

// copyVarRuns copies the offsets and value bytes of runs of a binary-like
// array, rebasing the offsets.
func copyVarRuns[O int32 | int64](bufs []*memory.Buffer, off int, runs []rowRun, n int, mem memory.Allocator) (*memory.Buffer, *memory.Buffer) {
	var src []O
	if bufs[1] != nil && bufs[1].Len() > 0 {
		src = unsafe.Slice((*O)(unsafe.Pointer(&bufs[1].Bytes()[0])), bufs[1].Len()/int(unsafe.Sizeof(O(0))))
	}
	var vals []byte
	if len(bufs) > 2 && bufs[2] != nil {
		vals = bufs[2].Bytes()
	}
	size := 0
	for _, r := range runs {
		size += int(src[off+r.hi] - src[off+r.lo])
	}
	offsBuf := memory.NewResizableBuffer(mem)
	offsBuf.Resize((n + 1) * int(unsafe.Sizeof(O(0))))
	offs := unsafe.Slice((*O)(unsafe.Pointer(&offsBuf.Bytes()[0])), n+1)
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(size)
	data := dataBuf.Bytes()
	pos, at := 0, O(0)
	for _, r := range runs {
		base := src[off+r.lo]
		for i := r.lo; i < r.hi; i++ {
			offs[pos] = src[off+i] - base + at
			pos++
		}
		end := src[off+r.hi]
		copy(data[at:], vals[base:end])
		at += end - base
	}
	offs[pos] = at
	return offsBuf, dataBuf
}
