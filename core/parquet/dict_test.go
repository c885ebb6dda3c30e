package parquet

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestDistinctHalvesCountsLikeAMap: the open-addressing set gives the same
// distinct counts (first half, all n rows) and distinct string bytes as a
// Go map, with nulls, key 0 and the empty string among the values.
func TestDistinctHalvesCountsLikeAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, card := range []int{1, 3, 500, 20000, 1 << 30} {
		n := 40000
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for range n {
			if rng.IntN(10) == 0 {
				ib.AppendNull()
				sb.AppendNull()
				continue
			}
			v := rng.Int64N(int64(card)) - int64(card)/2 // includes 0 and negatives
			ib.Append(v)
			if v == 0 {
				sb.Append("")
			} else {
				sb.Append(fmt.Sprintf("v%d", v))
			}
		}
		ints, strs := ib.NewInt64Array(), sb.NewStringArray()
		half := n / 3 * 2 // look at fewer rows than the arrays hold

		wantInts := map[int64]bool{}
		wantStrs := map[string]bool{}
		var wantD1Int, wantD1Str, wantBytes int
		for i := range half {
			if i == half/2 {
				wantD1Int, wantD1Str = len(wantInts), len(wantStrs)
			}
			if ints.IsNull(i) {
				continue
			}
			wantInts[ints.Value(i)] = true
			if s := strs.Value(i); !wantStrs[s] {
				wantStrs[s] = true
				wantBytes += len(s)
			}
		}

		set := newDistinctSet(half)
		d1, d, width, ok := distinctHalves(set, ints, half)
		if !ok || d1 != wantD1Int || d != len(wantInts) || width != 8 {
			t.Errorf("card %d ints: got %d/%d width %v, want %d/%d width 8", card, d1, d, width, wantD1Int, len(wantInts))
		}
		d1, d, width, ok = distinctHalves(set, strs, half) // the same set, reused
		wantWidth := 4 + float64(wantBytes)/float64(max(len(wantStrs), 1))
		if !ok || d1 != wantD1Str || d != len(wantStrs) || width != wantWidth {
			t.Errorf("card %d strings: got %d/%d width %v, want %d/%d width %v", card, d1, d, width, wantD1Str, len(wantStrs), wantWidth)
		}
		ints.Release()
		strs.Release()
	}
}

// BenchmarkNoDictionaryColumns is the decision on the first batch of the
// lineitem-like data (16 columns).
func BenchmarkNoDictionaryColumns(b *testing.B) {
	_, recs := lineitemBatches(b)
	rec := recs[0]
	r, err := Options{}.resolve()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		noDictionaryColumns(rec, r)
	}
}
