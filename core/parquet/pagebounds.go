package parquet

import (
	"bytes"
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/parquet-go/parquet-go/format"
)

// Bounds of byte-array pages, computed from the Arrow strings.
//
// A bytes.Compare per value (parquet-go's writer bounded its pages so,
// after dictionary encoding) cost about a tenth of the CPU of writing TPC-H
// lineitem. stringRange compares an 8-byte big-endian prefix first (one
// integer comparison for most values). The native encoder bounds each run
// of rows it takes into a page with it, cuts the bounds to columnIndexLimit
// bytes for the column index (indexMin, indexMax), and keeps the exact
// bounds of each row group for its column chunk's statistics.

// columnIndexLimit is the longest byte-array bound kept in a column index,
// parquet-java's default: longer minimums are cut to a prefix, longer
// maximums cut and incremented.
const columnIndexLimit = 16

// indexMin is v's lower bound in a column index: v, or its prefix.
func indexMin(v []byte) []byte {
	return v[:min(len(v), columnIndexLimit)]
}

// indexMax is v's upper bound in a column index: v, or its prefix with the
// last byte that can be incremented incremented (and the bytes after it
// dropped); v itself when every byte of the prefix is 0xff.
func indexMax(v []byte) []byte {
	if len(v) <= columnIndexLimit {
		return v
	}
	p := append([]byte(nil), v[:columnIndexLimit]...)
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			p[i]++
			return p[:i+1]
		}
	}
	return v
}

// boundsScratch holds stringRange's buffers, reused across chunks.
type boundsScratch struct {
	keys   []uint64
	lo, hi []int32
}

// keyMasks keeps the first n of a big-endian word's 8 bytes (a load from
// this table costs less than the shift by a variable count, which Go guards
// for counts of 64 and more).
var keyMasks = func() (m [9]uint64) {
	for n := 1; n <= 8; n++ {
		m[n] = ^uint64(0) << (64 - 8*n)
	}
	return m
}()

