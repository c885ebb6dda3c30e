package transform

import (
	"math/bits"
	"sync"
)

// Recycler is an arrow memory.Allocator for the partitions Split scatters
// into: buffers released by the Parquet writers come back to the next
// batch's scatter instead of to the garbage collector. On W3 (identity
// partitions, 7 per batch) the scatter allocated about 1 GB of fresh
// memory per SF1 write: the runtime zeroed it (0.4 CPU-s) and each new page
// was a fault on this machine (docs/decisions.md).
//
// Its buffers are not zeroed, so Split uses it only for the buffers its
// scatter writes in full; transforms and Arrow kernels get the default
// allocator. Free buffers are kept by size class up to limit bytes; the
// rest go to the garbage collector. Safe for concurrent use.
//
// Size classes are four to each power of two (2^e times 1, 1.25, 1.5 and
// 1.75), so a buffer is at most a fifth larger than asked for: with
// power-of-two classes W2's partition buffers (84 partitions of a batch,
// 10-70 KB each) held about a third more memory than their rows.
type Recycler struct {
	mu    sync.Mutex
	free  [4*maxRecycledBits + 1][][]byte
	held  int64
	limit int64
}

const (
	minRecycledBits = 12 // 4 KB: smaller buffers are left to the runtime
	maxRecycledBits = 28 // 256 MB
)

// NewRecycler returns a Recycler keeping at most limit bytes of free buffers.
func NewRecycler(limit int64) *Recycler { return &Recycler{limit: limit} }

// sizeClass is the smallest class that holds size bytes, or -1 outside
// the recycled range.
func sizeClass(size int) int {
	if size <= 1<<minRecycledBits || size > 1<<maxRecycledBits {
		return -1
	}
	e := bits.Len(uint(size-1)) - 1 // 2^e < size <= 2^(e+1)
	quarter := 1 << (e - 2)
	return 4*e + (size-1<<e+quarter-1)/quarter
}

// classSize is the size of the buffers of class c: 2^e plus k quarters of
// it, for c = 4e + k.
func classSize(c int) int {
	e, k := c/4, c%4
	return 1<<e + k<<(e-2)
}

// Allocate returns size bytes whose contents are undefined.
func (r *Recycler) Allocate(size int) []byte {
	c := sizeClass(size)
	if c < 0 {
		return make([]byte, size)
	}
	r.mu.Lock()
	if l := r.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		r.free[c] = l[:len(l)-1]
		r.held -= int64(cap(b))
		r.mu.Unlock()
		return b[:size]
	}
	r.mu.Unlock()
	return make([]byte, size, classSize(c))
}

// Reallocate resizes b to size bytes, keeping its contents.
func (r *Recycler) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := r.Allocate(size)
	copy(nb, b)
	r.Free(b)
	return nb
}

// Free takes b back for reuse.
func (r *Recycler) Free(b []byte) {
	c := cap(b)
	class := sizeClass(c)
	if class < 0 || classSize(class) != c {
		return
	}
	r.mu.Lock()
	if r.held+int64(c) <= r.limit {
		r.free[class] = append(r.free[class], b[:0])
		r.held += int64(c)
	}
	r.mu.Unlock()
}

// Held is the bytes of free buffers kept.
func (r *Recycler) Held() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}
