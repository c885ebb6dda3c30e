package parquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/cespare/xxhash/v2"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestFixedWidthHashesAreXXH64OfPlainEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var b [8]byte
	for range 10000 {
		v := r.Uint64()
		binary.LittleEndian.PutUint64(b[:], v)
		if got, want := hash8(v), xxhash.Sum64(b[:]); got != want {
			t.Fatalf("hash8(%#x) = %#x, want %#x", v, got, want)
		}
		binary.LittleEndian.PutUint32(b[:4], uint32(v))
		if got, want := hash4(uint32(v)), xxhash.Sum64(b[:4]); got != want {
			t.Fatalf("hash4(%#x) = %#x, want %#x", uint32(v), got, want)
		}
	}
}

// TestFoldedFilterEqualsFilterBuiltAtThatSize pins the folding argument of
// bloomBuilder: a filter built large and folded is bit for bit the filter
// built at the smaller size.
func TestFoldedFilterEqualsFilterBuiltAtThatSize(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	hashes := make([]uint64, 3000)
	for i := range hashes {
		hashes[i] = r.Uint64()
	}
	big := newBloomBuilder(BloomFilter{FPP: 0.01}, 1<<20)
	for _, h := range hashes {
		big.insert(h)
	}
	got := big.finish()
	want := bloomBytes(3000, 0.01, 1<<20)
	if int64(len(got)) != want {
		t.Fatalf("folded to %d bytes, want %d", len(got), want)
	}
	small := newBloomBuilder(BloomFilter{FPP: 0.01, NDV: 1}, want)
	small.ndv = 3000
	for _, h := range hashes {
		small.insert(h)
	}
	if !bytes.Equal(got, small.finish()) {
		t.Fatal("folded filter differs from the filter built at its size")
	}
	for _, h := range hashes {
		if !bloomCheck(got, h) {
			t.Fatalf("hash %#x inserted but not found", h)
		}
	}
	// The builder is reset for the next row group.
	if again := big.finish(); len(again) != minBloomBytes || bytes.Count(again, []byte{0}) != len(again) {
		t.Fatalf("after finish: %d bytes, not an empty minimal filter", len(again))
	}
}

// optimalBloomBytes is parquet-java's BlockSplitBloomFilter.optimalNumOfBits
// in bytes, computed here independently of bloomBytes.
func optimalBloomBytes(ndv int64, fpp float64) float64 {
	return -float64(ndv) / math.Log(1-math.Pow(fpp, 0.125))
}

func pow2Ceil(x float64) int64 {
	n := int64(32)
	for float64(n) < x {
		n *= 2
	}
	return n
}

