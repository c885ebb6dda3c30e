package transform

import (
	"context"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// permute returns arr with its rows reordered by a permutation, given both
// ways: row i moves to pos[i], and output row k is input row idx[k]. Flat
// types (fixed width, boolean, string/binary, extensions over them) and
// structs of them are scattered here: reading the input in order and
// writing one sequential stream per partition misses the cache far less than
// a random-access gather, and is several times faster than arrow's Take
// kernel. Lists, maps and other types go through compute.TakeArray(idx).
func permute(arr arrow.Array, pos []int32, indices arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	data, ok := scatterData(arr, pos, mem)
	if !ok {
		ctx := compute.WithAllocator(context.Background(), mem)
		return compute.TakeArray(ctx, arr, indices)
	}
	out := array.MakeFromData(data)
	data.Release()
	return out, nil
}

// scatterData moves row i of arr to row pos[i] of new array data; false
// when the type is not handled here.
func scatterData(arr arrow.Array, pos []int32, mem memory.Allocator) (arrow.ArrayData, bool) {
	dt := arr.DataType()
	if !isFlat(dt) {
		return nil, false
	}
	if ext, ok := dt.(arrow.ExtensionType); ok {
		storage, ok := scatterData(arr.(array.ExtensionArray).Storage(), pos, mem)
		if !ok {
			return nil, false
		}
		defer storage.Release()
		d := storage.(*array.Data)
		return array.NewData(ext, d.Len(), d.Buffers(), d.Children(), d.NullN(), 0), true
	}
	src := arr.Data()
	n := len(pos)
	valid, nulls := scatterValidity(arr, pos, mem)
	if valid != nil {
		defer valid.Release()
	}
	off := src.Offset()
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		offs, vals := varWidth32(arr)
		o, v := scatterVar(offs, vals, pos, mem)
		defer o.Release()
		defer v.Release()
		return array.NewData(dt, n, []*memory.Buffer{valid, o, v}, nil, nulls, 0), true
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		offs, vals := varWidth64(arr)
		o, v := scatterVar(offs, vals, pos, mem)
		defer o.Release()
		defer v.Release()
		return array.NewData(dt, n, []*memory.Buffer{valid, o, v}, nil, nulls, 0), true
	case arrow.BOOL:
		out := memory.NewResizableBuffer(mem)
		out.Resize(int(bitutil.BytesForBits(int64(n))))
		defer out.Release()
		bits, dst := src.Buffers()[1].Bytes(), out.Bytes()
		for i, p := range pos {
			bitutil.SetBitTo(dst, int(p), bitutil.BitIsSet(bits, off+i))
		}
		return array.NewData(dt, n, []*memory.Buffer{valid, out}, nil, nulls, 0), true
	case arrow.STRUCT:
		st := arr.(*array.Struct)
		children := make([]arrow.ArrayData, st.NumField())
		defer func() {
			for _, c := range children {
				if c != nil {
					c.Release()
				}
			}
		}()
		for i := range children {
			var ok bool
			if children[i], ok = scatterData(st.Field(i), pos, mem); !ok {
				return nil, false
			}
		}
		return array.NewData(dt, n, []*memory.Buffer{valid}, children, nulls, 0), true
	}
	// fixed width, byte aligned
	w := dt.(arrow.FixedWidthDataType).BitWidth() / 8
	out := memory.NewResizableBuffer(mem)
	out.Resize(n * w)
	defer out.Release()
	var vals []byte
	if b := src.Buffers()[1]; b != nil {
		vals = b.Bytes()[off*w:]
	}
	switch w {
	case 1:
		scatterFixed(vals, pos, out.Bytes())
	case 2:
		scatterFixed(castSlice[uint16](vals), pos, castSlice[uint16](out.Bytes()))
	case 4:
		scatterFixed(castSlice[uint32](vals), pos, castSlice[uint32](out.Bytes()))
	case 8:
		scatterFixed(castSlice[uint64](vals), pos, castSlice[uint64](out.Bytes()))
	case 16:
		scatterFixed(castSlice[[2]uint64](vals), pos, castSlice[[2]uint64](out.Bytes()))
	default:
		dst := out.Bytes()
		for i, p := range pos {
			copy(dst[int(p)*w:(int(p)+1)*w], vals[i*w:(i+1)*w])
		}
	}
	return array.NewData(dt, n, []*memory.Buffer{valid, out}, nil, nulls, 0), true
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

func scatterFixed[T any](src []T, pos []int32, dst []T) {
	src = src[:len(pos)]
	for i, p := range pos {
		dst[p] = src[i]
	}
}

func scatterValidity(arr arrow.Array, pos []int32, mem memory.Allocator) (*memory.Buffer, int) {
	if arr.NullN() == 0 {
		return nil, 0
	}
	bm, off := validBits(arr)
	out := memory.NewResizableBuffer(mem)
	out.Resize(int(bitutil.BytesForBits(int64(len(pos)))))
	dst := out.Bytes()
	for i, p := range pos {
		bitutil.SetBitTo(dst, int(p), bitutil.BitIsSet(bm, off+i))
	}
	return out, arr.NullN()
}

func scatterVar[O int32 | int64](offs []O, vals []byte, pos []int32, mem memory.Allocator) (*memory.Buffer, *memory.Buffer) {
	var zero O
	n := len(pos)
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((n + 1) * int(unsafe.Sizeof(zero)))
	outOffs := castSlice[O](offBuf.Bytes())[:n+1]
	// lengths at their new places, then a prefix sum turns them to offsets
	outOffs[0] = 0
	for i, p := range pos {
		outOffs[p+1] = offs[i+1] - offs[i]
	}
	for k := 1; k <= n; k++ {
		outOffs[k] += outOffs[k-1]
	}
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(int(outOffs[n]))
	dst := dataBuf.Bytes()
	for i, p := range pos {
		copy(dst[outOffs[p]:outOffs[p+1]], vals[offs[i]:offs[i+1]])
	}
	return offBuf, dataBuf
}