// word is the level-th 8 bytes of data[s:e] as a big-endian number,
// zero-padded: words order as the bytes they hold do.
func word(data []byte, s, e, level int) uint64 {
	s += 8 * level
	if s >= e {
		return 0
	}
	if s+8 <= len(data) {
		return binary.BigEndian.Uint64(data[s:s+8]) & keyMasks[min(uint(e-s), 8)]
	}
	var b [8]byte
	copy(b[:], data[s:e])
	return binary.BigEndian.Uint64(b[:])
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// stringRange is the min and max (unsigned byte order, Parquet's for byte
// arrays) of the valid values among rows [off, end) of the Arrow offsets
// and data (offsets not yet rebased by base); ok is false when there are
// none. The results alias data.
//
// Without branches on the data: the first 8 bytes of each value, as a
// number, are the key; the least and greatest keys are found with min and
// max, the rows holding them gathered, and ties settled on the next 8
// bytes of the tied rows only (resolve).
func (sc *boundsScratch) stringRange(offs []int32, data []byte, base int32, arr arrow.Array, off, end int) (lo, hi []byte, ok bool) {
	n := end - off
	if n == 0 {
		return nil, nil, false
	}
	if cap(sc.keys) < n {
		sc.keys, sc.lo, sc.hi = make([]uint64, n), make([]int32, n), make([]int32, n)
	}
	o := offs[off : end+1]
	keys := sc.keys[:n]
	fast := n // rows before fast can load 8 bytes from their start
	for fast > 0 && int(o[fast-1]-base)+8 > len(data) {
		fast--
	}
	// The least and greatest keys are taken in the same pass (over every
	// row: with nulls they are taken again below, over the valid ones).
	longest := int32(0)
	loK, hiK := ^uint64(0), uint64(0)
	for j := 0; j < fast; j++ {
		s, e := int(o[j]-base), int(o[j+1]-base)
		k := binary.BigEndian.Uint64(data[s:s+8]) & keyMasks[min(uint(e-s), 8)]
		keys[j] = k
		loK, hiK = min(loK, k), max(hiK, k)
		longest = max(longest, o[j+1]-o[j])
	}
	for j := fast; j < n; j++ {
		k := word(data, int(o[j]-base), int(o[j+1]-base), 0)
		keys[j] = k
		loK, hiK = min(loK, k), max(hiK, k)
		longest = max(longest, o[j+1]-o[j])
	}
	nulls := arr.NullN() > 0
	if nulls {
		// Null rows take keys that lose both contests; whether any valid
		// row is left is checked below.
		loK, hiK = ^uint64(0), uint64(0)
		valid := 0
		for j := range keys {
			if arr.IsNull(off + j) {
				continue
			}
			valid++
			loK, hiK = min(loK, keys[j]), max(hiK, keys[j])
		}
		if valid == 0 {
			return nil, nil, false
		}
	} else {
		if longest <= 8 {
			// Every value fits its key: among the rows tied on a key the
			// shortest is least and the longest greatest (the others equal
			// it with zero bytes appended). One pass, on (length, row).
			lo, hi := ^uint64(0), uint64(0)
			for j, k := range keys {
				v := uint64(o[j+1]-o[j])<<32 | uint64(j)
				lo = min(lo, v|(uint64(b2i(k == loK))-1))
				hi = max(hi, v&-uint64(b2i(k == hiK)))
			}
			l, h := int(uint32(lo)), int(uint32(hi))
			return data[o[l]-base : o[l+1]-base], data[o[h]-base : o[h+1]-base], true
		}
	}
	lt, ht := sc.lo[:n], sc.hi[:n]
	nl, nh := 0, 0
	for j, k := range keys {
		lt[nl] = int32(j)
		nl += b2i(k == loK)
		ht[nh] = int32(j)
		nh += b2i(k == hiK)
	}
	lg, hg := lt[:nl], ht[:nh]
	if nulls {
		lg, hg = dropNulls(lg, arr, off), dropNulls(hg, arr, off)
	}
	l := resolve(o, data, base, lg, true)
	h := resolve(o, data, base, hg, false)
	return data[o[l]-base : o[l+1]-base], data[o[h]-base : o[h+1]-base], true
}

// dropNulls keeps the rows of group that are valid in arr (rows counted
// from off).
func dropNulls(group []int32, arr arrow.Array, off int) []int32 {
	m := 0
	for _, j := range group {
		if arr.IsValid(off + int(j)) {
			group[m] = j
			m++
		}
	}
	return group[:m]
}

// resolve picks the least (or greatest) of the rows in group, whose values'
// first 8 bytes, zero-padded, are equal; group is reused as scratch. At each
// level w bytes are known equal (zero-padded): a value no longer than w is
// then a prefix of every longer one, and less than it; the longer ones go
// on to their next 8 bytes.
func resolve(o []int32, data []byte, base int32, group []int32, least bool) int32 {
	for level := 1; len(group) > 1; level++ {
		w := 8 * level
		if level > 4 {
			best := group[0]
			for _, j := range group[1:] {
				c := bytes.Compare(data[o[j]-base:o[j+1]-base], data[o[best]-base:o[best+1]-base])
				if (least && c < 0) || (!least && c > 0) {
					best = j
				}
			}
			return best
		}
		short, shortLen, long := int32(-1), 0, 0
		var bk uint64
		if least {
			bk = ^uint64(0)
		}
		for _, j := range group {
			s, e := int(o[j]-base), int(o[j+1]-base)
			if ln := e - s; ln <= w {
				if short < 0 || (least && ln < shortLen) || (!least && ln > shortLen) {
					short, shortLen = j, ln
				}
				continue
			}
			long++
			if k := word(data, s, e, level); least {
				bk = min(bk, k)
			} else {
				bk = max(bk, k)
			}
		}
		if (least && short >= 0) || long == 0 {
			return short
		}
		m := 0
		for _, j := range group {
			s, e := int(o[j]-base), int(o[j+1]-base)
			if e-s <= w {
				continue
			}
			group[m] = j
			m += b2i(word(data, s, e, level) == bk)
		}
		group = group[:m]
	}
	return group[0]
}

// boundaryOrderBy is ASCENDING when the non-null pages' minimums and
// maximums both never decrease (as compare orders them), DESCENDING when
// both never increase, UNORDERED otherwise.
func boundaryOrderBy(ci *format.ColumnIndex, compare func(a, b []byte) int) format.BoundaryOrder {
	asc, desc := true, true
	prev := -1
	for p := range ci.NullPages {
		if ci.NullPages[p] {
			continue
		}
		if prev >= 0 {
			lo, hi := compare(ci.MinValues[prev], ci.MinValues[p]), compare(ci.MaxValues[prev], ci.MaxValues[p])
			asc = asc && lo <= 0 && hi <= 0
			desc = desc && lo >= 0 && hi >= 0
		}
		prev = p
	}
	switch {
	case asc:
		return format.Ascending
	case desc:
		return format.Descending
	}
	return format.Unordered
}
