// Package transform computes Iceberg partition transforms over whole Arrow
// arrays and groups record batches by partition.
//
// Values follow the Iceberg table spec: bucket is murmur3_x86_32 of the spec's
// single-value encoding, (hash & MaxInt32) % N; truncate rounds integers and
// decimals (unscaled) toward negative infinity, cuts strings by code points and
// binary by bytes; year, month, day and hour count from 1970-01-01 UTC.
package transform

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// kind is the Iceberg view of an Arrow input type.
type kind uint8

const (
	kindUnsupported kind = iota
	kindBool
	kindInt32
	kindInt64
	kindFloat32
	kindFloat64
	kindDecimal
	kindDate
	kindTime
	kindTimestampUS
	kindTimestampNS
	kindString
	kindLargeString
	kindBinary
	kindLargeBinary
	kindFixed
	kindUUID
)

const uuidExtensionName = "arrow.uuid"

func kindOf(dt arrow.DataType) kind {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return kindBool
	case *arrow.Int32Type:
		return kindInt32
	case *arrow.Int64Type:
		return kindInt64
	case *arrow.Float32Type:
		return kindFloat32
	case *arrow.Float64Type:
		return kindFloat64
	case *arrow.Decimal128Type:
		return kindDecimal
	case *arrow.Date32Type:
		return kindDate
	case *arrow.Time64Type:
		if t.Unit == arrow.Microsecond {
			return kindTime
		}
	case *arrow.TimestampType:
		switch t.Unit {
		case arrow.Microsecond:
			return kindTimestampUS
		case arrow.Nanosecond:
			return kindTimestampNS
		}
	case *arrow.StringType:
		return kindString
	case *arrow.LargeStringType:
		return kindLargeString
	case *arrow.BinaryType:
		return kindBinary
	case *arrow.LargeBinaryType:
		return kindLargeBinary
	case *arrow.FixedSizeBinaryType:
		return kindFixed
	case arrow.ExtensionType:
		if t.ExtensionName() == uuidExtensionName {
			if fs, ok := t.StorageType().(*arrow.FixedSizeBinaryType); ok && fs.ByteWidth == 16 {
				return kindUUID
			}
		}
	}
	return kindUnsupported
}

// op is a transform reduced to what Apply needs.
type op struct {
	name  string // "identity", "bucket", ...
	param int    // bucket count or truncate width
}

func opOf(tr iceberg.Transform) (op, error) {
	switch t := tr.(type) {
	case iceberg.IdentityTransform, *iceberg.IdentityTransform:
		return op{name: "identity"}, nil
	case iceberg.VoidTransform, *iceberg.VoidTransform:
		return op{name: "void"}, nil
	case iceberg.YearTransform, *iceberg.YearTransform:
		return op{name: "year"}, nil
	case iceberg.MonthTransform, *iceberg.MonthTransform:
		return op{name: "month"}, nil
	case iceberg.DayTransform, *iceberg.DayTransform:
		return op{name: "day"}, nil
	case iceberg.HourTransform, *iceberg.HourTransform:
		return op{name: "hour"}, nil
	case iceberg.BucketTransform:
		return bucketOp(t.NumBuckets)
	case *iceberg.BucketTransform:
		if t != nil {
			return bucketOp(t.NumBuckets)
		}
	case iceberg.TruncateTransform:
		return truncateOp(t.Width)
	case *iceberg.TruncateTransform:
		if t != nil {
			return truncateOp(t.Width)
		}
	}
	return op{}, fmt.Errorf("%w: partition transform %v is not supported", errs.ErrInvalidArgument, tr)
}

func bucketOp(n int) (op, error) {
	if n <= 0 || n > math.MaxInt32 {
		return op{}, fmt.Errorf("%w: bucket transform needs 0 < N <= %d, got %d", errs.ErrInvalidArgument, math.MaxInt32, n)
	}
	return op{name: "bucket", param: n}, nil
}

func truncateOp(w int) (op, error) {
	if w <= 0 || w > math.MaxInt32 {
		return op{}, fmt.Errorf("%w: truncate transform needs 0 < W <= %d, got %d", errs.ErrInvalidArgument, math.MaxInt32, w)
	}
	return op{name: "truncate", param: w}, nil
}

func unsupported(tr iceberg.Transform, dt arrow.DataType) error {
	return fmt.Errorf("%w: transform %s cannot be applied to Arrow type %s", errs.ErrInvalidArgument, tr, dt)
}