// chunkValues reads the physical values of one column chunk and returns the
// hashes of its non-null values, with arrow-go's hashing of the plain
// encoding.
func chunkValues(t *testing.T, rdr *file.Reader, rg, col int) []uint64 {
	t.Helper()
	rgr := rdr.RowGroup(rg)
	cr, err := rgr.Column(col)
	if err != nil {
		t.Fatal(err)
	}
	md, err := rgr.MetaData().ColumnChunk(col)
	if err != nil {
		t.Fatal(err)
	}
	n := md.NumValues()
	def, rep := make([]int16, n), make([]int16, n)
	h := metadata.NewBloomFilter(32, 32, memory.DefaultAllocator).Hasher()
	var out []uint64
	read := func(fn func() (int64, int, error)) int {
		total, vals, err := fn()
		if err != nil {
			t.Fatal(err)
		}
		if total == 0 {
			return -1
		}
		return vals
	}
	switch r := cr.(type) {
	case *file.Int32ColumnChunkReader:
		vals := make([]int32, n)
		for k := 0; ; {
			m := read(func() (int64, int, error) { return r.ReadBatch(n, vals[k:], def, rep) })
			if m < 0 {
				return metadata.GetHashes(h, vals[:k])
			}
			k += m
		}
	case *file.Int64ColumnChunkReader:
		vals := make([]int64, n)
		for k := 0; ; {
			m := read(func() (int64, int, error) { return r.ReadBatch(n, vals[k:], def, rep) })
			if m < 0 {
				return metadata.GetHashes(h, vals[:k])
			}
			k += m
		}
	case *file.Float64ColumnChunkReader:
		vals := make([]float64, n)
		for k := 0; ; {
			m := read(func() (int64, int, error) { return r.ReadBatch(n, vals[k:], def, rep) })
			if m < 0 {
				return metadata.GetHashes(h, vals[:k])
			}
			k += m
		}
	case *file.ByteArrayColumnChunkReader:
		vals := make([]pq.ByteArray, n)
		for k := 0; ; {
			m := read(func() (int64, int, error) { return r.ReadBatch(n, vals[k:], def, rep) })
			if m < 0 {
				return metadata.GetHashes(h, vals[:k])
			}
			k += m
		}
	case *file.FixedLenByteArrayColumnChunkReader:
		vals := make([]pq.FixedLenByteArray, n)
		for k := 0; ; {
			m := read(func() (int64, int, error) { return r.ReadBatch(n, vals[k:], def, rep) })
			if m < 0 {
				return metadata.GetHashes(h, vals[:k])
			}
			k += m
		}
	default:
		t.Fatalf("column %d: unhandled reader %T", col, cr)
	}
	return out
}

// bloomCase is a file written with bloom filters, opened for checking.
type bloomCase struct {
	rdr    *file.Reader
	filter *metadata.BloomFilterReader
	cols   map[string]int // Parquet column path -> column index
}

func openBloomCase(t *testing.T, data []byte) bloomCase {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdr.Close() })
	c := bloomCase{rdr: rdr, filter: rdr.GetBloomFilterReader(), cols: map[string]int{}}
	for i := 0; i < rdr.MetaData().Schema.NumColumns(); i++ {
		c.cols[rdr.MetaData().Schema.Column(i).Path()] = i
	}
	return c
}

// filter returns the bloom filter of a column chunk, nil when it has none.
func (c bloomCase) bloom(t *testing.T, rg, col int) metadata.BloomFilter {
	t.Helper()
	rgf, err := c.filter.RowGroup(rg)
	if err != nil {
		t.Fatal(err)
	}
	bf, err := rgf.GetColumnBloomFilter(col)
	if err != nil {
		t.Fatal(err)
	}
	return bf
}

