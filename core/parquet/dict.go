package parquet

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

const (
	// dictSampleMin is the smallest first batch the dictionary decision is
	// made on; smaller batches say too little about cardinality.
	dictSampleMin = 8192
	// dictSampleMax caps the rows looked at, to keep the decision cheap.
	dictSampleMax = 65536
	// assumedCompression turns Arrow bytes per row into the encoded bytes per
	// row used to estimate a row group's length in rows.
	assumedCompression = 4
)

// noDictionaryColumns returns the top-level primitive columns whose
// dictionary would overflow the dictionary page limit within one row group,
// judged from the first batch of a file: the distinct count of the first
// half, and the rate new values still appear at in the second half,
// extrapolated to the expected rows of a row group. Such columns would fall
// back to plain encoding anyway after paying for the hash table.
func noDictionaryColumns(rec arrow.RecordBatch, r resolved) []string {
	n := int(rec.NumRows())
	if n < dictSampleMin {
		return nil
	}
	if n > dictSampleMax {
		n = dictSampleMax
	}
	arrowBytes := RecordBytes(rec)
	bytesPerRow := float64(arrowBytes) / float64(rec.NumRows()) / assumedCompression
	if bytesPerRow < 1 {
		bytesPerRow = 1
	}
	budget := r.RowGroupBytes
	if r.TargetFileSize < budget {
		budget = r.TargetFileSize
	}
	rowsPerGroup := float64(budget) / bytesPerRow

	var out []string
	for i, f := range rec.Schema().Fields() {
		d1, d, width, ok := distinctHalves(rec.Column(i), n)
		if !ok || d == 0 {
			continue
		}
		newRate := float64(d-d1) / float64(n-n/2)
		projected := (float64(d) + newRate*(rowsPerGroup-float64(n))) * width
		if projected > float64(r.DictionaryPageBytes) {
			out = append(out, f.Name)
		}
	}
	return out
}

// distinctHalves counts the distinct values of arr's first half and of its
// first n rows, and the dictionary bytes one value takes.
func distinctHalves(arr arrow.Array, n int) (d1, d int, width float64, ok bool) {
	switch a := arr.(type) {
	case *array.Int32:
		d1, d = distinctFixed(a.Int32Values()[:n], a, n)
		return d1, d, 4, true
	case *array.Int64:
		d1, d = distinctFixed(a.Int64Values()[:n], a, n)
		return d1, d, 8, true
	case *array.Date32:
		d1, d = distinctFixed(a.Date32Values()[:n], a, n)
		return d1, d, 4, true
	case *array.Time64:
		d1, d = distinctFixed(a.Time64Values()[:n], a, n)
		return d1, d, 8, true
	case *array.Timestamp:
		d1, d = distinctFixed(a.TimestampValues()[:n], a, n)
		return d1, d, 8, true
	case *array.Float32:
		d1, d = distinctFixed(a.Float32Values()[:n], a, n)
		return d1, d, 4, true
	case *array.Float64:
		d1, d = distinctFixed(a.Float64Values()[:n], a, n)
		return d1, d, 8, true
	case *array.Decimal128:
		p := a.DataType().(*arrow.Decimal128Type).Precision
		d1, d = distinctFixed(a.Values()[:n], a, n)
		switch {
		case p <= 9:
			width = 4
		case p <= 18:
			width = 8
		default:
			width = 16
		}
		return d1, d, width, true
	case *array.String:
		var total int
		d1, d, total = distinctStrings(a, a.Value, n)
		return d1, d, 4 + float64(total)/float64(max(d, 1)), true
	case *array.Binary:
		var total int
		d1, d, total = distinctStrings(a, a.ValueString, n)
		return d1, d, 4 + float64(total)/float64(max(d, 1)), true
	}
	return 0, 0, 0, false
}

type fixedKey interface {
	~int32 | ~int64 | ~float32 | ~float64 | decimal128.Num
}

func distinctFixed[T fixedKey](vals []T, arr arrow.Array, n int) (int, int) {
	seen := make(map[T]struct{}, n/2)
	half := n / 2
	d1 := 0
	nulls := arr.NullN() > 0
	for i, v := range vals {
		if i == half {
			d1 = len(seen)
		}
		if nulls && arr.IsNull(i) {
			continue
		}
		seen[v] = struct{}{}
	}
	return d1, len(seen)
}

// distinctStrings also returns the total length of the distinct values.
func distinctStrings(a arrow.Array, value func(int) string, n int) (int, int, int) {
	seen := make(map[string]struct{}, n/2)
	half, d1, total := n/2, 0, 0
	for i := 0; i < n; i++ {
		if i == half {
			d1 = len(seen)
		}
		if a.IsNull(i) {
			continue
		}
		v := value(i)
		if _, ok := seen[v]; !ok {
			seen[v] = struct{}{}
			total += len(v)
		}
	}
	return d1, len(seen), total
}

// RecordBytes estimates the bytes of rec's own rows (see sliceBytes).
func RecordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += sliceBytes(c)
	}
	return n
}

// sliceBytes estimates the bytes of arr's own rows. SizeInBytes counts whole
// buffers, which for a slice of a large batch (a table reader's chunks, a
// partition) can be the entire column and would make every row look huge.
func sliceBytes(arr arrow.Array) int64 {
	n := int64(arr.Len())
	switch a := arr.(type) {
	case *array.String:
		return spanOf(a.ValueOffsets()) + 4*n
	case *array.Binary:
		return spanOf(a.ValueOffsets()) + 4*n
	case *array.LargeString:
		return spanOf(a.ValueOffsets()) + 8*n
	case *array.LargeBinary:
		return spanOf(a.ValueOffsets()) + 8*n
	}
	if fw, ok := arr.DataType().(arrow.FixedWidthDataType); ok {
		return n * int64(max(1, fw.BitWidth()/8))
	}
	if total := arr.Data().Len() + arr.Data().Offset(); total > 0 {
		// Nested and other types: the buffers' share of this slice.
		return int64(arr.Data().SizeInBytes()) * n / int64(total)
	}
	return 0
}

func spanOf[T int32 | int64](offsets []T) int64 {
	if len(offsets) < 2 {
		return 0
	}
	return int64(offsets[len(offsets)-1] - offsets[0])
}
