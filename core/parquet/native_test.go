package parquet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
)

// nativeBatches are columns that exercise the native encoder's paths:
// dictionaries of each kind (with nulls and empty strings), a dictionary
// that outgrows a small limit, long strings without one, floats with NaN
// and signed zeros, runs of nulls long enough to fill pages, booleans.
func nativeBatches(t *testing.T, batches, rows int) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	sc := arrowSchema(t, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 2, Name: "l", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "cat", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "mid", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "long", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 6, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 7, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 8, Name: "sparse", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 9, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 10, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 11, Name: "amt", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 12, Name: "wide", Type: iceberg.DecimalTypeOf(30, 3)},
		iceberg.NestedField{ID: 13, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
	))
	r := rand.New(rand.NewPCG(5, 6))
	recs := make([]arrow.RecordBatch, batches)
	n := 0
	for k := range recs {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range rows {
			n++
			if n%9 == 0 {
				b.Field(0).AppendNull()
			} else {
				b.Field(0).(*array.Int32Builder).Append(int32(r.IntN(40) - 20))
			}
			b.Field(1).(*array.Int64Builder).Append(int64(r.IntN(300)) * 1_000_003)
			switch v := r.IntN(12); v {
			case 0:
				b.Field(2).AppendNull()
			case 1:
				b.Field(2).(*array.StringBuilder).Append("")
			case 2, 3: // values of up to 7 bytes are their own key: "x" is not "x\x00"
				b.Field(2).(*array.StringBuilder).Append("x\x00"[:v-1])
			default:
				b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("cat-%d", v))
			}
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("mid-%05d", r.IntN(5000)))
			b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("a long value, longer than sixteen bytes %d", r.Uint64()))
			switch v := r.IntN(20); v {
			case 0:
				b.Field(5).(*array.Float64Builder).Append(math.NaN())
			case 1:
				b.Field(5).(*array.Float64Builder).Append(math.Copysign(0, -1))
			case 2:
				b.Field(5).AppendNull()
			default:
				b.Field(5).(*array.Float64Builder).Append(r.NormFloat64())
			}
			if (n/700)%3 == 0 { // a run of NaN only
				b.Field(6).(*array.Float32Builder).Append(float32(math.NaN()))
			} else {
				b.Field(6).(*array.Float32Builder).Append(float32(r.IntN(100)))
			}
			if (n/1500)%2 == 0 { // runs of nulls longer than a page
				b.Field(7).AppendNull()
			} else {
				b.Field(7).(*array.Int64Builder).Append(r.Int64N(1 << 40))
			}
			b.Field(8).(*array.BooleanBuilder).Append(r.IntN(3) == 0)
			b.Field(9).(*array.Date32Builder).Append(arrow.Date32(18000 + r.IntN(60)))
			b.Field(10).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r.IntN(2000) - 1000)))
			if n%7 == 0 {
				b.Field(11).AppendNull()
			} else {
				b.Field(11).(*array.Decimal128Builder).Append(decimal128.New(int64(r.IntN(5)-2), r.Uint64()))
			}
			b.Field(12).(*array.BinaryBuilder).Append([]byte{byte(r.IntN(4)), 0xff, byte(n)})
		}
		recs[k] = b.NewRecordBatch()
		b.Release()
	}
	return sc, recs
}

