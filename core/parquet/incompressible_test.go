package parquet

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// incompressibleBatch has a random key and random prices (their bit-packed
// deltas do not compress), an order-like key in load order (compresses
// well), a low-cardinality int (dictionary-encoded) and strings.
func incompressibleBatch(t *testing.T, n int) (*arrow.Schema, arrow.RecordBatch) {
	t.Helper()
	sc := arrowSchema(t, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "key", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "order", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "price", Type: iceberg.DecimalTypeOf(15, 2)},
		iceberg.NestedField{ID: 4, Name: "flag", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 5, Name: "comment", Type: iceberg.PrimitiveTypes.String, Required: true},
	))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	r := rand.New(rand.NewPCG(5, 6))
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(r.Int64N(1 << 40))
		b.Field(1).(*array.Int64Builder).Append(int64(i/4) + 1)
		if i%50 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(10_000_000)))
		}
		b.Field(3).(*array.Int32Builder).Append(int32(i % 5))
		b.Field(4).(*array.StringBuilder).Append("comment " + randString(r, 20))
	}
	return sc, b.NewRecordBatch()
}

// Columns whose values the codec would not shrink are judged on a sample
// and stored uncompressed; the others keep the codec; the file reads back
// equal and within 1% of its size with every chunk compressed.
func TestIncompressibleColumnsAreStoredUncompressed(t *testing.T) {
	sc, rec := incompressibleBatch(t, 30000)
	defer rec.Release()
	r, _ := Options{Codec: "zstd"}.resolve()
	if got := incompressibleColumns(rec, r); !slices.Equal(got, []string{"key", "price"}) {
		t.Errorf("incompressible %v, want [key price]", got)
	}
	small := rec.NewSlice(0, incompressibleMinValues-1)
	if got := incompressibleColumns(small, r); len(got) != 0 {
		t.Errorf("a %d-row sample judged %v", small.NumRows(), got)
	}
	small.Release()

	codecs := func(opts Options) ([]compress.Compression, int) {
		t.Helper()
		fs := newMemFS()
		f := writeAll(t, fs, sc, Options{Codec: opts.Codec, CompressAll: opts.CompressAll},
			[]arrow.RecordBatch{rec})[0]
		data := fs.bytes(t, f.Path)
		rdr, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Close()
		var out []compress.Compression
		for c := range sc.NumFields() {
			cc, _ := rdr.MetaData().RowGroup(0).ColumnChunk(c)
			out = append(out, cc.Compression())
		}
		tbl := readBack(t, data)
		defer tbl.Release()
		for c := range sc.NumFields() {
			if columnJSON(t, []arrow.Array{rec.Column(c)}) != columnJSON(t, tbl.Column(c).Data().Chunks()) {
				t.Errorf("%+v: column %s differs", opts, sc.Field(c).Name)
			}
		}
		return out, len(data)
	}
	z, u := compress.Codecs.Zstd, compress.Codecs.Uncompressed
	got, skipped := codecs(Options{Codec: "zstd"})
	if want := []compress.Compression{u, z, u, z, z}; !slices.Equal(got, want) {
		t.Errorf("codecs %v, want %v", got, want)
	}
	got, all := codecs(Options{Codec: "zstd", CompressAll: true})
	if !slices.Equal(got, []compress.Compression{z, z, z, z, z}) {
		t.Errorf("with CompressAll: codecs %v", got)
	}
	if float64(skipped) > 1.01*float64(all) {
		t.Errorf("skipping incompressible columns made the file more than 1%% larger: %d > %d bytes", skipped, all)
	}
	if got, _ := codecs(Options{Codec: "gzip"}); got[0] != u || got[1] != compress.Codecs.Gzip {
		t.Errorf("gzip: codecs %v", got)
	}
}

func TestSkipIncompressibleProperty(t *testing.T) {
	o, err := OptionsFromProperties(map[string]string{PropSkipIncompressible: "false"})
	if err != nil || !o.CompressAll {
		t.Errorf("false: %+v %v", o, err)
	}
	o, err = OptionsFromProperties(map[string]string{PropSkipIncompressible: "true"})
	if err != nil || o.CompressAll {
		t.Errorf("true: %+v %v", o, err)
	}
	if _, err := OptionsFromProperties(map[string]string{PropSkipIncompressible: "sometimes"}); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("bad value: %v", err)
	}
}
