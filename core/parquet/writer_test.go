package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func allTypesBatches(t testing.TB, nBatches, rows int, seed uint64) (*arrow.Schema, []arrow.RecordBatch) {
	sc := arrowSchema(t, allTypesSchema())
	r := rand.New(rand.NewPCG(seed, 7))
	recs := make([]arrow.RecordBatch, nBatches)
	for i := range recs {
		recs[i] = randomBatch(sc, rows, r)
	}
	return sc, recs
}

func TestWriterRoundTripsEveryType(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 3, 3000, 1)
		fs := newMemFS()
		files := writeAll(t, fs, sc, ec.opts(Options{}), recs)
		if len(files) != 1 {
			t.Fatalf("want 1 file, got %d", len(files))
		}
		tbl := readBack(t, fs.bytes(t, files[0].Path))
		defer tbl.Release()
		if tbl.NumRows() != 9000 || files[0].Rows != 9000 {
			t.Fatalf("rows: table %d, File %d", tbl.NumRows(), files[0].Rows)
		}
		for i, f := range sc.Fields() {
			var in []arrow.Array
			for _, rec := range recs {
				in = append(in, rec.Column(i))
			}
			want := columnJSON(t, in)
			got := columnJSON(t, tbl.Column(i).Data().Chunks())
			if want != got {
				t.Errorf("column %s differs after read back:\n got %.300s\nwant %.300s", f.Name, got, want)
			}
			gotID, _ := fieldID(tbl.Schema().Field(i))
			wantID, _ := fieldID(f)
			if gotID != wantID {
				t.Errorf("column %s field id %d, want %d", f.Name, gotID, wantID)
			}
		}
	})
}

func TestWriterParquetTypesMatchIceberg(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 1, 100, 2)
		fs := newMemFS()
		files := writeAll(t, fs, sc, ec.opts(Options{}), recs)
		rdr, err := file.NewParquetReader(bytes.NewReader(fs.bytes(t, files[0].Path)))
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Close()
		psc := rdr.MetaData().Schema
		type want struct {
			phys    pq.Type
			logical string
			id      int32
		}
		wants := map[string]want{
			"i":                  {pq.Types.Int32, "Int(bitWidth=32, isSigned=true)", 2},
			"l":                  {pq.Types.Int64, "Int(bitWidth=64, isSigned=true)", 3},
			"f":                  {pq.Types.Float, "None", 4},
			"d":                  {pq.Types.Double, "None", 5},
			"dec9":               {pq.Types.Int32, "Decimal(precision=9, scale=2)", 6},
			"dec18":              {pq.Types.Int64, "Decimal(precision=18, scale=4)", 7},
			"dec38":              {pq.Types.FixedLenByteArray, "Decimal(precision=38, scale=10)", 8},
			"date":               {pq.Types.Int32, "Date", 9},
			"time":               {pq.Types.Int64, "Time(isAdjustedToUTC=false, timeUnit=microseconds)", 10},
			"ts":                 {pq.Types.Int64, "Timestamp(isAdjustedToUTC=false, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)", 11},
			"tstz":               {pq.Types.Int64, "Timestamp(isAdjustedToUTC=true, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)", 12},
			"s":                  {pq.Types.ByteArray, "String", 13},
			"u":                  {pq.Types.FixedLenByteArray, "UUID", 14},
			"fx":                 {pq.Types.FixedLenByteArray, "None", 15},
			"bin":                {pq.Types.ByteArray, "None", 16},
			"st.si":              {pq.Types.Int32, "Int(bitWidth=32, isSigned=true)", 18},
			"lst.list.element":   {pq.Types.Double, "None", 22},
			"mp.key_value.key":   {pq.Types.ByteArray, "String", 24},
			"mp.key_value.value": {pq.Types.Int64, "Int(bitWidth=64, isSigned=true)", 25},
		}
		if ec.flat {
			for k := range wants {
				if strings.Contains(k, ".") {
					delete(wants, k)
				}
			}
		}
		// The file says which encoder wrote it.
		if by := rdr.MetaData().GetCreatedBy(); (by == createdByNative) != ec.flat {
			t.Errorf("encoder %s: file created by %q", ec.name, by)
		}
		seen := 0
		for j := 0; j < psc.NumColumns(); j++ {
			col := psc.Column(j)
			w, ok := wants[col.Path()]
			if !ok {
				continue
			}
			seen++
			if col.PhysicalType() != w.phys || col.LogicalType().String() != w.logical || col.SchemaNode().FieldID() != w.id {
				t.Errorf("%s: got %s %s id %d, want %s %s id %d", col.Path(), col.PhysicalType(), col.LogicalType(),
					col.SchemaNode().FieldID(), w.phys, w.logical, w.id)
			}
		}
		if seen != len(wants) {
			t.Errorf("found %d of %d expected columns", seen, len(wants))
		}
		if n := psc.Column(psc.ColumnIndexByName("u")).TypeLength(); n != 16 {
			t.Errorf("uuid length %d", n)
		}
		if ec.flat {
			return
		}
		// Iceberg's 3-level list and map groups.
		lst := psc.Root().Field(psc.Root().FieldIndexByName("lst")).(*schema.GroupNode)
		if lst.LogicalType().String() != "List" || lst.FieldID() != 21 {
			t.Errorf("list group: %s id %d", lst.LogicalType(), lst.FieldID())
		}
		mp := psc.Root().Field(psc.Root().FieldIndexByName("mp")).(*schema.GroupNode)
		if mp.LogicalType().String() != "Map" || mp.FieldID() != 23 {
			t.Errorf("map group: %s id %d", mp.LogicalType(), mp.FieldID())
		}
	})
}