// Apply returns the partition values of transform tr over arr (the source
// column's values). Result types: identity and truncate keep the input type;
// bucket, year, month and hour give int32; day gives date32; void gives an
// all-null array of the input type. Nulls map to nulls. Unsupported
// type/transform pairs return an error wrapping errs.ErrInvalidArgument.
//
// Input types: bool, int32, int64, float32, float64 (identity only),
// decimal128, date32, time64[us], timestamp[us] (any zone), timestamp[ns],
// string, large_string, binary, large_binary, fixed_size_binary and the
// arrow.uuid extension. Other types (string_view, dictionary, int16, ...)
// must be cast to the table's write schema first.
func Apply(tr iceberg.Transform, arr arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	if arr == nil {
		return nil, fmt.Errorf("%w: transform %v: nil array", errs.ErrInvalidArgument, tr)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	o, err := opOf(tr)
	if err != nil {
		return nil, err
	}
	k := kindOf(arr.DataType())
	if k == kindUnsupported {
		return nil, unsupported(tr, arr.DataType())
	}
	switch o.name {
	case "identity":
		arr.Retain()
		return arr, nil
	case "void":
		return array.MakeArrayOfNull(mem, arr.DataType(), arr.Len()), nil
	case "bucket":
		if out := applyBucket(arr, k, newBuckets(uint32(o.param)), mem); out != nil {
			return out, nil
		}
	case "truncate":
		if out := applyTruncate(arr, k, o.param, mem); out != nil {
			return out, nil
		}
	default:
		if out := applyTemporal(o.name, arr, k, mem); out != nil {
			return out, nil
		}
	}
	return nil, unsupported(tr, arr.DataType())
}

// validityOf returns a validity bitmap for a result of arr's length and
// offset 0: nil without nulls, arr's own buffer (retained) when it starts at
// offset 0, else a copy. The caller releases it.
func validityOf(arr arrow.Array, mem memory.Allocator) *memory.Buffer {
	if arr.NullN() == 0 {
		return nil
	}
	data := arr.Data()
	src := data.Buffers()[0]
	if data.Offset() == 0 {
		src.Retain()
		return src
	}
	n := arr.Len()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bitutil.CopyBitmap(src.Bytes(), data.Offset(), n, buf.Bytes(), 0)
	return buf
}

// fixedOut allocates the values buffer of a fixed-width result of n values.
func fixedOut(mem memory.Allocator, n, width int) (*memory.Buffer, []byte) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * width)
	return buf, buf.Bytes()
}

// finishFixed wraps values (owned by the caller's reference) and arr's
// validity into a result array of type dt.
func finishFixed(arr arrow.Array, dt arrow.DataType, values *memory.Buffer, mem memory.Allocator) arrow.Array {
	valid := validityOf(arr, mem)
	data := array.NewData(dt, arr.Len(), []*memory.Buffer{valid, values}, nil, arr.NullN(), 0)
	out := array.MakeFromData(data)
	data.Release()
	values.Release()
	if valid != nil {
		valid.Release()
	}
	return out
}

func newInt32Out(mem memory.Allocator, n int) (*memory.Buffer, []int32) {
	buf, b := fixedOut(mem, n, 4)
	return buf, arrow.Int32Traits.CastFromBytes(b)
}

// varWidth32 returns the absolute offsets (length n+1) and the whole data
// buffer of a string/binary array; varWidth64 does so for large ones.
func varWidth32(arr arrow.Array) ([]int32, []byte) {
	data := arr.Data()
	offs := arrow.Int32Traits.CastFromBytes(data.Buffers()[1].Bytes())[data.Offset() : data.Offset()+data.Len()+1]
	var vals []byte
	if b := data.Buffers()[2]; b != nil {
		vals = b.Bytes()
	}
	return offs, vals
}

func varWidth64(arr arrow.Array) ([]int64, []byte) {
	data := arr.Data()
	offs := arrow.Int64Traits.CastFromBytes(data.Buffers()[1].Bytes())[data.Offset() : data.Offset()+data.Len()+1]
	var vals []byte
	if b := data.Buffers()[2]; b != nil {
		vals = b.Bytes()
	}
	return offs, vals
}

// fixedBytes returns the value bytes of a fixed_size_binary (or uuid
// extension) array starting at its first row, and the byte width.
func fixedBytes(arr arrow.Array) ([]byte, int) {
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	data := arr.Data()
	fs, ok := data.DataType().(*arrow.FixedSizeBinaryType)
	if !ok {
		return nil, 0
	}
	w := fs.ByteWidth
	var b []byte
	if buf := data.Buffers()[1]; buf != nil {
		b = buf.Bytes()[data.Offset()*w:]
	}
	return b, w
}

