package rowlevel

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// TestSourceTakeAcrossBatches: rows taken from a source kept in several
// batches equal a take from the same rows in one batch, for unordered
// rows with repeats (merge pairs), ascending rows (inserts) and none.
func TestSourceTakeAcrossBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := compute.WithAllocator(context.Background(), mem)
	rng := rand.New(rand.NewPCG(3, 4))
	var recs []arrow.RecordBatch
	for _, n := range []int{700, 1, 1300, 250} {
		recs = append(recs, gatherBatch(t, mem, n, rng))
	}
	rdr, err := array.NewRecordReader(gatherSchema, recs)
	if err != nil {
		t.Fatal(err)
	}
	src, err := readSource(ctx, rdr, nil)
	rdr.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Release()
	if src.NumRows() != 2251 || len(src.batches) != 4 {
		t.Fatalf("%d rows in %d batches", src.NumRows(), len(src.batches))
	}
	whole, err := write.ConcatBatches(gatherSchema, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	write.ReleaseAll(recs)

	var unordered, ascending []int32
	for range 900 {
		unordered = append(unordered, int32(rng.IntN(2251)))
	}
	for i := range 2251 {
		if rng.IntN(3) == 0 {
			ascending = append(ascending, int32(i))
		}
	}
	for name, idx := range map[string][]int32{"unordered": unordered, "ascending": ascending, "none": nil, "one": {2250}} {
		got, err := src.take(ctx, idx)
		if err != nil {
			t.Fatal(err)
		}
		want, err := takeRecord(ctx, whole, idx)
		if err != nil {
			t.Fatal(err)
		}
		if !sameValues(got, want) {
			t.Errorf("%s: rows taken across batches differ from the same rows of one batch", name)
		}
		got.Release()
		want.Release()
	}
}

// sameValues compares two batches value by value (dictionary columns by
// their values: batches of one source may have different dictionaries).
func sameValues(a, b arrow.RecordBatch) bool {
	if a.NumRows() != b.NumRows() || a.NumCols() != b.NumCols() {
		return false
	}
	for c := range int(a.NumCols()) {
		x, y := a.Column(c), b.Column(c)
		for i := range int(a.NumRows()) {
			if x.IsNull(i) != y.IsNull(i) || x.ValueStr(i) != y.ValueStr(i) {
				return false
			}
		}
	}
	return true
}
