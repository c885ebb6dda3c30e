package parquet

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/cespare/xxhash/v2"
)

// This file implements the Parquet split-block bloom filter (parquet-format
// BloomFilter.md) for the native encoder, so that filters are sized by
// distinct values and capped; the pqarrow encoder (nested schemas) uses
// arrow-go's filters.

// bloomSalt are the spec's eight odd constants, one per word of a block.
var bloomSalt = [8]uint32{
	0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d,
	0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
}

// bloomBlock is one 256-bit block: eight 32-bit words.
type bloomBlock [8]uint32

// bloomBuilder builds the filter of one column chunk. Values go into a
// filter of the largest allowed size while the distinct values are counted;
// finish then folds it down to the size the count (or the configured NDV)
// needs. Folding is exact: with a power-of-two number of blocks, a hash's
// block in a filter of half the size is its block index shifted right by
// one, and its bits inside the block do not depend on the size, so ORing
// blocks 2k and 2k+1 gives the filter that would have been built at half
// the size.
type bloomBuilder struct {
	fpp      float64
	ndv      int64 // configured NDV; 0 counts distinct values instead
	blocks   []bloomBlock
	distinct int64
}

func newBloomBuilder(bf BloomFilter, maxBytes int64) *bloomBuilder {
	return &bloomBuilder{fpp: bf.FPP, ndv: bf.NDV, blocks: make([]bloomBlock, maxBytes/32)}
}

// insert adds hash and counts it as new when it set some bit.
func (b *bloomBuilder) insert(h uint64) {
	blk := &b.blocks[((h>>32)*uint64(len(b.blocks)))>>32]
	key := uint32(h)
	var fresh uint32
	for i, s := range bloomSalt {
		bit := uint32(1) << ((key * s) >> 27)
		fresh |= bit &^ blk[i]
		blk[i] |= bit
	}
	if fresh != 0 {
		b.distinct++
	}
}

// bloomCheck reports whether hash may be in the filter bitset (spec layout:
// blocks of eight little-endian 32-bit words).
func bloomCheck(bitset []byte, h uint64) bool {
	n := uint64(len(bitset) / 32)
	if n == 0 {
		return false
	}
	blk := bitset[32*(((h>>32)*n)>>32):]
	key := uint32(h)
	for i, s := range bloomSalt {
		bit := uint32(1) << ((key * s) >> 27)
		if binary.LittleEndian.Uint32(blk[4*i:])&bit == 0 {
			return false
		}
	}
	return true
}

// bloomBytes is the filter size for ndv distinct values at fpp: the bits
// parquet-java's optimalNumOfBits gives, rounded up to a power of two and
// clamped to [minBloomBytes, maxBytes]; maxBytes is a power of two.
func bloomBytes(ndv int64, fpp float64, maxBytes int64) int64 {
	m := -8 * float64(ndv) / math.Log(1-math.Pow(fpp, 1.0/8))
	n := int64(math.Ceil(m / 8))
	if m/8 >= float64(maxBytes) {
		return maxBytes
	}
	n = max(n, minBloomBytes)
	if n&(n-1) != 0 {
		n = 1 << bits.Len64(uint64(n))
	}
	return min(n, maxBytes)
}

// floorPow2 is the largest power of two not above n (n >= 1).
func floorPow2(n int64) int64 { return 1 << (bits.Len64(uint64(n)) - 1) }

// finish returns the bitset of the chunk written so far and resets b for
// the next row group.
func (b *bloomBuilder) finish() []byte {
	ndv := b.ndv
	if ndv == 0 {
		ndv = b.distinct
	}
	want := int(bloomBytes(ndv, b.fpp, int64(len(b.blocks))*32) / 32)
	blocks := b.blocks
	for len(blocks) > want {
		half := len(blocks) / 2
		for k := 0; k < half; k++ {
			lo, hi := blocks[2*k], blocks[2*k+1]
			for i := range lo {
				lo[i] |= hi[i]
			}
			blocks[k] = lo
		}
		blocks = blocks[:half]
	}
	out := make([]byte, 32*len(blocks))
	for k, blk := range blocks {
		for i, w := range blk {
			binary.LittleEndian.PutUint32(out[32*k+4*i:], w)
		}
	}
	clear(b.blocks)
	b.distinct = 0
	return out
}

// xxh64 primes.
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

// hash8 is XXH64 (seed 0) of the 8 little-endian bytes of v, without the
// byte slice: the plain encoding of INT64 and DOUBLE values.
func hash8(v uint64) uint64 {
	k := bits.RotateLeft64(v*prime2, 31) * prime1
	h := (prime5 + 8) ^ k
	h = bits.RotateLeft64(h, 27)*prime1 + prime4
	return avalanche(h)
}

