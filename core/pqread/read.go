// Package pqread reads Parquet data files of flat Iceberg schemas into
// Arrow record batches, decoding the pages with parquet-go.
//
// Copy-on-write deletes, updates and merges read every row of the files
// they rewrite. Through iceberg-go's scan (arrow-go's pqarrow) that cost
// 0.50 CPU-s for the 454k rows of 8 lineitem files, against 0.22 for
// pyarrow's C++ reader and 0.11 for parquet-go's page decoding
// (docs/decisions.md). This reader builds each Arrow buffer straight from
// the decoded pages: dictionary-encoded columns are gathered from the
// dictionary without a builder, plain runs are copied whole.
//
// It takes only the files it can read exactly as iceberg-go would: every
// column of the schema a top-level primitive found in the file by field
// ID, with the physical type and unit the table's type is written with.
// Open reports anything else (nested types, missing or promoted columns,
// INT96 or millisecond timestamps, UUIDs, files without field IDs) as not
// supported, and the caller reads the file with iceberg-go.
package pqread

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	pgo "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// readBufferBytes is the size of each column's reads from the file
// (parquet-go's default is 4 KB). On object stores each ReadAt is a
// ranged request, so small reads would mean one request per 4 KB.
const readBufferBytes = 1 << 20

// wholeFileBytes: a file up to this size is read whole, in one request,
// and decoded from memory. Its columns then need no 1 MB read buffer each
// (17 MB allocated and cleared per lineitem file, about 2 ms), and an
// object store answers one request rather than one per column.
const wholeFileBytes int64 = 32 << 20

// kind is how a column's values are decoded into its Arrow buffer.
type kind int

const (
	kBool     kind = iota
	kInt32         // int, date: 4-byte values copied
	kInt64         // long, time, timestamp: 8-byte values copied
	kFloat32       // float
	kFloat64       // double
	kBytes         // string, binary: offsets and data
	kFixed         // fixed[n]: n bytes per value
	kDec32         // decimal stored as INT32: widened to decimal128
	kDec64         // decimal stored as INT64
	kDecFixed      // decimal stored as big-endian FIXED_LEN_BYTE_ARRAY
)

// column is one output column and where its values come from.
type column struct {
	id     int // Iceberg field ID
	kind   kind
	leaf   int // index of the file's leaf column
	width  int // FIXED_LEN_BYTE_ARRAY length (kFixed, kDecFixed)
	maxDef byte
	typ    arrow.DataType
}

// Reader reads one file.
type Reader struct {
	file   *pgo.File
	schema *arrow.Schema
	cols   []column
}

// Open prepares reading the file r (size bytes) as the Iceberg schema sc,
// whose Arrow form (as iceberg-go reads it) is asc. ok is false, with a
// nil error, when the file needs what this reader does not do.
func Open(r io.ReaderAt, size int64, sc *iceberg.Schema, asc *arrow.Schema) (rd *Reader, ok bool, err error) {
	return open(r, size, sc, asc, wholeFileBytes)
}

// open is Open reading files of up to wholeBytes whole (tests vary it).
func open(r io.ReaderAt, size int64, sc *iceberg.Schema, asc *arrow.Schema, wholeBytes int64) (rd *Reader, ok bool, err error) {
	if asc.NumFields() != len(sc.Fields()) {
		return nil, false, nil
	}
	bufSize := readBufferBytes
	if size <= wholeBytes {
		whole := make([]byte, size)
		if n, err := r.ReadAt(whole, 0); int64(n) < size {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, false, err
		}
		r, bufSize = bytes.NewReader(whole), 4<<10
	}
	f, err := pgo.OpenFile(r, size, pgo.SkipPageIndex(true), pgo.SkipBloomFilters(true), pgo.ReadBufferSize(bufSize))
	if err != nil {
		return nil, false, err
	}
	byID := map[int]int{}
	fields := f.Schema().Fields()
	for i, fl := range fields {
		if !fl.Leaf() || fl.Repeated() {
			return nil, false, nil
		}
		if id := fl.ID(); id > 0 {
			byID[id] = i
		}
	}
	if len(f.Schema().Columns()) != len(fields) {
		return nil, false, nil
	}
	rd = &Reader{file: f, schema: asc, cols: make([]column, len(sc.Fields()))}
	for i, nf := range sc.Fields() {
		leaf, found := byID[nf.ID]
		if !found {
			return nil, false, nil
		}
		c, ok := columnFor(nf.Type, fields[leaf].Type(), asc.Field(i).Type)
		if !ok {
			return nil, false, nil
		}
		c.leaf, c.id = leaf, nf.ID
		if fields[leaf].Optional() {
			c.maxDef = 1
		}
		rd.cols[i] = c
	}
	return rd, true, nil
}

