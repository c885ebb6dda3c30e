package parquet

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
)

// byteValue draws a value that stresses the bounds: empty, short, sharing
// an 8-byte prefix with different tails, longer than the column index
// keeps, or starting with 0xff bytes (no incrementable prefix).
func byteValue(r *rand.Rand) []byte {
	switch r.IntN(7) {
	case 0:
		return []byte{}
	case 1:
		return []byte(randString(r, 7))
	case 2:
		return append([]byte("prefix00"), randString(r, 5)...)
	case 3:
		return append([]byte("prefix00"), randString(r, 30)...)
	case 4:
		return bytes.Repeat([]byte{0xff}, 16+r.IntN(4))
	case 5:
		return append([]byte{0xff, 0xfe}, randString(r, 25)...)
	default:
		return []byte(randString(r, 40))
	}
}

// boundsBatches builds batches of four byte-array columns: "hi" (high
// cardinality, with a run of nulls long enough to fill pages), "lo" (a few
// distinct values, dictionary encoded), "bin" (binary) and "asc"
// (ascending, required), with an int column beside them.
func boundsBatches(t *testing.T, nBatches, rows int) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	sc := arrowSchema(t, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "hi", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "lo", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 4, Name: "asc", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 5, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	))
	r := rand.New(rand.NewPCG(7, 11))
	lows := make([][]byte, 12)
	for i := range lows {
		lows[i] = byteValue(r)
	}
	var recs []arrow.RecordBatch
	row := 0
	for range nBatches {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range rows {
			if row%10000 >= 3000 && row%10000 < 6500 {
				b.Field(0).AppendNull()
			} else {
				b.Field(0).(*array.StringBuilder).BinaryBuilder.Append(byteValue(r))
			}
			if r.IntN(10) == 0 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).BinaryBuilder.Append(lows[r.IntN(len(lows))])
			}
			if r.IntN(5) == 0 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.BinaryBuilder).Append(byteValue(r))
			}
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("key-%012d-", row) + randString(r, 20))
			b.Field(4).(*array.Int64Builder).Append(int64(row))
			row++
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	return sc, recs
}

