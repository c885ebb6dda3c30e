package parquet

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Byte-array columns get their bounds from the encoder, not from parquet-go.
//
// parquet-go computes each page's min and max for the column index with a
// bytes.Compare per value, after dictionary encoding (byteArrayDictionary.
// Bounds): about a tenth of the CPU of writing TPC-H lineitem. Here the
// bounds come from the Arrow strings, comparing an 8-byte big-endian prefix
// first (one integer comparison for most values), for each run of rows handed
// to parquet-go at once (a chunk). parquet-go only cuts pages between such
// runs, so a page's bounds are those of its chunks; at close they are written
// into the column index (see closeRewritingFooter), and the exact bounds of
// each row group into its column chunk's statistics.

// columnIndexLimit is the longest byte-array bound kept in a column index,
// parquet-go's and parquet-java's default: longer minimums are cut to a
// prefix, longer maximums cut and incremented.
const columnIndexLimit = 16

// byteBounds collects the bounds of one byte-array column.
type byteBounds struct {
	scratch boundsScratch
	cur     rowGroupBounds   // the open row group
	rgs     []rowGroupBounds // the finished ones
}

// rowGroupBounds holds one row group's chunks: each chunk's last row
// (exclusive, counted from the row group's start) and bounds, cut to the
// column index's limit (nil for a chunk of nulls only), and the exact bounds
// of the whole row group.
type rowGroupBounds struct {
	ends     []int64
	lo, hi   [][]byte
	min, max []byte
	set      bool
}

// add records the bounds of rows [off, end) of arr, a String or Binary array.
func (b *byteBounds) add(arr arrow.Array, off, end int) {
	var offs []int32
	var data []byte
	switch a := arr.(type) {
	case *array.String:
		offs, data = a.ValueOffsets(), a.ValueBytes()
	case *array.Binary:
		offs, data = a.ValueOffsets(), a.ValueBytes()
	}
	lo, hi, ok := b.scratch.stringRange(offs, data, offs[0], arr, off, end)
	rg := &b.cur
	rows := int64(end - off)
	if n := len(rg.ends); n > 0 {
		rows += rg.ends[n-1]
	}
	rg.ends = append(rg.ends, rows)
	if !ok {
		rg.lo, rg.hi = append(rg.lo, nil), append(rg.hi, nil)
		return
	}
	if !rg.set || bytes.Compare(lo, rg.min) < 0 {
		rg.min = append(rg.min[:0], lo...)
	}
	if !rg.set || bytes.Compare(hi, rg.max) > 0 {
		rg.max = append(rg.max[:0], hi...)
	}
	rg.set = true
	clo, chi := indexMin(lo), indexMax(hi)
	buf := make([]byte, len(clo)+len(chi))
	copy(buf, clo)
	copy(buf[len(clo):], chi)
	rg.lo = append(rg.lo, buf[:len(clo):len(clo)])
	rg.hi = append(rg.hi, buf[len(clo):])
}

// finishRowGroup closes the open row group.
func (b *byteBounds) finishRowGroup() {
	b.rgs = append(b.rgs, b.cur)
	b.cur = rowGroupBounds{}
}

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

// pageIndexFixer rewrites the column indexes of the columns whose bounds
// the encoder computed (bounds, by column) and the statistics of their
// column chunks in md, and leaves out the column indexes of the columns in
// drop (whose pages parquet-go gave empty bounds).
type pageIndexFixer struct {
	md     *format.FileMetaData
	bounds map[int]*byteBounds
	drop   map[int]*decimalBound
}