// columnFor maps an Iceberg type to the decoding of a Parquet leaf of type
// pt; ok is false when the leaf is not written the way the type is.
func columnFor(it iceberg.Type, pt pgo.Type, at arrow.DataType) (column, bool) {
	lt := pt.LogicalType()
	var logical format.LogicalTypeValue
	if lt != nil {
		logical = lt.Value
	}
	c := column{typ: at}
	switch t := it.(type) {
	case iceberg.BooleanType:
		c.kind = kBool
		return c, pt.Kind() == pgo.Boolean && at.ID() == arrow.BOOL
	case iceberg.Int32Type:
		c.kind = kInt32
		return c, pt.Kind() == pgo.Int32 && at.ID() == arrow.INT32 && (logical == nil || isInt(logical, 32, true))
	case iceberg.DateType:
		c.kind = kInt32
		_, date := logical.(*format.DateType)
		return c, pt.Kind() == pgo.Int32 && at.ID() == arrow.DATE32 && date
	case iceberg.Int64Type:
		c.kind = kInt64
		return c, pt.Kind() == pgo.Int64 && at.ID() == arrow.INT64 && (logical == nil || isInt(logical, 64, true))
	case iceberg.TimeType:
		c.kind = kInt64
		tt, ok := logical.(*format.TimeType)
		return c, ok && pt.Kind() == pgo.Int64 && at.ID() == arrow.TIME64 &&
			at.(*arrow.Time64Type).Unit == arrow.Microsecond && isMicros(tt.Unit)
	case iceberg.TimestampType, iceberg.TimestampTzType:
		c.kind = kInt64
		ts, ok := logical.(*format.TimestampType)
		return c, ok && pt.Kind() == pgo.Int64 && at.ID() == arrow.TIMESTAMP &&
			at.(*arrow.TimestampType).Unit == arrow.Microsecond && isMicros(ts.Unit)
	case iceberg.Float32Type:
		c.kind = kFloat32
		return c, pt.Kind() == pgo.Float && at.ID() == arrow.FLOAT32
	case iceberg.Float64Type:
		c.kind = kFloat64
		return c, pt.Kind() == pgo.Double && at.ID() == arrow.FLOAT64
	case iceberg.StringType:
		c.kind = kBytes
		return c, pt.Kind() == pgo.ByteArray && at.ID() == arrow.STRING
	case iceberg.BinaryType:
		c.kind = kBytes
		return c, pt.Kind() == pgo.ByteArray && at.ID() == arrow.BINARY
	case iceberg.FixedType:
		c.kind, c.width = kFixed, t.Len()
		return c, pt.Kind() == pgo.FixedLenByteArray && pt.Length() == t.Len() &&
			at.ID() == arrow.FIXED_SIZE_BINARY && at.(*arrow.FixedSizeBinaryType).ByteWidth == t.Len()
	case iceberg.DecimalType:
		dt, ok := logical.(*format.DecimalType)
		if !ok || int(dt.Scale) != t.Scale() || int(dt.Precision) > t.Precision() || at.ID() != arrow.DECIMAL128 {
			return c, false
		}
		switch pt.Kind() {
		case pgo.Int32:
			c.kind = kDec32
		case pgo.Int64:
			c.kind = kDec64
		case pgo.FixedLenByteArray:
			c.kind, c.width = kDecFixed, pt.Length()
			return c, c.width >= 1 && c.width <= 16
		default:
			return c, false
		}
		return c, true
	}
	return c, false
}

func isInt(v format.LogicalTypeValue, bits int8, signed bool) bool {
	it, ok := v.(*format.IntType)
	return ok && it.BitWidth == bits && it.IsSigned == signed
}

func isMicros(u format.TimeUnit) bool {
	_, ok := u.Value.(*format.MicroSeconds)
	return ok
}

// Batches yields the file's rows in batches of at most rows rows (none
// crosses a row group). Each batch is the caller's to release.
func (rd *Reader) Batches(ctx context.Context, rows int) iter.Seq2[arrow.RecordBatch, error] {
	return rd.batches(ctx, rows, nil, nil)
}

