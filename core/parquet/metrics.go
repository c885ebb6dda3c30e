package parquet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"

	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// truncateLength is the length Iceberg's default metrics mode truncate(16)
// keeps of string (code points) and binary (bytes) bounds.
const truncateLength = 16

// bound accumulates one column's min and max over row groups, in the
// column's physical representation.
type bound struct {
	set      bool
	ilo, ihi int64
	flo, fhi float64
	blo, bhi []byte
}

// leafKind says how a Parquet leaf column's statistics map to Iceberg's
// single-value serialisation.
type leafKind int

const (
	kindBool leafKind = iota
	kindInt32
	kindInt64
	kindFloat
	kindDouble
	kindDecimal // unscaled two's complement, from INT32, INT64 or FIXED_LEN_BYTE_ARRAY
	kindString
	kindBinary
	kindFixed // fixed and uuid: raw bytes, never truncated
)

func leafKindOf(col *schema.Column) leafKind {
	_, isDec := col.LogicalType().(schema.DecimalLogicalType)
	switch col.PhysicalType() {
	case pq.Types.Boolean:
		return kindBool
	case pq.Types.Int32:
		if isDec {
			return kindDecimal
		}
		return kindInt32
	case pq.Types.Int64:
		if isDec {
			return kindDecimal
		}
		return kindInt64
	case pq.Types.Float:
		return kindFloat
	case pq.Types.Double:
		return kindDouble
	case pq.Types.ByteArray:
		if _, ok := col.LogicalType().(schema.StringLogicalType); ok {
			return kindString
		}
		return kindBinary
	default:
		if isDec {
			return kindDecimal
		}
		return kindFixed
	}
}

// signedFixed reports whether fixed-length byte values compare as signed
// big-endian integers (decimals) rather than unsigned bytes.
func (k leafKind) signedFixed() bool { return k == kindDecimal }

// footerMetrics fills f's counts, sizes, bounds and split offsets from the
// footer of a written file.
func footerMetrics(meta *metadata.FileMetaData, f *File) error {
	sc := meta.Schema
	ncols := sc.NumColumns()
	ids := make([]int, ncols)
	kinds := make([]leafKind, ncols)
	bounds := make([]bound, ncols)
	noBounds := make([]bool, ncols)
	for j := 0; j < ncols; j++ {
		col := sc.Column(j)
		ids[j] = int(col.SchemaNode().FieldID())
		kinds[j] = leafKindOf(col)
		// Iceberg keeps no bounds for values inside lists and maps.
		noBounds[j] = col.MaxRepetitionLevel() > 0
	}
	f.ColumnSizes = map[int]int64{}
	f.ValueCounts = map[int]int64{}
	f.NullCounts = map[int]int64{}
	f.Lower = map[int][]byte{}
	f.Upper = map[int][]byte{}
	f.SplitOffsets = make([]int64, 0, meta.NumRowGroups())
	f.Rows = meta.NumRows
	for i := 0; i < meta.NumRowGroups(); i++ {
		rg := meta.RowGroup(i)
		if rg.NumRows() == 0 {
			continue
		}
		for j := 0; j < ncols; j++ {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return fmt.Errorf("row group %d column %d: %w", i, j, err)
			}
			if j == 0 {
				off := cc.DataPageOffset()
				if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < off {
					off = cc.DictionaryPageOffset()
				}
				f.SplitOffsets = append(f.SplitOffsets, off)
			}
			id := ids[j]
			if id < 0 {
				continue
			}
			f.ColumnSizes[id] += cc.TotalCompressedSize()
			f.ValueCounts[id] += cc.NumValues()
			set, err := cc.StatsSet()
			if err != nil || !set {
				continue
			}
			st, err := cc.Statistics()
			if err != nil || st == nil {
				continue
			}
			if st.HasNullCount() {
				f.NullCounts[id] += st.NullCount()
			}
			if !noBounds[j] && st.HasMinMax() {
				bounds[j].merge(st, kinds[j])
			}
		}
	}
	for j := 0; j < ncols; j++ {
		if ids[j] < 0 || !bounds[j].set {
			continue
		}
		lo, hi, okHi := bounds[j].serialize(kinds[j])
		f.Lower[ids[j]] = lo
		if okHi {
			f.Upper[ids[j]] = hi
		}
	}
	return nil
}

// merge widens b with one row group's statistics.
func (b *bound) merge(st metadata.TypedStatistics, k leafKind) {
	switch s := st.(type) {
	case *metadata.BooleanStatistics:
		b.mergeInt(boolInt(s.Min()), boolInt(s.Max()))
	case *metadata.Int32Statistics:
		b.mergeInt(int64(s.Min()), int64(s.Max()))
	case *metadata.Int64Statistics:
		b.mergeInt(s.Min(), s.Max())
	case *metadata.Float32Statistics:
		b.mergeFloat(float64(s.Min()), float64(s.Max()))
	case *metadata.Float64Statistics:
		b.mergeFloat(s.Min(), s.Max())
	case *metadata.ByteArrayStatistics:
		b.mergeBytes(s.Min(), s.Max(), false)
	case *metadata.FixedLenByteArrayStatistics:
		b.mergeBytes(s.Min(), s.Max(), k.signedFixed())
	}
}

func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

func (b *bound) mergeInt(lo, hi int64) {
	if !b.set || lo < b.ilo {
		b.ilo = lo
	}
	if !b.set || hi > b.ihi {
		b.ihi = hi
	}
	b.set = true
}

