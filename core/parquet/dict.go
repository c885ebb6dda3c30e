package parquet

import (
	"hash/maphash"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

const (
	// dictSampleMin is the smallest first batch the dictionary decision is
	// made on; smaller batches say too little about cardinality.
	dictSampleMin = 8192
	// dictSampleMax caps the rows looked at, to keep the decision cheap
	// (it runs before any encoding starts, on every file's first batch).
	dictSampleMax = 16384
	// dictMaxEntries caps the values a dictionary is expected to hold.
	// Past it the hash table outgrows the caches: on 1M rows of
	// lineitem-like data, l_partkey's 200,000-value dictionary fits the
	// 2 MB page limit but cost about 20% more CPU than plain values under
	// zstd and gave a 2% larger file (docs/decisions.md).
	dictMaxEntries = 1 << 16
	// assumedCompression turns Arrow bytes per row into the encoded bytes per
	// row used to estimate a row group's length in rows.
	assumedCompression = 4
)

// noDictionaryColumns returns the top-level primitive columns whose
// dictionary would overflow the dictionary page limit (or dictMaxEntries)
// within one row group, judged from the first batch of a file: the
// distinct counts of its first half and of all of it, projected to the
// expected rows of a row group by projectDistinct. Such columns would fall
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

	// Columns are counted on two goroutines when there are cores to spare
	// (the decision comes before any encoding starts).
	fields := rec.Schema().Fields()
	skip := make([]bool, len(fields))
	var next atomic.Int32
	count := func() {
		set := newDistinctSet(n)
		for i := int(next.Add(1)) - 1; i < len(fields); i = int(next.Add(1)) - 1 {
			d1, d, width, ok := distinctHalves(set, rec.Column(i), n)
			if !ok || d == 0 {
				continue
			}
			entries := projectDistinct(d1, d, n, rowsPerGroup)
			skip[i] = entries > dictMaxEntries || entries*width > float64(r.DictionaryPageBytes)
		}
	}
	if runtime.GOMAXPROCS(0) > 1 && len(fields) > 1 {
		var wg sync.WaitGroup
		var panicked any
		wg.Go(func() {
			defer func() { panicked = recover() }()
			count()
		})
		count()
		wg.Wait()
		if panicked != nil {
			panic(panicked) // on the caller's goroutine, where it is recovered
		}
	} else {
		count()
	}
	var out []string
	for i, f := range fields {
		if skip[i] {
			out = append(out, f.Name)
		}
	}
	return out
}

// projectDistinct estimates the distinct values among rows rows of a
// column whose first n rows hold d distinct values, d1 of them in the
// first n/2.
//
// If values were drawn independently from K equally likely ones, a given
// value would be missed by n/2 draws with chance q = (1-1/K)^(n/2), and
// then d1 = K(1-q), d = K(1-q^2), so q = d/d1 - 1 and K = d1/(1-q); rows
// draws would hold K(1-q^(2*rows/n)) distinct values. That saturates where
// a straight line through the second half's rate of new values does not:
// on 16,384 rows of a key with 10,000 values the line projects millions.
// Data that is not drawn that way (sorted or clustered keys, where the
// second half is mostly new) gives q near or above 1, and there the line,
// which bounds the model from above, is used.
func projectDistinct(d1, d, n int, rows float64) float64 {
	seen := float64(d)
	if rows <= float64(n) {
		return seen
	}
	line := seen + float64(d-d1)/float64(n-n/2)*(rows-float64(n))
	if d1 == 0 {
		return line
	}
	q := seen/float64(d1) - 1
	switch {
	case q <= 0:
		return seen // no new value in the second half
	case q >= 1:
		return line
	}
	k := float64(d1) / (1 - q)
	return min(max(k*(1-math.Pow(q, 2*rows/float64(n))), seen), line)
}

