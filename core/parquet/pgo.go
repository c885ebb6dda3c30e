package parquet

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	kzstd "github.com/klauspost/compress/zstd"
	pgo "github.com/parquet-go/parquet-go"
	pgocompress "github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/brotli"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Encoder names accepted by Options.Encoder.
const (
	EncoderAuto      = "auto"
	EncoderPqarrow   = "pqarrow"
	EncoderParquetGo = "parquet-go"
)

// fileEncoder encodes the batches of one Parquet file. Both encoders buffer
// one row group at a time.
type fileEncoder interface {
	// write appends rec to the buffered row group.
	write(rec arrow.RecordBatch) error
	// newRowGroup writes out the buffered row group.
	newRowGroup() error
	// rowGroupBytes is the encoded size of the buffered row group so far.
	rowGroupBytes(written int64) int64
	// overestimates reports whether rowGroupBytes counts data not yet
	// compressed (an upper bound) rather than lagging behind.
	overestimates() bool
	// close writes the footer and returns the file's metadata.
	close() (*metadata.FileMetaData, error)
	// discard drops the file unfinished, releasing what the encoder holds.
	discard()
	// fixMetrics adds to f, after footerMetrics, the bounds the encoder
	// computed itself instead of writing them into the footer.
	fixMetrics(f *File)
}

// pqarrowEncoder is the arrow-go encoder, which handles every schema.
type pqarrowEncoder struct{ fw *pqarrow.FileWriter }

func (e pqarrowEncoder) write(rec arrow.RecordBatch) error {
	if pushed, ok := pushRecordNulls(rec, memory.DefaultAllocator); ok {
		defer pushed.Release()
		rec = pushed
	}
	return e.fw.WriteBuffered(rec)
}
func (e pqarrowEncoder) newRowGroup() error { return e.fw.NewBufferedRowGroupChecked() }
func (e pqarrowEncoder) rowGroupBytes(int64) int64 {
	return e.fw.RowGroupTotalCompressedBytes()
}

func (e pqarrowEncoder) fixMetrics(*File) {}

func (e pqarrowEncoder) overestimates() bool { return false }

func (e pqarrowEncoder) discard() {}

func (e pqarrowEncoder) close() (*metadata.FileMetaData, error) {
	if err := e.fw.Close(); err != nil {
		return nil, withIO(err)
	}
	return e.fw.FileMetadata()
}

// flatColumn is how one top-level Arrow column maps to a parquet-go leaf.
type flatColumn struct {
	node     pgo.Node
	optional bool
	dict     bool // dictionary encoding is worth trying (not for bool)
	fixed    int  // decimal width of FIXED_LEN_BYTE_ARRAY decimals, else 0
	width    int  // plain-encoded bytes per value; 0 for byte arrays
	id       int  // Iceberg field id, -1 when absent
}

// flatSchema maps a schema of top-level primitive columns to parquet-go
// nodes; ok is false, with the first unsupported column named in why, when
// some column needs the pqarrow encoder.
func flatSchema(sc *arrow.Schema) (cols []flatColumn, why string, ok bool) {
	cols = make([]flatColumn, len(sc.Fields()))
	for i, f := range sc.Fields() {
		var n pgo.Node
		c := flatColumn{dict: true, optional: f.Nullable}
		switch t := f.Type.(type) {
		case *arrow.BooleanType:
			n, c.dict, c.width = pgo.Leaf(pgo.BooleanType), false, 1
		case *arrow.Int32Type:
			n, c.width = pgo.Int(32), 4
		case *arrow.Int64Type:
			n, c.width = pgo.Int(64), 8
		// Floats are never dictionary encoded: parquet-go v0.32.0 lets NaN
		// into the bounds of dictionary pages.
		case *arrow.Float32Type:
			n, c.dict, c.width = pgo.Leaf(pgo.FloatType), false, 4
		case *arrow.Float64Type:
			n, c.dict, c.width = pgo.Leaf(pgo.DoubleType), false, 8
		case *arrow.Decimal128Type:
			p, s := int(t.Precision), int(t.Scale)
			switch {
			case p < 1:
				return nil, f.Name, false
			case p <= 9:
				n, c.width = pgo.Decimal(s, p, pgo.Int32Type), 4
			case p <= 18:
				n, c.width = pgo.Decimal(s, p, pgo.Int64Type), 8
			default:
				c.fixed = decimalBytes(p)
				c.width = c.fixed
				n = pgo.Decimal(s, p, pgo.FixedLenByteArrayType(c.fixed))
			}
		case *arrow.Date32Type:
			n, c.width = pgo.Date(), 4
		case *arrow.Time64Type:
			if t.Unit != arrow.Microsecond {
				return nil, f.Name, false
			}
			n, c.width = pgo.TimeAdjusted(pgo.Microsecond, false), 8
		case *arrow.TimestampType:
			if t.Unit != arrow.Microsecond {
				return nil, f.Name, false
			}
			n, c.width = pgo.TimestampAdjusted(pgo.Microsecond, t.TimeZone != ""), 8
		case *arrow.StringType:
			n = pgo.String()
		case *arrow.BinaryType:
			n = pgo.Leaf(pgo.ByteArrayType)
		case *arrow.FixedSizeBinaryType:
			n, c.width = pgo.Leaf(pgo.FixedLenByteArrayType(t.ByteWidth)), t.ByteWidth
		case *extensions.UUIDType:
			n, c.width = pgo.UUID(), 16
		default:
			return nil, f.Name, false
		}
		if c.optional {
			n = pgo.Optional(n)
		} else {
			n = pgo.Required(n)
		}
		c.id = -1
		if id, ok := fieldID(f); ok {
			n = pgo.FieldID(n, id)
			c.id = id
		}
		c.node = n
		cols[i] = c
	}
	return cols, "", true
}

