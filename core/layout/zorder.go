package layout

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/transform"
)

// zBytes is the bytes each column contributes to a z-value: 8 for every
// primitive, and Spark's var-length-contribution default for strings and
// binaries, also 8.
const zBytes = 8

// NewZOrderSorter returns a Sorter that orders rows by the z-value of
// columns, as Iceberg's Spark z-order rewrite computes it (ZOrderByteUtils:
// each value as 8 order-preserving bytes, strings and binaries their first
// 8 bytes, nulls zeros; the bits interleaved column by column).
func NewZOrderSorter(columns []string, sc *iceberg.Schema) (*Sorter, error) {
	if len(columns) == 0 {
		return nil, fmt.Errorf("%w: zorder needs at least one column", errs.ErrInvalidArgument)
	}
	s := &Sorter{schema: sc}
	for _, c := range columns {
		name := unquote(strings.TrimSpace(c))
		f, ok := sc.FindFieldByNameCaseInsensitive(name)
		if !ok {
			return nil, fmt.Errorf("%w: zorder column %q is not in the table schema", errs.ErrValidation, name)
		}
		switch f.Type.(type) {
		case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType,
			iceberg.Float32Type, iceberg.Float64Type, iceberg.StringType, iceberg.BinaryType:
		default:
			return nil, fmt.Errorf("%w: zorder column %q of type %s", errs.ErrNotSupported, name, f.Type)
		}
		if slices.Contains(s.zorder, f.ID) {
			return nil, fmt.Errorf("%w: zorder names column %q twice", errs.ErrInvalidArgument, name)
		}
		s.zorder = append(s.zorder, f.ID)
	}
	return s, nil
}

// sortZ is Sort for a z-order sorter.
func (s *Sorter) sortZ(ctx context.Context, recs []arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	rec, err := Concat(recs, mem)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	n := int(rec.NumRows())
	cols := make([]arrow.Array, 0, len(s.zorder))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	widths := make([]int, 0, len(s.zorder))
	total := 0
	for _, id := range s.zorder {
		c, err := transform.SourceColumn(rec, s.schema, id, mem)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
		widths = append(widths, zBytes)
		total += zBytes
	}
	keys := make([][]byte, n)
	parts := make([][]byte, len(cols))
	for j := range parts {
		parts[j] = make([]byte, widths[j])
	}
	for i := range n {
		for j, c := range cols {
			if err := orderedBytes(c, i, parts[j]); err != nil {
				return nil, err
			}
		}
		keys[i] = interleave(parts, total)
	}
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = int64(i)
	}
	slices.SortStableFunc(idx, func(a, b int64) int { return bytes.Compare(keys[a], keys[b]) })
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(idx, nil)
	ia := b.NewArray()
	defer ia.Release()
	ctx = compute.WithAllocator(ctx, mem)
	recDatum := compute.NewDatum(rec)
	defer recDatum.Release()
	idxDatum := compute.NewDatum(ia)
	defer idxDatum.Release()
	out, err := compute.Take(ctx, *compute.DefaultTakeOptions(), recDatum, idxDatum)
	if err != nil {
		return nil, fmt.Errorf("%w: reordering rows by z-order: %v", errs.ErrNotSupported, err)
	}
	return out.(*compute.RecordDatum).Value, nil
}

// orderedBytes writes row i of a as ZOrderByteUtils orders it into out
// (8 bytes): integers widened to long with the sign bit flipped, floats as
// doubles with Java's doubleToOrderedBytes mask, strings and binaries
// truncated or zero-padded; a null is zeros.
func orderedBytes(a arrow.Array, i int, out []byte) error {
	clear(out)
	if a.IsNull(i) {
		return nil
	}
	long := func(v int64) { binary.BigEndian.PutUint64(out, uint64(v)^(1<<63)) }
	double := func(v float64) {
		bits := math.Float64bits(v)
		if math.IsNaN(v) {
			bits = 0x7ff8000000000000 // Java's doubleToLongBits: one NaN
		}
		l := int64(bits)
		l ^= (l >> 31) | math.MinInt64 // Java shifts by Integer.SIZE - 1
		binary.BigEndian.PutUint64(out, uint64(l))
	}
	switch x := a.(type) {
	case *array.Int32:
		long(int64(x.Value(i)))
	case *array.Int64:
		long(x.Value(i))
	case *array.Date32:
		long(int64(x.Value(i)))
	case *array.Timestamp:
		long(int64(x.Value(i)))
	case *array.Float32:
		double(float64(x.Value(i)))
	case *array.Float64:
		double(x.Value(i))
	case *array.String:
		copyRunes(out, x.Value(i))
	case *array.LargeString:
		copyRunes(out, x.Value(i))
	case *array.Binary:
		copy(out, x.Value(i))
	case *array.LargeBinary:
		copy(out, x.Value(i))
	default:
		return fmt.Errorf("%w: zorder over %s values", errs.ErrNotSupported, a.DataType())
	}
	return nil
}

// copyRunes copies the whole UTF-8 characters of v that fit into out, as
// Java's CharsetEncoder fills a buffer.
func copyRunes(out []byte, v string) {
	n := 0
	for i, r := range v {
		end := i + utf8.RuneLen(r)
		if r == utf8.RuneError && end > len(v) {
			end = len(v)
		}
		if end > len(out) {
			break
		}
		n = end
	}
	copy(out, v[:n])
}

// interleave is ZOrderByteUtils.interleaveBits: size bytes taking one bit
// of each column in turn, most significant first, skipping exhausted
// columns.
func interleave(cols [][]byte, size int) []byte {
	out := make([]byte, size)
	col, srcByte, srcBit := 0, 0, 7
	outByte, outBit := 0, 7
	for outByte < size {
		bit := (cols[col][srcByte] >> srcBit) & 1
		out[outByte] |= bit << outBit
		outBit--
		if outBit == -1 {
			outByte++
			outBit = 7
		}
		if outByte == size {
			break
		}
		for {
			col = (col + 1) % len(cols)
			if col == 0 {
				srcBit--
				if srcBit == -1 {
					srcByte++
					srcBit = 7
				}
			}
			if len(cols[col]) > srcByte {
				break
			}
		}
	}
	return out
}