func applyBucket(arr arrow.Array, k kind, n buckets, mem memory.Allocator) arrow.Array {
	length := arr.Len()
	buf, out := newInt32Out(mem, length)
	switch k {
	case kindInt32:
		bucketInts(arr.(*array.Int32).Int32Values(), out, n)
	case kindDate:
		bucketInts(arr.(*array.Date32).Date32Values(), out, n)
	case kindInt64:
		bucketInts(arr.(*array.Int64).Int64Values(), out, n)
	case kindTime:
		bucketInts(arr.(*array.Time64).Time64Values(), out, n)
	case kindTimestampUS:
		bucketInts(arr.(*array.Timestamp).TimestampValues(), out, n)
	case kindTimestampNS:
		// Nanosecond timestamps hash as their (floored) microsecond value.
		for i, v := range arr.(*array.Timestamp).TimestampValues() {
			out[i] = n.of(hashLong(floorDiv(int64(v), 1000)))
		}
	case kindDecimal:
		var scratch [16]byte
		for i, v := range arr.(*array.Decimal128).Values() {
			out[i] = n.of(hashDecimal(v, &scratch))
		}
	case kindString, kindBinary:
		offs, vals := varWidth32(arr)
		bucketVar(offs, vals, out, n)
	case kindLargeString, kindLargeBinary:
		offs, vals := varWidth64(arr)
		bucketVar(offs, vals, out, n)
	case kindFixed, kindUUID:
		vals, w := fixedBytes(arr)
		for i := range out {
			out[i] = n.of(hashBytes(vals[i*w : (i+1)*w]))
		}
	default:
		buf.Release()
		return nil
	}
	return finishFixed(arr, arrow.PrimitiveTypes.Int32, buf, mem)
}

// bucketInts buckets int, long, date, time and timestamp values: the spec
// hashes all of them as hashLong of the 64-bit value.
func bucketInts[T ~int32 | ~int64](vals []T, out []int32, n buckets) {
	for i, v := range vals {
		out[i] = n.of(hashLong(int64(v)))
	}
}

func bucketVar[O int32 | int64](offs []O, vals []byte, out []int32, n buckets) {
	for i := range out {
		out[i] = n.of(hashBytes(vals[offs[i]:offs[i+1]]))
	}
}

func applyTruncate(arr arrow.Array, k kind, w int, mem memory.Allocator) arrow.Array {
	length := arr.Len()
	switch k {
	case kindInt32:
		buf, b := fixedOut(mem, length, 4)
		out := arrow.Int32Traits.CastFromBytes(b)
		w32 := int32(w)
		for i, v := range arr.(*array.Int32).Int32Values() {
			// Java's formula, wrapping on overflow the way Java int does.
			out[i] = v - (((v % w32) + w32) % w32)
		}
		return finishFixed(arr, arr.DataType(), buf, mem)
	case kindInt64:
		buf, b := fixedOut(mem, length, 8)
		out := arrow.Int64Traits.CastFromBytes(b)
		w64 := int64(w)
		for i, v := range arr.(*array.Int64).Int64Values() {
			out[i] = v - (((v % w64) + w64) % w64)
		}
		return finishFixed(arr, arr.DataType(), buf, mem)
	case kindDecimal:
		buf, b := fixedOut(mem, length, 16)
		out := arrow.Decimal128Traits.CastFromBytes(b)
		for i, v := range arr.(*array.Decimal128).Values() {
			out[i] = truncateDecimal(v, uint64(w))
		}
		return finishFixed(arr, arr.DataType(), buf, mem)
	case kindString:
		offs, vals := varWidth32(arr)
		return truncateVar(arr, offs, vals, w, true, mem)
	case kindLargeString:
		offs, vals := varWidth64(arr)
		return truncateVar(arr, offs, vals, w, true, mem)
	case kindBinary:
		offs, vals := varWidth32(arr)
		return truncateVar(arr, offs, vals, w, false, mem)
	case kindLargeBinary:
		offs, vals := varWidth64(arr)
		return truncateVar(arr, offs, vals, w, false, mem)
	}
	return nil
}

// truncateDecimal returns v - floorMod(v, w) on the unscaled 128-bit value.
func truncateDecimal(v decimal128.Num, w uint64) decimal128.Num {
	hi, lo := uint64(v.HighBits()), v.LowBits()
	var r uint64
	if v.HighBits() >= 0 {
		r = bits.Rem64(hi%w, lo, w)
	} else {
		// |v| as an unsigned 128-bit number, then mirror the remainder.
		nlo := ^lo + 1
		nhi := ^hi
		if nlo == 0 {
			nhi++
		}
		if r = bits.Rem64(nhi%w, nlo, w); r != 0 {
			r = w - r
		}
	}
	return v.Sub(decimal128.FromU64(r))
}