// leafValues collects the valid values of one primitive column (a
// top-level field or a struct child) together with the null count.
type leafValues struct {
	id    int
	typ   arrow.DataType
	vals  []any
	nulls int64
	nans  int64
	count int64
}

func collectLeaves(sc *arrow.Schema, recs []arrow.RecordBatch) map[int]*leafValues {
	out := map[int]*leafValues{}
	var visit func(f arrow.Field, arr arrow.Array, parentNull func(int) bool)
	visit = func(f arrow.Field, arr arrow.Array, parentNull func(int) bool) {
		if st, ok := arr.(*array.Struct); ok {
			for k := 0; k < st.NumField(); k++ {
				visit(f.Type.(*arrow.StructType).Field(k), st.Field(k), func(i int) bool { return parentNull(i) || st.IsNull(i) })
			}
			return
		}
		if _, nested := f.Type.(arrow.NestedType); nested {
			return
		}
		id, _ := fieldID(f)
		lv := out[id]
		if lv == nil {
			lv = &leafValues{id: id, typ: f.Type}
			out[id] = lv
		}
		for i := 0; i < arr.Len(); i++ {
			lv.count++
			if parentNull(i) || arr.IsNull(i) {
				lv.nulls++
				continue
			}
			var v any
			switch a := arr.(type) {
			case *array.Boolean:
				v = a.Value(i)
			case *array.Int32:
				v = int64(a.Value(i))
			case *array.Int64:
				v = a.Value(i)
			case *array.Date32:
				v = int64(a.Value(i))
			case *array.Time64:
				v = int64(a.Value(i))
			case *array.Timestamp:
				v = int64(a.Value(i))
			case *array.Float32:
				if math.IsNaN(float64(a.Value(i))) {
					lv.nans++
					continue
				}
				v = float64(a.Value(i))
			case *array.Float64:
				if math.IsNaN(a.Value(i)) {
					lv.nans++
					continue
				}
				v = a.Value(i)
			case *array.Decimal128:
				v = a.Value(i).BigInt()
			case *array.String:
				v = a.Value(i)
			case *extensions.UUIDArray:
				u := a.Value(i)
				v = string(u[:])
			case *array.FixedSizeBinary:
				v = string(a.Value(i))
			case *array.Binary:
				v = string(a.Value(i))
			}
			lv.vals = append(lv.vals, v)
		}
	}
	for _, rec := range recs {
		for i, f := range sc.Fields() {
			visit(f, rec.Column(i), func(int) bool { return false })
		}
	}
	return out
}

func lessAny(a, b any) bool {
	switch x := a.(type) {
	case bool:
		return !x && b.(bool)
	case int64:
		return x < b.(int64)
	case float64:
		return x < b.(float64)
	case *big.Int:
		return x.Cmp(b.(*big.Int)) < 0
	case string:
		return x < b.(string)
	}
	panic("unhandled")
}

// twosComplement is Java's BigInteger.toByteArray.
func twosComplement(n *big.Int) []byte {
	for k := 1; ; k++ {
		lim := new(big.Int).Lsh(big.NewInt(1), uint(8*k-1))
		if n.Cmp(lim) < 0 && n.Cmp(new(big.Int).Neg(lim)) >= 0 {
			v := new(big.Int).Set(n)
			if v.Sign() < 0 {
				v.Add(v, new(big.Int).Lsh(big.NewInt(1), uint(8*k)))
			}
			return v.FillBytes(make([]byte, k))
		}
	}
}

// icebergBytes is an independent Appendix D serialisation of an untruncated value.
func icebergBytes(typ arrow.DataType, v any) []byte {
	switch typ.ID() {
	case arrow.BOOL:
		if v.(bool) {
			return []byte{1}
		}
		return []byte{0}
	case arrow.INT32, arrow.DATE32:
		return binary.LittleEndian.AppendUint32(nil, uint32(v.(int64)))
	case arrow.INT64, arrow.TIME64, arrow.TIMESTAMP:
		return binary.LittleEndian.AppendUint64(nil, uint64(v.(int64)))
	case arrow.FLOAT32:
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v.(float64))))
	case arrow.FLOAT64:
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v.(float64)))
	case arrow.DECIMAL128:
		return twosComplement(v.(*big.Int))
	}
	return []byte(v.(string))
}

