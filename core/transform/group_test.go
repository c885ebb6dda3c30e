package transform

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestGroupIDsOnReusedScratch: a scratch left full by a larger batch of
// two partition columns gives a smaller batch the same ids, numbered in
// order of first appearance, as a fresh one; its ids, codes and
// renumbering table are all written or cleared before they are read.
func TestGroupIDsOnReusedScratch(t *testing.T) {
	ints := func(vals ...int32) arrow.Array {
		b := array.NewInt32Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(vals, nil)
		return b.NewArray()
	}
	big := make([]int32, 5000)
	for i := range big {
		big[i] = int32(i % 97)
	}
	a1, a2 := ints(big...), ints(big...)
	defer a1.Release()
	defer a2.Release()
	sc := new(splitScratch)
	if _, n := groupIDs([]arrow.Array{a1, a2}, len(big), sc); n != 97 {
		t.Fatalf("first batch: %d groups, want 97", n)
	}
	small := ints(7, 3, 7, 9, 3)
	defer small.Release()
	got, n := groupIDs([]arrow.Array{small}, 5, sc)
	want, wantN := groupIDs([]arrow.Array{small}, 5, new(splitScratch))
	if n != 3 || wantN != 3 || !slices.Equal(got, want) || !slices.Equal(got, []uint32{0, 1, 0, 2, 1}) {
		t.Errorf("reused scratch: ids %v (%d groups), fresh %v (%d), want [0 1 0 2 1] (3)", got, n, want, wantN)
	}
}
