package layout

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func testSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "cat", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
		}}},
		iceberg.NestedField{ID: 6, Name: "tags", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.String}},
	)
}

func fid(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
}

func TestParseOrder(t *testing.T) {
	sc := testSchema()
	so, err := ParseOrder([]string{"cat", "id DESC", "days(ts) asc nulls last", "bucket(16, id) DESC NULLS FIRST", "truncate(cat, 2)", "`s`.a"}, sc)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"cat ASC NULLS FIRST", "id DESC NULLS LAST", "days(ts) ASC NULLS LAST", "bucket(16, id) DESC NULLS FIRST", "truncate(2, cat) ASC NULLS FIRST", "s.a ASC NULLS FIRST"}
	if got := Describe(so, sc); !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if so.OrderID() == 0 {
		t.Error("a sorted order must not have the unsorted id 0")
	}
	if so, err := ParseOrder(nil, sc); err != nil || !so.IsUnsorted() {
		t.Errorf("no terms: %v %v", so, err)
	}
	for term, kind := range map[string]error{
		"nope":              errs.ErrValidation,
		"tags":              errs.ErrValidation,
		"s":                 errs.ErrValidation,
		"days(cat)":         errs.ErrValidation,
		"bucket(id)":        errs.ErrInvalidArgument,
		"frob(id)":          errs.ErrInvalidArgument,
		"bucket(0, id)":     errs.ErrInvalidArgument,
		"DESC":              errs.ErrValidation,
		"id DESC NULLS MID": errs.ErrValidation,
	} {
		if _, err := ParseOrder([]string{term}, sc); !errors.Is(err, kind) {
			t.Errorf("%q: err = %v, want %v", term, err, kind)
		}
	}
}

type trow struct {
	id  int64
	cat *string
	ts  *int64
	a   *int32
}

// refCompare is an independent comparator for rows under the order
// "cat ASC NULLS FIRST, days(ts) DESC NULLS LAST, s.a ASC NULLS LAST, id DESC".
func refCompare(x, y trow) int {
	if c := nullsCmp(x.cat == nil, y.cat == nil, true); c != 0 {
		return c
	}
	if x.cat != nil && *x.cat != *y.cat {
		if *x.cat < *y.cat {
			return -1
		}
		return 1
	}
	day := func(ts int64) int64 {
		d := ts / 86_400_000_000
		if ts%86_400_000_000 < 0 {
			d--
		}
		return d
	}
	if c := nullsCmp(x.ts == nil, y.ts == nil, false); c != 0 {
		return c
	}
	if x.ts != nil && day(*x.ts) != day(*y.ts) {
		if day(*x.ts) > day(*y.ts) {
			return -1
		}
		return 1
	}
	if c := nullsCmp(x.a == nil, y.a == nil, false); c != 0 {
		return c
	}
	if x.a != nil && *x.a != *y.a {
		if *x.a < *y.a {
			return -1
		}
		return 1
	}
	switch {
	case x.id > y.id:
		return -1
	case x.id < y.id:
		return 1
	}
	return 0
}

// nullsCmp orders a null before (first) or after a value; 0 when both or
// neither are null.
func nullsCmp(xNull, yNull, first bool) int {
	switch {
	case xNull == yNull:
		return 0
	case xNull == first:
		return -1
	}
	return 1
}

