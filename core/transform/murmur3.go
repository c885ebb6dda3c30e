package transform

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Murmur3 x86 32-bit with seed 0, the hash the Iceberg spec (Appendix B)
// requires for bucketing.

const (
	murmurC1 = 0xcc9e2d51
	murmurC2 = 0x1b873593
)

func murmurMixK(k uint32) uint32 {
	k *= murmurC1
	k = bits.RotateLeft32(k, 15)
	return k * murmurC2
}

func murmurMixH(h, k uint32) uint32 {
	h ^= murmurMixK(k)
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func murmurFinal(h uint32, n int) uint32 {
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// hashBytes is murmur3_x86_32(b, seed 0).
func hashBytes(b []byte) uint32 {
	n := len(b)
	var h uint32
	for len(b) >= 4 {
		h = murmurMixH(h, binary.LittleEndian.Uint32(b))
		b = b[4:]
	}
	var k uint32
	switch len(b) {
	case 3:
		k ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(b[0])
		h ^= murmurMixK(k)
	}
	return murmurFinal(h, n)
}

// hashLong hashes the 8 little-endian bytes of v, the spec's hashLong; it is
// hashBytes unrolled for an 8-byte input so it needs no buffer.
func hashLong(v int64) uint32 {
	u := uint64(v)
	h := murmurMixH(0, uint32(u))
	h = murmurMixH(h, uint32(u>>32))
	return murmurFinal(h, 8)
}

// hashDecimal hashes the minimal two's-complement big-endian bytes of the
// unscaled value (spec Appendix B, note 2). buf is caller scratch space.
func hashDecimal(n decimal128.Num, buf *[16]byte) uint32 {
	binary.BigEndian.PutUint64(buf[:8], uint64(n.HighBits()))
	binary.BigEndian.PutUint64(buf[8:], n.LowBits())
	start := 0
	if n.HighBits() >= 0 {
		for start < 15 && buf[start] == 0 && buf[start+1]&0x80 == 0 {
			start++
		}
	} else {
		for start < 15 && buf[start] == 0xff && buf[start+1]&0x80 != 0 {
			start++
		}
	}
	return hashBytes(buf[start:])
}

// buckets maps hashes to [0, n) as (hash & Integer.MAX_VALUE) % n. The
// remainder uses Lemire's multiply-shift (two multiplications instead of a
// division), exact for all 32-bit dividends and divisors.
type buckets struct {
	m, n uint64
}

func newBuckets(n uint32) buckets {
	return buckets{m: ^uint64(0)/uint64(n) + 1, n: uint64(n)}
}

func (b buckets) of(h uint32) int32 {
	hi, _ := bits.Mul64(b.m*uint64(h&0x7fffffff), b.n)
	return int32(hi)
}
