package transform

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// groupIDs gives every row a compact group id in [0, groups) such that two
// rows share an id exactly when their partition tuples are equal. Ids are
// numbered in order of first appearance.
//
// Each column is first coded to small integers (0 is null): integer columns
// with a small value range by subtracting their minimum (no hashing), other
// columns through a hash map. Codes of successive columns are then combined
// and renumbered, by a lookup table when the combined domain is small and by
// a hash map otherwise.
//
// The ids are sc's: valid until sc goes back to the pool.
func groupIDs(parts []arrow.Array, n int, sc *splitScratch) ([]uint32, int) {
	gid := resize(&sc.gid, n)
	clear(gid)
	codes := resize(&sc.codes, n)
	combined := resize(&sc.combined, n)
	limit := denseLimit(n)

	var domain uint64 = 1 // all rows start in one group: gid is all zero
	for _, arr := range parts {
		card := codeColumn(arr, codes, limit)
		for i := range combined {
			combined[i] = uint64(gid[i])*card + uint64(codes[i])
		}
		domain = renumber(combined, domain*card, gid, limit, &sc.table)
	}
	if len(parts) == 0 {
		return gid, 1
	}
	return gid, int(domain)
}

// splitScratch holds the per-row slices of one Split: group ids, codes,
// combined codes, the renumbering table and positions within groups. Split
// takes one from scratchPool and puts it back: slices made afresh for every
// batch cost a page fault per 4 KB on first write (in a CPU profile of W3
// in bench/goprof the first writes of ids, codes and combined codes took
// 0.36 of 3.8 CPU-s; docs/measurements.md, "Partitioned appends").
type splitScratch struct {
	gid, codes, table []uint32
	combined          []uint64
	pos               []int32
}

// maxScratchRows: the slices of larger batches are not kept.
const maxScratchRows = 1 << 20

var scratchPool = sync.Pool{New: func() any { return new(splitScratch) }}

func getScratch() *splitScratch { return scratchPool.Get().(*splitScratch) }

func putScratch(sc *splitScratch) {
	if cap(sc.gid) <= maxScratchRows && uint64(cap(sc.table)) <= denseLimit(maxScratchRows) {
		scratchPool.Put(sc)
	}
}

// resize makes *s n long, reusing its array when large enough; the
// contents are not cleared.
func resize[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	return *s
}

// denseLimit is the largest domain coded through a lookup table.
func denseLimit(n int) uint64 {
	return uint64(min(4*n+4096, 1<<24))
}

// renumber writes into gid the first-appearance number of every value of
// vals (all < domain) and returns the count of distinct values.
func renumber(vals []uint64, domain uint64, gid []uint32, limit uint64, scratch *[]uint32) uint64 {
	var next uint32
	if domain <= limit {
		table := resize(scratch, int(domain)) // 0 = unseen, else id+1
		clear(table)
		for i, v := range vals {
			id := table[v]
			if id == 0 {
				next++
				id = next
				table[v] = id
			}
			gid[i] = id - 1
		}
		return uint64(next)
	}
	seen := make(map[uint64]uint32)
	for i, v := range vals {
		id, ok := seen[v]
		if !ok {
			id = next
			next++
			seen[v] = id
		}
		gid[i] = id
	}
	return uint64(next)
}

// validBits returns arr's validity bitmap and offset, or nil without nulls.
func validBits(arr arrow.Array) ([]byte, int) {
	if arr.NullN() == 0 {
		return nil, 0
	}
	return arr.Data().Buffers()[0].Bytes(), arr.Data().Offset()
}

// codeColumn writes a code per row into codes (0 for null, equal codes for
// equal values) and returns the number of possible codes.
func codeColumn(arr arrow.Array, codes []uint32, limit uint64) uint64 {
	if arr.NullN() == arr.Len() {
		clear(codes)
		return 1
	}
	bm, off := validBits(arr)
	switch a := arr.(type) {
	case *array.Int32:
		return codeInts(a.Int32Values(), bm, off, codes, limit)
	case *array.Date32:
		return codeInts(a.Date32Values(), bm, off, codes, limit)
	case *array.Int64:
		return codeInts(a.Int64Values(), bm, off, codes, limit)
	case *array.Time64:
		return codeInts(a.Time64Values(), bm, off, codes, limit)
	case *array.Timestamp:
		return codeInts(a.TimestampValues(), bm, off, codes, limit)
	case *array.Boolean:
		for i := range codes {
			switch {
			case bm != nil && !bitutil.BitIsSet(bm, off+i):
				codes[i] = 0
			case a.Value(i):
				codes[i] = 2
			default:
				codes[i] = 1
			}
		}
		return 3
	case *array.Float32:
		seen := make(map[uint64]uint32)
		for i, v := range a.Float32Values() {
			codes[i] = codeOf(seen, floatBits(float64(v)), bm, off, i)
		}
		return uint64(len(seen)) + 1
	case *array.Float64:
		seen := make(map[uint64]uint32)
		for i, v := range a.Float64Values() {
			codes[i] = codeOf(seen, floatBits(v), bm, off, i)
		}
		return uint64(len(seen)) + 1
	case *array.Decimal128:
		seen := make(map[decimal128.Num]uint32)
		for i, v := range a.Values() {
			codes[i] = codeOf(seen, v, bm, off, i)
		}
		return uint64(len(seen)) + 1
	case *array.String, *array.Binary:
		offs, vals := varWidth32(arr)
		return codeVar(offs, vals, bm, off, codes)
	case *array.LargeString, *array.LargeBinary:
		offs, vals := varWidth64(arr)
		return codeVar(offs, vals, bm, off, codes)
	}
	// fixed_size_binary and uuid
	vals, w := fixedBytes(arr)
	seen := make(map[string]uint32)
	for i := range codes {
		if bm != nil && !bitutil.BitIsSet(bm, off+i) {
			codes[i] = 0
			continue
		}
		v := vals[i*w : (i+1)*w]
		id, ok := seen[string(v)] // no allocation for a lookup
		if !ok {
			id = uint32(len(seen)) + 1
			seen[string(v)] = id
		}
		codes[i] = id
	}
	return uint64(len(seen)) + 1
}