// Select picks the rows of a batch to keep, given the batch's predicate
// columns: keep lists their positions in ascending order, or all is true
// and every row is kept.
type Select func(pred arrow.RecordBatch) (keep []int32, all bool, err error)

// FilteredBatches is Batches with rows dropped while they are decoded, for
// a rewrite that deletes some: it decodes the columns whose field IDs
// pred lists, asks sel which rows to keep, and decodes only those of the
// other columns (dictionary values are gathered for kept rows only), so a
// dropped row is neither materialised nor copied again by a filter. A batch
// may have no rows. pred must name columns of the schema.
func (rd *Reader) FilteredBatches(ctx context.Context, rows int, pred []int, sel Select) (iter.Seq2[arrow.RecordBatch, error], error) {
	var cols []int
	for _, id := range pred {
		i := slices.IndexFunc(rd.cols, func(c column) bool { return c.id == id })
		if i < 0 {
			return nil, fmt.Errorf("pqread: no column with field ID %d", id)
		}
		cols = append(cols, i)
	}
	slices.Sort(cols)
	return rd.batches(ctx, rows, slices.Compact(cols), sel), nil
}

func (rd *Reader) batches(ctx context.Context, rows int, pred []int, sel Select) iter.Seq2[arrow.RecordBatch, error] {
	var predSchema *arrow.Schema
	if sel != nil {
		fields := make([]arrow.Field, len(pred))
		for j, i := range pred {
			fields[j] = rd.schema.Field(i)
		}
		predSchema = arrow.NewSchema(fields, nil)
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		arrs := make([]arrow.Array, len(rd.cols))
		releaseArrs := func() {
			for i, a := range arrs {
				if a != nil {
					a.Release()
					arrs[i] = nil
				}
			}
		}
		for _, rg := range rd.file.RowGroups() {
			chunks := rg.ColumnChunks()
			cursors := make([]*cursor, len(rd.cols))
			closeAll := func() {
				releaseArrs()
				for _, c := range cursors {
					if c != nil {
						c.close()
					}
				}
			}
			for i, c := range rd.cols {
				cursors[i] = &cursor{col: c, pages: chunks[c.leaf].Pages()}
			}
			for left := rg.NumRows(); left > 0; {
				if err := ctx.Err(); err != nil {
					closeAll()
					yield(nil, err)
					return
				}
				n := int(min(left, int64(rows)))
				out, err := rd.batch(ctx, cursors, arrs, n, pred, predSchema, sel)
				releaseArrs()
				if err != nil {
					closeAll()
					yield(nil, err)
					return
				}
				left -= int64(n)
				if !yield(out, nil) {
					closeAll()
					return
				}
			}
			closeAll()
		}
	}
}

// batch decodes the next n rows of every cursor into arrs (the caller
// releases them) and returns them as a record batch: all of them, or with
// sel those it keeps.
func (rd *Reader) batch(ctx context.Context, cursors []*cursor, arrs []arrow.Array, n int, pred []int, predSchema *arrow.Schema, sel Select) (arrow.RecordBatch, error) {
	var keep []int32
	filtered := false
	if sel != nil {
		parts := make([]arrow.Array, len(pred))
		for j, i := range pred {
			a, err := cursors[i].next(n, nil, false)
			if err != nil {
				return nil, err
			}
			arrs[i], parts[j] = a, a
		}
		p := array.NewRecordBatch(predSchema, parts, int64(n))
		k, all, err := sel(p)
		p.Release()
		if err != nil {
			return nil, err
		}
		if !all {
			keep, filtered = k, true
			for _, i := range pred {
				a, err := selectRows(ctx, arrs[i], keep)
				if err != nil {
					return nil, err
				}
				arrs[i].Release()
				arrs[i] = a
			}
		}
	}
	for i, c := range cursors {
		if arrs[i] != nil {
			continue
		}
		a, err := c.next(n, keep, filtered)
		if err != nil {
			return nil, err
		}
		arrs[i] = a
	}
	rows := n
	if filtered {
		rows = len(keep)
	}
	return array.NewRecordBatch(rd.schema, arrs, int64(rows)), nil
}

// errShort reports a column chunk with fewer values than its row group.
var errShort = errors.New("column chunk ends before its row group")