// cutLen returns the byte length of the first w code points (strings) or
// bytes (binary) of s.
func cutLen(s []byte, w int, codePoints bool) int {
	if !codePoints || len(s) <= w {
		// A string of at most w bytes has at most w code points.
		return min(len(s), w)
	}
	seen := 0
	for i, c := range s {
		if c&0xC0 != 0x80 { // a code point starts here
			if seen == w {
				return i
			}
			seen++
		}
	}
	return len(s)
}

func truncateVar[O int32 | int64](arr arrow.Array, offs []O, vals []byte, w int, codePoints bool, mem memory.Allocator) arrow.Array {
	n := arr.Len()
	var zero O
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((n + 1) * int(unsafe.Sizeof(zero)))
	outOffs := unsafe.Slice((*O)(unsafe.Pointer(&offBuf.Bytes()[0])), n+1)
	var total O
	outOffs[0] = 0
	for i := 0; i < n; i++ {
		total += O(cutLen(vals[offs[i]:offs[i+1]], w, codePoints))
		outOffs[i+1] = total
	}
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(int(total))
	dst := dataBuf.Bytes()
	for i := 0; i < n; i++ {
		start := offs[i]
		copy(dst[outOffs[i]:outOffs[i+1]], vals[start:start+(outOffs[i+1]-outOffs[i])])
	}
	valid := validityOf(arr, mem)
	data := array.NewData(arr.DataType(), n, []*memory.Buffer{valid, offBuf, dataBuf}, nil, arr.NullN(), 0)
	out := array.MakeFromData(data)
	data.Release()
	offBuf.Release()
	dataBuf.Release()
	if valid != nil {
		valid.Release()
	}
	return out
}

const (
	microsPerHour = int64(3600) * 1_000_000
	microsPerDay  = 24 * microsPerHour
	nanosPerHour  = microsPerHour * 1000
	nanosPerDay   = microsPerDay * 1000
)

func applyTemporal(name string, arr arrow.Array, k kind, mem memory.Allocator) arrow.Array {
	var perDay, perHour int64
	switch k {
	case kindDate:
		return temporalFromDays(name, arr, mem)
	case kindTimestampUS:
		perDay, perHour = microsPerDay, microsPerHour
	case kindTimestampNS:
		perDay, perHour = nanosPerDay, nanosPerHour
	default:
		return nil
	}
	vals := arr.(*array.Timestamp).TimestampValues()
	buf, out := newInt32Out(mem, arr.Len())
	resultType := arrow.DataType(arrow.PrimitiveTypes.Int32)
	switch name {
	case "year":
		for i, v := range vals {
			y, _ := civilFromDays(floorDiv(int64(v), perDay))
			out[i] = int32(y - 1970)
		}
	case "month":
		for i, v := range vals {
			y, m := civilFromDays(floorDiv(int64(v), perDay))
			out[i] = int32((y-1970)*12 + m - 1)
		}
	case "day":
		resultType = arrow.FixedWidthTypes.Date32
		for i, v := range vals {
			out[i] = int32(floorDiv(int64(v), perDay))
		}
	case "hour":
		for i, v := range vals {
			out[i] = int32(floorDiv(int64(v), perHour))
		}
	default:
		buf.Release()
		return nil
	}
	return finishFixed(arr, resultType, buf, mem)
}

func temporalFromDays(name string, arr arrow.Array, mem memory.Allocator) arrow.Array {
	if name == "day" {
		arr.Retain() // the day of a date is the date itself
		return arr
	}
	if name != "year" && name != "month" {
		return nil
	}
	vals := arr.(*array.Date32).Date32Values()
	buf, out := newInt32Out(mem, arr.Len())
	if name == "year" {
		for i, v := range vals {
			y, _ := civilFromDays(int64(v))
			out[i] = int32(y - 1970)
		}
	} else {
		for i, v := range vals {
			y, m := civilFromDays(int64(v))
			out[i] = int32((y-1970)*12 + m - 1)
		}
	}
	return finishFixed(arr, arrow.PrimitiveTypes.Int32, buf, mem)
}

// floorDiv divides rounding toward negative infinity (d > 0).
func floorDiv(a, d int64) int64 {
	q := a / d
	if a%d < 0 {
		q--
	}
	return q
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// year and month (1-12), using era arithmetic so it needs no time.Time.
func civilFromDays(z int64) (year, month int64) {
	z += 719468 // shift the epoch to 0000-03-01
	era := floorDiv(z, 146097)
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11], March-based
	year = yoe + era*400
	if mp < 10 {
		month = mp + 3
	} else {
		month = mp - 9
		year++
	}
	return year, month
}