// decimalBytes is the smallest FIXED_LEN_BYTE_ARRAY width holding
// precision digits, the width arrow-go and Iceberg use.
func decimalBytes(precision int) int {
	for n := 1; ; n++ {
		if float64(precision) <= math.Floor(math.Log10(math.Pow(2, float64(8*n-1))-1)) {
			return n
		}
	}
}

// orderedGroup is a parquet-go group node that keeps its fields in the
// Arrow schema's order (parquet-go's Group sorts them by name).
type orderedGroup struct {
	pgo.Group
	fields []pgo.Field
}

func (g *orderedGroup) Fields() []pgo.Field { return g.fields }

// namedField is a field of an orderedGroup.
type namedField struct {
	pgo.Node
	name string
}

func (f *namedField) Name() string { return f.name }

// Value is only used when writing Go structs, which this package never does.
func (f *namedField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

func newOrderedGroup(sc *arrow.Schema, cols []flatColumn, noDict, raw map[string]bool, plain bool) *orderedGroup {
	g := &orderedGroup{Group: pgo.Group{}}
	for i, f := range sc.Fields() {
		n := cols[i].node
		switch k := n.Type().Kind(); {
		case cols[i].dict && !noDict[f.Name]:
			n = pgo.Encoded(n, &pgo.RLEDictionary)
		case plain:
			n = pgo.Encoded(n, &pgo.Plain)
		case k == pgo.Int32 || k == pgo.Int64:
			// Bit-packed deltas: the values take their real width, and zstd
			// is spared PLAIN's runs of zero bytes, where it finds a short
			// match every few bytes (l_partkey at 83 MB/s, measured in
			// docs/decisions.md). Byte arrays get parquet-go's default,
			// DELTA_LENGTH_BYTE_ARRAY.
			n = pgo.Encoded(n, &pgo.DeltaBinaryPacked)
			if raw[f.Name] {
				// The codec would not shrink them (incompressibleColumns).
				n = pgo.Compressed(n, &pgo.Uncompressed)
			}
		}
		g.Group[f.Name] = n
		g.fields = append(g.fields, &namedField{Node: n, name: f.Name})
	}
	return g
}

// ZstdCompressor compresses src at a zstd level (1 to 22, or negative for
// the fast levels) into one zstd frame appended to dst[:0]. It must be safe
// for concurrent use.
type ZstdCompressor func(dst, src []byte, level int) ([]byte, error)

var zstdCompressor atomic.Pointer[ZstdCompressor]

// SetZstdCompressor makes c compress the zstd pages of the flat encoders
// (native and parquet-go) from now on; nil goes back to klauspost/compress.
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

// pgoCodec maps the resolved codec and level to a parquet-go codec with the
// same settings as the pqarrow path.
func (r resolved) pgoCodec() pgocompress.Codec {
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

// pgoEncoder writes a flat schema with parquet-go, feeding each column's
// values from the Arrow arrays in page-sized runs.
type pgoEncoder struct {
	w    *pgo.GenericWriter[any]
	cols []flatColumn
	cws  []*pgo.ColumnWriter
	// scratch holds each encoding goroutine's buffers (see write).
	scratch []encodeScratch
	// decBounds holds the bounds of FIXED_LEN_BYTE_ARRAY decimal columns
	// (by column index), which parquet-go would order as unsigned bytes:
	// their footer bounds are left out and computed here instead.
	decBounds map[int]*decimalBound
	// strBounds holds, by column, the bounds of the byte-array columns,
	// which parquet-go does not compute (see pagebounds.go); nil for others.
	strBounds []*byteBounds

	// Pages are cut by rows (pageRowLimit) and by plain-encoded bytes
	// (pageBytes, per column); pageRows and pageUsed count each column's
	// rows and bytes since its last cut.
	pageRowLimit int
	pageBytes    []int
	pageRows     []int
	pageUsed     []int
	openCount
	rgRows int64
	// blooms builds the bloom filter of each column that has one (nil
	// otherwise); filters holds the finished ones by row group, then column.
	// They are written after the last row group, by rewriting the footer
	// parquet-go wrote (see closeRewritingFooter).
	blooms  []*bloomBuilder
	filters [][][]byte
	sink    *captureWriter
}

// captureWriter passes writes on to w, or keeps them in buf while buf is
// set, and counts the bytes passed on.
type captureWriter struct {
	w   io.Writer
	buf *bytes.Buffer
	n   int64
}

func (c *captureWriter) Write(p []byte) (int, error) {
	if c.buf != nil {
		return c.buf.Write(p)
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// decimalBound is the running min and max of a decimal column.
type decimalBound struct {
	set    bool
	lo, hi decimal128.Num
}

// pgoChunkRows bounds the values handed to a column writer at once, so that
// pages stay close to the page size.
const pgoChunkRows = 4096

// pgoPageBytes is the page buffer size. parquet-go counts values buffered
// for the open page uncompressed in its size estimate, which the writer rolls
// files on; pages are kept small against the target file size (1/8 of it over
// all columns) so that estimate stays close to the bytes really written.
func pgoPageBytes(r resolved, ncols int) int {
	limit := r.TargetFileSize / int64(8*max(1, ncols))
	return int(max(4<<10, min(r.PageBytes, limit)))
}

func newPgoEncoder(out io.Writer, sc *arrow.Schema, cols []flatColumn, r resolved, noDict, raw []string, bloom map[int]BloomFilter) (*pgoEncoder, error) {
	nd, rw := map[string]bool{}, map[string]bool{}
	for _, n := range noDict {
		nd[n] = true
	}
	for _, n := range raw {
		rw[n] = true
	}
	schema := pgo.NewSchema("schema", newOrderedGroup(sc, cols, nd, rw, r.PlainEncodings))
	decBounds := map[int]*decimalBound{}
	strBounds := make([]*byteBounds, len(cols))
	opts := []pgo.WriterOption{schema}
	for i, c := range cols {
		if c.width == 0 {
			strBounds[i] = &byteBounds{}
			opts = append(opts, pgo.SkipPageBounds(sc.Field(i).Name))
		}
		if c.fixed > 0 {
			decBounds[i] = &decimalBound{}
			opts = append(opts, pgo.SkipPageBounds(sc.Field(i).Name))
		}
	}
	opts = append(opts,
		pgo.Compression(r.pgoCodec()),
		pgo.PageBufferSize(pgoPageBytes(r, len(cols))),
		pgo.DictionaryMaxBytes(r.DictionaryPageBytes),
		pgo.DataPageVersion(1),
		// Encoded pages past the first MB of each column chunk wait for
		// their row group's flush in a temporary file (spill.go).
		pgo.ColumnPageBuffers(pageSpill),
		// No min/max in page headers (the column index has them): each
		// costs a pass over the page's values.
		pgo.DataPageStatistics(false),
		// No buffer of parquet-go's own: the file already has one, and
		// bytes held back there would make the Writer's count of bytes
		// written (which sizes row groups and files) lag.
		pgo.WriteBufferSize(-1),
	)
	if _, err := pgo.NewWriterConfig(opts...); err != nil {
		return nil, fmt.Errorf("parquet-go config: %w", err)
	}
	e := &pgoEncoder{
		cols: cols, decBounds: decBounds, strBounds: strBounds, sink: &captureWriter{w: out},
		pageRowLimit: int(min(r.PageRowLimit, math.MaxInt32)), pageBytes: make([]int, len(cols)),
		pageRows: make([]int, len(cols)), pageUsed: make([]int, len(cols)),
	}
	for i, c := range cols {
		e.pageBytes[i] = pgoPageBytes(r, len(cols))
		if c.dict && !nd[sc.Field(i).Name] {
			// parquet-go checks the dictionary limit only when it cuts a
			// page, so a page's new values can overshoot it: smaller pages
			// keep a dictionary within 1/8 of the limit.
			e.pageBytes[i] = min(e.pageBytes[i], int(max(r.DictionaryPageBytes/8, 1024)))
		}
	}
	if len(bloom) > 0 {
		e.blooms = make([]*bloomBuilder, len(cols))
		for i, bf := range bloom {
			e.blooms[i] = newBloomBuilder(bf, r.BloomMaxBytes)
		}
	}
	// The options, not a *WriterConfig built from them: parquet-go merges a
	// config into its defaults with OR for booleans, which would turn page
	// statistics back on.
	e.w = pgo.NewGenericWriter[any](e.sink, opts...)
	e.cws = e.w.ColumnWriters()
	e.openCount = newOpenCount()
	return e, nil
}

// encodeScratch is one goroutine's buffers for converting Arrow values.
type encodeScratch struct {
	vals  []pgo.Value
	fixed []byte // big-endian decimal scratch
}

// encodersBusy counts the encoders inside write or newRowGroup, the
// goroutines encoding now; parallelColumnRows is the smallest batch whose
// columns are spread over goroutines.
var encodersBusy atomic.Int32

const parallelColumnRows = 4096

// openEncoders counts the parquet-go encoders with a file open. Each holds
// an open page per column, uncompressed: with a write to many partitions at
// once those pages were most of the memory (bench W2: 84 files open, about
// 500 MB of open pages). Past fullPageFiles open files, page limits shrink
// in proportion (see pageLimits): at 84 files, 500 MB less at the peak for
// 2% more bytes and no measurable time (docs/decisions.md).
var openEncoders atomic.Int32

const (
	fullPageFiles = 16
	minPageRows   = 1024
	minPageBytes  = 4 << 10
)

// pageLimits are the rows and plain-encoded bytes at which column i's page
// is cut now: the configured limits while at most fullPageFiles files are
// open, a share of them (not below minPageRows and minPageBytes) past that.
func (e *pgoEncoder) pageLimits(i int) (rows, bytes int) {
	return pageLimitsFor(e.pageRowLimit, e.pageBytes[i])
}

// pageLimitsFor shares the limits rows and bytes out as pageLimits says.
func pageLimitsFor(rows, bytes int) (int, int) {
	if k := int(openEncoders.Load()); k > fullPageFiles {
		rows = max(min(rows, minPageRows), rows*fullPageFiles/k)
		bytes = max(min(bytes, minPageBytes), bytes*fullPageFiles/k)
	}
	return rows, bytes
}

// spreadColumns can switch the spreading off (tests compare the files).
var spreadColumns = true

// eachColumn runs fn on every column, spread over the cores no other
// encoder is using: a lone file (an overwrite of one partition, a small
// table) encodes on every core, while writers that already keep every
// core busy encode their columns in turn without extra goroutines. Spread
// columns are taken largest first by cost (longest job first), so that no
// core is left alone with a large column at the end: in schema order,
// lineitem's l_comment came last and one core encoded it alone.
func (e *pgoEncoder) eachColumn(rows int, cost func(i int) int64, fn func(i int, sc *encodeScratch) error) error {
	return eachColumnSpread(&e.scratch, len(e.cols), rows, cost, fn)
}

// eachColumnSpread is eachColumn for any encoder: ncols columns, and
// scratch holding one S per goroutine (grown as needed). A nil cost keeps
// the columns in schema order.
func eachColumnSpread[S any](scratch *[]S, ncols, rows int, cost func(i int) int64, fn func(i int, sc *S) error) error {
	busy := int(encodersBusy.Add(1))
	defer encodersBusy.Add(-1)
	helpers := 0
	if spreadColumns && rows >= parallelColumnRows {
		helpers = max(0, min(runtime.GOMAXPROCS(0)-busy, ncols-1))
	}
	if len(*scratch) < helpers+1 {
		*scratch = append(*scratch, make([]S, helpers+1-len(*scratch))...)
	}
	sc := *scratch
	if helpers == 0 {
		for i := range ncols {
			if err := fn(i, &sc[0]); err != nil {
				return err
			}
		}
		return nil
	}
	order := make([]int, ncols)
	for i := range order {
		order[i] = i
	}
	if cost != nil {
		costs := make([]int64, ncols)
		for i := range costs {
			costs[i] = cost(i)
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(costs[b], costs[a]) })
	}
	var next atomic.Int32
	failed := make([]error, helpers+1)
	work := func(k int) {
		defer func() {
			if r := recover(); r != nil {
				failed[k] = fmt.Errorf("encoding a column: panic: %v", r)
			}
		}()
		for {
			j := int(next.Add(1)) - 1
			if j >= len(order) || failed[k] != nil {
				return
			}
			failed[k] = fn(order[j], &sc[k])
		}
	}
	var wg sync.WaitGroup
	for k := 1; k <= helpers; k++ {
		wg.Go(func() { work(k) })
	}
	work(0)
	wg.Wait()
	for _, err := range failed {
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *pgoEncoder) write(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if err := checkRequired(e.cols, rec); err != nil {
		return err
	}
	err := e.eachColumn(n, func(i int) int64 { return sliceBytes(rec.Column(i)) }, func(i int, sc *encodeScratch) error {
		return e.writeColumn(i, rec.Column(i), n, sc)
	})
	if err != nil {
		return err
	}
	e.rgRows += int64(n)
	return nil
}

// checkRequired rejects a batch with nulls in a column cols says is required.
func checkRequired(cols []flatColumn, rec arrow.RecordBatch) error {
	for i, c := range cols {
		if arr := rec.Column(i); !c.optional && arr.NullN() > 0 {
			return fmt.Errorf("column %q is required but has %d nulls: %w",
				rec.Schema().Field(i).Name, arr.NullN(), errs.ErrInvalidArgument)
		}
	}
	return nil
}

// writeColumn hands rows [0, n) of arr, column i, to its column writer.
func (e *pgoEncoder) writeColumn(i int, arr arrow.Array, n int, sc *encodeScratch) error {
	c := e.cols[i]
	rowLimit, byteLimit := e.pageLimits(i)
	for off := 0; off < n; {
		if e.pageRows[i] >= rowLimit || e.pageUsed[i] >= byteLimit {
			// The limits shrank since the page was opened.
			if err := e.cws[i].Flush(); err != nil {
				return withIO(err)
			}
			e.pageRows[i], e.pageUsed[i] = 0, 0
		}
		end, size := e.chunkEnd(i, arr, off, n, rowLimit, byteLimit)
		vals, err := e.values(i, arr, off, end, sc)
		if err != nil {
			return err
		}
		if _, err := e.cws[i].WriteRowValues(vals); err != nil {
			return withIO(err)
		}
		if e.blooms != nil && e.blooms[i] != nil {
			e.blooms[i].addArrow(arr, off, end, sc.fixed, c.fixed)
		}
		if b := e.strBounds[i]; b != nil {
			b.add(arr, off, end)
		}
		// parquet-go cuts a page on its own only once its buffer is past
		// the page size, by up to a whole chunk; cutting here keeps pages
		// within the row limit and (but for a single huge value) the page
		// size.
		e.pageRows[i] += end - off
		e.pageUsed[i] += size
		if e.pageRows[i] >= rowLimit || e.pageUsed[i] >= byteLimit {
			if err := e.cws[i].Flush(); err != nil {
				return withIO(err)
			}
			e.pageRows[i], e.pageUsed[i] = 0, 0
		}
		off = end
	}
	return nil
}

// chunkEnd picks the rows [off, end) of column i handed to parquet-go next:
// at most pgoChunkRows, and no more than fit in the open page's rows and
// bytes under the limits (at least one row). size is their plain-encoded bytes.
func (e *pgoEncoder) chunkEnd(i int, arr arrow.Array, off, n, rowLimit, byteLimit int) (end, size int) {
	return chunkEndFor(e.cols[i].width, arr, off, n, rowLimit-e.pageRows[i], byteLimit-e.pageUsed[i])
}

// chunkEndFor is chunkEnd for a column of plain width (0 for byte arrays)
// whose open page has room for rowsLeft more rows and budget more bytes.
func chunkEndFor(width int, arr arrow.Array, off, n, rowsLeft, budget int) (end, size int) {
	rows := min(n-off, pgoChunkRows, rowsLeft)
	if width > 0 {
		rows = max(1, min(rows, budget/width))
		return off + rows, rows * width
	}
	var offs []int32
	switch a := arr.(type) {
	case *array.String:
		offs = a.ValueOffsets()
	case *array.Binary:
		offs = a.ValueOffsets()
	default:
		return off + max(1, rows), 0
	}
	bytesOf := func(k int) int { return int(offs[off+k]-offs[off]) + 4*k }
	// The largest k <= rows whose bytes fit the budget, at least 1.
	k := sort.Search(rows, func(k int) bool { return bytesOf(k+1) > budget })
	k = max(1, k)
	return off + k, bytesOf(k)
}

// values converts rows [off, end) of arr, column i, into parquet values
// with definition levels. Byte values point into the Arrow buffers (or the
// decimal scratch), which the column buffer copies. Column indexes are left
// unset: a ColumnWriter only reads kinds, levels and payloads.
func (e *pgoEncoder) values(i int, arr arrow.Array, off, end int, sc *encodeScratch) ([]pgo.Value, error) {
	c := e.cols[i]
	if cap(sc.vals) < end-off {
		sc.vals = make([]pgo.Value, end-off)
	}
	vals := sc.vals[:end-off]
	switch a := arr.(type) {
	case *array.Boolean:
		for j := range vals {
			vals[j] = pgo.BooleanValue(a.Value(off + j))
		}
	case *array.Int32:
		fillInt32(vals, a.Int32Values()[off:end])
	case *array.Int64:
		fillInt64(vals, a.Int64Values()[off:end])
	case *array.Float32:
		for j, v := range a.Float32Values()[off:end] {
			vals[j] = pgo.FloatValue(v)
		}
	case *array.Float64:
		for j, v := range a.Float64Values()[off:end] {
			vals[j] = pgo.DoubleValue(v)
		}
	case *array.Date32:
		fillInt32(vals, a.Date32Values()[off:end])
	case *array.Time64:
		fillInt64(vals, a.Time64Values()[off:end])
	case *array.Timestamp:
		fillInt64(vals, a.TimestampValues()[off:end])
	case *array.Decimal128:
		nums := a.Values()[off:end]
		switch p := a.DataType().(*arrow.Decimal128Type).Precision; {
		case p <= 9:
			for j, n := range nums {
				vals[j] = pgo.Int32Value(int32(n.LowBits()))
			}
		case p <= 18:
			for j, n := range nums {
				vals[j] = pgo.Int64Value(int64(n.LowBits()))
			}
		default:
			e.decBounds[i].add(nums, arr, off)
			w := c.fixed
			if need := len(nums) * w; cap(sc.fixed) < need {
				sc.fixed = make([]byte, need)
			}
			buf := sc.fixed[:len(nums)*w]
			var be [16]byte
			for j, n := range nums {
				binary.BigEndian.PutUint64(be[:8], uint64(n.HighBits()))
				binary.BigEndian.PutUint64(be[8:], n.LowBits())
				dst := buf[j*w : (j+1)*w]
				copy(dst, be[16-w:])
				vals[j] = pgo.FixedLenByteArrayValue(dst)
			}
		}
	case *array.String:
		offs, data := a.ValueOffsets()[off:end+1], a.ValueBytes()
		base := a.ValueOffsets()[0]
		for j := range vals {
			vals[j] = pgo.ByteArrayValue(data[offs[j]-base : offs[j+1]-base])
		}
	case *array.Binary:
		for j := range vals {
			vals[j] = pgo.ByteArrayValue(a.Value(off + j))
		}
	case *extensions.UUIDArray:
		st := a.Storage().(*array.FixedSizeBinary)
		for j := range vals {
			vals[j] = pgo.FixedLenByteArrayValue(st.Value(off + j))
		}
	case *array.FixedSizeBinary:
		for j := range vals {
			vals[j] = pgo.FixedLenByteArrayValue(a.Value(off + j))
		}
	default:
		return nil, fmt.Errorf("column %d: parquet-go encoder cannot write %s: %w", i, arr.DataType(), errs.ErrInvalidArgument)
	}
	if c.optional {
		setLevels(vals, arr, off)
	}
	return vals, nil
}

func fillInt32[T ~int32](vals []pgo.Value, src []T) {
	for j, v := range src {
		vals[j] = pgo.Int32Value(int32(v))
	}
}

func fillInt64[T ~int64](vals []pgo.Value, src []T) {
	for j, v := range src {
		vals[j] = pgo.Int64Value(int64(v))
	}
}

// setLevels gives the valid rows of an optional column definition level 1
// and turns the null rows into null values (level 0).
func setLevels(vals []pgo.Value, arr arrow.Array, off int) {
	if arr.NullN() == 0 {
		for j := range vals {
			vals[j].SetDefinitionLevel(1)
		}
		return
	}
	for j := range vals {
		if arr.IsValid(off + j) {
			vals[j].SetDefinitionLevel(1)
		} else {
			vals[j] = pgo.Value{}
		}
	}
}

func (e *pgoEncoder) newRowGroup() error {
	// The last page of each column is encoded and compressed here, on the
	// cores other encoders leave free; parquet-go then writes the chunks.
	err := e.eachColumn(int(e.rgRows), func(i int) int64 { return int64(e.pageUsed[i]) }, func(i int, _ *encodeScratch) error {
		if err := e.cws[i].Flush(); err != nil {
			return withIO(err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := e.w.Flush(); err != nil {
		return withIO(err)
	}
	clear(e.pageRows)
	clear(e.pageUsed)
	if e.rgRows == 0 {
		return nil // parquet-go writes no empty row group
	}
	e.rgRows = 0
	for _, b := range e.strBounds {
		if b != nil {
			b.finishRowGroup()
		}
	}
	if e.blooms != nil {
		e.filters = append(e.filters, finishBlooms(e.blooms))
	}
	return nil
}

func (e *pgoEncoder) overestimates() bool { return true }

func (e *pgoEncoder) rowGroupBytes(written int64) int64 {
	return max(0, e.w.Size()-written)
}

// close writes the footer and re-reads it as arrow-go metadata, so that
// both encoders share footerMetrics.
func (e *pgoEncoder) close() (*metadata.FileMetaData, error) {
	defer e.release()
	if e.blooms != nil || len(e.decBounds) > 0 || slices.ContainsFunc(e.strBounds, func(b *byteBounds) bool { return b != nil }) {
		return e.closeRewritingFooter()
	}
	if err := e.w.Close(); err != nil {
		return nil, withIO(err)
	}
	md := e.w.File().Metadata()
	raw, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		return nil, fmt.Errorf("encoding footer: %w", err)
	}
	return metadata.NewFileMetaData(raw, nil)
}

// discard drops the unfinished file: parquet-go's Reset hands the page
// buffers back (closing spilled ones).
func (e *pgoEncoder) discard() {
	defer e.release()
	// After a panic inside parquet-go its state may not reset cleanly;
	// the file is dropped either way.
	defer func() { _ = recover() }()
	e.w.Reset(io.Discard)
}

// openCount is an encoder's place in openEncoders: counted when the
// encoder is made, released once.
type openCount struct{ released bool }

func newOpenCount() openCount { openEncoders.Add(1); return openCount{} }

// release takes the encoder out of openEncoders, once.
func (o *openCount) release() {
	if !o.released {
		o.released = true
		openEncoders.Add(-1)
	}
}

// add widens b with the valid values of nums, rows off.. of arr.
func (b *decimalBound) add(nums []decimal128.Num, arr arrow.Array, off int) {
	nulls := arr.NullN() > 0
	for j, v := range nums {
		if nulls && arr.IsNull(off+j) {
			continue
		}
		if !b.set || v.Less(b.lo) {
			b.lo = v
		}
		if !b.set || b.hi.Less(v) {
			b.hi = v
		}
		b.set = true
	}
}

func (e *pgoEncoder) fixMetrics(f *File) { fixDecimalMetrics(f, e.cols, e.decBounds) }

// fixDecimalMetrics sets the bounds of the FIXED_LEN_BYTE_ARRAY decimal
// columns (by column index in bounds) that the encoder kept out of the
// footer.
func fixDecimalMetrics(f *File, cols []flatColumn, bounds map[int]*decimalBound) {
	for i, b := range bounds {
		id := cols[i].id
		if id < 0 || !b.set {
			continue
		}
		f.Lower[id] = decimalBytesOf(b.lo)
		f.Upper[id] = decimalBytesOf(b.hi)
	}
}

// decimalBytesOf is Iceberg's decimal serialisation: minimal big-endian
// two's complement of the unscaled value.
func decimalBytesOf(n decimal128.Num) []byte {
	var be [16]byte
	binary.BigEndian.PutUint64(be[:8], uint64(n.HighBits()))
	binary.BigEndian.PutUint64(be[8:], n.LowBits())
	return minimalTwosComplement(be[:])
}

// closeRewritingFooter writes the last row group, lets parquet-go write its
// page index and footer into a buffer, and writes the page index, the bloom
// filters and a footer of its own: with the filters' offsets (bloom filters
// may be anywhere in the file before the footer), with the bounds the
// encoder computed for byte-array columns (pagebounds.go), and without the
// column index of FIXED_LEN_BYTE_ARRAY decimals, whose pages parquet-go
// would give empty bounds: an invalid index that readers reject or, worse,
// skip pages by.
func (e *pgoEncoder) closeRewritingFooter() (*metadata.FileMetaData, error) {
	if err := e.newRowGroup(); err != nil {
		return nil, err
	}
	e.sink.buf = new(bytes.Buffer)
	if err := e.w.Close(); err != nil {
		return nil, withIO(err)
	}
	tail := e.sink.buf.Bytes()
	e.sink.buf = nil
	if len(tail) < 8 || string(tail[len(tail)-4:]) != "PAR1" {
		return nil, fmt.Errorf("parquet-go wrote no footer")
	}
	start := len(tail) - 8 - int(binary.LittleEndian.Uint32(tail[len(tail)-8:]))
	if start < 0 {
		return nil, fmt.Errorf("parquet-go footer length out of range")
	}
	proto := new(thrift.CompactProtocol)
	var md format.FileMetaData
	if err := thrift.Unmarshal(proto, tail[start:len(tail)-8], &md); err != nil {
		return nil, fmt.Errorf("decoding parquet-go footer: %w", err)
	}
	if e.blooms != nil && len(md.RowGroups) != len(e.filters) {
		return nil, fmt.Errorf("parquet-go wrote %d row groups, bloom filters were built for %d", len(md.RowGroups), len(e.filters))
	}
	fix := pageIndexFixer{md: &md, bounds: map[int]*byteBounds{}, drop: e.decBounds}
	for c, b := range e.strBounds {
		if b != nil {
			if len(b.rgs) != len(md.RowGroups) {
				return nil, fmt.Errorf("parquet-go wrote %d row groups, bounds were kept for %d", len(md.RowGroups), len(b.rgs))
			}
			fix.bounds[c] = b
		}
	}
	section, err := fix.rewrite(tail[:start], e.sink.n)
	if err != nil {
		return nil, err
	}
	if _, err := e.sink.Write(section); err != nil {
		return nil, withIO(err)
	}
	if err := writeBloomFilters(e.sink, &md, e.filters); err != nil {
		return nil, err
	}
	e.filters = nil
	return writeFooter(e.sink, &md)
}

// finishBlooms finishes a row group's bloom filters (nil where a column has
// none).
func finishBlooms(blooms []*bloomBuilder) [][]byte {
	rg := make([][]byte, len(blooms))
	for i, b := range blooms {
		if b != nil {
			rg[i] = b.finish()
		}
	}
	return rg
}

// writeBloomFilters writes filters (by row group, then column; nil where a
// column has none) to sink and points md's column chunks at them.
func writeBloomFilters(sink *captureWriter, md *format.FileMetaData, filters [][][]byte) error {
	proto := new(thrift.CompactProtocol)
	for rg, cols := range filters {
		for c, bitset := range cols {
			if bitset == nil {
				continue
			}
			hdr := format.BloomFilterHeader{NumBytes: int32(len(bitset))}
			hdr.Algorithm.Value = &format.SplitBlockAlgorithm{}
			hdr.Hash.Value = &format.XxHash{}
			hdr.Compression.Value = &format.BloomFilterUncompressed{}
			raw, err := thrift.Marshal(proto, &hdr)
			if err != nil {
				return fmt.Errorf("encoding bloom filter header: %w", err)
			}
			meta := &md.RowGroups[rg].Columns[c].MetaData
			meta.BloomFilterOffset = sink.n
			meta.BloomFilterLength = int32(len(raw) + len(bitset))
			if _, err := sink.Write(raw); err != nil {
				return withIO(err)
			}
			if _, err := sink.Write(bitset); err != nil {
				return withIO(err)
			}
		}
	}
	return nil
}

// writeFooter writes md, its length and the closing magic to sink, and
// returns md as arrow-go reads it.
func writeFooter(sink *captureWriter, md *format.FileMetaData) (*metadata.FileMetaData, error) {
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		return nil, fmt.Errorf("encoding footer: %w", err)
	}
	trailer := binary.LittleEndian.AppendUint32(nil, uint32(len(footer)))
	for _, b := range [][]byte{footer, append(trailer, "PAR1"...)} {
		if _, err := sink.Write(b); err != nil {
			return nil, withIO(err)
		}
	}
	return metadata.NewFileMetaData(footer, nil)
}
