// Package parquet writes Arrow record batches into rolling Parquet data files
// and computes the column metrics an Iceberg DataFile carries (sizes, value,
// null and NaN counts, lower/upper bounds, split offsets).
package parquet

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Table property keys read by OptionsFromProperties.
const (
	PropCompressionCodec = "write.parquet.compression-codec"
	PropCompressionLevel = "write.parquet.compression-level"
	PropTargetFileSize   = "write.target-file-size-bytes"
	PropRowGroupBytes    = "write.parquet.row-group-size-bytes"
	PropPageBytes        = "write.parquet.page-size-bytes"
	PropDictPageBytes    = "write.parquet.dict-size-bytes"
	PropPageRowLimit     = "write.parquet.page-row-limit"
	// PropBloomMaxBytes caps every bloom filter of a file.
	PropBloomMaxBytes = "write.parquet.bloom-filter-max-bytes"
	// PropBloomAdaptive is accepted for compatibility; filters are always
	// sized from the distinct values seen (see Options.BloomFilters).
	PropBloomAdaptive = "write.parquet.bloom-filter-adaptive-enabled"
	// Per-column prefixes: the Iceberg column name follows, dotted for
	// nested fields (list elements are "element", map entries "key" and
	// "value").
	PropBloomEnabledPrefix = "write.parquet.bloom-filter-enabled.column."
	PropBloomFPPPrefix     = "write.parquet.bloom-filter-fpp.column."
	PropBloomNDVPrefix     = "write.parquet.bloom-filter-ndv.column."
	PropDictEnabledPrefix  = "write.parquet.dict-encoding-enabled.column."
	// PropDeltaEncodings (ours, default true) encodes the integer and byte
	// array columns written without a dictionary with DELTA_BINARY_PACKED
	// and DELTA_LENGTH_BYTE_ARRAY; false writes them PLAIN, for readers
	// that predate those encodings (Iceberg's vectorized Spark reader
	// before 1.10 and 1.11). Only flat schemas (the native encoder) use
	// them; nested schemas are written by arrow-go's pqarrow with its own
	// encodings.
	PropDeltaEncodings = "pyiceberg-go.parquet.delta-encodings"
	// PropSkipIncompressible (ours, default true) stores uncompressed the
	// column chunks of delta-encoded integer columns whose values the codec
	// shrinks by less than 2%, judged on a sample of each file's (or
	// partitioned write's) first rows: bit-packed random keys, prices and
	// dates gain nothing from zstd, which still spends its time trying.
	// false compresses every column chunk with the codec. Only flat schemas
	// (the native encoder) are written so; nested ones compress every chunk.
	PropSkipIncompressible = "pyiceberg-go.parquet.skip-incompressible"
)

// Defaults, equal to Iceberg Java's.
const (
	DefaultTargetFileSize      int64 = 512 << 20
	DefaultCodec                     = "zstd"
	DefaultRowGroupBytes       int64 = 128 << 20
	DefaultPageBytes           int64 = 1 << 20
	DefaultDictionaryPageBytes int64 = 2 << 20
	DefaultPageRowLimit        int64 = 20000
	DefaultBloomMaxBytes       int64 = 1 << 20
	DefaultBloomFPP                  = 0.01
)

// Bloom filter sizes are clamped to these bounds, as parquet-java does.
const (
	minBloomBytes = 32
	maxBloomBytes = 128 << 20
)

// BloomFilter configures the bloom filter of one column.
type BloomFilter struct {
	// FPP is the false positive probability the filter is sized for; zero
	// means DefaultBloomFPP.
	FPP float64
	// NDV, when positive, is the expected number of distinct values per
	// row group, which sizes the filter as in parquet-java. When zero the
	// filter is sized from the distinct values each row group really holds.
	NDV int64
}