// cursor walks the pages of one column chunk.
type cursor struct {
	col   column
	pages pgo.Pages
	page  pgo.Page
	rows  int    // rows of the page
	at    int    // next row of the page
	vat   int    // next stored (non-null) value of the page
	defs  []byte // definition levels, nil when the page has no null
	// The page's values, or with idx set its dictionary's.
	idx   []int32
	dict  pgo.Dictionary
	dvals page // the dictionary's values, decoded once per dictionary
	vals  page
	// scratch holds the value positions of kept rows
	scratch []int32
}

// page is one page's (or dictionary's) stored values in the form of its kind.
type page struct {
	i32  []int32
	i64  []int64
	f32  []float32
	f64  []float64
	bits []byte // booleans, one bit each
	data []byte
	offs []uint32
}

func (c *cursor) close() {
	if c.page != nil {
		pgo.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
}

// load reads the next page.
func (c *cursor) load() error {
	if c.page != nil {
		pgo.Release(c.page)
		c.page = nil
	}
	pg, err := c.pages.ReadPage()
	if err == io.EOF {
		return errShort
	}
	if err != nil {
		return err
	}
	c.page, c.rows, c.at, c.vat = pg, int(pg.NumRows()), 0, 0
	c.defs = nil
	if pg.NumNulls() > 0 {
		c.defs = pg.DefinitionLevels()
	}
	c.idx = nil
	if dict := pg.Dictionary(); dict != nil {
		d := pg.Data()
		c.idx = d.Int32()
		if dict != c.dict {
			c.dict = dict
			c.dvals = c.decode(dict.Page())
		}
		return nil
	}
	c.vals = c.decode(pg)
	return nil
}

// decode views the stored values of pg as the column's kind.
func (c *cursor) decode(pg pgo.Page) page {
	d := pg.Data()
	switch c.col.kind {
	case kBool:
		return page{bits: d.Boolean()}
	case kInt32, kDec32:
		return page{i32: d.Int32()}
	case kInt64, kDec64:
		return page{i64: d.Int64()}
	case kFloat32:
		return page{f32: d.Float()}
	case kFloat64:
		return page{f64: d.Double()}
	case kBytes:
		data, offs := d.ByteArray()
		return page{data: data, offs: offs}
	default: // kFixed, kDecFixed
		data, _ := d.FixedLenByteArray()
		return page{data: data}
	}
}

// next decodes the column's next n rows into an Arrow array: all of them,
// or when filtered only the rows keep lists (positions among the n, in
// ascending order).
func (c *cursor) next(n int, keep []int32, filtered bool) (arrow.Array, error) {
	size := n
	if filtered {
		size = len(keep)
	}
	b := newBuild(c.col, size)
	for pos := 0; pos < n; {
		if c.page == nil || c.at == c.rows {
			if err := c.load(); err != nil {
				return nil, err
			}
			continue
		}
		k := min(n-pos, c.rows-c.at)
		src := &c.vals
		if c.idx != nil {
			src = &c.dvals
		}
		var err error
		if filtered {
			// the kept rows among pos..pos+k
			end := len(keep)
			if end > 0 && int(keep[end-1]) >= pos+k {
				end, _ = slices.BinarySearch(keep, int32(pos+k))
			}
			err = c.runKept(b, src, keep[:end], pos, k)
			keep = keep[end:]
		} else {
			err = c.runAll(b, src, k)
		}
		if err != nil {
			return nil, err
		}
		c.at += k
		pos += k
	}
	return b.finish(), nil
}

// runAll appends the page's next k rows to b.
func (c *cursor) runAll(b *build, src *page, k int) error {
	if c.defs == nil {
		if c.idx != nil && c.vat+k > len(c.idx) {
			return errIndex
		}
		var idx []int32
		if c.idx != nil {
			idx = c.idx[c.vat : c.vat+k]
		}
		c.vat += k
		return b.run(src, idx, c.vat-k, k)
	}
	for _, d := range c.defs[c.at : c.at+k] {
		if d != c.col.maxDef {
			b.null()
			continue
		}
		if err := c.runOne(b, src, c.vat); err != nil {
			return err
		}
		c.vat++
	}
	return nil
}

// runOne appends the page's stored value v to b.
func (c *cursor) runOne(b *build, src *page, v int) error {
	var idx []int32
	if c.idx != nil {
		if v >= len(c.idx) {
			return errIndex
		}
		idx = c.idx[v : v+1]
	}
	return b.run(src, idx, v, 1)
}

// runKept appends those of the page's next k rows that kept lists (batch
// positions, the first of the k rows being batch row pos) to b.
func (c *cursor) runKept(b *build, src *page, kept []int32, pos, k int) error {
	if c.defs == nil {
		// Without nulls, row pos+j is stored value c.vat+j.
		if c.idx != nil && c.vat+k > len(c.idx) {
			return errIndex
		}
		idx := c.scratch[:0]
		base := int32(c.vat - pos)
		if c.idx != nil {
			for _, r := range kept {
				idx = append(idx, c.idx[base+r])
			}
		} else {
			for _, r := range kept {
				idx = append(idx, base+r)
			}
		}
		c.scratch = idx
		c.vat += k
		if len(idx) == 0 {
			return nil
		}
		return b.run(src, idx, 0, len(idx))
	}
	for j, d := range c.defs[c.at : c.at+k] {
		keepIt := len(kept) > 0 && int(kept[0]) == pos+j
		if keepIt {
			kept = kept[1:]
		}
		if d != c.col.maxDef {
			if keepIt {
				b.null()
			}
			continue
		}
		if keepIt {
			if err := c.runOne(b, src, c.vat); err != nil {
				return err
			}
		}
		c.vat++
	}
	return nil
}

// selectRows returns the rows of arr that keep lists (for the few
// predicate columns, decoded whole before the selection was known).
func selectRows(ctx context.Context, arr arrow.Array, keep []int32) (arrow.Array, error) {
	idx := array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, len(keep),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(keep))}, nil, 0, 0))
	defer idx.Release()
	return compute.TakeArray(ctx, arr, idx)
}

