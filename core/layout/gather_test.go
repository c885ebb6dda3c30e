package layout

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Rows owns its batches: gathered rows (across chunked columns, decimals
// with nulls read across chunks too, a list column joined once) are the rows at the indices, and
// nothing is left allocated once everything is released.
func TestRowsGatherOwnedBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []arrow.RecordBatch
	var want []int64 // the i of each row, which every other column derives from
	for range 5 {
		b := array.NewRecordBuilder(mem, sc)
		for range rng.IntN(40) { // some batches are empty
			v := int64(len(want))
			want = append(want, v)
			b.Field(0).(*array.Int64Builder).Append(v)
			b.Field(1).(*array.StringBuilder).Append(string(rune('a' + v%26)))
			if v%7 == 3 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(v * 3))
			}
			lb := b.Field(3).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.StringBuilder).Append(string(rune('A' + v%26)))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	rows, err := NewRows(recs, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Release()
	n := len(want)
	// In order, a batch at a time: every row once, empty batches skipped.
	for lo := int64(0); lo < int64(n); {
		piece := rows.InOrder(lo, int64(n))
		if piece.NumRows() == 0 {
			t.Fatalf("row %d: empty piece", lo)
		}
		for k := range int(piece.NumRows()) {
			if v := piece.Column(0).(*array.Int64).Value(k); v != lo+int64(k) {
				t.Fatalf("in order, row %d holds %d", lo+int64(k), v)
			}
		}
		lo += piece.NumRows()
		piece.Release()
	}
	perm := rng.Perm(n)
	idx := make([]int64, n)
	for i, p := range perm {
		idx[i] = int64(p)
	}
	ia := indexArray(idx)
	defer ia.Release()
	out, err := rows.Gather(context.Background(), ia, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	// sort_indices gives uint64 row numbers: the same rows.
	ub := array.NewUint64Builder(mem)
	for _, v := range idx {
		ub.Append(uint64(v))
	}
	ua := ub.NewArray()
	ub.Release()
	defer ua.Release()
	again, err := rows.Gather(context.Background(), ua, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Release()
	if !array.RecordEqual(out, again) {
		t.Fatal("gathered by uint64 row numbers: other rows")
	}
	for r := range n {
		v := idx[r]
		if got := out.Column(0).(*array.Int64).Value(r); got != v {
			t.Fatalf("row %d: i %d, want %d", r, got, v)
		}
		if got := out.Column(1).(*array.String).Value(r); got != string(rune('a'+v%26)) {
			t.Fatalf("row %d: s %q", r, got)
		}
		d := out.Column(2).(*array.Decimal128)
		if d.IsNull(r) != (v%7 == 3) || d.IsValid(r) && d.Value(r) != decimal128.FromI64(v*3) {
			t.Fatalf("row %d (i %d): d %v null %v", r, v, d.Value(r), d.IsNull(r))
		}
		l := out.Column(3).(*array.List)
		lo, _ := l.ValueOffsets(r)
		if got := l.ListValues().(*array.String).Value(int(lo)); got != string(rune('A'+v%26)) {
			t.Fatalf("row %d: l %q", r, got)
		}
	}
}
