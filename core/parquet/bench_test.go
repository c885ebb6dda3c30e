package parquet

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
)

const (
	benchRows  = 1 << 20
	benchBatch = 131072
)

// discardFS counts the bytes written and keeps nothing.
type discardFS struct{ memFS }

type discardFile struct{}

func (*discardFS) Create(string) (icebergio.FileWriter, error) { return discardFile{}, nil }

func (discardFile) Write(p []byte) (int, error)         { return len(p), nil }
func (discardFile) ReadFrom(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) }
func (discardFile) Close() error                        { return nil }

var lineitem struct {
	once   sync.Once
	schema *arrow.Schema
	recs   []arrow.RecordBatch
}

// lineitemBatches generates benchRows rows shaped like TPC-H lineitem.
func lineitemBatches(b testing.TB) (*arrow.Schema, []arrow.RecordBatch) {
	lineitem.once.Do(func() {
		dec := iceberg.DecimalTypeOf(15, 2)
		str, i64, date := iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.Date
		names := []string{"l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice",
			"l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate", "l_commitdate", "l_receiptdate",
			"l_shipinstruct", "l_shipmode", "l_comment"}
		types := []iceberg.Type{i64, i64, i64, iceberg.PrimitiveTypes.Int32, dec, dec, dec, dec, str, str, date, date, date, str, str, str}
		fields := make([]iceberg.NestedField, len(names))
		for i := range names {
			fields[i] = iceberg.NestedField{ID: i + 1, Name: names[i], Type: types[i], Required: true}
		}
		sc := arrowSchema(b, iceberg.NewSchema(0, fields...))
		words := strings.Fields("furiously regular deposits sleep carefully final packages across the ironic accounts haggle blithely quickly express pinto beans")
		r := rand.New(rand.NewPCG(42, 42))
		for start := 0; start < benchRows; start += benchBatch {
			rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			for i := start; i < start+benchBatch; i++ {
				rb.Field(0).(*array.Int64Builder).Append(int64(i/4 + 1))
				rb.Field(1).(*array.Int64Builder).Append(r.Int64N(200000) + 1)
				rb.Field(2).(*array.Int64Builder).Append(r.Int64N(10000) + 1)
				rb.Field(3).(*array.Int32Builder).Append(int32(i%7 + 1))
				q := r.Int64N(50) + 1
				rb.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(q * 100))
				rb.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(q * (r.Int64N(200000) + 90000)))
				rb.Field(6).(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(11)))
				rb.Field(7).(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(9)))
				rb.Field(8).(*array.StringBuilder).Append([]string{"A", "N", "R"}[r.IntN(3)])
				rb.Field(9).(*array.StringBuilder).Append([]string{"O", "F"}[r.IntN(2)])
				d := arrow.Date32(8035 + r.IntN(2526))
				rb.Field(10).(*array.Date32Builder).Append(d)
				rb.Field(11).(*array.Date32Builder).Append(d + arrow.Date32(r.IntN(60)-30))
				rb.Field(12).(*array.Date32Builder).Append(d + arrow.Date32(r.IntN(30)+1))
				rb.Field(13).(*array.StringBuilder).Append([]string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}[r.IntN(4)])
				rb.Field(14).(*array.StringBuilder).Append([]string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}[r.IntN(7)])
				var sb strings.Builder
				for range 3 + r.IntN(4) {
					sb.WriteString(words[r.IntN(len(words))])
					sb.WriteByte(' ')
				}
				rb.Field(15).(*array.StringBuilder).Append(sb.String())
			}
			lineitem.recs = append(lineitem.recs, rb.NewRecordBatch())
			rb.Release()
		}
		lineitem.schema = sc
	})
	return lineitem.schema, lineitem.recs
}

// BenchmarkWriteLineitem writes 1Mi lineitem-like rows with zstd through
// one Writer, and through two Writers fed alternately from one goroutine,
// with each encoder.
func BenchmarkWriteLineitem(b *testing.B) {
	sc, recs := lineitemBatches(b)
	for _, enc := range []string{EncoderPqarrow, EncoderParquetGo, EncoderNative} {
		for _, writers := range []int{1, 2} {
			b.Run(fmt.Sprintf("encoder=%s/writers=%d", enc, writers), func(b *testing.B) {
				var size, rowGroups int64
				cpu0 := cpuSeconds()
				for b.Loop() {
					ws := make([]*Writer, writers)
					for i := range ws {
						ws[i] = NewWriter(b.Context(), &discardFS{}, sc, Options{Codec: "zstd", Encoder: enc}, pathGen(fmt.Sprint("w", i)))
					}
					for i, rec := range recs {
						if err := ws[i%writers].Write(rec); err != nil {
							b.Fatal(err)
						}
					}
					size, rowGroups = 0, 0
					for _, w := range ws {
						files, err := w.Close()
						if err != nil {
							b.Fatal(err)
						}
						for _, f := range files {
							size += f.Size
							rowGroups += int64(len(f.SplitOffsets))
						}
					}
				}
				// The machine is shared, so also report rows per CPU-second of
				// this process, which other load does not distort.
				b.ReportMetric(float64(benchRows)*float64(b.N)/(cpuSeconds()-cpu0), "rows/cpu-s")
				b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(size), "file-bytes")
				b.ReportMetric(float64(rowGroups), "row-groups")
			})
		}
	}
}

