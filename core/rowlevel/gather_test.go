package rowlevel

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// gatherSchema has a column of every kind copyRuns copies and two it hands
// to take (a list and a dictionary).
var gatherSchema = arrow.NewSchema([]arrow.Field{
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
	{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 3}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, Nullable: true},
}, nil)

func gatherBatch(t *testing.T, mem memory.Allocator, n int, rng *rand.Rand) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, gatherSchema)
	defer b.Release()
	for i := range n {
		null := rng.IntN(5) == 0
		for f := range gatherSchema.NumFields() {
			fb := b.Field(f)
			if null && f%2 == i%2 {
				fb.AppendNull()
				continue
			}
			switch x := fb.(type) {
			case *array.BooleanBuilder:
				x.Append(rng.IntN(2) == 0)
			case *array.Int32Builder:
				x.Append(rng.Int32())
			case *array.Int64Builder:
				x.Append(rng.Int64())
			case *array.Float64Builder:
				x.Append(rng.Float64())
			case *array.Date32Builder:
				x.Append(arrow.Date32(rng.IntN(20000)))
			case *array.TimestampBuilder:
				x.Append(arrow.Timestamp(rng.Int64N(1 << 50)))
			case *array.Decimal128Builder:
				x.Append(decimal128.FromI64(rng.Int64N(1 << 40)))
			case *array.FixedSizeBinaryBuilder:
				x.Append([]byte{byte(i), byte(i >> 8), 7})
			case *array.StringBuilder:
				x.Append(string(make([]byte, rng.IntN(12))) + "x")
			case *array.LargeStringBuilder:
				x.Append("v" + string(rune('a'+rng.IntN(26))))
			case *array.BinaryBuilder:
				x.Append(make([]byte, rng.IntN(5)))
			case *array.ListBuilder:
				x.Append(true)
				x.ValueBuilder().(*array.Int32Builder).Append(int32(i))
			case *array.BinaryDictionaryBuilder:
				if err := x.AppendString([]string{"p", "q", "r"}[rng.IntN(3)]); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("no generator for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// TestTakeRecordByRunsEqualsTake: the run copy gives what arrow's take
// gives, on sliced inputs with nulls, for long runs, single rows and the
// empty selection.
func TestTakeRecordByRunsEqualsTake(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := compute.WithAllocator(context.Background(), mem)
	rng := rand.New(rand.NewPCG(1, 2))
	full := gatherBatch(t, mem, 3000, rng)
	defer full.Release()
	for _, sliced := range []bool{false, true} {
		rec := full
		if sliced {
			rec = full.NewSlice(37, 2900)
		}
		n := int(rec.NumRows())
		for _, keepOneIn := range []int{1, 20, 1000, -1} {
			var idx []int32
			for i := range n {
				// Drop about one row in keepOneIn... except keepOneIn 1,
				// which keeps every third row (runs of one: strings and
				// decimals by runs, narrow values by take).
				if (keepOneIn == 1 && i%3 == 0) || (keepOneIn > 1 && rng.IntN(keepOneIn) != 0) {
					idx = append(idx, int32(i))
				}
			}
			if keepOneIn == -1 {
				// Random rows with repeats and short runs in any order,
				// as a merge gathers source rows for the target rows.
				for range n {
					r := rng.IntN(n)
					for k := range 1 + rng.IntN(3) {
						if r+k < n {
							idx = append(idx, int32(r+k))
						}
					}
				}
			}
			_, long := indexRuns(idx)
			if long != (keepOneIn > 1) {
				t.Fatalf("keep %d: long runs %v", keepOneIn, long)
			}
			got, err := takeRecord(ctx, rec, idx)
			if err != nil {
				t.Fatal(err)
			}
			for c := range int(rec.NumCols()) {
				ia := array.NewInt32Builder(mem)
				ia.AppendValues(idx, nil)
				ix := ia.NewInt32Array()
				want, err := compute.TakeArray(ctx, rec.Column(c), ix)
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(got.Column(c), want) || got.Column(c).NullN() != want.NullN() {
					t.Errorf("sliced %v keep %d column %s: run copy differs from take", sliced, keepOneIn, gatherSchema.Field(c).Name)
				}
				want.Release()
				ix.Release()
				ia.Release()
			}
			got.Release()
		}
		if sliced {
			rec.Release()
		}
	}
	empty, err := takeRecord(ctx, full, nil)
	if err != nil || empty.NumRows() != 0 {
		t.Fatalf("empty selection: %v", err)
	}
	empty.Release()
}

func TestIndexRuns(t *testing.T) {
	runs, long := indexRuns([]int32{0, 1, 2, 3, 7, 8, 9, 10, 11})
	if !long || len(runs) != 2 || runs[0] != (rowRun{0, 4}) || runs[1] != (rowRun{7, 12}) {
		t.Fatalf("%v %v", runs, long)
	}
	runs, _ = indexRuns([]int32{5, 6, 7, 8, 0, 1, 3, 3})
	if want := []rowRun{{5, 9}, {0, 2}, {3, 4}, {3, 4}}; !slices.Equal(runs, want) {
		t.Fatalf("any order and repeats: %v, want %v", runs, want)
	}
	if _, long := indexRuns([]int32{4, 2, 9, 1}); long {
		t.Fatal("runs of one row are not long")
	}
	if runs, long := indexRuns(nil); runs != nil || long {
		t.Fatal("no rows, no runs")
	}
}