func expectedBounds(lv *leafValues) (lo, hi []byte, hasHi bool) {
	mn, mx := lv.vals[0], lv.vals[0]
	for _, v := range lv.vals[1:] {
		if lessAny(v, mn) {
			mn = v
		}
		if lessAny(mx, v) {
			mx = v
		}
	}
	switch lv.typ.ID() {
	case arrow.STRING:
		lo, hi := []rune(mn.(string)), []rune(mx.(string))
		if len(lo) > 16 {
			lo = lo[:16]
		}
		if len(hi) > 16 {
			hi = hi[:16]
			hi[15]++ // the generator never produces U+10FFFF or U+D7FF
		}
		return []byte(string(lo)), []byte(string(hi)), true
	case arrow.BINARY:
		lo, hi := []byte(mn.(string)), []byte(mx.(string))
		if len(lo) > 16 {
			lo = lo[:16]
		}
		if len(hi) > 16 {
			// Drop trailing 0xFF bytes by hand: bytes.TrimRight with "\xff"
			// would trim every invalid UTF-8 byte.
			hi = hi[:16]
			for len(hi) > 0 && hi[len(hi)-1] == 0xFF {
				hi = hi[:len(hi)-1]
			}
			if len(hi) == 0 {
				return lo, nil, false
			}
			hi[len(hi)-1]++
		}
		return lo, hi, true
	}
	return icebergBytes(lv.typ, mn), icebergBytes(lv.typ, mx), true
}

func TestWriterMetricsMatchArrowData(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 4, 2500, 3)
		// One row group, and several whose statistics are merged.
		for _, opts := range []Options{{}, {RowGroupBytes: 32 << 10, PageBytes: 4 << 10}} {
			fs := newMemFS()
			files := writeAll(t, fs, sc, ec.opts(opts), recs)
			if len(files) != 1 {
				t.Fatalf("%d files", len(files))
			}
			if opts.RowGroupBytes > 0 && len(files[0].SplitOffsets) < 3 {
				t.Fatalf("%d row groups, want several", len(files[0].SplitOffsets))
			}
			checkMetrics(t, fs, sc, recs, files[0])
		}
	})
}

func checkMetrics(t *testing.T, fs *memFS, sc *arrow.Schema, recs []arrow.RecordBatch, f File) {
	t.Helper()
	leaves := collectLeaves(sc, recs)
	for id, lv := range leaves {
		if f.ValueCounts[id] != lv.count {
			t.Errorf("field %d value count %d, want %d", id, f.ValueCounts[id], lv.count)
		}
		if f.NullCounts[id] != lv.nulls {
			t.Errorf("field %d null count %d, want %d", id, f.NullCounts[id], lv.nulls)
		}
		if f.ColumnSizes[id] <= 0 {
			t.Errorf("field %d column size %d", id, f.ColumnSizes[id])
		}
		switch lv.typ.ID() {
		case arrow.FLOAT32, arrow.FLOAT64:
			if got, ok := f.NaNCounts[id]; !ok || got != lv.nans {
				t.Errorf("field %d NaN count %d (present %v), want %d", id, got, ok, lv.nans)
			}
		default:
			if _, ok := f.NaNCounts[id]; ok {
				t.Errorf("field %d is not a float but has a NaN count", id)
			}
		}
		lo, hi, hasHi := expectedBounds(lv)
		if !bytes.Equal(f.Lower[id], lo) {
			t.Errorf("field %d (%s) lower %x, want %x", id, lv.typ, f.Lower[id], lo)
		}
		if got, ok := f.Upper[id]; ok != hasHi || !bytes.Equal(got, hi) {
			t.Errorf("field %d (%s) upper %x, want %x", id, lv.typ, got, hi)
		}
	}
	if f.Size != int64(len(fs.bytes(t, f.Path))) {
		t.Errorf("Size %d, file has %d bytes", f.Size, len(fs.bytes(t, f.Path)))
	}
	if _, nested := sc.FieldsByName("lst"); !nested {
		return
	}
	// List and map leaves: counts of every level slot, a NaN count for the
	// float element, no bounds.
	var listSlots, mapSlots, listNaN int64
	for _, rec := range recs {
		lst := rec.Column(17).(*array.List)
		vals := lst.ListValues().(*array.Float64)
		for i := 0; i < lst.Len(); i++ {
			s, e := lst.ValueOffsets(i)
			listSlots += max(1, e-s)
			if lst.IsNull(i) {
				continue
			}
			for k := s; k < e; k++ {
				if vals.IsValid(int(k)) && math.IsNaN(vals.Value(int(k))) {
					listNaN++
				}
			}
		}
		mp := rec.Column(18).(*array.Map)
		for i := 0; i < mp.Len(); i++ {
			s, e := mp.ValueOffsets(i)
			mapSlots += max(1, e-s)
		}
	}
	for id, want := range map[int]int64{22: listSlots, 24: mapSlots, 25: mapSlots} {
		if f.ValueCounts[id] != want {
			t.Errorf("nested field %d value count %d, want %d", id, f.ValueCounts[id], want)
		}
		if _, ok := f.Lower[id]; ok {
			t.Errorf("nested field %d has a lower bound", id)
		}
		if _, ok := f.Upper[id]; ok {
			t.Errorf("nested field %d has an upper bound", id)
		}
	}
	if f.NaNCounts[22] != listNaN {
		t.Errorf("list element NaN count %d, want %d", f.NaNCounts[22], listNaN)
	}
}