// build is an Arrow array being filled.
type build struct {
	col   column
	n     int
	len   int
	nulls int
	valid []byte // nil until the first null
	fixed []byte // the value buffer of fixed-width kinds
	offs  []int32
	data  []byte
}

// widths of the Arrow values of fixed-width kinds.
func arrowWidth(c column) int {
	switch c.kind {
	case kBool:
		return 0
	case kInt32, kFloat32:
		return 4
	case kInt64, kFloat64:
		return 8
	case kFixed:
		return c.width
	case kDec32, kDec64, kDecFixed:
		return 16
	}
	return 0
}

func newBuild(c column, n int) *build {
	b := &build{col: c, n: n}
	switch {
	case c.kind == kBool:
		b.fixed = make([]byte, bitutil.BytesForBits(int64(n)))
	case c.kind == kBytes:
		b.offs = make([]int32, 1, n+1)
	default:
		b.fixed = make([]byte, n*arrowWidth(c))
	}
	return b
}

func (b *build) null() {
	if b.valid == nil {
		b.valid = make([]byte, bitutil.BytesForBits(int64(b.n)))
		bitutil.SetBitsTo(b.valid, 0, int64(b.len), true)
	}
	b.nulls++
	if b.col.kind == kBytes {
		b.offs = append(b.offs, int32(len(b.data)))
	}
	b.len++
}

// run appends k values: src's values v.. (idx nil) or those idx names.
func (b *build) run(src *page, idx []int32, v, k int) error {
	if b.valid != nil {
		bitutil.SetBitsTo(b.valid, int64(b.len), int64(k), true)
	}
	at := b.len
	b.len += k
	w := arrowWidth(b.col)
	out := b.fixed[at*w : b.len*w]
	switch b.col.kind {
	case kBool:
		for j := range k {
			s := v + j
			if idx != nil {
				s = int(idx[j])
			}
			if s < 0 || s >= 8*len(src.bits) {
				return errIndex
			}
			if bitutil.BitIsSet(src.bits, s) {
				bitutil.SetBit(b.fixed, at+j)
			}
		}
	case kInt32:
		return gather(out, src.i32, idx, v, k)
	case kFloat32:
		return gather(out, src.f32, idx, v, k)
	case kInt64:
		return gather(out, src.i64, idx, v, k)
	case kFloat64:
		return gather(out, src.f64, idx, v, k)
	case kDec32, kDec64:
		for j := range k {
			s := v + j
			if idx != nil {
				s = int(idx[j])
			}
			var x int64
			if b.col.kind == kDec32 {
				if s >= len(src.i32) {
					return errIndex
				}
				x = int64(src.i32[s])
			} else {
				if s >= len(src.i64) {
					return errIndex
				}
				x = src.i64[s]
			}
			binary.LittleEndian.PutUint64(out[16*j:], uint64(x))
			binary.LittleEndian.PutUint64(out[16*j+8:], uint64(x>>63))
		}
	case kFixed:
		w := b.col.width
		if idx == nil {
			if (v+k)*w > len(src.data) {
				return errIndex
			}
			copy(out, src.data[v*w:(v+k)*w])
			return nil
		}
		for j, s := range idx {
			if (int(s)+1)*w > len(src.data) || s < 0 {
				return errIndex
			}
			copy(out[j*w:], src.data[int(s)*w:(int(s)+1)*w])
		}
	case kDecFixed:
		w := b.col.width
		for j := range k {
			s := v + j
			if idx != nil {
				s = int(idx[j])
			}
			if s < 0 || (s+1)*w > len(src.data) {
				return errIndex
			}
			bigEndianToDecimal(out[16*j:16*j+16], src.data[s*w:(s+1)*w])
		}
	case kBytes:
		return b.bytes(src, idx, v, k)
	}
	return nil
}