// distinctHalves counts the distinct values of arr's first half and of its
// first n rows, and the dictionary bytes one value takes. Values are
// counted by a 64-bit key: the value itself for fixed widths up to 8
// bytes, a hash for strings and 16-byte decimals (a collision among 16,384
// values is about as likely as 1 in 10^11, and this is an estimate).
func distinctHalves(set *distinctSet, arr arrow.Array, n int) (d1, d int, width float64, ok bool) {
	switch a := arr.(type) {
	case *array.Int32:
		v := a.Int32Values()
		d1, d, _ = set.halves(a, n, func(i int) (uint64, int) { return uint64(uint32(v[i])), 0 })
		return d1, d, 4, true
	case *array.Int64:
		v := a.Int64Values()
		d1, d, _ = set.halves(a, n, func(i int) (uint64, int) { return uint64(v[i]), 0 })
		return d1, d, 8, true
	case *array.Date32:
		v := a.Date32Values()
		d1, d, _ = set.halves(a, n, func(i int) (uint64, int) { return uint64(uint32(v[i])), 0 })
		return d1, d, 4, true
	case *array.Time64:
		v := a.Time64Values()
		d1, d, _ = set.halves(a, n, func(i int) (uint64, int) { return uint64(v[i]), 0 })
		return d1, d, 8, true
	case *array.Timestamp:
		v := a.TimestampValues()
		d1, d, _ = set.halves(a, n, func(i int) (uint64, int) { return uint64(v[i]), 0 })
		return d1, d, 8, true
	case *array.Float32:
		v := a.Float32Values()
		d1, d, _ = set.halves(a, n, func(i int) (uint64, int) { return uint64(math.Float32bits(v[i])), 0 })
		return d1, d, 4, true
	case *array.Float64:
		v := a.Float64Values()
		d1, d, _ = set.halves(a, n, func(i int) (uint64, int) { return math.Float64bits(v[i]), 0 })
		return d1, d, 8, true
	case *array.Decimal128:
		p := a.DataType().(*arrow.Decimal128Type).Precision
		v := a.Values()
		d1, d, _ = set.halves(a, n, func(i int) (uint64, int) {
			return v[i].LowBits() ^ bits.RotateLeft64(uint64(v[i].HighBits())*keyMix, 31), 0
		})
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
		d1, d, total = set.halves(a, n, func(i int) (uint64, int) {
			s := a.Value(i)
			return maphash.String(keySeed, s), len(s)
		})
		return d1, d, 4 + float64(total)/float64(max(d, 1)), true
	case *array.Binary:
		var total int
		d1, d, total = set.halves(a, n, func(i int) (uint64, int) {
			b := a.Value(i)
			return maphash.Bytes(keySeed, b), len(b)
		})
		return d1, d, 4 + float64(total)/float64(max(d, 1)), true
	}
	return 0, 0, 0, false
}

var keySeed = maphash.MakeSeed()

const keyMix = 0x9E3779B97F4A7C15 // 2^64 / golden ratio: spreads keys over slots

// distinctSet is a set of 64-bit keys for counting: open addressing with
// linear probing in a power-of-two table at most half full; key 0, the
// empty slot, is tracked aside. It is several times faster than a Go map
// for the dictionary decision, which runs on the first batch of every
// write (a third of a small overwrite's time with maps).
type distinctSet struct {
	slots []uint64
	shift uint
	n     int
	zero  bool
}

// newDistinctSet holds up to capacity keys.
func newDistinctSet(capacity int) *distinctSet {
	size := 1 << bits.Len(uint(max(2*capacity-1, 1)))
	return &distinctSet{slots: make([]uint64, size), shift: uint(64 - bits.Len(uint(size-1)))}
}

func (s *distinctSet) reset() {
	clear(s.slots)
	s.n, s.zero = 0, false
}

// add inserts k and reports whether it was new.
func (s *distinctSet) add(k uint64) bool {
	if k == 0 {
		if s.zero {
			return false
		}
		s.zero = true
		s.n++
		return true
	}
	mask := uint64(len(s.slots) - 1)
	for i := (k * keyMix) >> s.shift; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = k
			s.n++
			return true
		case k:
			return false
		}
	}
}

// halves empties the set and counts arr's distinct non-null keys among the
// first n/2 and the first n rows; total sums the sizes key reports for new
// keys.
func (s *distinctSet) halves(arr arrow.Array, n int, key func(int) (uint64, int)) (d1, d, total int) {
	s.reset()
	nulls := arr.NullN() > 0
	for i := 0; i < n; i++ {
		if i == n/2 {
			d1 = s.n
		}
		if nulls && arr.IsNull(i) {
			continue
		}
		if k, size := key(i); s.add(k) {
			total += size
		}
	}
	return d1, s.n, total
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