func TestSorterMatchesReference(t *testing.T) {
	sc := testSchema()
	so, err := ParseOrder([]string{"cat", "days(ts) DESC", "s.a NULLS LAST", "id DESC"}, sc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSorter(so, sc)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	aType := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: fid(5)})
	asch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: fid(1)},
		{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fid(2)},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true, Metadata: fid(3)},
		{Name: "s", Type: aType, Nullable: true, Metadata: fid(4)},
	}, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var all []trow
	var recs []arrow.RecordBatch
	for b := 0; b < 3; b++ {
		bld := array.NewRecordBuilder(mem, asch)
		for i := 0; i < 700; i++ {
			r := trow{id: int64(len(all))}
			bld.Field(0).(*array.Int64Builder).Append(r.id)
			if rng.IntN(6) == 0 {
				bld.Field(1).AppendNull()
			} else {
				c := string(rune('a' + rng.IntN(4)))
				r.cat = &c
				bld.Field(1).(*array.StringBuilder).Append(c)
			}
			if rng.IntN(5) == 0 {
				bld.Field(2).AppendNull()
			} else {
				ts := (rng.Int64N(10) - 5) * 86_400_000_000 / 2
				r.ts = &ts
				bld.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ts))
			}
			sb := bld.Field(3).(*array.StructBuilder)
			switch rng.IntN(4) {
			case 0: // null struct: its child reads as null
				sb.AppendNull()
			case 1:
				sb.Append(true)
				sb.FieldBuilder(0).AppendNull()
			default:
				a := int32(rng.IntN(3))
				r.a = &a
				sb.Append(true)
				sb.FieldBuilder(0).(*array.Int32Builder).Append(a)
			}
			all = append(all, r)
		}
		recs = append(recs, bld.NewRecordBatch())
		bld.Release()
	}
	out, err := s.Sort(context.Background(), recs, mem)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	want := slices.Clone(all)
	slices.SortStableFunc(want, refCompare)
	ids := out.Column(0).(*array.Int64)
	if ids.Len() != len(want) {
		t.Fatalf("%d rows, want %d", ids.Len(), len(want))
	}
	for i, r := range want {
		if ids.Value(i) != r.id {
			t.Fatalf("row %d: id %d, want %d", i, ids.Value(i), r.id)
		}
	}
}

func TestResolveDefaultsAndFallbacks(t *testing.T) {
	for _, c := range []struct {
		mode                string
		sorted, partitioned bool
		want                Distribution
	}{
		{"", true, false, Range}, {"", false, true, Hash}, {"", false, false, None}, {"", true, true, Range},
		{"range", false, false, None}, {"range", false, true, Range}, {"hash", false, false, None},
		{"HASH", true, true, Hash}, {"none", true, true, None},
	} {
		s, err := Resolve(map[string]string{PropDistributionMode: c.mode}, c.sorted, c.partitioned)
		if err != nil || s.Mode != c.want {
			t.Errorf("%+v: got %v %v", c, s.Mode, err)
		}
	}
	for _, props := range []map[string]string{
		{PropDistributionMode: "random"}, {PropFanout: "sometimes"}, {PropMaxOpenFiles: "0"}, {PropMaxBufferedBytes: "-3"},
	} {
		if _, err := Resolve(props, false, true); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%v: err = %v", props, err)
		}
	}
	s, err := Resolve(map[string]string{PropFanout: "true", PropMaxOpenFiles: "7", PropMaxBufferedBytes: "1000"}, false, true)
	if err != nil || !s.Fanout || s.MaxOpenFiles != 7 || s.MaxBufferedBytes != 1000 {
		t.Errorf("%+v %v", s, err)
	}
}

// NaN sorts above every number, as in Spark: last ascending, first
// descending, with nulls where the null order puts them.
func TestSorterPlacesNaNAsSpark(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "x", Type: iceberg.PrimitiveTypes.Float64})
	as := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fid(1)}}, nil)
	nan := math.NaN()
	in := []*float64{ptr(1), ptr(nan), nil, ptr(-2), ptr(nan), ptr(0)}
	for term, want := range map[string]string{
		"x ASC NULLS FIRST":  "null -2 0 1 NaN NaN",
		"x ASC NULLS LAST":   "-2 0 1 NaN NaN null",
		"x DESC NULLS FIRST": "null NaN NaN 1 0 -2",
		"x DESC NULLS LAST":  "NaN NaN 1 0 -2 null",
	} {
		so, err := ParseOrder([]string{term}, sc)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSorter(so, sc)
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewFloat64Builder(memory.DefaultAllocator)
		for _, v := range in {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(*v)
			}
		}
		col := b.NewArray()
		rec := array.NewRecordBatch(as, []arrow.Array{col}, int64(len(in)))
		out, err := s.Sort(context.Background(), []arrow.RecordBatch{rec}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		xs := out.Column(0).(*array.Float64)
		for i := range xs.Len() {
			if xs.IsNull(i) {
				got = append(got, "null")
			} else {
				got = append(got, strconv.FormatFloat(xs.Value(i), 'g', -1, 64))
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %v, want %s", term, got, want)
		}
		out.Release()
		rec.Release()
		col.Release()
		b.Release()
	}
}

