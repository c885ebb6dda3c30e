package czstd

import (
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	kzstd "github.com/klauspost/compress/zstd"
	pgozstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// lineitemComments is the first 1 MB of l_comment values, concatenated as
// a plain page holds them, from bench/run.py's SF1 data.
func lineitemComments(b *testing.B) []byte {
	const path = "../../bench/.data/tpch-sf1/lineitem.parquet"
	f, err := os.Open(path)
	if err != nil {
		b.Skipf("needs %s (bench/run.py generates it): %v", path, err)
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		b.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	idx := rdr.MetaData().Schema.ColumnIndexByName("l_comment")
	rr, err := fr.GetRecordReader(b.Context(), []int{idx}, []int{0})
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	var page []byte
	for len(page) < 1<<20 && rr.Next() {
		col := rr.RecordBatch().Column(0)
		for i := range col.Len() {
			page = append(page, col.(interface{ ValueStr(int) string }).ValueStr(i)...)
		}
	}
	return page[:min(len(page), 1<<20)]
}

// BenchmarkZstdLevel1Comments compresses the same 1 MB page of lineitem
// comments at level 1 with the C library (what the shared library uses)
// and with klauspost/compress through parquet-go (the core alone):
// docs/decisions.md, "Compression: zstd level 1 through the C library".
func BenchmarkZstdLevel1Comments(b *testing.B) {
	page := lineitemComments(b)
	b.Run("c", func(b *testing.B) {
		var out []byte
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			var err error
			if out, err = Compress(out[:0], page, 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(out))/float64(len(page)), "ratio")
	})
	b.Run("klauspost", func(b *testing.B) {
		c := &pgozstd.Codec{Level: kzstd.EncoderLevelFromZstd(1)}
		var out []byte
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			var err error
			if out, err = c.Encode(out[:0], page); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(out))/float64(len(page)), "ratio")
	})
}