// Options configures a Writer. Zero values mean the defaults above.
type Options struct {
	// TargetFileSize rolls to a new file once the bytes written to the current
	// file (including its buffered row group) reach it.
	TargetFileSize int64
	// Codec is one of zstd (default), snappy, gzip, brotli, lz4 (written as
	// Parquet LZ4_RAW), uncompressed or none.
	Codec string
	// Level is the compression level; nil means the codec's default.
	Level               *int
	RowGroupBytes       int64
	PageBytes           int64
	DictionaryPageBytes int64
	// NoDictionary, when not nil, names the columns written without a
	// dictionary, instead of each file deciding from its own first batch.
	// A partitioned write decides once on whole batches (see
	// DecideDictionary): a small partition's first batch says too little.
	NoDictionary []string
	// PageRowLimit cuts a data page once it holds this many rows (flat
	// schemas, which the native encoder writes; arrow-go v18.8.0, which
	// writes nested ones, cuts pages by bytes alone).
	PageRowLimit int64
	// BloomFilters maps Iceberg column names (dotted for nested fields) to
	// the split-block bloom filter written for each row group of the column.
	// Each filter is sized for its row group's distinct values (or NDV) at
	// FPP, rounded up to a power of two and capped at BloomMaxBytes (itself
	// rounded down to a power of two). The pqarrow encoder uses arrow-go's
	// adaptive filters, which land up to two powers of two above that size
	// (and at least 2 KiB at the default fpp).
	BloomFilters  map[string]BloomFilter
	BloomMaxBytes int64
	// Dictionary switches dictionary encoding on or off per Iceberg column
	// name, overriding the per-file decision (NoDictionary). A dictionary
	// that outgrows DictionaryPageBytes still falls back to plain encoding.
	// The native encoder (flat schemas) never dictionary-encodes booleans,
	// floats, and FIXED_LEN_BYTE_ARRAY columns (UUIDs, fixed, decimals of
	// more than 18 digits).
	Dictionary map[string]bool
	// PlainEncodings writes columns without a dictionary PLAIN instead of
	// with the delta encodings (PropDeltaEncodings=false).
	PlainEncodings bool
	// CompressAll compresses every column chunk with the codec
	// (PropSkipIncompressible=false). Otherwise Incompressible, when not
	// nil, names the columns stored uncompressed, decided like NoDictionary
	// (nil: each file decides on its first rows).
	CompressAll    bool
	Incompressible []string
	// Pqarrow writes flat schemas with arrow-go's pqarrow as well, instead
	// of the native encoder (native.go), for tests and benchmarks that
	// compare the two. Without it, schemas of only top-level primitive
	// columns are written by the native encoder and the others by pqarrow.
	Pqarrow bool

	// Test settings, which production leaves zero: the Writer then shares
	// the process's state with every other Writer. Tests set their own so
	// that they can run in parallel.

	// serialColumns encodes a file's columns one after another, never
	// spread over other goroutines (tests compare the files).
	serialColumns bool
	// pages is the pool the native encoder's page buffers come from; nil
	// is pageSpill, the process's.
	pages *spillPool
	// openFiles counts the native encoders with a file open, whose pages
	// shrink past fullPageFiles of them; nil is openEncoders, the
	// process's.
	openFiles *atomic.Int32
}

// DecideDictionary returns o with NoDictionary and Incompressible decided
// from sample, a batch of the whole input.
func (o Options) DecideDictionary(sample arrow.RecordBatch) (Options, error) {
	r, err := o.resolve()
	if err != nil {
		return o, err
	}
	s := sample.NewSlice(0, min(sample.NumRows(), dictSampleMax))
	defer s.Release()
	o.NoDictionary = noDictionaryColumns(s, r)
	if o.NoDictionary == nil {
		o.NoDictionary = []string{}
	}
	o.Incompressible = incompressibleColumns(s, r)
	return o, nil
}

// codecInfo describes one accepted codec name.
type codecInfo struct {
	codec    compress.Compression
	minLevel int
	maxLevel int
	levels   bool
}

// codecs maps the Iceberg codec names to Parquet codecs. "lz4" is LZ4_RAW:
// the Hadoop-framed LZ4 codec is deprecated by the Parquet format, and
// LZ4_RAW is what pyarrow writes for "lz4" and what parquet-java >= 1.12.3
// (Spark 3.3+) and DuckDB read.
var codecs = map[string]codecInfo{
	"zstd":         {compress.Codecs.Zstd, 1, 22, true},
	"snappy":       {compress.Codecs.Snappy, 0, 0, false},
	"gzip":         {compress.Codecs.Gzip, 0, 9, true},
	"brotli":       {compress.Codecs.Brotli, 0, 11, true},
	"lz4":          {compress.Codecs.Lz4Raw, 0, 0, false},
	"uncompressed": {compress.Codecs.Uncompressed, 0, 0, false},
	"none":         {compress.Codecs.Uncompressed, 0, 0, false},
}