// rewrite takes the page index section parquet-go wrote (section, which
// starts at file offset base) and returns the one to write in its place,
// updating md's offsets to match.
func (f pageIndexFixer) rewrite(section []byte, base int64) ([]byte, error) {
	proto := new(thrift.CompactProtocol)
	at := func(off int64, n int32) ([]byte, error) {
		s := off - base
		if off == 0 || s < 0 || s+int64(n) > int64(len(section)) {
			return nil, fmt.Errorf("page index entry at %d (+%d) outside parquet-go's page index section", off, n)
		}
		return section[s : s+int64(n)], nil
	}
	var cis, ois []byte
	seen := 0
	for rg := range f.md.RowGroups {
		rgRows := f.md.RowGroups[rg].NumRows
		cols := f.md.RowGroups[rg].Columns
		type located struct{ ci, oi []byte }
		found := make([]located, len(cols))
		for c := range cols {
			cc := &cols[c]
			var err error
			if cc.ColumnIndexOffset != 0 {
				if found[c].ci, err = at(cc.ColumnIndexOffset, cc.ColumnIndexLength); err != nil {
					return nil, err
				}
			}
			if found[c].oi, err = at(cc.OffsetIndexOffset, cc.OffsetIndexLength); err != nil {
				return nil, err
			}
			seen += len(found[c].ci) + len(found[c].oi)
			if _, ok := f.drop[c]; ok {
				found[c].ci = nil
				cc.ColumnIndexOffset, cc.ColumnIndexLength = 0, 0
				continue
			}
			b, ok := f.bounds[c]
			if !ok || found[c].ci == nil {
				continue
			}
			if rg >= len(b.rgs) {
				return nil, fmt.Errorf("column %d: bounds for %d row groups, the file has more", c, len(b.rgs))
			}
			var ci format.ColumnIndex
			var oi format.OffsetIndex
			if err := thrift.Unmarshal(proto, found[c].ci, &ci); err != nil {
				return nil, fmt.Errorf("decoding column index: %w", err)
			}
			if err := thrift.Unmarshal(proto, found[c].oi, &oi); err != nil {
				return nil, fmt.Errorf("decoding offset index: %w", err)
			}
			if err := b.rgs[rg].fill(&ci, oi.PageLocations, rgRows); err != nil {
				return nil, fmt.Errorf("column %d, row group %d: %w", c, rg, err)
			}
			raw, err := thrift.Marshal(proto, &ci)
			if err != nil {
				return nil, fmt.Errorf("encoding column index: %w", err)
			}
			found[c].ci = raw
			st := &cc.MetaData.Statistics
			if r := b.rgs[rg]; r.set {
				st.MinValue, st.MaxValue = r.min, r.max
			}
		}
		for c := range cols {
			if found[c].ci != nil {
				cols[c].ColumnIndexOffset = base + int64(len(cis))
				cols[c].ColumnIndexLength = int32(len(found[c].ci))
				cis = append(cis, found[c].ci...)
			}
		}
		for c := range cols {
			// Offsets relative to the offset indexes' start, fixed below.
			cols[c].OffsetIndexOffset = int64(len(ois))
			ois = append(ois, found[c].oi...)
		}
	}
	if seen != len(section) {
		return nil, fmt.Errorf("parquet-go's page index section holds %d bytes, its indexes %d", len(section), seen)
	}
	for rg := range f.md.RowGroups {
		for c := range f.md.RowGroups[rg].Columns {
			f.md.RowGroups[rg].Columns[c].OffsetIndexOffset += base + int64(len(cis))
		}
	}
	return append(cis, ois...), nil
}

// fill sets the bounds of every page of ci (whose pages start at the rows
// in pages) from the chunks of r, and its boundary order.
func (r rowGroupBounds) fill(ci *format.ColumnIndex, pages []format.PageLocation, rgRows int64) error {
	if len(pages) != len(ci.NullPages) || len(ci.MinValues) != len(pages) || len(ci.MaxValues) != len(pages) {
		return fmt.Errorf("%d pages in the offset index, %d in the column index", len(pages), len(ci.NullPages))
	}
	if n := len(r.ends); n == 0 || r.ends[n-1] != rgRows {
		return fmt.Errorf("bounds recorded for a row group of other size than %d rows", rgRows)
	}
	k := 0 // the next chunk
	for p := range pages {
		end := rgRows
		if p+1 < len(pages) {
			end = pages[p+1].FirstRowIndex
		}
		var lo, hi []byte
		for ; k < len(r.ends) && r.ends[k] <= end; k++ {
			if r.lo[k] == nil {
				continue
			}
			if lo == nil || bytes.Compare(r.lo[k], lo) < 0 {
				lo = r.lo[k]
			}
			if hi == nil || bytes.Compare(r.hi[k], hi) > 0 {
				hi = r.hi[k]
			}
		}
		if k == 0 || r.ends[k-1] != end {
			return fmt.Errorf("page %d ends at row %d, inside a chunk", p, end)
		}
		if (lo == nil) != ci.NullPages[p] {
			return fmt.Errorf("page %d: null page %v, but bounds %q..%q", p, ci.NullPages[p], lo, hi)
		}
		if lo == nil {
			lo, hi = []byte{}, []byte{}
		}
		ci.MinValues[p], ci.MaxValues[p] = lo, hi
	}
	ci.BoundaryOrder = boundaryOrder(ci)
	return nil
}

// boundaryOrder is ASCENDING when the non-null pages' minimums and
// maximums both never decrease, DESCENDING when both never increase,
// UNORDERED otherwise.
func boundaryOrder(ci *format.ColumnIndex) format.BoundaryOrder {
	return boundaryOrderBy(ci, bytes.Compare)
}

// boundaryOrderBy is boundaryOrder with the bounds ordered by compare.
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