func TestNaNOnlyFloatColumnHasNoBounds(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc := arrowSchema(t, floatsSchema())
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := 0; i < 100; i++ {
			b.Field(0).(*array.Float64Builder).Append(math.NaN())
			b.Field(1).(*array.Float32Builder).Append(float32(i) - 50.5)
			if i%3 == 0 {
				b.Field(1).(*array.Float32Builder).Append(float32(math.NaN()))
				b.Field(0).(*array.Float64Builder).AppendNull()
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		fs := newMemFS()
		f := writeAll(t, fs, sc, ec.opts(Options{}), []arrow.RecordBatch{rec})[0]
		if _, ok := f.Lower[1]; ok {
			t.Errorf("NaN-only column has a lower bound %x", f.Lower[1])
		}
		if _, ok := f.Upper[1]; ok {
			t.Errorf("NaN-only column has an upper bound %x", f.Upper[1])
		}
		if f.NaNCounts[1] != 100 || f.NullCounts[1] != 34 {
			t.Errorf("NaN-only column: NaN %d nulls %d", f.NaNCounts[1], f.NullCounts[1])
		}
		if f.NaNCounts[2] != 34 {
			t.Errorf("float column NaN count %d, want 34", f.NaNCounts[2])
		}
		lo := math.Float32frombits(binary.LittleEndian.Uint32(f.Lower[2]))
		hi := math.Float32frombits(binary.LittleEndian.Uint32(f.Upper[2]))
		if lo != -50.5 || hi != 48.5 {
			t.Errorf("float bounds %v %v, want -50.5 48.5", lo, hi)
		}
	})
}

func TestStringBoundsTruncateAndIncrement(t *testing.T) {
	cases := []struct {
		in, lo, hi string
		hasHi      bool
	}{
		{"short", "short", "short", true},
		{"abcdefghijklmnopq", "abcdefghijklmnop", "abcdefghijklmnoq", true},
		{strings.Repeat("é", 20), strings.Repeat("é", 16), strings.Repeat("é", 15) + "ê", true},
		{strings.Repeat("a", 15) + "\U0010FFFFz", strings.Repeat("a", 15) + "\U0010FFFF", strings.Repeat("a", 14) + "b", true},
		{strings.Repeat("a", 15) + "\uD7FFz", strings.Repeat("a", 15) + "\uD7FF", strings.Repeat("a", 15) + "\uE000", true},
		{strings.Repeat("\U0010FFFF", 17), strings.Repeat("\U0010FFFF", 16), "", false},
	}
	for _, c := range cases {
		if got := string(truncateString([]byte(c.in))); got != c.lo {
			t.Errorf("lower(%q) = %q, want %q", c.in, got, c.lo)
		}
		got, ok := truncateStringUpper([]byte(c.in))
		if ok != c.hasHi || string(got) != c.hi {
			t.Errorf("upper(%q) = %q %v, want %q %v", c.in, got, ok, c.hi, c.hasHi)
		}
		if ok && string(got) < c.in[:min(len(c.in), len(got))] {
			t.Errorf("upper(%q) = %q is below the value", c.in, got)
		}
	}
	bin := []struct {
		in, hi []byte
		ok     bool
	}{
		{bytes.Repeat([]byte{1}, 17), append(bytes.Repeat([]byte{1}, 15), 2), true},
		{append(bytes.Repeat([]byte{7}, 14), 0xFF, 0xFF, 0xFF), append(bytes.Repeat([]byte{7}, 13), 8), true},
		{bytes.Repeat([]byte{0xFF}, 17), nil, false},
	}
	for _, c := range bin {
		got, ok := truncateBinaryUpper(c.in)
		if ok != c.ok || !bytes.Equal(got, c.hi) {
			t.Errorf("binary upper(%x) = %x %v, want %x %v", c.in, got, ok, c.hi, c.ok)
		}
	}
}

func TestStringUpperBoundOmittedWhenNotIncrementable(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc := arrowSchema(t, stringsSchema())
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"b", strings.Repeat("\U0010FFFF", 20)}, nil)
		b.Field(1).(*array.StringBuilder).AppendValues([]string{"zzzzzzzzzzzzzzzzzzzz", "a"}, nil)
		rec := b.NewRecordBatch()
		b.Release()
		f := writeAll(t, newMemFS(), sc, ec.opts(Options{}), []arrow.RecordBatch{rec})[0]
		if string(f.Lower[1]) != "b" {
			t.Errorf("lower %q", f.Lower[1])
		}
		if _, ok := f.Upper[1]; ok {
			t.Errorf("upper bound %q should be omitted", f.Upper[1])
		}
		if string(f.Upper[2]) != strings.Repeat("z", 15)+"{" {
			t.Errorf("upper %q", f.Upper[2])
		}
	})
}

func TestSplitOffsetsAreRowGroupStarts(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 8, 2000, 4)
		fs := newMemFS()
		files := writeAll(t, fs, sc, ec.opts(Options{RowGroupBytes: 32 << 10, PageBytes: 4 << 10}), recs)
		f := files[0]
		rdr, err := file.NewParquetReader(bytes.NewReader(fs.bytes(t, f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Close()
		md := rdr.MetaData()
		if md.NumRowGroups() < 3 || len(f.SplitOffsets) != md.NumRowGroups() {
			t.Fatalf("%d split offsets for %d row groups", len(f.SplitOffsets), md.NumRowGroups())
		}
		// Row groups are laid out back to back after the 4-byte magic.
		next := int64(4)
		for i, off := range f.SplitOffsets {
			if off != next {
				t.Errorf("split offset %d = %d, want %d", i, off, next)
			}
			rg := md.RowGroup(i)
			for j := 0; j < rg.NumColumns(); j++ {
				cc, _ := rg.ColumnChunk(j)
				next += cc.TotalCompressedSize()
			}
		}
		if !slices.IsSorted(f.SplitOffsets) {
			t.Errorf("split offsets not ascending: %v", f.SplitOffsets)
		}
	})
}