// hash4 is XXH64 (seed 0) of the 4 little-endian bytes of v: the plain
// encoding of INT32 and FLOAT values.
func hash4(v uint32) uint64 {
	h := (prime5 + 4) ^ uint64(v)*prime1
	h = bits.RotateLeft64(h, 23)*prime2 + prime3
	return avalanche(h)
}

func avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// Hashes of the plain encoding of BOOLEAN values, as arrow-go writes them.
var (
	boolFalseHash = xxhash.Sum64([]byte{0})
	boolTrueHash  = xxhash.Sum64([]byte{1})
)

// addArrow inserts the valid values of rows [off, end) of arr, hashed as
// their Parquet plain encoding for the physical type flatSchema gives them.
// fixed holds the big-endian FIXED_LEN_BYTE_ARRAY form of wide decimals for
// those rows (width bytes each), which the caller has already built.
func (b *bloomBuilder) addArrow(arr arrow.Array, off, end int, fixed []byte, width int) {
	var valid func(int) bool // nil when every row is valid
	if arr.NullN() > 0 {
		valid = func(j int) bool { return arr.IsValid(j) }
	}
	switch a := arr.(type) {
	case *array.Boolean:
		for j := off; j < end; j++ {
			if valid == nil || valid(j) {
				if a.Value(j) {
					b.insert(boolTrueHash)
				} else {
					b.insert(boolFalseHash)
				}
			}
		}
	case *array.Int32:
		add4(b, a.Int32Values(), off, end, valid)
	case *array.Date32:
		add4(b, a.Date32Values(), off, end, valid)
	case *array.Float32:
		for j, v := range a.Float32Values()[off:end] {
			if valid == nil || valid(off+j) {
				b.insert(hash4(math.Float32bits(v)))
			}
		}
	case *array.Int64:
		add8(b, a.Int64Values(), off, end, valid)
	case *array.Time64:
		add8(b, a.Time64Values(), off, end, valid)
	case *array.Timestamp:
		add8(b, a.TimestampValues(), off, end, valid)
	case *array.Float64:
		for j, v := range a.Float64Values()[off:end] {
			if valid == nil || valid(off+j) {
				b.insert(hash8(math.Float64bits(v)))
			}
		}
	case *array.Decimal128:
		nums := a.Values()[off:end]
		switch p := a.DataType().(*arrow.Decimal128Type).Precision; {
		case p <= 9:
			for j, n := range nums {
				if valid == nil || valid(off+j) {
					b.insert(hash4(uint32(int32(n.LowBits()))))
				}
			}
		case p <= 18:
			for j, n := range nums {
				if valid == nil || valid(off+j) {
					b.insert(hash8(n.LowBits()))
				}
			}
		default:
			for j := range nums {
				if valid == nil || valid(off+j) {
					b.insert(xxhash.Sum64(fixed[j*width : (j+1)*width]))
				}
			}
		}
	case *array.String:
		offs, data := a.ValueOffsets(), a.ValueBytes()
		base := offs[0]
		for j := off; j < end; j++ {
			if valid == nil || valid(j) {
				b.insert(xxhash.Sum64(data[offs[j]-base : offs[j+1]-base]))
			}
		}
	case *array.Binary:
		for j := off; j < end; j++ {
			if valid == nil || valid(j) {
				b.insert(xxhash.Sum64(a.Value(j)))
			}
		}
	case *extensions.UUIDArray:
		st := a.Storage().(*array.FixedSizeBinary)
		for j := off; j < end; j++ {
			if valid == nil || valid(j) {
				b.insert(xxhash.Sum64(st.Value(j)))
			}
		}
	case *array.FixedSizeBinary:
		for j := off; j < end; j++ {
			if valid == nil || valid(j) {
				b.insert(xxhash.Sum64(a.Value(j)))
			}
		}
	}
}

func add4[T ~int32](b *bloomBuilder, vals []T, off, end int, valid func(int) bool) {
	for j, v := range vals[off:end] {
		if valid == nil || valid(off+j) {
			b.insert(hash4(uint32(v)))
		}
	}
}

func add8[T ~int64](b *bloomBuilder, vals []T, off, end int, valid func(int) bool) {
	for j, v := range vals[off:end] {
		if valid == nil || valid(off+j) {
			b.insert(hash8(uint64(v)))
		}
	}
}