func codeOf[K comparable](seen map[K]uint32, k K, bm []byte, off, i int) uint32 {
	if bm != nil && !bitutil.BitIsSet(bm, off+i) {
		return 0
	}
	id, ok := seen[k]
	if !ok {
		id = uint32(len(seen)) + 1
		seen[k] = id
	}
	return id
}

// codeInts codes integers as value-min+1 when their range is small (the
// common case for bucket, year, month, day and hour values), else by map.
func codeInts[T ~int32 | ~int64](vals []T, bm []byte, off int, codes []uint32, limit uint64) uint64 {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i, v := range vals {
		if bm != nil && !bitutil.BitIsSet(bm, off+i) {
			continue
		}
		lo = min(lo, int64(v))
		hi = max(hi, int64(v))
	}
	if span := uint64(hi) - uint64(lo); span < limit {
		for i, v := range vals {
			codes[i] = uint32(uint64(int64(v))-uint64(lo)) + 1
		}
		if bm != nil {
			for i := range codes {
				if !bitutil.BitIsSet(bm, off+i) {
					codes[i] = 0
				}
			}
		}
		return span + 2
	}
	seen := make(map[int64]uint32)
	for i, v := range vals {
		codes[i] = codeOf(seen, int64(v), bm, off, i)
	}
	return uint64(len(seen)) + 1
}

func codeVar[O int32 | int64](offs []O, vals []byte, bm []byte, off int, codes []uint32) uint64 {
	seen := make(map[string]uint32)
	var short shortCodes
	for i := range codes {
		if bm != nil && !bitutil.BitIsSet(bm, off+i) {
			codes[i] = 0
			continue
		}
		v := vals[offs[i]:offs[i+1]]
		if len(v) <= 7 && cap(v) >= 8 {
			// Short values (flags, modes, country codes) are their own
			// key, their length in the top byte, in a table of their own:
			// no hashing of the bytes.
			key := binary.LittleEndian.Uint64(v[:8])&(1<<(8*len(v))-1) | uint64(len(v))<<56
			if id := short.get(key); id != 0 {
				codes[i] = id
				continue
			}
			id, ok := seen[string(v)]
			if !ok {
				id = uint32(len(seen)) + 1
				seen[string(v)] = id
			}
			short.put(key, id)
			codes[i] = id
			continue
		}
		id, ok := seen[string(v)] // no allocation for a lookup
		if !ok {
			id = uint32(len(seen)) + 1
			seen[string(v)] = id
		}
		codes[i] = id
	}
	return uint64(len(seen)) + 1
}

// shortCodes maps keys of short values to their codes (0: absent), by
// open addressing.
type shortCodes struct {
	keys  []uint64
	ids   []uint32
	n     int
	shift uint
}

func (t *shortCodes) slot(key uint64) int { return int((key * 0x9E3779B97F4A7C15) >> t.shift) }

func (t *shortCodes) get(key uint64) uint32 {
	if t.n == 0 {
		return 0
	}
	for s := t.slot(key); ; s = (s + 1) & (len(t.ids) - 1) {
		switch id := t.ids[s]; {
		case id == 0:
			return 0
		case t.keys[s] == key:
			return id
		}
	}
}

func (t *shortCodes) put(key uint64, id uint32) {
	if 2*(t.n+1) > len(t.ids) {
		old, oldIDs := t.keys, t.ids
		size := max(64, 2*len(t.ids))
		t.keys, t.ids, t.n = make([]uint64, size), make([]uint32, size), 0
		t.shift = uint(64 - bits.TrailingZeros(uint(size)))
		for s, oid := range oldIDs {
			if oid != 0 {
				t.put(old[s], oid)
			}
		}
	}
	s := t.slot(key)
	for t.ids[s] != 0 {
		s = (s + 1) & (len(t.ids) - 1)
	}
	t.keys[s], t.ids[s] = key, id
	t.n++
}
