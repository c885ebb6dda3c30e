// Package czstd puts the zstd C library (built from the source that
// DataDog/zstd vendors; its symbols stay local to the shared library
// through capi/exports.map) behind the library's zstd pages, in place of
// klauspost/compress's pure Go port. On TPC-H lineitem's comments at level
// 1 it compresses 1.5-1.8x as fast with output 5% smaller, and decompresses
// 1.5x as fast; zstd was the largest part of every append's CPU
// (docs/decisions.md). The core stays pure Go: without Install (go test
// ./core/...) it keeps klauspost.
package czstd

import (
	"sync"

	dzstd "github.com/DataDog/zstd"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/pyiceberg-go/pyiceberg-go/core/parquet"
)

// defaultLevel is what arrow-go's default level means for zstd (the
// library's own writers always pass a level).
const defaultLevel = 3

// Install makes the C library compress the flat encoders' pages
// (core/parquet) and compress and decompress every zstd page arrow-go
// handles: the pqarrow encoder of nested schemas, and every Parquet read
// (copy-on-write rewrites, merges, scans).
func Install() {
	parquet.SetZstdCompressor(Compress)
	if base, err := compress.GetCodec(compress.Codecs.Zstd); err == nil {
		if _, done := base.(arrowCodec); !done {
			compress.RegisterCodec(compress.Codecs.Zstd, arrowCodec{base})
		}
	}
}

// ctxs holds contexts for reuse: a fresh one allocates and clears its
// tables on every page. A context dropped by the pool is freed by its
// finalizer.
var ctxs = sync.Pool{New: func() any { return dzstd.NewCtx() }}

// Compress writes src as one zstd frame at level into dst's memory when it
// is large enough (a core/parquet.ZstdCompressor).
func Compress(dst, src []byte, level int) ([]byte, error) {
	ctx := ctxs.Get().(dzstd.Ctx)
	defer ctxs.Put(ctx)
	return ctx.CompressLevel(dst[:cap(dst)], src, level)
}

// Decompress decodes the zstd frames of src into dst's memory when they
// fit in its capacity, else into new memory. arrow-go's V2 page reader
// relies on the first: it decodes into the page buffer and reads that
// buffer, not the slice returned (DataDog's own Decompress sizes its
// output from the frame header and, for frames without a content size,
// as Spark writes, allocates a new one).
func Decompress(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return nil, dzstd.ErrEmptySlice
	}
	ctx := ctxs.Get().(dzstd.Ctx)
	defer ctxs.Put(ctx)
	if cap(dst) > 0 {
		n, err := ctx.DecompressInto(dst[:cap(dst)], src)
		if err == nil {
			return dst[:n], nil
		}
		if !dzstd.IsDstSizeTooSmallError(err) {
			return nil, err
		}
	}
	return ctx.Decompress(nil, src)
}

// arrowCodec is arrow-go's zstd codec with the C library doing the work;
// what the C library rejects is left to the pure Go codec it wraps (which
// also keeps the streaming interfaces).
type arrowCodec struct{ compress.Codec }

func (c arrowCodec) Encode(dst, src []byte) []byte {
	return c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

func (c arrowCodec) EncodeLevel(dst, src []byte, level int) []byte {
	if level == compress.DefaultCompressionLevel {
		level = defaultLevel
	}
	out, err := Compress(dst, src, level)
	if err != nil {
		return c.Codec.EncodeLevel(dst, src, level)
	}
	return out
}

func (arrowCodec) CompressBound(n int64) int64 { return int64(dzstd.CompressBound(int(n))) }

func (c arrowCodec) Decode(dst, src []byte) []byte {
	out, err := c.DecodeWithError(dst, src)
	if err != nil {
		panic(err)
	}
	return out
}

func (c arrowCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	if out, err := Decompress(dst, src); err == nil {
		return out, nil
	}
	return compress.Decode(c.Codec, dst, src)
}
