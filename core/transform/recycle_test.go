package transform

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// A freed buffer comes back to the next allocation of its size class, with
// the requested length; small and huge sizes and odd capacities are left to
// the runtime; and no more than the limit is kept.
func TestRecyclerReusesBuffersUpToItsLimit(t *testing.T) {
	r := NewRecycler(3 << 20)
	a := r.Allocate(1<<20 - 100)
	if len(a) != 1<<20-100 || cap(a) != 1<<20 {
		t.Fatalf("len %d cap %d, want %d and %d", len(a), cap(a), 1<<20-100, 1<<20)
	}
	a[0] = 42
	r.Free(a)
	if r.Held() != 1<<20 {
		t.Fatalf("held %d after one free, want %d", r.Held(), 1<<20)
	}
	if c := cap(r.Allocate(600 << 10)); c != 640<<10 {
		t.Fatalf("600 KB: cap %d, want the 640 KB class", c)
	}
	b := r.Allocate(900 << 10)
	if &b[:1][0] != &a[:1][0] || len(b) != 900<<10 {
		t.Fatal("a buffer of the same class was not reused")
	}
	if r.Held() != 0 {
		t.Fatalf("held %d after reuse, want 0", r.Held())
	}
	for _, size := range []int{100, 1 << 12, 1<<28 + 1} {
		if c := cap(r.Allocate(size)); c != size {
			t.Errorf("size %d: cap %d, want the runtime's exact %d", size, c, size)
		}
	}
	r.Free(make([]byte, 10, 3<<20+1000)) // not a class size
	if r.Held() != 0 {
		t.Fatalf("held %d after freeing an odd capacity", r.Held())
	}
	for range 5 {
		r.Free(make([]byte, 1<<20))
	}
	if r.Held() != 3<<20 {
		t.Fatalf("held %d, want the 3 MB limit", r.Held())
	}
	grown := r.Reallocate(3<<20, append(r.Allocate(5000)[:0], "kept"...))
	if string(grown[:4]) != "kept" || len(grown) != 3<<20 {
		t.Fatal("Reallocate lost the contents or the size")
	}
}

// Split into a Recycler gives the partitions Split into the default
// allocator gives, batch after batch, while the buffers of each batch's
// partitions, released and dirtied, are reused by the next.
func TestSplitIntoRecycledBuffersMatchesFreshOnes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := NewRecycler(64 << 20)
	rnd := rand.New(rand.NewPCG(21, 22))
	// Four buckets: partitions large enough for recycled size classes.
	spec := iceberg.NewPartitionSpecID(1, partField(1001, 1, iceberg.BucketTransform{NumBuckets: 4}))
	for batch := range 4 {
		rows := randomEvents(rnd, 40000)
		in := eventsRecord(t, mem, rows, true)
		want, err := Split(in, spec, eventsSchema(), mem)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Split(in, spec, eventsSchema(), rec)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("batch %d: %d partitions, want %d", batch, len(got), len(want))
		}
		for i := range got {
			if got[i].Key != want[i].Key || !reflect.DeepEqual(got[i].Values, want[i].Values) ||
				!array.RecordEqual(got[i].Record, want[i].Record) {
				t.Fatalf("batch %d: partition %d differs", batch, i)
			}
		}
		// Dirty what goes back, so that reuse without a full write shows.
		for _, p := range got {
			for _, c := range p.Record.Columns() {
				for _, b := range c.Data().Buffers() {
					if b != nil {
						all := b.Buf()[:cap(b.Buf())]
						for k := range all {
							all[k] = 0x5A
						}
					}
				}
			}
		}
		releaseAll(got)
		releaseAll(want)
		in.Release()
		if batch == 0 && rec.Held() == 0 {
			t.Fatal("released partitions gave nothing back to the Recycler")
		}
	}
}

// Every size in the recycled range gets the smallest class that holds it,
// at most a quarter larger, and a class's own size maps back to it.
func TestRecyclerClassesFitTheirSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for range 100000 {
		size := 1<<12 + 1 + r.IntN(1<<28-1<<12)
		c := sizeClass(size)
		got := classSize(c)
		if got < size || 4*got > 5*size || (c > 0 && classSize(c-1) >= size) {
			t.Fatalf("size %d: class %d of %d bytes", size, c, got)
		}
		if sizeClass(got) != c {
			t.Fatalf("class %d's size %d maps to class %d", c, got, sizeClass(got))
		}
	}
}