// checkBloom checks every row group of column path: every written value is
// found, random absent values are rejected at about fpp, and the filter is
// a power of two no larger than maxBytes, sized for the chunk's distinct
// values unless that exceeds maxBytes. It returns the filter sizes.
//
// Native files get the smallest power of two holding the optimal size;
// arrow-go's adaptive filters (pqarrow) are up to two powers of two above
// it and at least 2 KiB, which slack allows for.
func (c bloomCase) checkBloom(t *testing.T, path string, fpp float64, maxBytes int64, pqarrowSlack bool) []int64 {
	t.Helper()
	col, ok := c.cols[path]
	if !ok {
		t.Fatalf("no column %s in %v", path, c.cols)
	}
	r := rand.New(rand.NewPCG(uint64(col), 99))
	var sizes []int64
	for rg := 0; rg < c.rdr.NumRowGroups(); rg++ {
		bf := c.bloom(t, rg, col)
		if bf == nil {
			t.Fatalf("%s row group %d: no bloom filter", path, rg)
		}
		hashes := chunkValues(t, c.rdr, rg, col)
		present := map[uint64]bool{}
		for _, h := range hashes {
			present[h] = true
			if !bf.CheckHash(h) {
				t.Fatalf("%s row group %d: written value (hash %#x) not in the filter", path, rg, h)
			}
		}
		const probes = 5000
		fp, tried := 0, 0
		var buf [12]byte
		for tried < probes {
			binary.LittleEndian.PutUint64(buf[:], r.Uint64())
			h := bf.Hasher().Sum64(buf[:])
			if present[h] {
				continue
			}
			tried++
			if bf.CheckHash(h) {
				fp++
			}
		}
		size := bf.Size()
		sizes = append(sizes, size)
		ndv := int64(len(present))
		opt := optimalBloomBytes(ndv, fpp)
		if size&(size-1) != 0 || size < 32 || size > maxBytes {
			t.Errorf("%s row group %d: filter of %d bytes (max %d)", path, rg, size, maxBytes)
		}
		switch {
		case opt > float64(maxBytes):
			if size != maxBytes {
				t.Errorf("%s row group %d: %d distinct values need %.0f bytes, filter has %d, want the maximum %d",
					path, rg, ndv, opt, size, maxBytes)
			}
		default:
			// Sized for the distinct values (a little slack for the
			// distinct count, which false positives make an estimate),
			// and not wastefully.
			limit := float64(pow2Ceil(opt))
			if pqarrowSlack {
				limit = max(4*limit, 2048)
			}
			if float64(size) < 0.97*opt || float64(size) > limit {
				t.Errorf("%s row group %d: %d distinct values at fpp %g need %.0f bytes, filter has %d",
					path, rg, ndv, fpp, opt, size)
			}
			if rate := float64(fp) / probes; rate > 2*fpp+0.002 {
				t.Errorf("%s row group %d: %.4f of absent values pass a filter for fpp %g", path, rg, rate, fpp)
			}
		}
	}
	return sizes
}

// bloomSchema has a unique int64, a low-cardinality string, a unique
// string with nulls, a wide decimal, a float and an int32 without filter.
func bloomBatches(t *testing.T, nested bool, batches, rows int) (*arrow.Schema, []arrow.RecordBatch) {
	fields := []iceberg.NestedField{
		{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		{ID: 2, Name: "cat", Type: iceberg.PrimitiveTypes.String},
		{ID: 3, Name: "s", Type: iceberg.PrimitiveTypes.String},
		{ID: 4, Name: "dec", Type: iceberg.DecimalTypeOf(38, 4)},
		{ID: 5, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		{ID: 6, Name: "plain", Type: iceberg.PrimitiveTypes.Int32},
	}
	if nested {
		fields = append(fields,
			iceberg.NestedField{ID: 7, Name: "st", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: 8, Name: "x", Type: iceberg.PrimitiveTypes.Int32},
			}}},
			iceberg.NestedField{ID: 9, Name: "tags", Type: &iceberg.ListType{ElementID: 10, Element: iceberg.PrimitiveTypes.String}},
			iceberg.NestedField{ID: 11, Name: "m", Type: &iceberg.MapType{KeyID: 12, KeyType: iceberg.PrimitiveTypes.String,
				ValueID: 13, ValueType: iceberg.PrimitiveTypes.Int64}},
		)
	}
	sc := arrowSchema(t, iceberg.NewSchema(0, fields...))
	r := rand.New(rand.NewPCG(11, 12))
	recs := make([]arrow.RecordBatch, batches)
	id := 0
	for k := range recs {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range rows {
			id++
			b.Field(0).(*array.Int64Builder).Append(int64(id) * 7919)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("cat-%d", id%37))
			if id%10 == 0 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("s-%d-%d", id, r.IntN(1000)))
			}
			appendRandom(b.Field(3), sc.Field(3).Type, true, r)
			appendRandom(b.Field(4), sc.Field(4).Type, true, r)
			appendRandom(b.Field(5), sc.Field(5).Type, true, r)
			for i := 6; i < len(sc.Fields()); i++ {
				appendRandom(b.Field(i), sc.Field(i).Type, sc.Field(i).Nullable, r)
			}
		}
		recs[k] = b.NewRecordBatch()
		b.Release()
	}
	return sc, recs
}