// OptionsFromProperties reads Options from Iceberg table properties (or write
// options already merged into the same keys). Missing keys keep the
// defaults; malformed values are errors wrapping errs.ErrInvalidArgument.
func OptionsFromProperties(props map[string]string) (Options, error) {
	var o Options
	if v, ok := props[PropCompressionCodec]; ok {
		o.Codec = v
	}
	if v, ok := props[PropCompressionLevel]; ok && strings.TrimSpace(v) != "" {
		l, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return Options{}, fmt.Errorf("%s=%q: not an integer: %w", PropCompressionLevel, v, errs.ErrInvalidArgument)
		}
		o.Level = &l
	}
	sizes := []struct {
		key string
		dst *int64
	}{
		{PropTargetFileSize, &o.TargetFileSize},
		{PropRowGroupBytes, &o.RowGroupBytes},
		{PropPageBytes, &o.PageBytes},
		{PropDictPageBytes, &o.DictionaryPageBytes},
		{PropPageRowLimit, &o.PageRowLimit},
		{PropBloomMaxBytes, &o.BloomMaxBytes},
	}
	for _, s := range sizes {
		v, ok := props[s.key]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return Options{}, fmt.Errorf("%s=%q: want a positive integer: %w", s.key, v, errs.ErrInvalidArgument)
		}
		*s.dst = n
	}
	if v, ok := props[PropDeltaEncodings]; ok {
		on, err := parseBool(PropDeltaEncodings, v)
		if err != nil {
			return Options{}, err
		}
		o.PlainEncodings = !on
	}
	if v, ok := props[PropSkipIncompressible]; ok {
		on, err := parseBool(PropSkipIncompressible, v)
		if err != nil {
			return Options{}, err
		}
		o.CompressAll = !on
	}
	if err := o.columnProperties(props); err != nil {
		return Options{}, err
	}
	if _, err := o.resolve(); err != nil {
		return Options{}, err
	}
	return o, nil
}

// columnProperties reads the bloom filter and per-column dictionary
// properties. As in Iceberg Java, a column's fpp and ndv only count when its
// bloom filter is enabled; unlike Java, malformed values are errors instead
// of being ignored or failing later.
func (o *Options) columnProperties(props map[string]string) error {
	if v, ok := props[PropBloomAdaptive]; ok {
		if _, err := parseBool(PropBloomAdaptive, v); err != nil {
			return err
		}
	}
	fpps, ndvs := map[string]float64{}, map[string]int64{}
	for k, v := range props {
		switch {
		case strings.HasPrefix(k, PropBloomEnabledPrefix):
			on, err := parseBool(k, v)
			if err != nil {
				return err
			}
			if col := strings.TrimPrefix(k, PropBloomEnabledPrefix); on {
				if o.BloomFilters == nil {
					o.BloomFilters = map[string]BloomFilter{}
				}
				o.BloomFilters[col] = BloomFilter{}
			}
		case strings.HasPrefix(k, PropBloomFPPPrefix):
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || !(f > 0 && f < 1) {
				return fmt.Errorf("%s=%q: want a probability between 0 and 1 (exclusive): %w", k, v, errs.ErrInvalidArgument)
			}
			fpps[strings.TrimPrefix(k, PropBloomFPPPrefix)] = f
		case strings.HasPrefix(k, PropBloomNDVPrefix):
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("%s=%q: want a positive integer: %w", k, v, errs.ErrInvalidArgument)
			}
			ndvs[strings.TrimPrefix(k, PropBloomNDVPrefix)] = n
		case strings.HasPrefix(k, PropDictEnabledPrefix):
			on, err := parseBool(k, v)
			if err != nil {
				return err
			}
			if o.Dictionary == nil {
				o.Dictionary = map[string]bool{}
			}
			o.Dictionary[strings.TrimPrefix(k, PropDictEnabledPrefix)] = on
		}
	}
	for col, bf := range o.BloomFilters {
		bf.FPP, bf.NDV = fpps[col], ndvs[col]
		o.BloomFilters[col] = bf
	}
	return nil
}

func parseBool(key, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s=%q: want true or false: %w", key, v, errs.ErrInvalidArgument)
}

// DefaultZstdLevel is the zstd level used when none is configured.
const DefaultZstdLevel = 1

// resolved holds Options with defaults applied and the codec looked up.
type resolved struct {
	Options
	codec compress.Compression
	level int
}

