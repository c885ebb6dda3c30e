package layout

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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

// orderZ is Order for a z-order sorter: each row's z-value as k 64-bit
// words (k columns of 8 bytes each), computed a batch at a time over the
// cores, then sorted by value, ties by row.
func (s *Sorter) orderZ(recs []arrow.RecordBatch, mem memory.Allocator) (arrow.Array, error) {
	k := len(s.zorder)
	starts := make([]int, len(recs)+1)
	for i, r := range recs {
		starts[i+1] = starts[i] + int(r.NumRows())
	}
	n := starts[len(recs)]
	// Up to two words a row go straight into the sort's entries; more are
	// kept whole, and sortZ skips those every row shares.
	var keys []uint64
	var ents []zEntry
	if k <= 2 {
		ents = make([]zEntry, n)
	} else {
		keys = make([]uint64, n*k)
	}
	failed := make([]error, len(recs))
	parallel(len(recs), func(lo, hi int) {
		v := make([]uint64, k)
		z := make([]uint64, max(k, 2))
		words := make([]func(int) uint64, k)
		for b := lo; b < hi; b++ {
			cols, err := s.zColumns(recs[b], mem)
			for j, c := range cols {
				if err == nil {
					words[j], err = orderedWord(c)
				}
			}
			if err == nil {
				for i := range int(recs[b].NumRows()) {
					for j, w := range words {
						v[j] = w(i)
					}
					row := starts[b] + i
					interleaveWords(v, z[:k])
					if keys != nil {
						copy(keys[row*k:(row+1)*k], z)
					} else {
						ents[row] = zEntry{a: z[0], b: z[1], row: int64(row)}
					}
				}
			}
			for _, c := range cols {
				c.Release()
			}
			if err != nil {
				failed[b] = err
				return
			}
		}
	})
	if err := errors.Join(failed...); err != nil {
		return nil, err
	}
	if keys == nil {
		return sortEntries(ents, nil, k, 0), nil
	}
	return sortZ(keys, k, n), nil
}

// zColumns are rec's z-order columns.
func (s *Sorter) zColumns(rec arrow.RecordBatch, mem memory.Allocator) ([]arrow.Array, error) {
	cols := make([]arrow.Array, 0, len(s.zorder))
	for _, id := range s.zorder {
		c, err := transform.SourceColumn(rec, s.schema, id, mem)
		if err != nil {
			return cols, err
		}
		cols = append(cols, c)
	}
	return cols, nil
}

// zEntry is a row in the z-order sort: two words of its z-value (from the
// first word that is not the same in every row) and its row number.
type zEntry struct {
	a, b uint64
	row  int64
}

// sortZ returns the rows' permutation by z-value (keys: k words a row),
// ties in row order, as an Int64 array. Words every row shares are
// skipped; two more are compared inline, the rest (more than two
// differing words) from keys.
func sortZ(keys []uint64, k, n int) arrow.Array {
	f := 0
	for f < k && sameWord(keys, k, n, f) {
		f++
	}
	ents := make([]zEntry, n)
	for i := range ents {
		e := zEntry{row: int64(i)}
		if f < k {
			e.a = keys[i*k+f]
		}
		if f+1 < k {
			e.b = keys[i*k+f+1]
		}
		ents[i] = e
	}
	var rest []uint64
	if f+2 < k {
		rest = keys
	}
	return sortEntries(ents, rest, k, f)
}

// sortEntries sorts ents (their words from word f of k on; rest: every
// row's k words, when more than two of them differ) in parts on the cores,
// and merges them into the rows' permutation.
func sortEntries(ents []zEntry, rest []uint64, k, f int) arrow.Array {
	n := len(ents)
	compare := func(x, y zEntry) int {
		if c := cmp.Compare(x.a, y.a); c != 0 {
			return c
		}
		if c := cmp.Compare(x.b, y.b); c != 0 {
			return c
		}
		if rest != nil {
			for w := f + 2; w < k; w++ {
				if c := cmp.Compare(rest[int(x.row)*k+w], rest[int(y.row)*k+w]); c != 0 {
					return c
				}
			}
		}
		return cmp.Compare(x.row, y.row)
	}
	// Sorted in parts in parallel, then merged.
	var parts [][]zEntry
	for _, r := range ranges(n) {
		parts = append(parts, ents[r[0]:r[1]])
	}
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slices.SortFunc(p, compare)
		}()
	}
	wg.Wait()
	merge := func(emit func(row int64)) {
		for len(parts) > 0 {
			m := 0
			for j := 1; j < len(parts); j++ {
				if compare(parts[j][0], parts[m][0]) < 0 {
					m = j
				}
			}
			emit(parts[m][0].row)
			if parts[m] = parts[m][1:]; len(parts[m]) == 0 {
				parts = slices.Delete(parts, m, m+1)
			}
		}
	}
	if n <= math.MaxInt32 { // half the memory of 64-bit indices
		idx := make([]int32, 0, n)
		merge(func(row int64) { idx = append(idx, int32(row)) })
		return indexArray(idx)
	}
	idx := make([]int64, 0, n)
	merge(func(row int64) { idx = append(idx, row) })
	return indexArray(idx)
}

