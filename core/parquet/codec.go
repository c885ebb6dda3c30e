package parquet

import (
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/parquet/compress"
	kzstd "github.com/klauspost/compress/zstd"
	pgocompress "github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/brotli"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// The native encoder compresses its pages with parquet-go's codecs, and
// zstd with a compressor the C library's build can swap in.

// ZstdCompressor compresses src at a zstd level (1 to 22, or negative for
// the fast levels) into one zstd frame appended to dst[:0]. It must be safe
// for concurrent use.
type ZstdCompressor func(dst, src []byte, level int) ([]byte, error)

var zstdCompressor atomic.Pointer[ZstdCompressor]

// SetZstdCompressor makes c compress the zstd pages of the native encoder
// (flat schemas) from now on; nil goes back to klauspost/compress. Nested
// schemas, which arrow-go's pqarrow writes, keep arrow-go's zstd.
// The core is pure Go; the C library's build sets the zstd C library's
// compressor (capi/czstd), which on lineitem's l_comment runs 1.5-1.8x as
// fast as klauspost's fastest level at level 1, files 5% smaller
// (docs/decisions.md).
func SetZstdCompressor(c ZstdCompressor) {
	if c == nil {
		zstdCompressor.Store(nil)
		return
	}
	zstdCompressor.Store(&c)
}

// hookedZstd is the parquet-go codec over a ZstdCompressor; it decodes
// with klauspost/compress (the writers never decode).
type hookedZstd struct {
	zstd.Codec
	level    int
	compress ZstdCompressor
}

func (h *hookedZstd) Encode(dst, src []byte) ([]byte, error) { return h.compress(dst, src, h.level) }

// zstdCodecs holds one parquet-go zstd codec per encoder level, shared by
// every file: a codec pools its encoders, and a fresh encoder allocates and
// clears its history window (an 84-partition write made one per file).
var zstdCodecs sync.Map // kzstd.EncoderLevel -> *zstd.Codec

// pageCodec maps the resolved codec and level to the codec the native
// encoder compresses pages with, with the same settings as the pqarrow
// path.
func (r resolved) pageCodec() pgocompress.Codec {
	switch r.codec {
	case compress.Codecs.Zstd:
		if z := zstdCompressor.Load(); z != nil {
			return &hookedZstd{level: r.level, compress: *z}
		}
		level := kzstd.EncoderLevelFromZstd(r.level)
		c, _ := zstdCodecs.LoadOrStore(level, &zstd.Codec{Level: level})
		return c.(*zstd.Codec)
	case compress.Codecs.Snappy:
		return &snappy.Codec{}
	case compress.Codecs.Gzip:
		return &gzip.Codec{Level: r.level}
	case compress.Codecs.Brotli:
		q := r.level
		if q == compress.DefaultCompressionLevel {
			q = 6 // arrow-go's brotli default
		}
		return &brotli.Codec{Quality: q}
	case compress.Codecs.Lz4Raw:
		return &lz4.Codec{Level: lz4.Fastest}
	default:
		return &uncompressed.Codec{}
	}
}