func TestBloomFiltersFindEveryValueAndRejectAbsentOnes(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := bloomBatches(t, !ec.flat, 3, 20000)
		cols := []string{"id", "cat", "s", "dec", "d"}
		paths := []string{"id", "cat", "s", "dec", "d"}
		if !ec.flat {
			cols = append(cols, "st.x", "tags.element", "m.key", "m.value")
			paths = append(paths, "st.x", "tags.list.element", "m.key_value.key", "m.key_value.value")
		}
		props := map[string]string{PropRowGroupBytes: "250000", PropBloomFPPPrefix + "s": "0.001"}
		for _, c := range cols {
			props[PropBloomEnabledPrefix+c] = "true"
		}
		props[PropBloomEnabledPrefix+"plain"] = "false"
		opts, err := OptionsFromProperties(props)
		if err != nil {
			t.Fatal(err)
		}
		fs := newMemFS()
		files := writeAll(t, fs, sc, ec.opts(opts), recs)
		if len(files) != 1 {
			t.Fatalf("%d files", len(files))
		}
		data := fs.bytes(t, files[0].Path)
		bc := openBloomCase(t, data)
		if bc.rdr.NumRowGroups() < 2 {
			t.Fatalf("want several row groups, got %d", bc.rdr.NumRowGroups())
		}
		for i, p := range paths {
			fpp := DefaultBloomFPP
			if cols[i] == "s" {
				fpp = 0.001
			}
			bc.checkBloom(t, p, fpp, DefaultBloomMaxBytes, !ec.flat)
		}
		for rg := 0; rg < bc.rdr.NumRowGroups(); rg++ {
			if bf := bc.bloom(t, rg, bc.cols["plain"]); bf != nil {
				t.Errorf("row group %d: column without the property has a bloom filter", rg)
			}
		}
		// The file still reads back whole, and the metrics are unchanged.
		tbl := readBack(t, data)
		defer tbl.Release()
		if tbl.NumRows() != 60000 {
			t.Fatalf("read back %d rows", tbl.NumRows())
		}
		checkMetrics(t, fs, sc, recs, files[0])
	})
}

func TestBloomFilterSizeFollowsFPPAndMaxBytes(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := bloomBatches(t, false, 1, 30000)
		write := func(props map[string]string) bloomCase {
			opts, err := OptionsFromProperties(props)
			if err != nil {
				t.Fatal(err)
			}
			fs := newMemFS()
			f := writeAll(t, fs, sc, ec.opts(opts), recs)[0]
			return openBloomCase(t, fs.bytes(t, f.Path))
		}
		on := PropBloomEnabledPrefix + "id"
		def := write(map[string]string{on: "true"}).checkBloom(t, "id", 0.01, DefaultBloomMaxBytes, !ec.flat)
		tight := write(map[string]string{on: "TRUE", PropBloomFPPPrefix + "id": "0.0001"}).
			checkBloom(t, "id", 0.0001, DefaultBloomMaxBytes, !ec.flat)
		if tight[0] <= def[0] {
			t.Errorf("fpp 0.0001 filter of %d bytes is not larger than the fpp 0.01 one (%d)", tight[0], def[0])
		}
		// A maximum that is not a power of two caps at the power below it.
		capped := write(map[string]string{on: "true", PropBloomMaxBytes: "6000"}).checkBloom(t, "id", 0.01, 4096, !ec.flat)
		if capped[0] != 4096 {
			t.Errorf("max 6000 bytes: filter of %d bytes, want 4096", capped[0])
		}
		// An explicit NDV sizes the filter as parquet-java does.
		ndv := write(map[string]string{on: "true", PropBloomNDVPrefix + "id": "100"})
		bf := ndv.bloom(t, 0, ndv.cols["id"])
		want := pow2Ceil(optimalBloomBytes(100, 0.01))
		if bf == nil || bf.Size() != want {
			t.Errorf("ndv 100: filter %v, want %d bytes", bf, want)
		}
	})
}