func (b *bound) mergeFloat(lo, hi float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return
	}
	if !b.set || lo < b.flo || (lo == 0 && b.flo == 0 && math.Signbit(lo)) {
		b.flo = lo
	}
	if !b.set || hi > b.fhi || (hi == 0 && b.fhi == 0 && !math.Signbit(hi)) {
		b.fhi = hi
	}
	b.set = true
}

func (b *bound) mergeBytes(lo, hi []byte, signed bool) {
	if !b.set || compareBytes(lo, b.blo, signed) < 0 {
		b.blo = bytes.Clone(lo)
	}
	if !b.set || compareBytes(hi, b.bhi, signed) > 0 {
		b.bhi = bytes.Clone(hi)
	}
	b.set = true
}

// compareBytes compares unsigned bytes, or equal-length big-endian two's
// complement integers when signed.
func compareBytes(a, b []byte, signed bool) int {
	if signed && len(a) > 0 && len(b) > 0 {
		na, nb := a[0]&0x80 != 0, b[0]&0x80 != 0
		if na != nb {
			if na {
				return -1
			}
			return 1
		}
	}
	return bytes.Compare(a, b)
}

// serialize converts b to Iceberg's single-value binary form; okHi is false
// when a truncated upper bound cannot be incremented.
func (b *bound) serialize(k leafKind) (lo, hi []byte, okHi bool) {
	switch k {
	case kindBool:
		return []byte{byte(b.ilo)}, []byte{byte(b.ihi)}, true
	case kindInt32:
		lo, hi = make([]byte, 4), make([]byte, 4)
		binary.LittleEndian.PutUint32(lo, uint32(int32(b.ilo)))
		binary.LittleEndian.PutUint32(hi, uint32(int32(b.ihi)))
		return lo, hi, true
	case kindInt64:
		lo, hi = make([]byte, 8), make([]byte, 8)
		binary.LittleEndian.PutUint64(lo, uint64(b.ilo))
		binary.LittleEndian.PutUint64(hi, uint64(b.ihi))
		return lo, hi, true
	case kindFloat:
		lo, hi = make([]byte, 4), make([]byte, 4)
		binary.LittleEndian.PutUint32(lo, math.Float32bits(float32(b.flo)))
		binary.LittleEndian.PutUint32(hi, math.Float32bits(float32(b.fhi)))
		return lo, hi, true
	case kindDouble:
		lo, hi = make([]byte, 8), make([]byte, 8)
		binary.LittleEndian.PutUint64(lo, math.Float64bits(b.flo))
		binary.LittleEndian.PutUint64(hi, math.Float64bits(b.fhi))
		return lo, hi, true
	case kindDecimal:
		if b.blo == nil && b.bhi == nil {
			return minimalInt64(b.ilo), minimalInt64(b.ihi), true
		}
		return minimalTwosComplement(b.blo), minimalTwosComplement(b.bhi), true
	case kindString:
		lo = truncateString(b.blo)
		hi, okHi = truncateStringUpper(b.bhi)
		return lo, hi, okHi
	case kindBinary:
		lo = truncateBinary(b.blo)
		hi, okHi = truncateBinaryUpper(b.bhi)
		return lo, hi, okHi
	default:
		return bytes.Clone(b.blo), bytes.Clone(b.bhi), true
	}
}

// minimalInt64 is v as the shortest big-endian two's complement bytes, the
// form Iceberg (Java BigInteger.toByteArray) uses for decimals.
func minimalInt64(v int64) []byte {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(v))
	return minimalTwosComplement(buf[:])
}

// minimalTwosComplement drops redundant leading sign bytes.
func minimalTwosComplement(b []byte) []byte {
	i := 0
	for i < len(b)-1 {
		if (b[i] == 0x00 && b[i+1]&0x80 == 0) || (b[i] == 0xFF && b[i+1]&0x80 != 0) {
			i++
			continue
		}
		break
	}
	return bytes.Clone(b[i:])
}

// truncateString keeps the first truncateLength code points.
func truncateString(s []byte) []byte {
	n, i := 0, 0
	for i < len(s) && n < truncateLength {
		_, size := utf8.DecodeRune(s[i:])
		i += size
		n++
	}
	return bytes.Clone(s[:i])
}

// truncateStringUpper returns the smallest string of at most truncateLength
// code points that is >= s: s itself when short enough, else its prefix
// with the last incrementable code point incremented.
func truncateStringUpper(s []byte) ([]byte, bool) {
	prefix := truncateString(s)
	if len(prefix) == len(s) {
		return prefix, true
	}
	runes := []rune(string(prefix))
	for i := len(runes) - 1; i >= 0; i-- {
		next := runes[i] + 1
		if next >= 0xD800 && next <= 0xDFFF {
			next = 0xE000 // surrogates are not valid code points
		}
		if next <= utf8.MaxRune {
			runes[i] = next
			return []byte(string(runes[:i+1])), true
		}
	}
	return nil, false
}

func truncateBinary(b []byte) []byte {
	if len(b) > truncateLength {
		b = b[:truncateLength]
	}
	return bytes.Clone(b)
}

// truncateBinaryUpper is truncateStringUpper for bytes: the last byte below
// 0xFF of the prefix is incremented and the rest dropped.
func truncateBinaryUpper(b []byte) ([]byte, bool) {
	if len(b) <= truncateLength {
		return bytes.Clone(b), true
	}
	out := bytes.Clone(b[:truncateLength])
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] != 0xFF {
			out[i]++
			return out[:i+1], true
		}
	}
	return nil, false
}