func ptr(f float64) *float64 { return &f }

// ZOrderByteUtils' interleaving and ordered bytes, on values worked out by hand.
func TestZOrderBits(t *testing.T) {
	if got := interleave([][]byte{{0xFF}, {0x00}}, 2); got[0] != 0xAA || got[1] != 0xAA {
		t.Fatalf("interleave ff/00: %x", got)
	}
	// A shorter column is skipped once exhausted.
	if got := interleave([][]byte{{0x00, 0xFF}, {0xFF}}, 3); got[0] != 0x55 || got[1] != 0x55 || got[2] != 0xFF {
		t.Fatalf("interleave 00ff/ff: %x", got)
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{-1, 0, 1}, nil)
	b.AppendNull()
	a := b.NewArray()
	defer a.Release()
	word, err := orderedWord(a)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range a.Len() {
		got = append(got, fmt.Sprintf("%016x", word(i)))
	}
	want := []string{"7fffffffffffffff", "8000000000000000", "8000000000000001", "0000000000000000"}
	if !slices.Equal(got, want) {
		t.Fatalf("ordered longs %v, want %v", got, want)
	}
	s := make([]byte, 8)
	copyRunes(s, "abcdefgé") // é (2 bytes) does not fit whole
	if string(s) != "abcdefg\x00" {
		t.Fatalf("string bytes %q", s)
	}
}

// The word-at-a-time interleaving is ZOrderByteUtils' bit-at-a-time one,
// for every column count up to beyond its fast path.
func TestInterleaveWordsMatchesInterleave(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for range 2000 {
		k := 1 + rng.IntN(10)
		v := make([]uint64, k)
		cols := make([][]byte, k)
		for j := range v {
			switch rng.IntN(3) {
			case 0:
				v[j] = rng.Uint64()
			case 1:
				v[j] = uint64(rng.IntN(1000)) ^ 1<<63
			}
			cols[j] = binary.BigEndian.AppendUint64(nil, v[j])
		}
		want := interleave(cols, 8*k)
		out := make([]uint64, k)
		interleaveWords(v, out)
		var got []byte
		for _, w := range out {
			got = binary.BigEndian.AppendUint64(got, w)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("k=%d %x: got %x, want %x", k, v, got, want)
		}
	}
}

// sortZ orders rows as a stable sort of their keys' bytes, whether the
// keys differ in their first words, only in later ones, or not at all.
func TestSortZMatchesStableByteSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 300 {
		k := 1 + rng.IntN(5)
		n := rng.IntN(3000)
		shared := rng.IntN(k + 1) // leading words every row shares
		keys := make([]uint64, n*k)
		for i := range n {
			for w := range k {
				if w < shared {
					keys[i*k+w] = 42
				} else {
					keys[i*k+w] = uint64(rng.IntN(4)) // many ties
				}
			}
		}
		got := sortZ(keys, k, n)
		want := make([]int64, n)
		for i := range want {
			want[i] = int64(i)
		}
		slices.SortStableFunc(want, func(a, b int64) int {
			return slices.Compare(keys[int(a)*k:int(a+1)*k], keys[int(b)*k:int(b+1)*k])
		})
		var ids []int64
		for _, v := range got.(*array.Int32).Int32Values() {
			ids = append(ids, int64(v))
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("k=%d n=%d shared=%d: got %v, want %v", k, n, shared, ids, want)
		}
		got.Release()
	}
}