// errIndex reports a value or dictionary index out of range: a corrupt page.
var errIndex = errors.New("parquet page: value index out of range")

func (b *build) bytes(src *page, idx []int32, v, k int) error {
	offs := src.offs
	if idx == nil {
		if v+k >= len(offs) {
			return errIndex
		}
		lo, hi := offs[v], offs[v+k]
		base := int32(len(b.data)) - int32(lo)
		b.data = append(b.grow(int(hi-lo), k), src.data[lo:hi]...)
		for _, o := range offs[v+1 : v+k+1] {
			b.offs = append(b.offs, int32(o)+base)
		}
		return nil
	}
	size := 0
	for _, s := range idx {
		if s < 0 || int(s)+1 >= len(offs) {
			return errIndex
		}
		size += int(offs[s+1] - offs[s])
	}
	data := b.grow(size, k)
	for _, s := range idx {
		data = append(data, src.data[offs[s]:offs[s+1]]...)
		b.offs = append(b.offs, int32(len(data)))
	}
	b.data = data
	return nil
}

// grow makes room for size more bytes of k more values: with a run of
// the first values it guesses the whole array from their mean size.
func (b *build) grow(size, k int) []byte {
	if cap(b.data)-len(b.data) >= size {
		return b.data
	}
	want := len(b.data) + size
	if done := b.len; done > 0 && done < b.n {
		// b.len already counts these k values.
		want = max(want, int(int64(want)*int64(b.n)/int64(done)))
	}
	grown := make([]byte, len(b.data), want)
	copy(grown, b.data)
	return grown
}

func (b *build) finish() arrow.Array {
	var valid *memory.Buffer
	if b.valid != nil {
		valid = memory.NewBufferBytes(b.valid)
	}
	var bufs []*memory.Buffer
	if b.col.kind == kBytes {
		bufs = []*memory.Buffer{valid, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(b.offs)), memory.NewBufferBytes(b.data)}
	} else {
		bufs = []*memory.Buffer{valid, memory.NewBufferBytes(b.fixed)}
	}
	data := array.NewData(b.col.typ, b.n, bufs, nil, b.nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// gather copies src's values v..v+k (idx nil), or those idx names, into
// out, the Arrow value buffer of the same type.
func gather[T int32 | int64 | float32 | float64](out []byte, src []T, idx []int32, v, k int) error {
	var zero T
	dst := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(out))), len(out)/int(unsafe.Sizeof(zero)))
	if idx == nil {
		if v+k > len(src) {
			return errIndex
		}
		copy(dst, src[v:v+k])
		return nil
	}
	for j, s := range idx {
		if uint(s) >= uint(len(src)) {
			return errIndex
		}
		dst[j] = src[s]
	}
	return nil
}

// bigEndianToDecimal writes the big-endian two's complement integer src
// (1 to 16 bytes) as a little-endian decimal128 into dst.
func bigEndianToDecimal(dst, src []byte) {
	var be [16]byte
	fill := byte(0)
	if len(src) > 0 && src[0]&0x80 != 0 {
		fill = 0xff
	}
	for i := range 16 - len(src) {
		be[i] = fill
	}
	copy(be[16-len(src):], src)
	hi := binary.BigEndian.Uint64(be[:8])
	lo := binary.BigEndian.Uint64(be[8:])
	binary.LittleEndian.PutUint64(dst, lo)
	binary.LittleEndian.PutUint64(dst[8:], hi)
}