// resolve applies defaults and validates the codec and level.
func (o Options) resolve() (resolved, error) {
	r := resolved{Options: o, level: compress.DefaultCompressionLevel}
	if r.TargetFileSize <= 0 {
		r.TargetFileSize = DefaultTargetFileSize
	}
	if r.RowGroupBytes <= 0 {
		r.RowGroupBytes = DefaultRowGroupBytes
	}
	if r.PageBytes <= 0 {
		r.PageBytes = DefaultPageBytes
	}
	if r.DictionaryPageBytes <= 0 {
		r.DictionaryPageBytes = DefaultDictionaryPageBytes
	}
	if r.PageRowLimit <= 0 {
		r.PageRowLimit = DefaultPageRowLimit
	}
	if r.BloomMaxBytes <= 0 {
		r.BloomMaxBytes = DefaultBloomMaxBytes
	}
	// A power of two, so that no filter (whose sizes are powers of two) can
	// exceed the configured maximum.
	r.BloomMaxBytes = floorPow2(min(max(r.BloomMaxBytes, minBloomBytes), maxBloomBytes))
	if len(o.BloomFilters) > 0 {
		r.BloomFilters = make(map[string]BloomFilter, len(o.BloomFilters))
		for col, bf := range o.BloomFilters {
			if bf.FPP == 0 {
				bf.FPP = DefaultBloomFPP
			}
			if !(bf.FPP > 0 && bf.FPP < 1) { // NaN fails too
				return resolved{}, fmt.Errorf("%s%s=%v: want a probability between 0 and 1 (exclusive): %w",
					PropBloomFPPPrefix, col, bf.FPP, errs.ErrInvalidArgument)
			}
			if bf.NDV < 0 {
				return resolved{}, fmt.Errorf("%s%s=%d: want a positive integer: %w",
					PropBloomNDVPrefix, col, bf.NDV, errs.ErrInvalidArgument)
			}
			r.BloomFilters[col] = bf
		}
	}
	name := strings.ToLower(strings.TrimSpace(o.Codec))
	if name == "" {
		name = DefaultCodec
	}
	info, ok := codecs[name]
	if !ok {
		return resolved{}, fmt.Errorf("%s: unknown codec %q (want zstd, snappy, gzip, brotli, lz4, uncompressed or none): %w",
			PropCompressionCodec, o.Codec, errs.ErrInvalidArgument)
	}
	r.Codec, r.codec = name, info.codec
	if r.pages == nil {
		r.pages = pageSpill
	}
	if r.openFiles == nil {
		r.openFiles = &openEncoders
	}
	if o.Level != nil {
		l := *o.Level
		if !info.levels {
			return resolved{}, fmt.Errorf("%s=%d: codec %q takes no compression level: %w",
				PropCompressionLevel, l, name, errs.ErrInvalidArgument)
		}
		if l < info.minLevel || l > info.maxLevel {
			return resolved{}, fmt.Errorf("%s=%d: codec %q takes levels %d to %d: %w",
				PropCompressionLevel, l, name, info.minLevel, info.maxLevel, errs.ErrInvalidArgument)
		}
		r.level = l
	} else if r.codec == compress.Codecs.Zstd {
		// zstd level 1 when none is asked for: what pyarrow (and so
		// PyIceberg) writes; the codec's own default (3) costs about twice
		// the CPU for files a few percent smaller (docs/decisions.md).
		r.level = DefaultZstdLevel
	}
	return r, nil
}

// writerProps builds the Parquet writer properties for one file; noDict
// lists column paths whose dictionary encoding is switched off, and extra
// (applied last) the per-column settings of a columnPlan.
func (r resolved) writerProps(noDict []string, extra ...pq.WriterProperty) *pq.WriterProperties {
	opts := []pq.WriterProperty{
		pq.WithCompression(r.codec),
		pq.WithCompressionLevel(r.level),
		pq.WithDataPageSize(r.PageBytes),
		pq.WithDictionaryPageSizeLimit(r.DictionaryPageBytes),
		pq.WithStoreDecimalAsInteger(true),
		pq.WithDataPageVersion(pq.DataPageV1),
		pq.WithVersion(pq.V2_LATEST),
		// Rows per row group are bounded by bytes (RowGroupBytes), not by count.
		pq.WithMaxRowGroupLength(1 << 40),
	}
	for _, p := range noDict {
		opts = append(opts, pq.WithDictionaryFor(p, false))
	}
	return pq.NewWriterProperties(append(opts, extra...)...)
}