// cpuSeconds is the user+system CPU time of this process.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkWriteLineitemBloom is BenchmarkWriteLineitem with one Writer and
// bloom filters on a unique key, a high-cardinality key and the comment.
func BenchmarkWriteLineitemBloom(b *testing.B) {
	sc, recs := lineitemBatches(b)
	bloom := map[string]BloomFilter{"l_orderkey": {}, "l_partkey": {}, "l_comment": {}}
	for _, enc := range []string{EncoderPqarrow, EncoderParquetGo} {
		b.Run("encoder="+enc, func(b *testing.B) {
			cpu0 := cpuSeconds()
			var size int64
			for b.Loop() {
				w := NewWriter(b.Context(), &discardFS{}, sc, Options{Codec: "zstd", Encoder: enc, BloomFilters: bloom}, pathGen("w"))
				for _, rec := range recs {
					if err := w.Write(rec); err != nil {
						b.Fatal(err)
					}
				}
				files, err := w.Close()
				if err != nil {
					b.Fatal(err)
				}
				size = files[0].Size
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/(cpuSeconds()-cpu0), "rows/cpu-s")
			b.ReportMetric(float64(size), "file-bytes")
		})
	}
}

// BenchmarkWriteOneSmallFile writes the first 80k lineitem-like rows as one
// batch through one Writer, as an overwrite of one month does: the file's
// columns are spread over the cores, and how evenly they are shared decides
// the time.
func BenchmarkWriteOneSmallFile(b *testing.B) {
	sc, recs := lineitemBatches(b)
	const rows = 80_000
	rec := recs[0].NewSlice(0, rows)
	defer rec.Release()
	for b.Loop() {
		w := NewWriter(b.Context(), &discardFS{}, sc, Options{Codec: "zstd"}, pathGen("one"))
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkDictionaryStrings appends lineitem's four low-cardinality
// string columns (1-byte flags, 3-to-7-byte ship modes, 4-to-17-byte ship
// instructions) to dictionary-encoded pages in the chunks writeColumn
// takes, and reports the time per value.
func BenchmarkDictionaryStrings(b *testing.B) {
	const n = 1 << 18
	r := rand.New(rand.NewPCG(7, 7))
	domains := [][]string{
		{"A", "N", "R"},
		{"F", "O"},
		{"AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR"},
		{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"},
	}
	var cols []*array.String
	for _, dom := range domains {
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for range n {
			sb.Append(dom[r.IntN(len(dom))])
		}
		cols = append(cols, sb.NewStringArray())
		sb.Release()
	}
	sc := &nativeScratch{}
	pages := make([]*nativeColumn, len(cols))
	for i := range pages {
		pages[i] = &nativeColumn{kind: kBytes, dict: newNativeDict(kBytes, 0), dictOn: true, offs: []uint32{0}}
	}
	for b.Loop() {
		for i, a := range cols {
			c := pages[i]
			for off := 0; off < n; off += dictChunkRows {
				if err := addBytes(c, a.ValueOffsets(), a.ValueBytes(), a, off, off+dictChunkRows, 0, sc); err != nil {
					b.Fatal(err)
				}
				if len(c.idx) >= 1<<17 {
					c.idx, c.has = c.idx[:0], false
					c.dict.epoch++
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*len(cols)), "ns/value")
}

// BenchmarkDictionaryInts appends lineitem's dictionary-encoded integer
// columns (ship dates, supplier keys, quantities as decimal units, discounts)
// to dictionary-encoded pages in the chunks writeColumn takes, and reports
// the time per value.
func BenchmarkDictionaryInts(b *testing.B) {
	const n = 1 << 18
	r := rand.New(rand.NewPCG(7, 7))
	dates := make([]int32, n)
	for i := range dates {
		dates[i] = int32(8035 + r.IntN(2526))
	}
	longs := make([][]int64, 3)
	for i := range longs {
		longs[i] = make([]int64, n)
	}
	for i := range n {
		longs[0][i] = r.Int64N(10000) + 1
		longs[1][i] = (r.Int64N(50) + 1) * 100
		longs[2][i] = r.Int64N(11)
	}
	sc := &nativeScratch{}
	newCol := func(k nativeKind, w int) *nativeColumn {
		return &nativeColumn{kind: k, width: w, dict: newNativeDict(k, w), dictOn: true}
	}
	dc := newCol(kInt32, 4)
	lc := []*nativeColumn{newCol(kInt64, 8), newCol(kInt64, 8), newCol(kInt64, 8)}
	page := func(c *nativeColumn) {
		if len(c.idx) >= 1<<17 {
			c.idx, c.has = c.idx[:0], false
			c.dict.epoch++
		}
	}
	for b.Loop() {
		for off := 0; off < n; off += dictChunkRows {
			if err := addFixedWidth(dc, dates[off:off+dictChunkRows], nil, off, 0, sc); err != nil {
				b.Fatal(err)
			}
			page(dc)
			for i, c := range lc {
				if err := addFixedWidth(c, longs[i][off:off+dictChunkRows], nil, off, 0, sc); err != nil {
					b.Fatal(err)
				}
				page(c)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(4*n), "ns/value")
}

// BenchmarkStringRange takes the least and greatest of 32k values like
// lineitem's comments (10 to 43 bytes of words from a small list, so many
// share their first 8 bytes), as a page of them is bounded.
func BenchmarkStringRange(b *testing.B) {
	words := []string{"carefully", "quickly", "final", "regular", "express", "pending", "furiously", "slyly",
		"blithely", "ironic", "deposits", "accounts", "packages", "requests", "the", "of"}
	r := rand.New(rand.NewPCG(1, 2))
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	const n = 32768
	for range n {
		s, want := "", 10+r.IntN(34)
		for len(s) < want {
			s += words[r.IntN(len(words))] + " "
		}
		sb.Append(s[:want])
	}
	arr := sb.NewStringArray()
	sb.Release()
	defer arr.Release()
	offs := arr.ValueOffsets()
	var sc boundsScratch
	for b.Loop() {
		sc.stringRange(offs, arr.ValueBytes(), offs[0], arr, 0, n)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/value")
}
