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
// allocator. Free buffers are kept by power-of-two size up to limit bytes;
// the rest go to the garbage collector. Safe for concurrent use.
type Recycler struct {
	mu    sync.Mutex
	free  [maxRecycledClass + 1][][]byte
	held  int64
	limit int64
}

const (
	minRecycledClass = 12 // 4 KB: smaller buffers are left to the runtime
	maxRecycledClass = 28 // 256 MB
)

// NewRecycler returns a Recycler keeping at most limit bytes of free buffers.
func NewRecycler(limit int64) *Recycler { return &Recycler{limit: limit} }

// sizeClass is the power of two that holds size bytes, or -1 outside the
// recycled range.
func sizeClass(size int) int {
	if size <= 1<<minRecycledClass {
		return -1
	}
	c := bits.Len(uint(size - 1))
	if c > maxRecycledClass {
		return -1
	}
	return c
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
	return make([]byte, size, 1<<c)
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
	if c == 0 || c&(c-1) != 0 {
		return
	}
	class := bits.Len(uint(c)) - 1
	if class <= minRecycledClass || class > maxRecycledClass {
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
