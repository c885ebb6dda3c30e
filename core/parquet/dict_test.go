package parquet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

// TestProjectDistinctSaturates: on 16,384 rows drawn uniformly from K
// values the projection to a row group of 4M rows lands near the K(1 -
// (1-1/K)^rows) such a row group holds, where a line through the second
// half's rate of new values projects up to millions; keys that keep coming
// in order (sorted, or all distinct) still project along the line.
func TestProjectDistinctSaturates(t *testing.T) {
	const n, rows = dictSampleMax, 4 << 20
	rng := rand.New(rand.NewPCG(3, 5))
	set := newDistinctSet(n)
	project := func(vals []int64) float64 {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(vals, nil)
		arr := b.NewInt64Array()
		defer arr.Release()
		d1, d, _, _ := distinctHalves(set, arr, n)
		return projectDistinct(d1, d, n, rows)
	}
	for _, k := range []int{3, 500, 10000, 60000, 200000} {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = rng.Int64N(int64(k))
		}
		want := float64(k) * (1 - math.Pow(1-1/float64(k), rows))
		if got := project(vals); math.Abs(got-want) > 0.2*want {
			t.Errorf("%d uniform values: projected %.0f distinct in %d rows, want about %.0f", k, got, rows, want)
		}
	}
	sorted := make([]int64, n)
	for i := range sorted {
		sorted[i] = int64(i / 4) // lineitem's l_orderkey: new values at a steady rate
	}
	if got, want := project(sorted), float64(rows/4); got < want {
		t.Errorf("sorted keys: projected %.0f distinct in %d rows, want at least %.0f", got, rows, want)
	}
	unique := make([]int64, n)
	for i := range unique {
		unique[i] = rng.Int64()
	}
	if got := project(unique); got < rows*0.99 {
		t.Errorf("distinct keys: projected %.0f distinct in %d rows, want about %d", got, rows, rows)
	}
}

// TestDictionaryDecisionOnLineitem: on the first batch of lineitem-like
// data, dictionaries stay on for columns of few values (l_suppkey's 10,000
// among them, which a straight-line projection from 16,384 rows turned
// off) and go off for the keys and comments that would overflow a 2 MB
// dictionary page, and for l_partkey, whose 200,000 values would fit it
// but exceed dictMaxEntries.
func TestDictionaryDecisionOnLineitem(t *testing.T) {
	_, recs := lineitemBatches(t)
	r, err := Options{}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	got := noDictionaryColumns(recs[0].NewSlice(0, dictSampleMax), r)
	if want := []string{"l_orderkey", "l_partkey", "l_extendedprice", "l_comment"}; !slices.Equal(got, want) {
		t.Errorf("dictionary off for %v, want %v", got, want)
	}
}