// TestByteArrayColumnIndexHoldsEachPagesBounds: the column index of every
// byte-array column gives each page a lower bound that is its smallest
// value cut to 16 bytes and an upper bound at or above its largest (equal
// to it when short), marks the pages of nulls only, and claims an order
// only when the pages have it; each column chunk's statistics are its
// exact min and max. Checked against the values read back, page by page.
func TestByteArrayColumnIndexHoldsEachPagesBounds(t *testing.T) {
	sc, recs := boundsBatches(t, 4, 15000)
	_, data := writeFlat(t, map[string]string{
		PropPageRowLimit: "700", PropRowGroupBytes: "600000", PropDictPageBytes: "1000000",
	}, sc, recs)
	tbl := readBack(t, data)
	defer tbl.Release()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if rdr.NumRowGroups() < 3 {
		t.Fatalf("%d row groups; the test wants several", rdr.NumRowGroups())
	}
	pir := rdr.GetPageIndexReader()
	for c := 0; c < 4; c++ {
		col, err := array.Concatenate(tbl.Column(c).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		value := func(i int) []byte {
			if s, ok := col.(*array.String); ok {
				return []byte(s.Value(i))
			}
			return col.(*array.Binary).Value(i)
		}
		var rgStart int64
		ascending, nullPages := 0, 0
		for rg := 0; rg < rdr.NumRowGroups(); rg++ {
			rgRows := rdr.MetaData().RowGroup(rg).NumRows()
			rgr, err := pir.RowGroup(rg)
			if err != nil {
				t.Fatal(err)
			}
			ci, err := rgr.GetColumnIndex(c)
			if err != nil || ci == nil {
				t.Fatalf("column %d row group %d: no column index (%v)", c, rg, err)
			}
			oi, err := rgr.GetOffsetIndex(c)
			if err != nil {
				t.Fatal(err)
			}
			locs := oi.GetPageLocations()
			if (rg == 0 && len(locs) < 4) || len(locs) != len(ci.GetNullPages()) {
				t.Fatalf("column %d row group %d: %d pages, %d in the column index", c, rg, len(locs), len(ci.GetNullPages()))
			}
			var rgMin, rgMax []byte
			var pageMins, pageMaxs [][]byte
			for p, loc := range locs {
				end := rgRows
				if p+1 < len(locs) {
					end = locs[p+1].FirstRowIndex
				}
				var lo, hi []byte
				found, long := false, false
				for i := rgStart + loc.FirstRowIndex; i < rgStart+end; i++ {
					if col.IsNull(int(i)) {
						continue
					}
					v := value(int(i))
					long = long || len(v) > columnIndexLimit
					if !found || bytes.Compare(v, lo) < 0 {
						lo = v
					}
					if !found || bytes.Compare(v, hi) > 0 {
						hi = v
					}
					found = true
				}
				if ci.GetNullPages()[p] != !found {
					t.Fatalf("column %d rg %d page %d: null page %v, values found %v", c, rg, p, ci.GetNullPages()[p], found)
				}
				if !found {
					nullPages++
					continue
				}
				gotLo, gotHi := ci.GetMinValues()[p], ci.GetMaxValues()[p]
				if want := lo[:min(len(lo), columnIndexLimit)]; !bytes.Equal(gotLo, want) {
					t.Fatalf("column %d rg %d page %d: min %q, want %q", c, rg, p, gotLo, want)
				}
				if bytes.Compare(gotHi, hi) < 0 || (!long && !bytes.Equal(gotHi, hi)) {
					t.Fatalf("column %d rg %d page %d: max %q for values up to %q", c, rg, p, gotHi, hi)
				}
				if len(gotHi) > columnIndexLimit && !bytes.Equal(gotHi, hi) {
					t.Fatalf("column %d rg %d page %d: max of %d bytes is not the value itself", c, rg, p, len(gotHi))
				}
				pageMins, pageMaxs = append(pageMins, gotLo), append(pageMaxs, gotHi)
				if rgMin == nil || bytes.Compare(lo, rgMin) < 0 {
					rgMin = lo
				}
				if rgMax == nil || bytes.Compare(hi, rgMax) > 0 {
					rgMax = hi
				}
			}
			switch ci.GetBoundaryOrder() {
			case metadata.Ascending:
				ascending++
				for i := 1; i < len(pageMins); i++ {
					if bytes.Compare(pageMins[i-1], pageMins[i]) > 0 || bytes.Compare(pageMaxs[i-1], pageMaxs[i]) > 0 {
						t.Fatalf("column %d rg %d: ascending claimed, pages %d and %d are not", c, rg, i-1, i)
					}
				}
			case metadata.Descending:
				for i := 1; i < len(pageMins); i++ {
					if bytes.Compare(pageMins[i-1], pageMins[i]) < 0 || bytes.Compare(pageMaxs[i-1], pageMaxs[i]) < 0 {
						t.Fatalf("column %d rg %d: descending claimed, pages %d and %d are not", c, rg, i-1, i)
					}
				}
			}
			cc, err := rdr.MetaData().RowGroup(rg).ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			st, err := cc.Statistics()
			if err != nil || st == nil || !st.HasMinMax() {
				t.Fatalf("column %d rg %d: no chunk statistics (%v)", c, rg, err)
			}
			bst := st.(*metadata.ByteArrayStatistics)
			if !bytes.Equal(bst.Min(), rgMin) || !bytes.Equal(bst.Max(), rgMax) {
				t.Fatalf("column %d rg %d: chunk bounds %q..%q, want %q..%q", c, rg, bst.Min(), bst.Max(), rgMin, rgMax)
			}
			if st.NullCount() != countNulls(col, rgStart, rgStart+rgRows) {
				t.Fatalf("column %d rg %d: %d nulls in the statistics", c, rg, st.NullCount())
			}
			rgStart += rgRows
		}
		col.Release()
		switch {
		case c == 0 && nullPages == 0:
			t.Fatalf("column hi has no page of nulls only")
		case c == 3 && ascending != rdr.NumRowGroups():
			t.Fatalf("column asc is ascending in %d of %d row groups", ascending, rdr.NumRowGroups())
		}
	}
	if got := pq.Encodings.RLEDict; !hasEncoding(t, data, "lo", got) {
		t.Fatalf("column lo is not dictionary encoded")
	}
}

func countNulls(a arrow.Array, from, to int64) int64 {
	var n int64
	for i := from; i < to; i++ {
		if a.IsNull(int(i)) {
			n++
		}
	}
	return n
}

func hasEncoding(t *testing.T, data []byte, path string, enc pq.Encoding) bool {
	for _, pages := range chunkPages(t, data, path) {
		for _, p := range pages {
			if p.encoding == enc {
				return true
			}
		}
	}
	return false
}

func TestIndexMaxIncrementsTheLastByteThatCan(t *testing.T) {
	long := func(prefix string) []byte { return append([]byte(prefix), "tail-beyond-limit"...) }
	cases := []struct {
		in, want []byte
	}{
		{[]byte("short"), []byte("short")},
		{long("abcdefghijklmnop"), []byte("abcdefghijklmnoq")},
		{long("abcdefghijklmno\xff"), []byte("abcdefghijklmnp")},
		{append(bytes.Repeat([]byte{0xff}, 16), 1), append(bytes.Repeat([]byte{0xff}, 16), 1)},
	}
	for _, c := range cases {
		if got := indexMax(c.in); !bytes.Equal(got, c.want) || bytes.Compare(got, c.in) < 0 {
			t.Errorf("indexMax(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestStringRangeMatchesBytesCompare: the branch-free min and max equal a
// plain bytes.Compare scan on values built to tie on 8, 16 and more bytes,
// with nulls, on sliced arrays and at the end of the data buffer, and on
// chunks of values no longer than 8 bytes.
func TestStringRangeMatchesBytesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	stems := []string{"", "a", "ab\x00", "abcdefgh", "abcdefgh\x00", "abcdefghijklmnop", "abcdefghijklmnopq", "\xff\xff\xff\xff\xff\xff\xff\xff\xff"}
	var sc boundsScratch
	for round := range 300 {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		n := 1 + r.IntN(300)
		short := round%3 == 0 // values of at most 8 bytes, no nulls
		for range n {
			switch {
			case short && r.IntN(4) == 0:
				b.Append("abcdefgh")
			case short:
				b.Append(stems[r.IntN(3)] + randString(r, r.IntN(2)))
			case r.IntN(8) == 0:
				b.AppendNull()
			case r.IntN(2) == 0:
				s := stems[r.IntN(len(stems))]
				b.Append(s + randString(r, r.IntN(3)*r.IntN(30)))
			default:
				b.Append(stems[r.IntN(len(stems))])
			}
		}
		full := b.NewStringArray()
		b.Release()
		lo := r.IntN(n)
		arr := array.NewSlice(full, int64(lo), int64(n)).(*array.String)
		off := r.IntN(arr.Len())
		end := off + r.IntN(arr.Len()-off+1)
		var wantLo, wantHi []byte
		found := false
		for j := off; j < end; j++ {
			if arr.IsNull(j) {
				continue
			}
			v := []byte(arr.Value(j))
			if !found || bytes.Compare(v, wantLo) < 0 {
				wantLo = v
			}
			if !found || bytes.Compare(v, wantHi) > 0 {
				wantHi = v
			}
			found = true
		}
		gotLo, gotHi, ok := sc.stringRange(arr.ValueOffsets(), arr.ValueBytes(), arr.ValueOffsets()[0], arr, off, end)
		if ok != found || !bytes.Equal(gotLo, wantLo) || !bytes.Equal(gotHi, wantHi) {
			t.Fatalf("round %d rows [%d,%d): got %q..%q (%v), want %q..%q (%v)", round, off, end, gotLo, gotHi, ok, wantLo, wantHi, found)
		}
		arr.Release()
		full.Release()
	}
}

// TestColumnsEncodedInParallelGiveTheSameFile: a lone writer spreads its
// columns over goroutines (batches of 4,096 rows or more); the file is
// byte for byte the one written column after column, with bloom filters,
// 38-digit decimals, strings, nulls and several row groups.
func TestColumnsEncodedInParallelGiveTheSameFile(t *testing.T) {
	t.Parallel()
	sc, recs := bloomBatches(t, false, 3, 20000)
	props := map[string]string{PropRowGroupBytes: "400000"}
	for _, c := range []string{"id", "cat", "s", "dec"} {
		props[PropBloomEnabledPrefix+c] = "true"
	}
	opts := isolated(t, propOptions(t, props), 32<<20)
	_, parallel := writeFlatWith(t, opts, sc, recs)
	opts.serialColumns = true
	_, serial := writeFlatWith(t, opts, sc, recs)
	if !bytes.Equal(parallel, serial) {
		t.Fatalf("files differ: %d and %d bytes", len(parallel), len(serial))
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(parallel))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if rdr.NumRowGroups() < 2 || rdr.NumRows() != 60000 {
		t.Fatalf("%d row groups, %d rows", rdr.NumRowGroups(), rdr.NumRows())
	}
}

// A file's columns are spread over the cores other encoders leave free,
// never over more goroutines than columns, and not for small batches.
func TestColumnHelpers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ busy, procs, ncols, rows, want int }{
		{1, 8, 16, 4096, 7},    // a lone file takes every core
		{3, 8, 16, 100000, 5},  // the cores of other encoders stay theirs
		{64, 8, 16, 100000, 0}, // more encoders busy than cores: in turn
		{1, 8, 3, 4096, 2},     // no more helpers than columns to share
		{1, 8, 16, 4095, 0},    // a small batch stays on one goroutine
		{1, 1, 16, 100000, 0},  // one core
	} {
		if got := columnHelpers(c.busy, c.procs, c.ncols, c.rows); got != c.want {
			t.Errorf("%+v: %d helpers", c, got)
		}
	}
}