// boundCompare returns a function comparing row j of arr with a
// plain-encoded bound of physical type pt (Parquet's order for it), and
// whether row j is a value (not null, not NaN).
func boundCompare(t *testing.T, arr arrow.Array, pt pq.Type) (cmp func(j int, bound []byte) int, value func(j int) bool) {
	t.Helper()
	value = func(j int) bool { return arr.IsValid(j) }
	switch a := arr.(type) {
	case *array.Boolean:
		cmp = func(j int, b []byte) int { return int(b2byte(a.Value(j))) - int(b[0]) }
	case *array.Int32:
		cmp = func(j int, b []byte) int { return cmpOrdered(a.Value(j), int32(binary.LittleEndian.Uint32(b))) }
	case *array.Date32:
		cmp = func(j int, b []byte) int {
			return cmpOrdered(int32(a.Value(j)), int32(binary.LittleEndian.Uint32(b)))
		}
	case *array.Int64:
		cmp = func(j int, b []byte) int { return cmpOrdered(a.Value(j), int64(binary.LittleEndian.Uint64(b))) }
	case *array.Decimal128:
		if pt != pq.Types.Int32 {
			return nil, value // wide decimals have no column index
		}
		cmp = func(j int, b []byte) int {
			return cmpOrdered(int32(a.Value(j).LowBits()), int32(binary.LittleEndian.Uint32(b)))
		}
	case *array.Float64:
		value = func(j int) bool { return a.IsValid(j) && !math.IsNaN(a.Value(j)) }
		cmp = func(j int, b []byte) int {
			return cmpOrdered(a.Value(j), math.Float64frombits(binary.LittleEndian.Uint64(b)))
		}
	case *array.Float32:
		value = func(j int) bool { return a.IsValid(j) && !math.IsNaN(float64(a.Value(j))) }
		cmp = func(j int, b []byte) int {
			return cmpOrdered(a.Value(j), math.Float32frombits(binary.LittleEndian.Uint32(b)))
		}
	case *array.String:
		cmp = func(j int, b []byte) int { return bytes.Compare([]byte(a.Value(j)), b) }
	case *array.Binary:
		cmp = func(j int, b []byte) int { return bytes.Compare(a.Value(j), b) }
	default:
		t.Fatalf("no comparison for %s", arr.DataType())
	}
	return cmp, value
}

