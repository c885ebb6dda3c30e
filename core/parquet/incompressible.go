package parquet

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/parquet-go/parquet-go/encoding/delta"
)

const (
	// incompressibleSample is how many values of a column are delta-encoded
	// and compressed to judge it.
	incompressibleSample = 8192
	// incompressibleMinValues: fewer non-null values than this say too
	// little, and the column stays compressed.
	incompressibleMinValues = 1024
	// incompressibleRatio: a sample that compresses to more than this share
	// of its encoded size marks its column incompressible (at most 2% is
	// given up, and random values do not compress at all).
	incompressibleRatio = 0.98
)

// incompressibleColumns returns the integer-valued columns (ints, longs,
// dates, times, timestamps, decimals up to 18 digits) whose values, encoded
// the way the native encoder writes them without a dictionary
// (DELTA_BINARY_PACKED), the codec shrinks by less than 2%, judged on the
// first incompressibleSample rows of rec. Bit-packed deltas of random keys
// or prices do not compress, yet zstd still runs its match search over
// them: in D2's copy-on-write rewrite of 8 lineitem files that was a fifth
// of zstd's time (l_orderkey, l_partkey, l_suppkey, l_extendedprice).
// Sorted keys (l_orderkey in load order) compress about 3x and stay
// compressed. A listed column is stored uncompressed when written without
// a dictionary; with one, its pages keep the codec.
func incompressibleColumns(rec arrow.RecordBatch, r resolved) []string {
	out := []string{}
	if r.CompressAll || r.PlainEncodings || r.codec == compress.Codecs.Uncompressed {
		return out
	}
	codec := r.pageCodec()
	n := min(int(rec.NumRows()), incompressibleSample)
	var (
		vals      []int64
		raw, comp []byte
		enc       delta.BinaryPackedEncoding
		err       error
	)
	for i, f := range rec.Schema().Fields() {
		var ok bool
		if vals, ok = intValues(rec.Column(i), n, vals[:0]); !ok || len(vals) < incompressibleMinValues {
			continue
		}
		if raw, err = enc.EncodeInt64(raw[:0], vals); err != nil {
			continue
		}
		if comp, err = codec.Encode(comp[:0], raw); err != nil {
			continue
		}
		if float64(len(comp)) > incompressibleRatio*float64(len(raw)) {
			out = append(out, f.Name)
		}
	}
	return out
}

// intValues appends the valid values among the first n of arr to dst as
// int64s; ok is false for columns that are not integer-valued.
func intValues(arr arrow.Array, n int, dst []int64) (_ []int64, ok bool) {
	n = min(n, arr.Len())
	valid := func(i int) bool { return arr.NullN() == 0 || arr.IsValid(i) }
	switch a := arr.(type) {
	case *array.Int32:
		return appendValid(dst, a.Int32Values()[:n], valid), true
	case *array.Int64:
		return appendValid(dst, a.Int64Values()[:n], valid), true
	case *array.Date32:
		return appendValid(dst, a.Date32Values()[:n], valid), true
	case *array.Time64:
		return appendValid(dst, a.Time64Values()[:n], valid), true
	case *array.Timestamp:
		return appendValid(dst, a.TimestampValues()[:n], valid), true
	case *array.Decimal128:
		if a.DataType().(*arrow.Decimal128Type).Precision > 18 {
			return dst, false
		}
		for i, v := range a.Values()[:n] {
			if valid(i) {
				dst = append(dst, int64(v.LowBits()))
			}
		}
		return dst, true
	}
	return dst, false
}

func appendValid[T ~int32 | ~int64](dst []int64, vals []T, valid func(int) bool) []int64 {
	for i, v := range vals {
		if valid(i) {
			dst = append(dst, int64(v))
		}
	}
	return dst
}