func TestWriterRollsFilesAtTargetSize(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		// A narrow schema: buffered pages (up to PageBytes and a dictionary per
		// column) are not counted until cut, so they must be small against a row group.
		sc := arrowSchema(t, iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String},
			iceberg.NestedField{ID: 3, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
			iceberg.NestedField{ID: 4, Name: "m", Type: iceberg.DecimalTypeOf(15, 2)},
		))
		r := rand.New(rand.NewPCG(5, 5))
		var recs []arrow.RecordBatch
		for range 15 {
			recs = append(recs, randomBatch(sc, 2000, r))
		}
		opts := Options{TargetFileSize: 160 << 10, RowGroupBytes: 40 << 10, PageBytes: 1 << 10, DictionaryPageBytes: 2 << 10}
		fs := newMemFS()
		files := writeAll(t, fs, sc, ec.opts(opts), recs)
		if len(files) < 3 {
			t.Fatalf("want several files, got %d", len(files))
		}
		var rows int64
		var chunks [][]arrow.Array
		for i, f := range files {
			data := fs.bytes(t, f.Path)
			if f.Size != int64(len(data)) {
				t.Errorf("file %d: Size %d, actual %d", i, f.Size, len(data))
			}
			if i < len(files)-1 && f.Size < opts.TargetFileSize {
				t.Errorf("file %d: %d bytes, below target %d", i, f.Size, opts.TargetFileSize)
			}
			if f.Size > opts.TargetFileSize+opts.RowGroupBytes {
				t.Errorf("file %d: %d bytes, above target + one row group %d", i, f.Size, opts.TargetFileSize+opts.RowGroupBytes)
			}
			if i < len(files)-1 && len(f.SplitOffsets) < 2 {
				t.Errorf("file %d: %d row groups, want several", i, len(f.SplitOffsets))
			}
			t.Logf("file %d: %d bytes, %d rows, %d row groups", i, f.Size, f.Rows, len(f.SplitOffsets))
			tbl := readBack(t, data)
			if tbl.NumRows() != f.Rows {
				t.Errorf("file %d: %d rows read, File says %d", i, tbl.NumRows(), f.Rows)
			}
			rows += f.Rows
			for c := 0; c < int(tbl.NumCols()); c++ {
				if i == 0 {
					chunks = append(chunks, nil)
				}
				chunks[c] = append(chunks[c], tbl.Column(c).Data().Chunks()...)
			}
			defer tbl.Release()
		}
		if rows != 30000 {
			t.Errorf("rows %d, want 30000", rows)
		}
		for c := range chunks {
			var in []arrow.Array
			for _, rec := range recs {
				in = append(in, rec.Column(c))
			}
			if columnJSON(t, in) != columnJSON(t, chunks[c]) {
				t.Errorf("column %d differs across rolled files", c)
			}
		}
	})
}

func TestCodecsAreWrittenAsNamed(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 1, 500, 6)
		want := map[string]compress.Compression{
			"zstd": compress.Codecs.Zstd, "snappy": compress.Codecs.Snappy, "gzip": compress.Codecs.Gzip,
			"brotli": compress.Codecs.Brotli, "lz4": compress.Codecs.Lz4Raw,
			"uncompressed": compress.Codecs.Uncompressed, "none": compress.Codecs.Uncompressed, "": compress.Codecs.Zstd,
			"ZSTD": compress.Codecs.Zstd,
		}
		for name, codec := range want {
			fs := newMemFS()
			f := writeAll(t, fs, sc, ec.opts(Options{Codec: name}), recs)[0]
			data := fs.bytes(t, f.Path)
			rdr, err := file.NewParquetReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			cc, _ := rdr.MetaData().RowGroup(0).ColumnChunk(0)
			if cc.Compression() != codec {
				t.Errorf("codec %q wrote %s, want %s", name, cc.Compression(), codec)
			}
			rdr.Close()
			tbl := readBack(t, data)
			if tbl.NumRows() != 500 {
				t.Errorf("codec %q: read %d rows", name, tbl.NumRows())
			}
			tbl.Release()
		}
	})
}

func TestUnknownCodecAndBadLevelsAreInvalidArguments(t *testing.T) {
	sc, recs := allTypesBatches(t, 1, 10, 7)
	level := func(l int) *int { return &l }
	bad := []struct {
		opts Options
		name string
	}{
		{Options{Codec: "lzo"}, "lzo"},
		{Options{Codec: "zstd", Level: level(23)}, "23"},
		{Options{Codec: "gzip", Level: level(10)}, "10"},
		{Options{Codec: "snappy", Level: level(1)}, "snappy"},
	}
	for _, c := range bad {
		w := NewWriter(t.Context(), newMemFS(), sc, c.opts, pathGen("x"))
		err := w.Write(recs[0])
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%+v: Write error %v, want invalid argument naming %q", c.opts, err, c.name)
		}
		if _, err := w.Close(); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%+v: Close error %v", c.opts, err)
		}
	}
	good := []Options{{Codec: "zstd", Level: level(1)}, {Codec: "zstd", Level: level(19)}, {Codec: "gzip", Level: level(9)}, {Codec: "brotli", Level: level(5)}}
	for _, o := range good {
		f := writeAll(t, newMemFS(), sc, o, recs)
		if len(f) != 1 {
			t.Errorf("%+v: %d files", o, len(f))
		}
	}
}

