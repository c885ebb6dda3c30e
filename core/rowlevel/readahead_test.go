package rowlevel

import (
	"context"
	"errors"
	"iter"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// files are n generated files of a few batches each, every batch one row
// holding its position in the whole sequence; open reads file i.
func readAheadFiles(mem memory.Allocator, rng *rand.Rand, n int) (open func(i int) (iter.Seq2[arrow.RecordBatch, error], error), total int) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	counts := make([]int, n)
	starts := make([]int, n)
	for i := range counts {
		counts[i] = rng.IntN(7) // some files are empty
		starts[i] = total
		total += counts[i]
	}
	return func(i int) (iter.Seq2[arrow.RecordBatch, error], error) {
		return func(yield func(arrow.RecordBatch, error) bool) {
			for k := range counts[i] {
				b := array.NewInt64Builder(mem)
				b.Append(int64(starts[i] + k))
				a := b.NewArray()
				b.Release()
				rec := array.NewRecordBatch(sc, []arrow.Array{a}, 1)
				a.Release()
				if !yield(rec, nil) {
					return
				}
			}
		}, nil
	}, total
}

// Batches come in file order whatever the read-ahead, and a consumer that
// stops early leaves nothing allocated.
func TestReadAheadKeepsOrderAndReleases(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for range 200 {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		n := 1 + rng.IntN(12)
		open, total := readAheadFiles(mem, rng, n)
		stopAt := total
		if rng.IntN(2) == 0 && total > 0 {
			stopAt = 1 + rng.IntN(total)
		}
		got := 0
		for rec, err := range readAhead(context.Background(), n, 1+rng.IntN(3), open) {
			if err != nil {
				t.Fatal(err)
			}
			if v := rec.Column(0).(*array.Int64).Value(0); v != int64(got) {
				t.Fatalf("batch %d holds %d", got, v)
			}
			rec.Release()
			got++
			if got == stopAt {
				break
			}
		}
		if got != stopAt {
			t.Fatalf("%d batches, want %d", got, stopAt)
		}
		mem.AssertSize(t, 0)
	}
}

// A file that cannot be opened ends the sequence with its error, after
// the files before it; a cancelled context ends it too.
func TestReadAheadStopsAtAnError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	open, _ := readAheadFiles(mem, rand.New(rand.NewPCG(1, 1)), 6)
	bad := errors.New("no such file")
	var seen []error
	rows := 0
	for rec, err := range readAhead(context.Background(), 6, 2, func(i int) (iter.Seq2[arrow.RecordBatch, error], error) {
		if i == 3 {
			return nil, bad
		}
		return open(i)
	}) {
		if err != nil {
			seen = append(seen, err)
			continue
		}
		rows++
		rec.Release()
	}
	if len(seen) != 1 || !errors.Is(seen[0], bad) {
		t.Fatalf("errors %v", seen)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var last error
	for rec, err := range readAhead(ctx, 6, 2, open) {
		if rec != nil {
			rec.Release()
		}
		last = err
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("cancelled: last error %v", last)
	}
}