// sameWord reports whether word w of every row's key is the same.
func sameWord(keys []uint64, k, n, w int) bool {
	for i := 1; i < n; i++ {
		if keys[i*k+w] != keys[w] {
			return false
		}
	}
	return true
}

// orderedWord returns the 8 bytes ZOrderByteUtils orders row i of a by,
// read as a big-endian word: integers widened to long with the sign bit
// flipped, floats as doubles with Java's doubleToOrderedBytes mask,
// strings and binaries truncated or zero-padded; a null is zero.
func orderedWord(a arrow.Array) (func(i int) uint64, error) {
	long := func(v int64) uint64 { return uint64(v) ^ (1 << 63) }
	double := func(v float64) uint64 {
		bits := math.Float64bits(v)
		if math.IsNaN(v) {
			bits = 0x7ff8000000000000 // Java's doubleToLongBits: one NaN
		}
		l := int64(bits)
		l ^= (l >> 31) | math.MinInt64 // Java shifts by Integer.SIZE - 1
		return uint64(l)
	}
	prefix := func(v []byte) uint64 {
		var b [zBytes]byte
		copy(b[:], v)
		return binary.BigEndian.Uint64(b[:])
	}
	text := func(v string) uint64 {
		var b [zBytes]byte
		copyRunes(b[:], v)
		return binary.BigEndian.Uint64(b[:])
	}
	var f func(i int) uint64
	switch x := a.(type) {
	case *array.Int32:
		f = func(i int) uint64 { return long(int64(x.Value(i))) }
	case *array.Int64:
		f = func(i int) uint64 { return long(x.Value(i)) }
	case *array.Date32:
		f = func(i int) uint64 { return long(int64(x.Value(i))) }
	case *array.Timestamp:
		f = func(i int) uint64 { return long(int64(x.Value(i))) }
	case *array.Float32:
		f = func(i int) uint64 { return double(float64(x.Value(i))) }
	case *array.Float64:
		f = func(i int) uint64 { return double(x.Value(i)) }
	case *array.String:
		f = func(i int) uint64 { return text(x.Value(i)) }
	case *array.LargeString:
		f = func(i int) uint64 { return text(x.Value(i)) }
	case *array.Binary:
		f = func(i int) uint64 { return prefix(x.Value(i)) }
	case *array.LargeBinary:
		f = func(i int) uint64 { return prefix(x.Value(i)) }
	default:
		return nil, fmt.Errorf("%w: zorder over %s values", errs.ErrNotSupported, a.DataType())
	}
	if a.NullN() == 0 {
		return f, nil
	}
	return func(i int) uint64 {
		if a.IsNull(i) {
			return 0
		}
		return f(i)
	}, nil
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

// spread[k][b] places the bits of b, most significant first, k bits apart
// from the top of a word: the share of one column's byte in k interleaved
// bytes.
var spread = func() (t [9][256]uint64) {
	for k := 1; k <= 8; k++ {
		for b := range 256 {
			for bit := range 8 {
				if b>>(7-bit)&1 == 1 {
					t[k][b] |= 1 << (63 - bit*k)
				}
			}
		}
	}
	return t
}()

// interleaveWords is interleave for k = len(v) columns of 8 bytes (each a
// big-endian word), written into out as k big-endian words; a byte at a
// time for up to 8 columns, through interleave beyond.
func interleaveWords(v []uint64, out []uint64) {
	k := len(v)
	if k > 8 {
		cols := make([][]byte, k)
		for j, x := range v {
			cols[j] = binary.BigEndian.AppendUint64(nil, x)
		}
		b := interleave(cols, zBytes*k)
		for w := range out {
			out[w] = binary.BigEndian.Uint64(b[8*w:])
		}
		return
	}
	var buf [8 * zBytes]byte
	for s := range zBytes {
		shift := 56 - 8*s
		var acc uint64
		for j, x := range v {
			acc |= spread[k][byte(x>>shift)] >> j
		}
		binary.BigEndian.PutUint64(buf[s*k:], acc) // the top k bytes are this byte's share
	}
	for w := range out {
		out[w] = binary.BigEndian.Uint64(buf[8*w:])
	}
}