func TestOptionsFromProperties(t *testing.T) {
	o, err := OptionsFromProperties(map[string]string{
		PropCompressionCodec: "gzip", PropCompressionLevel: "3", PropTargetFileSize: "1000",
		PropRowGroupBytes: "200", PropPageBytes: "100", PropDictPageBytes: "50",
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Codec != "gzip" || *o.Level != 3 || o.TargetFileSize != 1000 || o.RowGroupBytes != 200 || o.PageBytes != 100 || o.DictionaryPageBytes != 50 {
		t.Errorf("options %+v", o)
	}
	o, err = OptionsFromProperties(nil)
	if err != nil || o.Level != nil {
		t.Errorf("empty properties: %+v %v", o, err)
	}
	r, _ := o.resolve()
	if r.Codec != "zstd" || r.TargetFileSize != DefaultTargetFileSize || r.RowGroupBytes != DefaultRowGroupBytes {
		t.Errorf("defaults %+v", r)
	}
	for k, v := range map[string]string{
		PropCompressionCodec: "lzo", PropCompressionLevel: "high", PropTargetFileSize: "-1",
		PropRowGroupBytes: "1MB", PropPageBytes: "0", PropDictPageBytes: "x",
	} {
		_, err := OptionsFromProperties(map[string]string{k: v})
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), k) || !strings.Contains(err.Error(), v) {
			t.Errorf("%s=%s: error %v, want invalid argument naming key and value", k, v, err)
		}
	}
}

func TestInjectedWriteErrorIsReturnedAndAbortListsFiles(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 10, 2000, 8)
		fs := newMemFS()
		// Below the target size: the first file fails part way through.
		fs.failAfter = 60 << 10
		opts := Options{TargetFileSize: 100 << 10, RowGroupBytes: 20 << 10, PageBytes: 2 << 10}
		w := NewWriter(t.Context(), fs, sc, ec.opts(opts), pathGen("mem://e"))
		var werr error
		for _, rec := range recs {
			if werr = w.Write(rec); werr != nil {
				break
			}
		}
		files, cerr := w.Close()
		err := cmpErr(werr, cerr)
		if !errors.Is(err, errs.ErrIO) || !errors.Is(err, errInjected) {
			t.Fatalf("error %v, want an I/O error wrapping the injected one", err)
		}
		var paths []string
		for _, f := range files {
			paths = append(paths, f.Path)
		}
		if !slices.Equal(paths, fs.order) {
			t.Errorf("Close returned %v, created %v", paths, fs.order)
		}
		if got := w.Abort(); !slices.Equal(got, fs.order) {
			t.Errorf("Abort returned %v, created %v", got, fs.order)
		}
	})
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func TestAbortListsCreatedFiles(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 6, 2000, 9)
		fs := newMemFS()
		w := NewWriter(t.Context(), fs, sc, ec.opts(Options{TargetFileSize: 50 << 10, PageBytes: 2 << 10}), pathGen("mem://a"))
		for _, rec := range recs {
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		got := w.Abort()
		if len(got) == 0 || !slices.Equal(got, fs.order) {
			t.Errorf("Abort returned %v, created %v", got, fs.order)
		}
		if err := w.Write(recs[0]); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("Write after Abort: %v", err)
		}
	})
}

func TestCreateFailureAndPanicBecomeErrors(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 1, 100, 10)
		fs := newMemFS()
		fs.failCreate = 1
		w := NewWriter(t.Context(), fs, sc, ec.opts(Options{}), pathGen("mem://c"))
		_ = w.Write(recs[0])
		if _, err := w.Close(); !errors.Is(err, errs.ErrIO) {
			t.Errorf("create failure: %v", err)
		}
		fs = newMemFS()
		fs.panicWrite = true
		w = NewWriter(t.Context(), fs, sc, ec.opts(Options{}), pathGen("mem://p"))
		_ = w.Write(recs[0])
		files, err := w.Close()
		if err == nil || !strings.Contains(err.Error(), "injected panic") {
			t.Errorf("panic: %v", err)
		}
		if len(files) != 1 || files[0].Path != "mem://p/00001.parquet" {
			t.Errorf("files after panic: %+v", files)
		}
	})
}

func TestCancelledContextStopsWriter(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 1, 100, 11)
		ctx, cancel := context.WithCancel(t.Context())
		w := NewWriter(ctx, newMemFS(), sc, ec.opts(Options{}), pathGen("mem://x"))
		cancel()
		werr := w.Write(recs[0])
		_, cerr := w.Close()
		if err := cmpErr(werr, cerr); !errors.Is(err, errs.ErrCancelled) {
			t.Errorf("cancelled write: %v", err)
		}
	})
}

func TestSchemaMismatchIsInvalidArgument(t *testing.T) {
	sc, _ := allTypesBatches(t, 1, 1, 12)
	_, other := allTypesBatches(t, 1, 1, 12)
	fields := sc.Fields()[:3]
	small := arrow.NewSchema(fields, nil)
	w := NewWriter(t.Context(), newMemFS(), small, Options{}, pathGen("x"))
	if err := w.Write(other[0]); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("mismatch: %v", err)
	}
	if files, err := w.Close(); err != nil || len(files) != 0 {
		t.Errorf("close: %v %v", files, err)
	}
}

