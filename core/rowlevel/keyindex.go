package rowlevel

import (
	"bytes"
	"hash/maphash"
)

// keyIndex finds the source rows of a join key. Keys are hashed to 64 bits;
// rows of one hash are chained in ascending row order and their key bytes
// are kept in one arena, so a probe costs one map lookup on an integer and
// a byte comparison, and building it allocates nothing per key.
type keyIndex struct {
	seed  maphash.Seed
	heads map[uint64]int32
	next  []int32 // next row with the same hash, -1 at the end
	keys  []byte  // every row's key bytes
	offs  []int32 // row i's key is keys[offs[i]:offs[i+1]]
	// filter has a bit set for every hash present (8 bits per row): most
	// probes of a merge find no key, and the filter, far smaller than the
	// map, answers them without the map's cache misses.
	filter []uint64
	mask   uint64
}

// buildKeyIndex indexes rows 0..n-1 by the key keyOf appends to buf; a row
// whose keyOf returns false (a null key that is not null-safe) is never
// found.
func buildKeyIndex(n int, keyOf func(i int, buf []byte) ([]byte, bool)) *keyIndex {
	x := &keyIndex{seed: maphash.MakeSeed(), heads: make(map[uint64]int32, n), next: make([]int32, n), offs: make([]int32, n+1)}
	bits := uint64(64)
	for bits < uint64(n)*8 {
		bits <<= 1
	}
	x.filter, x.mask = make([]uint64, bits/64), bits-1
	valid := make([]bool, n)
	var buf []byte
	for i := range n {
		var ok bool
		buf, ok = keyOf(i, buf[:0])
		if ok {
			x.keys = append(x.keys, buf...)
			valid[i] = true
		}
		x.offs[i+1] = int32(len(x.keys))
	}
	// Linking from the last row prepends, so chains come out ascending.
	for i := n - 1; i >= 0; i-- {
		x.next[i] = -1
		if !valid[i] {
			continue
		}
		h := maphash.Bytes(x.seed, x.keys[x.offs[i]:x.offs[i+1]])
		b := (h >> 7) & x.mask
		x.filter[b/64] |= 1 << (b % 64)
		if head, found := x.heads[h]; found {
			x.next[i] = head
		}
		x.heads[h] = int32(i)
	}
	return x
}

// first returns the first row whose key is key, or -1; nextOf(r, key)
// the row after r with that key, or -1. Rows come in ascending order.
func (x *keyIndex) first(key []byte) int32 {
	h := maphash.Bytes(x.seed, key)
	if b := (h >> 7) & x.mask; x.filter[b/64]&(1<<(b%64)) == 0 {
		return -1
	}
	r, ok := x.heads[h]
	if !ok {
		return -1
	}
	return x.match(r, key)
}

func (x *keyIndex) nextOf(r int32, key []byte) int32 { return x.match(x.next[r], key) }

// match is the first row from r on its chain with key key, or -1.
func (x *keyIndex) match(r int32, key []byte) int32 {
	for ; r >= 0; r = x.next[r] {
		if bytes.Equal(x.keys[x.offs[r]:x.offs[r+1]], key) {
			return r
		}
	}
	return -1
}