func TestBloomFilterOnUnknownColumnIsInvalidArgument(t *testing.T) {
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := bloomBatches(t, !ec.flat, 1, 10)
		bad := map[string]string{"nope": "no column", "ID": "no column"}
		if !ec.flat {
			bad["st"] = "not a primitive column"
			bad["tags"] = "not a primitive column"
		}
		for col, why := range bad {
			for _, prefix := range []string{PropBloomEnabledPrefix, PropDictEnabledPrefix} {
				opts, err := OptionsFromProperties(map[string]string{prefix + col: "true"})
				if err != nil {
					t.Fatal(err)
				}
				opts = ec.opts(opts)
				if err := opts.CheckColumns(sc); !errors.Is(err, errs.ErrInvalidArgument) ||
					!strings.Contains(err.Error(), `"`+col+`"`) || !strings.Contains(err.Error(), why) {
					t.Errorf("%s%s: CheckColumns %v", prefix, col, err)
				}
				w := NewWriter(t.Context(), newMemFS(), sc, opts, pathGen("x"))
				if err := w.Write(recs[0]); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), col) {
					t.Errorf("%s%s: Write %v", prefix, col, err)
				}
				w.Abort()
			}
		}
		// A disabled filter on an unknown column is no error (nothing to do).
		opts, _ := OptionsFromProperties(map[string]string{PropBloomEnabledPrefix + "nope": "false"})
		if err := opts.CheckColumns(sc); err != nil {
			t.Errorf("disabled filter on unknown column: %v", err)
		}
	})
}

func TestBloomAndColumnPropertiesParse(t *testing.T) {
	o, err := OptionsFromProperties(map[string]string{
		PropBloomEnabledPrefix + "a.b":     "true",
		PropBloomFPPPrefix + "a.b":         "0.05",
		PropBloomNDVPrefix + "a.b":         "1000",
		PropBloomEnabledPrefix + "c":       "false",
		PropBloomFPPPrefix + "c":           "0.5",
		PropBloomEnabledPrefix + "d":       "True",
		PropBloomMaxBytes:                  "4096",
		PropBloomAdaptive:                  "false",
		PropDictEnabledPrefix + "x":        "false",
		PropDictEnabledPrefix + "y.z":      "true",
		PropPageRowLimit:                   "500",
		"write.parquet.something-else.col": "ignored",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.BloomFilters) != 2 || o.BloomFilters["a.b"] != (BloomFilter{FPP: 0.05, NDV: 1000}) ||
		o.BloomFilters["d"] != (BloomFilter{}) {
		t.Errorf("bloom filters %v", o.BloomFilters)
	}
	if o.BloomMaxBytes != 4096 || o.PageRowLimit != 500 || len(o.Dictionary) != 2 || o.Dictionary["x"] || !o.Dictionary["y.z"] {
		t.Errorf("options %+v", o)
	}
	r, err := o.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if r.BloomFilters["d"].FPP != DefaultBloomFPP {
		t.Errorf("default fpp %v", r.BloomFilters["d"].FPP)
	}
	d, _ := OptionsFromProperties(nil)
	if r, _ := d.resolve(); r.PageRowLimit != 20000 || r.BloomMaxBytes != 1<<20 {
		t.Errorf("defaults: page rows %d, bloom max %d", r.PageRowLimit, r.BloomMaxBytes)
	}
	for k, v := range map[string]string{
		PropBloomEnabledPrefix + "a": "yes",
		PropBloomFPPPrefix + "a":     "1",
		PropBloomNDVPrefix + "a":     "-3",
		PropBloomMaxBytes:            "0",
		PropBloomAdaptive:            "maybe",
		PropDictEnabledPrefix + "a":  "1",
		PropPageRowLimit:             "x",
	} {
		_, err := OptionsFromProperties(map[string]string{k: v})
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}