func TestBytesWrittenGrowsToTotalSize(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 6, 2000, 13)
		fs := newMemFS()
		w := NewWriter(t.Context(), fs, sc, ec.opts(Options{TargetFileSize: 64 << 10, PageBytes: 2 << 10}), pathGen("mem://b"))
		for _, rec := range recs {
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		files, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, f := range files {
			total += f.Size
		}
		if w.BytesWritten() != total {
			t.Errorf("BytesWritten %d, files total %d", w.BytesWritten(), total)
		}
	})
}

func TestDictionaryOffForHighCardinalityColumns(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc := arrowSchema(t, iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "key", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 2, Name: "flag", Type: iceberg.PrimitiveTypes.Int32, Required: true},
			iceberg.NestedField{ID: 3, Name: "comment", Type: iceberg.PrimitiveTypes.String, Required: true},
			iceberg.NestedField{ID: 4, Name: "city", Type: iceberg.PrimitiveTypes.String, Required: true},
		))
		const n = 30000
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range n {
			b.Field(0).(*array.Int64Builder).Append(int64(i) * 7)
			b.Field(1).(*array.Int32Builder).Append(int32(i % 7))
			b.Field(2).(*array.StringBuilder).Append(randString(r, 30) + strings.Repeat("x", i%13))
			b.Field(3).(*array.StringBuilder).Append([]string{"Paris", "Oslo", "Lima"}[i%3])
		}
		rec := b.NewRecordBatch()
		b.Release()
		opts := Options{RowGroupBytes: 16 << 20, DictionaryPageBytes: 64 << 10}
		r2, _ := opts.resolve()
		if got := noDictionaryColumns(rec, r2); !slices.Equal(got, []string{"key", "comment"}) {
			t.Errorf("dictionary off for %v, want [key comment]", got)
		}
		fs := newMemFS()
		f := writeAll(t, fs, sc, ec.opts(opts), []arrow.RecordBatch{rec})[0]
		rdr, err := file.NewParquetReader(bytes.NewReader(fs.bytes(t, f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Close()
		rg := rdr.MetaData().RowGroup(0)
		for j, want := range []bool{false, true, false, true} {
			cc, _ := rg.ColumnChunk(j)
			if cc.HasDictionaryPage() != want {
				t.Errorf("column %d: dictionary page %v, want %v", j, cc.HasDictionaryPage(), want)
			}
		}
		tbl := readBack(t, fs.bytes(t, f.Path))
		defer tbl.Release()
		for c := 0; c < 4; c++ {
			if columnJSON(t, []arrow.Array{rec.Column(c)}) != columnJSON(t, tbl.Column(c).Data().Chunks()) {
				t.Errorf("column %d differs", c)
			}
		}
	})
}

func TestCancelAfterWritesFailsClose(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 2, 500, 14)
		ctx, cancel := context.WithCancel(t.Context())
		fs := newMemFS()
		w := NewWriter(ctx, fs, sc, ec.opts(Options{}), pathGen("mem://k"))
		for _, rec := range recs {
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		files, err := w.Close()
		if !errors.Is(err, errs.ErrCancelled) {
			t.Fatalf("Close after cancel: %v", err)
		}
		for _, f := range files {
			if f.Rows != 0 || f.ValueCounts != nil {
				t.Errorf("cancelled writer reported a finished file %+v", f.Path)
			}
		}
		if got := w.Abort(); !slices.Equal(got, fs.order) {
			t.Errorf("Abort %v, created %v", got, fs.order)
		}
	})
}

func TestTwoWritersFedFromOneGoroutine(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := ec.batches(t, 6, 1000, 15)
		fs := newMemFS()
		ws := []*Writer{
			NewWriter(t.Context(), fs, sc, ec.opts(Options{}), pathGen("mem://w0")),
			NewWriter(t.Context(), fs, sc, ec.opts(Options{}), pathGen("mem://w1")),
		}
		for i, rec := range recs {
			if err := ws[i%2].Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		for k, w := range ws {
			files, err := w.Close()
			if err != nil || len(files) != 1 {
				t.Fatalf("writer %d: %v %d files", k, err, len(files))
			}
			tbl := readBack(t, fs.bytes(t, files[0].Path))
			for c := 0; c < int(tbl.NumCols()); c++ {
				in := []arrow.Array{recs[k].Column(c), recs[k+2].Column(c), recs[k+4].Column(c)}
				if columnJSON(t, in) != columnJSON(t, tbl.Column(c).Data().Chunks()) {
					t.Errorf("writer %d column %d differs", k, c)
				}
			}
			tbl.Release()
		}
	})
}

// createdBy returns the created_by of a written file's footer.
func createdBy(t *testing.T, data []byte) string {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	return rdr.MetaData().GetCreatedBy()
}

// arrowGoCreatedBy is in the created_by of files arrow-go's pqarrow writes.
const arrowGoCreatedBy = "parquet-go version 18."