// TestNativePageIndexBoundsEachPage checks every page of every column chunk
// the native encoder writes against the rows it holds: the offset index
// gives each page's first row, the column index its null flag, null count
// and bounds, which must be the page's real min and max (byte arrays: a
// prefix at most 16 bytes long below the min, a value above the max);
// chunk statistics must be the chunk's. Small pages, several row groups and
// a dictionary that falls back to plain encoding take every path.
func TestNativePageIndexBoundsEachPage(t *testing.T) {
	sc, recs := nativeBatches(t, 3, 7000)
	opts, err := OptionsFromProperties(map[string]string{
		PropPageRowLimit: "700", PropRowGroupBytes: "300000", PropDictPageBytes: "20000",
	})
	if err != nil {
		t.Fatal(err)
	}
	fs := newMemFS()
	files := writeAll(t, fs, sc, opts, recs)
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	data := fs.bytes(t, files[0].Path)
	tbl := readBack(t, data)
	defer tbl.Release()
	if tbl.NumRows() != 21000 {
		t.Fatalf("%d rows read back", tbl.NumRows())
	}
	cols := make([]arrow.Array, sc.NumFields())
	for i := range cols {
		in := make([]arrow.Array, len(recs))
		for k, rec := range recs {
			in[k] = rec.Column(i)
		}
		cat, err := array.Concatenate(in, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		defer cat.Release()
		cols[i] = cat
		if got, want := columnJSON(t, tbl.Column(i).Data().Chunks()), columnJSON(t, []arrow.Array{cat}); got != want {
			t.Errorf("column %s differs after read back", sc.Field(i).Name)
		}
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if rdr.NumRowGroups() < 3 {
		t.Fatalf("%d row groups, want several", rdr.NumRowGroups())
	}
	pir := rdr.GetPageIndexReader()
	fallbacks := 0
	rgStart := 0
	for rg := 0; rg < rdr.NumRowGroups(); rg++ {
		rgRows := int(rdr.MetaData().RowGroup(rg).NumRows())
		rgr, err := pir.RowGroup(rg)
		if err != nil {
			t.Fatal(err)
		}
		for c := range sc.NumFields() {
			col := rdr.MetaData().Schema.Column(c)
			name := col.Path()
			cmp, value := boundCompare(t, cols[c], col.PhysicalType())
			ci, err := rgr.GetColumnIndex(c)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			oi, err := rgr.GetOffsetIndex(c)
			if err != nil || oi == nil {
				t.Fatalf("%s: offset index %v, %v", name, oi, err)
			}
			locs := oi.GetPageLocations()
			if locs[0].FirstRowIndex != 0 {
				t.Fatalf("%s: first page at row %d", name, locs[0].FirstRowIndex)
			}
			var anyNaNOnly bool
			for p, loc := range locs {
				start, end := rgStart+int(loc.FirstRowIndex), rgStart+rgRows
				if p+1 < len(locs) {
					end = rgStart + int(locs[p+1].FirstRowIndex)
				}
				if end-start > 700 || end <= start {
					t.Fatalf("%s page %d: rows %d..%d", name, p, start, end)
				}
				nulls, values := 0, 0
				for j := start; j < end; j++ {
					if cols[c].IsNull(j) {
						nulls++
					} else if value(j) {
						values++
					}
				}
				anyNaNOnly = anyNaNOnly || values == 0 && nulls < end-start
				if ci == nil || cmp == nil {
					continue
				}
				if got := ci.GetNullCounts()[p]; got != int64(nulls) {
					t.Errorf("%s page %d: null count %d, want %d", name, p, got, nulls)
				}
				if ci.GetNullPages()[p] != (values == 0) {
					t.Errorf("%s page %d: null page %v with %d values", name, p, ci.GetNullPages()[p], values)
					continue
				}
				if values == 0 {
					continue
				}
				lo, hi := ci.GetMinValues()[p], ci.GetMaxValues()[p]
				loSeen, hiSeen := false, false
				for j := start; j < end; j++ {
					if !value(j) {
						continue
					}
					if cmp(j, lo) < 0 || cmp(j, hi) > 0 {
						t.Fatalf("%s page %d: row %d outside the page's bounds", name, p, j)
					}
					loSeen = loSeen || cmp(j, lo) == 0
					hiSeen = hiSeen || cmp(j, hi) == 0
				}
				truncated := col.PhysicalType() == pq.Types.ByteArray && (len(lo) == columnIndexLimit || len(hi) <= columnIndexLimit && !hiSeen)
				if (!loSeen || !hiSeen) && !truncated {
					t.Errorf("%s page %d: bounds %x..%x are not the page's own values", name, p, lo, hi)
				}
			}
			if anyNaNOnly != (ci == nil) && cmp != nil {
				t.Errorf("%s: NaN-only page %v, column index %v", name, anyNaNOnly, ci != nil)
			}
			// Chunk statistics are the chunk's own.
			cc, err := rdr.MetaData().RowGroup(rg).ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			if name == "mid" {
				for _, e := range cc.Encodings() {
					if e == pq.Encodings.DeltaLengthByteArray {
						fallbacks++
					}
				}
			}
			st, err := cc.Statistics()
			if err != nil || st == nil {
				t.Fatalf("%s: statistics %v, %v", name, st, err)
			}
			nulls, values := 0, 0
			for j := rgStart; j < rgStart+rgRows; j++ {
				if cols[c].IsNull(j) {
					nulls++
				} else if value(j) {
					values++
				}
			}
			if st.NullCount() != int64(nulls) {
				t.Errorf("%s: chunk null count %d, want %d", name, st.NullCount(), nulls)
			}
			if cmp == nil || values == 0 {
				continue
			}
			if !st.HasMinMax() {
				t.Fatalf("%s: no chunk bounds", name)
			}
			for j := rgStart; j < rgStart+rgRows; j++ {
				if value(j) && (cmp(j, st.EncodeMin()) < 0 || cmp(j, st.EncodeMax()) > 0) {
					t.Fatalf("%s: row %d outside the chunk's statistics", name, j)
				}
			}
		}
		rgStart += rgRows
	}
	if fallbacks == 0 {
		t.Error("the mid column never fell back from its dictionary")
	}
}

// poisonAllocator zeroes each buffer it frees, as a Recycler's reuse would
// overwrite it: a bound still pointing into a freed buffer turns into
// zero bytes, below every value written.
type poisonAllocator struct{ memory.Allocator }

func (p poisonAllocator) Free(b []byte) {
	all := b[:cap(b)]
	for i := range all {
		all[i] = 0
	}
	p.Allocator.Free(b)
}

// KeepsNoInput's promise for the native encoder: once a batch is encoded
// and released, nothing of the file depends on its buffers. Batches whose
// buffers are poisoned as they are freed give the same data, bounds and
// metrics as the batches they copy.
func TestNativeKeepsNothingOfAWrittenBatch(t *testing.T) {
	flat := encoderCase{"native", true}
	sc, recs := flat.batches(t, 6, 2000, 31)
	if !KeepsNoInput(sc, Options{}) {
		t.Fatal("the native encoder's schema does not keep no input")
	}
	var names []string
	for _, f := range sc.Fields() {
		names = append(names, f.Name)
	}
	for _, noDict := range [][]string{nil, names} {
		keepsNothing(t, sc, recs, Options{RowGroupBytes: 64 << 10, PageRowLimit: 300, NoDictionary: noDict})
	}
}

func keepsNothing(t *testing.T, sc *arrow.Schema, recs []arrow.RecordBatch, opts Options) {
	t.Helper()
	poison := poisonAllocator{memory.NewGoAllocator()}
	fs := newMemFS()
	want := writeAll(t, fs, sc, opts, recs)[0]
	w := NewWriter(t.Context(), fs, sc, opts, pathGen("mem://poisoned"))
	for _, rec := range recs {
		cols := make([]arrow.Array, rec.NumCols())
		for i, c := range rec.Columns() {
			var err error
			if cols[i], err = array.Concatenate([]arrow.Array{c}, poison); err != nil {
				t.Fatal(err)
			}
		}
		cp := array.NewRecordBatch(sc, cols, rec.NumRows())
		for _, c := range cols {
			c.Release()
		}
		if err := w.Write(cp); err != nil {
			t.Fatal(err)
		}
		cp.Release() // the writer's reference is the last
	}
	files, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := files[0]
	if !reflect.DeepEqual(got.Lower, want.Lower) || !reflect.DeepEqual(got.Upper, want.Upper) ||
		!reflect.DeepEqual(got.NullCounts, want.NullCounts) || len(got.SplitOffsets) < 2 {
		t.Fatalf("dictionary off for %d columns: metrics differ from the unpoisoned write (row groups %d)", len(opts.NoDictionary), len(got.SplitOffsets))
	}
	tbl := readBack(t, fs.bytes(t, got.Path))
	defer tbl.Release()
	for i, f := range sc.Fields() {
		var in []arrow.Array
		for _, rec := range recs {
			in = append(in, rec.Column(i))
		}
		if columnJSON(t, in) != columnJSON(t, tbl.Column(i).Data().Chunks()) {
			t.Errorf("dictionary off for %d columns: column %s differs after its batches' buffers were poisoned", len(opts.NoDictionary), f.Name)
		}
	}
}

// TestDictionaryIndexesStrings checks the dictionary's inlined probes
// (values of up to 7 bytes keyed by their bytes, 8 to 32 bytes by
// wordsKey) against insertBytes: every value of every length from 0 to
// 40 bytes, repeated in random order, values that share their first and
// last words, and short values at the end of Arrow's data buffer (too
// close to its end to be loaded 8 bytes at once), must each get one
// index whose entry is the value.
func TestDictionaryIndexesStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	var distinct []string
	for n := range 41 {
		for range 3 {
			b := make([]byte, n)
			for k := range b {
				b[k] = byte(r.IntN(4)) // few symbols: many near-equal values
			}
			distinct = append(distinct, string(b))
		}
	}
	// Same first and last 8 bytes, different middles.
	distinct = append(distinct, "abcdefgh-1-12345678", "abcdefgh-2-12345678", "abcdefgh0123456789abcdef12345678",
		"abcdefgh0123456789abcdee12345678")
	for _, tail := range [][]string{nil, {"x"}, {"xy", ""}, {"abcdefg"}} {
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		var want []string
		for range 5000 {
			v := distinct[r.IntN(len(distinct))]
			sb.Append(v)
			want = append(want, v)
		}
		for _, v := range tail {
			sb.Append(v)
			want = append(want, v)
		}
		a := sb.NewStringArray()
		sb.Release()
		c := &nativeColumn{kind: kBytes, dict: newNativeDict(kBytes, 0), dictOn: true, offs: []uint32{0}}
		for off := 0; off < len(want); off += dictChunkRows {
			end := min(len(want), off+dictChunkRows)
			if err := addBytes(c, a.ValueOffsets(), a.ValueBytes(), a, off, end, 0, &nativeScratch{}); err != nil {
				t.Fatal(err)
			}
		}
		a.Release()
		if len(c.idx) != len(want) {
			t.Fatalf("%d indexes for %d values", len(c.idx), len(want))
		}
		index := map[string]int32{}
		for j, k := range c.idx {
			if got := string(c.dict.entry(k)); got != want[j] {
				t.Fatalf("value %d: index %d holds %q, want %q", j, k, got, want[j])
			}
			if prev, ok := index[want[j]]; ok && prev != k {
				t.Fatalf("%q has indexes %d and %d", want[j], prev, k)
			}
			index[want[j]] = k
		}
		if c.dict.len() != len(index) {
			t.Fatalf("dictionary of %d entries for %d distinct values", c.dict.len(), len(index))
		}
	}
}

// TestDictionaryIndexesInts checks the direct table of integer
// dictionaries: values whose range grows (the table is rebuilt around the
// entries it has), a span too wide for it (the hash table takes over with
// the entries made so far), and the ends of the int64 range.
func TestDictionaryIndexesInts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	cases := map[string][]int64{}
	var grow []int64
	for _, span := range []int64{10, 3000, 40000} { // the range widens twice
		for range 3000 {
			grow = append(grow, 1000+r.Int64N(span))
		}
	}
	cases["growing"] = grow
	var wide []int64
	for range 3000 {
		wide = append(wide, r.Int64N(500))
	}
	for range 3000 {
		wide = append(wide, r.Int64N(1<<20)) // past directSpan, after 500 entries
	}
	cases["too wide"] = wide
	var ends []int64
	for range 3000 {
		ends = append(ends, math.MaxInt64-r.Int64N(100))
	}
	for range 3000 {
		ends = append(ends, math.MinInt64+r.Int64N(100))
	}
	cases["int64 ends"] = ends
	var negative []int64
	for range 5000 {
		negative = append(negative, -r.Int64N(2000)-1)
	}
	cases["negative"] = negative
	for name, want := range cases {
		for _, width := range []int{4, 8} {
			kind := kInt64
			if width == 4 {
				kind = kInt32
				if name == "int64 ends" {
					continue
				}
			}
			c := &nativeColumn{kind: kind, width: width, dict: newNativeDict(kind, width), dictOn: true}
			for off := 0; off < len(want); off += dictChunkRows {
				end := min(len(want), off+dictChunkRows)
				var err error
				if width == 4 {
					v := make([]int32, 0, end-off)
					for _, x := range want[off:end] {
						v = append(v, int32(x))
					}
					err = addFixedWidth(c, v, nil, off, 0, &nativeScratch{})
				} else {
					err = addFixedWidth(c, want[off:end], nil, off, 0, &nativeScratch{})
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if len(c.idx) != len(want) {
				t.Fatalf("%s/%d: %d indexes for %d values", name, width, len(c.idx), len(want))
			}
			index := map[int64]int32{}
			for j, k := range c.idx {
				e := c.dict.entry(k)
				got := int64(int32(binary.LittleEndian.Uint32(e)))
				if width == 8 {
					got = int64(binary.LittleEndian.Uint64(e))
				}
				if got != want[j] {
					t.Fatalf("%s/%d: value %d: index %d holds %d, want %d", name, width, j, k, got, want[j])
				}
				if prev, ok := index[want[j]]; ok && prev != k {
					t.Fatalf("%s/%d: %d has indexes %d and %d", name, width, want[j], prev, k)
				}
				index[want[j]] = k
			}
			if c.dict.len() != len(index) {
				t.Fatalf("%s/%d: dictionary of %d entries for %d distinct values", name, width, c.dict.len(), len(index))
			}
			if off := c.dict.directOff; off != (name == "too wide" || name == "int64 ends") {
				t.Errorf("%s/%d: direct table off = %v", name, width, off)
			}
		}
	}
}

// TestDictionaryTinyTable checks the one-probe table of short strings: it
// turns itself off past tinyMax values with the dictionary still right,
// and a column with nulls goes through it value by value.
func TestDictionaryTinyTable(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	// Values equal in their first words, or but for trailing zero bytes.
	many := []string{"0123456789abcdef-x", "0123456789abcdef-y", "ab", "ab\x00", "", "\x00",
		"0123456789abcdef01234567", "0123456789abcdef01234568", "01234567", "01234567\x00"}
	for len(many) < tinyMax+50 {
		b := make([]byte, r.IntN(25))
		for k := range b {
			b[k] = byte('a' + r.IntN(3))
		}
		many = append(many, string(b))
	}
	for _, tc := range []struct {
		name     string
		distinct []string
		nullRate int // one row in nullRate is null; 0: none
		off      bool
	}{
		{"few", many[:20], 0, false},
		{"few with nulls", many[:20], 4, false},
		{"many", many, 0, true},
		{"many with nulls", many, 3, true},
	} {
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		var want []string // the valid values, in order
		for range 8000 {
			if tc.nullRate > 0 && r.IntN(tc.nullRate) == 0 {
				sb.AppendNull()
				continue
			}
			v := tc.distinct[r.IntN(len(tc.distinct))]
			sb.Append(v)
			want = append(want, v)
		}
		a := sb.NewStringArray()
		sb.Release()
		c := &nativeColumn{kind: kBytes, dict: newNativeDict(kBytes, 0), dictOn: true, offs: []uint32{0}}
		for off := 0; off < a.Len(); off += dictChunkRows {
			end := min(a.Len(), off+dictChunkRows)
			nulls := 0
			for j := off; j < end; j++ {
				if a.IsNull(j) {
					nulls++
				}
			}
			if err := addBytes(c, a.ValueOffsets(), a.ValueBytes(), a, off, end, nulls, &nativeScratch{}); err != nil {
				t.Fatal(err)
			}
		}
		a.Release()
		if len(c.idx) != len(want) {
			t.Fatalf("%s: %d indexes for %d values", tc.name, len(c.idx), len(want))
		}
		index := map[string]int32{}
		for j, k := range c.idx {
			if got := string(c.dict.entry(k)); got != want[j] {
				t.Fatalf("%s: value %d: index %d holds %q, want %q", tc.name, j, k, got, want[j])
			}
			if prev, ok := index[want[j]]; ok && prev != k {
				t.Fatalf("%s: %q has indexes %d and %d", tc.name, want[j], prev, k)
			}
			index[want[j]] = k
		}
		if c.dict.len() != len(index) {
			t.Fatalf("%s: dictionary of %d entries for %d distinct values", tc.name, c.dict.len(), len(index))
		}
		if c.dict.tiny.off != tc.off {
			t.Errorf("%s: tiny table off = %v, want %v", tc.name, c.dict.tiny.off, tc.off)
		}
		if !tc.off && c.dict.tiny.count != len(index) {
			t.Errorf("%s: tiny table holds %d values, the dictionary %d", tc.name, c.dict.tiny.count, len(index))
		}
	}
}

// TestDictionaryTinyTableLengths: an entry of the one-probe table with the
// same words as a value but another length is not that value, also where
// the value's probe starts (the hash mixes the length in, so the test puts
// it there).
func TestDictionaryTinyTableLengths(t *testing.T) {
	buf := make([]byte, 32)
	copy(buf, "ab") // "ab", and "ab\x00" is buf[:3]
	for _, nulls := range []int{0, 1} {
		d := newNativeDict(kBytes, 0)
		d.tiny.slots = make([]tinyEntry, tinySlots)
		a, b, c, _ := tinyKey(buf, 2)
		_, _, _, s := tinyKey(buf, 3)
		d.tiny.slots[s%tinySlots] = tinyEntry{a: a, b: b, c: c, n: 2 + 1, k: 77} // "ab" as entry 77
		d.tiny.count = 1
		col := &nativeColumn{kind: kBytes, dict: d, dictOn: true, offs: []uint32{0}}
		offs := []int32{0, 3}
		var arr arrow.Array
		if nulls > 0 {
			sb := array.NewStringBuilder(memory.DefaultAllocator)
			sb.Append("ab\x00")
			sb.AppendNull()
			arr = sb.NewStringArray()
			sb.Release()
			offs = append(offs, 3)
		}
		addDictBytes(col, offs, buf, arr, 0, len(offs)-1, nulls)
		if len(col.idx) != 1 || col.idx[0] == 77 || string(d.entry(col.idx[0])) != "ab\x00" {
			t.Fatalf("nulls %d: \"ab\\x00\" got indexes %v (77 is \"ab\")", nulls, col.idx)
		}
	}
}

// TestRangeOfIntegers checks the two-chain min/max of integer values
// against a plain loop, for every length up to 9 (odd and even tails),
// with the extremes of each type at every position.
func TestRangeOfIntegers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	check := func(t *testing.T, vals []int64) {
		t.Helper()
		lo, hi, ok := rangeOf(vals)
		if len(vals) == 0 {
			if ok {
				t.Fatalf("rangeOf of nothing says ok")
			}
			return
		}
		wantLo, wantHi := vals[0], vals[0]
		for _, v := range vals {
			wantLo, wantHi = min(wantLo, v), max(wantHi, v)
		}
		if !ok || lo != wantLo || hi != wantHi {
			t.Fatalf("rangeOf(%v) = %d, %d, %v; want %d, %d", vals, lo, hi, ok, wantLo, wantHi)
		}
		v32 := make([]int32, len(vals))
		for i, v := range vals {
			v32[i] = int32(v)
		}
		lo32, hi32, _ := rangeOf(v32)
		wlo, whi := v32[0], v32[0]
		for _, v := range v32 {
			wlo, whi = min(wlo, v), max(whi, v)
		}
		if lo32 != wlo || hi32 != whi {
			t.Fatalf("rangeOf(%v) = %d, %d; want %d, %d", v32, lo32, hi32, wlo, whi)
		}
	}
	for n := range 10 {
		for pos := range n {
			for _, extreme := range []int64{math.MinInt64, math.MaxInt64, math.MinInt32, math.MaxInt32} {
				vals := make([]int64, n)
				for i := range vals {
					vals[i] = r.Int64N(1000) - 500
				}
				vals[pos] = extreme
				check(t, vals)
			}
		}
		if n == 0 {
			check(t, nil)
		}
	}
}

// TestNativeEncodesWhileARowGroupIsWrittenOut: a finished row group is
// written to the file on a goroutine of its own, so while the file's
// writes are held the Writer goes on taking batches for the next row
// group. Written in line, it took no more than its queue holds; a stream
// then piled up at the writers of every file that reached its row group
// size at that moment. Once the writes go through, the file is the one
// written without the hold, byte for byte.
func TestNativeEncodesWhileARowGroupIsWrittenOut(t *testing.T) {
	sc, recs := nativeBatches(t, 60, 500)
	opts := Options{RowGroupBytes: 512 << 10}
	ref := newMemFS()
	refFiles := writeAll(t, ref, sc, opts, recs)
	rdr, err := file.NewParquetReader(bytes.NewReader(ref.bytes(t, refFiles[0].Path)))
	if err != nil {
		t.Fatal(err)
	}
	// The first row group outgrows the file's write buffer, so it reaches
	// the file while it is written out; the second has room for more
	// batches than the queue.
	if len(refFiles) != 1 || rdr.NumRowGroups() < 3 || refFiles[0].SplitOffsets[1] < 4+bufferBytes || rdr.MetaData().RowGroup(1).NumRows() < 8*500 {
		t.Fatalf("%d files, row groups at %v, the second of %d rows: want one file, a first row group over %d bytes and a second of 8 batches or more",
			len(refFiles), refFiles[0].SplitOffsets, rdr.MetaData().RowGroup(1).NumRows(), bufferBytes)
	}
	held := rdr.MetaData().RowGroup(0).NumRows()
	rdr.Close()
	writeHeldBack(t, sc, recs, opts, ref, refFiles, 0, held)
}

// TestNativeRollsToTheNextFileWhileOneIsFinished: a file that reached its
// target size is finished (its last row group, page index and footer) on
// a goroutine of its own while the Writer goes on with the next file.
func TestNativeRollsToTheNextFileWhileOneIsFinished(t *testing.T) {
	sc, recs := nativeBatches(t, 40, 500)
	opts := Options{RowGroupBytes: 100 << 10, TargetFileSize: 300 << 10}
	ref := newMemFS()
	refFiles := writeAll(t, ref, sc, opts, recs)
	if len(refFiles) < 3 || refFiles[1].Rows < 8*500 || len(refFiles[0].SplitOffsets) < 2 {
		t.Fatalf("%d files, the second of %d rows, the first of %d row groups: want the second to hold 8 batches or more",
			len(refFiles), refFiles[1].Rows, len(refFiles[0].SplitOffsets))
	}
	// Held from the first file's last row group on: what finishing it writes.
	first := refFiles[0].SplitOffsets
	writeHeldBack(t, sc, recs, opts, ref, refFiles, int(first[len(first)-1]), refFiles[0].Rows)
}

// writeHeldBack writes recs with opts to files whose writes past after
// bytes are held from the start. A Writer that waited for the held writes
// would take the batches of the first heldRows rows, one more in hand and
// queueLen queued; it must take more before they go through. The files
// must then be refFiles (in ref), byte for byte.
func writeHeldBack(t *testing.T, sc *arrow.Schema, recs []arrow.RecordBatch, opts Options, ref *memFS, refFiles []File, after int, heldRows int64) {
	t.Helper()
	perBatch := recs[0].NumRows()
	enough := (heldRows+perBatch-1)/perBatch + 1 + queueLen + 1
	fs := newMemFS()
	fs.gate, fs.gated, fs.gateAfter = make(chan struct{}), make(chan struct{}), after
	w := NewWriter(t.Context(), fs, sc, opts, pathGen("mem://t"))
	var accepted atomic.Int64
	wrote := make(chan error, 1)
	go func() {
		for _, rec := range recs {
			if err := w.Write(rec); err != nil {
				wrote <- err
				return
			}
			accepted.Add(1)
		}
		wrote <- nil
	}()
	for deadline := time.Now().Add(hangBound); accepted.Load() < enough; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			close(fs.gate)
			t.Fatalf("%d batches taken while the writes were held, want %d: the encoder waited for the file", accepted.Load(), enough)
		}
	}
	select {
	case <-fs.gated:
	case <-time.After(hangBound):
		t.Fatal("no write was held")
	}
	close(fs.gate)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	files, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(refFiles) {
		t.Fatalf("%d files, want %d", len(files), len(refFiles))
	}
	for i, f := range files {
		want := ref.bytes(t, refFiles[i].Path)
		if got := fs.bytes(t, f.Path); !bytes.Equal(got, want) {
			t.Fatalf("file %d: %d bytes that differ from the %d written without the hold", i, len(got), len(want))
		}
		if f.Size != refFiles[i].Size || f.Rows != refFiles[i].Rows || !reflect.DeepEqual(f.SplitOffsets, refFiles[i].SplitOffsets) {
			t.Fatalf("file %d: %d bytes, %d rows, row groups at %v; want %d, %d, %v", i, f.Size, f.Rows, f.SplitOffsets,
				refFiles[i].Size, refFiles[i].Rows, refFiles[i].SplitOffsets)
		}
	}
}