func TestNativeEncoderWritesFlatSchemas(t *testing.T) {
	flat := encoderCase{"native", true}
	nested := encoderCase{"pqarrow", false}
	for _, c := range []struct {
		ec      encoderCase
		pqarrow bool
		want    string // in created_by
	}{
		{flat, false, createdByNative}, {flat, true, arrowGoCreatedBy},
		{nested, false, arrowGoCreatedBy}, {nested, true, arrowGoCreatedBy},
	} {
		sc, recs := c.ec.batches(t, 1, 200, 16)
		fs := newMemFS()
		f := writeAll(t, fs, sc, Options{Pqarrow: c.pqarrow}, recs)[0]
		by := createdBy(t, fs.bytes(t, f.Path))
		if !strings.Contains(by, c.want) {
			t.Errorf("flat %v, pqarrow %v: written by %q, want %q", c.ec.flat, c.pqarrow, by, c.want)
		}
		// Only the native encoder lets a batch's buffers be reused once
		// written (the partition split recycles them then).
		if keeps := KeepsNoInput(sc, Options{Pqarrow: c.pqarrow}); keeps != (c.want == createdByNative) {
			t.Errorf("flat %v, pqarrow %v: KeepsNoInput %v", c.ec.flat, c.pqarrow, keeps)
		}
	}
	// A schema with a timestamp in another unit is not flat: pqarrow
	// writes it.
	ms := arrow.NewSchema([]arrow.Field{{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true}}, nil)
	if _, why, ok := flatSchema(ms); ok || why != "t" {
		t.Errorf("timestamp[ms]: flat %v (%q)", ok, why)
	}
}

func TestNativeRejectsNullsInRequiredColumns(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2}, nil)
	b.AppendNull()
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, 3)
	col.Release()
	w := NewWriter(t.Context(), newMemFS(), sc, Options{}, pathGen("mem://n"))
	werr := w.Write(rec)
	_, cerr := w.Close()
	if err := cmpErr(werr, cerr); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), `"k"`) {
		t.Errorf("nulls in a required column: %v", err)
	}
}

func TestOptionalColumnsWithoutNulls(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc := arrowSchema(t, flatTypesSchema())
		r := rand.New(rand.NewPCG(18, 7))
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i, f := range sc.Fields() {
			for range 5000 {
				appendRandom(b.Field(i), f.Type, false, r)
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		fs := newMemFS()
		f := writeAll(t, fs, sc, ec.opts(Options{}), []arrow.RecordBatch{rec})[0]
		checkMetrics(t, fs, sc, []arrow.RecordBatch{rec}, f)
		tbl := readBack(t, fs.bytes(t, f.Path))
		defer tbl.Release()
		for c := 0; c < int(tbl.NumCols()); c++ {
			if columnJSON(t, []arrow.Array{rec.Column(c)}) != columnJSON(t, tbl.Column(c).Data().Chunks()) {
				t.Errorf("column %s differs", sc.Field(c).Name)
			}
		}
	})
}

// TestZstdCodecIsSharedPerLevel: every file written at one zstd level uses
// one codec, so encoders (and their history windows) are pooled across
// files instead of made anew for each of a partitioned write's files.
func TestZstdCodecIsSharedPerLevel(t *testing.T) {
	one := resolved{codec: compress.Codecs.Zstd, level: 1}
	nine := resolved{codec: compress.Codecs.Zstd, level: 9}
	if one.pageCodec() != one.pageCodec() {
		t.Fatal("two files at level 1 got different codecs")
	}
	if one.pageCodec() == nine.pageCodec() {
		t.Fatal("levels 1 and 9 share a codec")
	}
}

// rendezvousFS holds each file's Close until `want` files are closing at
// once (or a timeout passes, which it records).
type rendezvousFS struct {
	*memFS
	want    int
	arrived chan struct{}
	all     chan struct{}
	once    sync.Once
	timeout atomic.Bool
}

type rendezvousFile struct {
	icebergio.FileWriter
	fs *rendezvousFS
}

func (r *rendezvousFS) Create(name string) (icebergio.FileWriter, error) {
	f, err := r.memFS.Create(name)
	return &rendezvousFile{f, r}, err
}

func (f *rendezvousFile) Close() error {
	f.fs.arrived <- struct{}{}
	if len(f.fs.arrived) == f.fs.want {
		f.fs.once.Do(func() { close(f.fs.all) })
	}
	select {
	case <-f.fs.all:
	case <-time.After(hangBound):
		f.fs.timeout.Store(true)
	}
	return f.FileWriter.Close()
}

// TestDrainedWritersFinishTogether: after Drain on every writer, their files
// are finished at the same time, so closing them in turn does not run the
// ends of the files (last pages, the buffered row group) one after another.
func TestDrainedWritersFinishTogether(t *testing.T) {
	sc, recs := allTypesBatches(t, 2, 500, 5)
	fs := &rendezvousFS{memFS: newMemFS(), want: 2, arrived: make(chan struct{}, 2), all: make(chan struct{})}
	var ws []*Writer
	for i, rec := range recs {
		w := NewWriter(t.Context(), fs, sc, Options{}, pathGen(fmt.Sprintf("mem://t%d", i)))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	for _, w := range ws {
		w.Drain()
	}
	if err := ws[0].Write(recs[0]); err == nil {
		t.Fatal("Write after Drain succeeded")
	}
	for _, w := range ws {
		files, err := w.Close()
		if err != nil || len(files) != 1 || files[0].Rows != 500 {
			t.Fatalf("Close: %v, %+v", err, files)
		}
	}
	if fs.timeout.Load() {
		t.Fatal("the second file was not finishing while the first one was")
	}
}
