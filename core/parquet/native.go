package parquet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pgo "github.com/parquet-go/parquet-go"
	pgocompress "github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/plain"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The native encoder writes flat schemas straight from the Arrow buffers.
//
// parquet-go's writer takes values one pgo.Value at a time: each value is
// converted into a 24-byte Value, copied into a column buffer, inserted into
// a Go map when the column has a dictionary (29 ns per string), and its
// definition level counted into a histogram. On TPC-H lineitem that path was
// about a third of the write's CPU, beside zstd's third (docs/decisions.md).
// Here a column's values are appended to its open page as they are in Arrow
// (plain little-endian numbers, string offsets and bytes) or as dictionary
// indexes from a hash table of our own; a page is encoded at once with
// parquet-go's encoding kernels (RLE, bit-packed deltas, delta lengths) and
// compressed with the same codecs. The file layout, page index and footer
// are written here too. Pages wait in spill buffers (spill.go) until their
// row group is written.

// createdByNative is the created_by of files the native encoder writes.
const createdByNative = "pyiceberg-go version 0.1.0"

// nativeKind is how a column's values are held.
type nativeKind uint8

const (
	kBool nativeKind = iota
	kInt32
	kInt64
	kFloat
	kDouble
	kBytes
	kFixed
)

// nativeColumn is one column's state: its open page and its chunk in the
// open row group.
type nativeColumn struct {
	kind     nativeKind
	width    int // plain bytes per value (FIXED_LEN_BYTE_ARRAY: its length); 0 for byte arrays and booleans
	optional bool
	enc      format.Encoding // encoding of pages written without the dictionary
	codec    pgocompress.Codec
	codecID  format.CompressionCodec
	dec      bool // a FIXED_LEN_BYTE_ARRAY decimal: no bounds in the footer or column index
	dict     *nativeDict
	dictOn   bool  // the open page holds dictionary indexes
	dictMax  int64 // dictionary bytes past which the column falls back to enc
	path     []string

	// The open page.
	rows, nulls int
	levels      []byte   // definition levels, kept once the page has a null
	leveled     bool     // levels holds the open page's levels
	plainBuf    []byte   // fixed-width values, little-endian; booleans one byte each
	offs        []uint32 // byte arrays: ends of the values in data, after a leading 0
	data        []byte
	idx         []int32 // dictionary indexes
	maxIdx      int32   // the greatest of them
	plainBytes  int     // the page's values plain-encoded
	lo, hi      []byte  // the page's bounds, plain-encoded
	has         bool

	// The open chunk.
	buf          io.ReadWriteSeeker
	bufN         int64 // bytes of data pages in buf
	uncompressed int64 // bytes of data pages, headers included, uncompressed
	pages        []format.PageLocation
	ci           format.ColumnIndex
	chunkRows    int64
	nullCount    int64
	cmin, cmax   []byte
	chas         bool
	usedDict     bool // some page of the chunk is dictionary-encoded
	usedEnc      bool // some page is enc-encoded
	// noIndex drops the chunk's column index: a page of floats held values
	// but only NaN, which a column index cannot bound (a null page would
	// say it holds no values).
	noIndex bool
}

// nativeDict is a column chunk's dictionary: values by index, found by an
// open-addressing hash table.
type nativeDict struct {
	kind   nativeKind
	width  int
	slots  []int32  // index+1 of the entry in this slot, 0 when free
	keys   []uint64 // per entry: the value's bits (fixed width) or its hash
	plain  []byte   // fixed-width entries, little-endian
	data   []byte   // byte-array entries
	ends   []uint32 // their ends in data
	size   int64    // plain-encoded bytes of the entries
	seen   []uint32 // per byte-array entry: the page epoch it was last bounded in
	epoch  uint32
	shift  uint
	seed   maphash.Seed
	newIdx []int32
	tiny   tinyTable
	// direct maps an integer value v in [dlo, dlo+len(direct)) to its
	// index+1 (0: not an entry yet), for integer columns whose values span
	// at most directSpan: a lookup is one load instead of a hash probe.
	// While it serves, the hash table (slots) is left empty; directOff:
	// the values spread wider, and the hash table, rebuilt, serves alone.
	direct    []int32
	dlo       int64
	directOff bool
}

// directSpan is the widest range of values a direct table covers (256 KB
// of indexes): dates of decades, small codes, quantities, keys of a small
// dimension table. On four such lineitem columns (BenchmarkDictionaryInts)
// a value took 6.0-6.7 ns through the hash table, 3.5-4.1 ns through this.
const directSpan = 1 << 16

// cover makes the direct table span [lo, hi] as well as the entries'
// values, and reports whether it does (false once the span is too wide).
func (d *nativeDict) cover(lo, hi int64) bool {
	if d.directOff {
		return false
	}
	if d.direct != nil {
		if lo >= d.dlo && uint64(hi-d.dlo) < uint64(len(d.direct)) {
			return true
		}
		lo, hi = min(lo, d.dlo), max(hi, d.dlo+int64(len(d.direct)-1))
	}
	if uint64(hi-lo) >= directSpan {
		d.directOff, d.direct = true, nil
		d.grow(max(1024, 1<<bits.Len(uint(2*len(d.keys)))))
		return false
	}
	n := max(1024, 1<<bits.Len64(uint64(hi-lo)))
	if lo > math.MaxInt64-int64(n-1) {
		lo = math.MaxInt64 - int64(n-1) // the table ends at MaxInt64
	}
	d.direct, d.dlo = make([]int32, n), lo
	for k, key := range d.keys {
		d.direct[int64(key)-lo] = int32(k + 1)
	}
	return true
}

// tinyTable finds the values of up to 24 bytes of a byte-array dictionary
// of at most tinyMax entries (flags, modes, codes, short names) with one
// probe: each slot holds a value's three masked words and length, equal
// only for equal values, so the common path compares numbers and takes no
// branch that depends on the value. On lineitem's four such columns
// (BenchmarkDictionaryStrings) the dictionary's own table (hashes of longer
// values, byte comparisons) took 15-17 ns a value, this one 9.3 ns. It is
// for the columns where a value is almost always one seen before.
type tinyTable struct {
	slots []tinyEntry // tinySlots of them while on, nil before the first value
	count int
	off   bool // the dictionary outgrew it: values go to the dictionary alone
}

type tinyEntry struct {
	a, b, c uint64
	n       uint32 // the value's length + 1; 0 marks a free slot
	k       int32  // its dictionary index
}

const (
	// tinyMax entries in tinySlots slots (8 KB): a file open for each of
	// many partitions has a table for each short-string column. A fixed
	// size keeps the probe's arithmetic constant; tables that could grow
	// from a smaller start measured 25% slower.
	tinyMax   = 64
	tinySlots = 4 * tinyMax
	tinyShift = 64 - 8 // log2(tinySlots)
)

// tinyMasks keeps, for a value of n <= 24 bytes, the bytes of each of its
// three words that are its own (shortMask's, whole words past 7 bytes):
// the length picks a row, with no branch.
var tinyMasks = func() (m [25][3]uint64) {
	for n := range m {
		for w := range 3 {
			if k := max(n-8*w, 0); k < 8 {
				m[n][w] = shortMask[k]
			} else {
				m[n][w] = ^uint64(0)
			}
		}
	}
	return m
}()

// tinyKey loads a value of n <= 24 bytes from w (24 bytes from its start)
// as three words, zero past its end, and gives the first slot of its probe.
func tinyKey(w []byte, n uint) (a, b, c uint64, s uint) {
	w = w[:24]
	m := &tinyMasks[min(n, 24)]
	a = binary.LittleEndian.Uint64(w) & m[0]
	b = binary.LittleEndian.Uint64(w[8:]) & m[1]
	c = binary.LittleEndian.Uint64(w[16:]) & m[2]
	h := (a ^ bits.RotateLeft64(b, 21) ^ bits.RotateLeft64(c, 42) ^ uint64(n)) * 0x9E3779B97F4A7C15
	return a, b, c, uint(h >> tinyShift)
}

// run appends the indexes of the values of rows j, j+1, ... (no nulls;
// offs not rebased, base their first) to idx while the table holds them,
// and returns where it stopped (at end, or at a value it does not hold)
// and the plain-encoded bytes of the values it took.
func (t *tinyTable) run(offs []int32, base int32, data []byte, j, end int, idx []int32) ([]int32, int, int) {
	slots := t.slots[:tinySlots]
	plain := 0
	for ; j < end; j++ {
		lo, hi := uint(offs[j]-base), uint(offs[j+1]-base)
		n := hi - lo
		if n > 24 || lo+24 > uint(len(data)) {
			break
		}
		// lookup's probe, written out: as a function of its own, called
		// for each value, it measured 40% slower.
		a, b, c, s := tinyKey(data[lo:], n)
		for {
			e := &slots[s%tinySlots]
			if (e.a^a)|(e.b^b)|(e.c^c)|uint64(e.n^uint32(n+1)) == 0 {
				idx = append(idx, e.k)
				break
			}
			if e.n == 0 {
				return idx, j, plain
			}
			s++
		}
		plain += 4 + int(n)
	}
	return idx, j, plain
}

// lookup finds the value v of at most 24 bytes, given 24 bytes from its
// start in w: in the table, else through the dictionary d (which adds it
// when new) and then records it in the table, which turns itself off when
// full.
func (t *tinyTable) lookup(d *nativeDict, v, w []byte) int32 {
	n := uint(len(v))
	a, b, c, s := tinyKey(w, n)
	for {
		e := &t.slots[s%tinySlots]
		if e.n == 0 {
			break
		}
		if (e.a^a)|(e.b^b)|(e.c^c)|uint64(e.n^uint32(n+1)) == 0 {
			return e.k
		}
		s++
	}
	k := d.insertBytes(v)
	if t.count == tinyMax {
		t.off, t.slots = true, nil
		return k
	}
	t.slots[s%tinySlots] = tinyEntry{a: a, b: b, c: c, n: uint32(n) + 1, k: k}
	t.count++
	return k
}

func (t *tinyTable) reset() {
	clear(t.slots)
	t.count, t.off = 0, false
}

var dictSeed = maphash.MakeSeed()

func newNativeDict(kind nativeKind, width int) *nativeDict {
	d := &nativeDict{kind: kind, width: width, seed: dictSeed, epoch: 1}
	d.grow(1 << 10)
	return d
}

func (d *nativeDict) len() int { return len(d.keys) }

// grow resizes the table to n slots (a power of two) and rehashes.
func (d *nativeDict) grow(n int) {
	d.slots = make([]int32, n)
	d.shift = uint(64 - bits.TrailingZeros(uint(n)))
	for k, key := range d.keys {
		s := d.slot(key)
		for d.slots[s] != 0 {
			s = (s + 1) & (len(d.slots) - 1)
		}
		d.slots[s] = int32(k + 1)
	}
}

func (d *nativeDict) slot(key uint64) int {
	return int((key * 0x9E3779B97F4A7C15) >> d.shift)
}

func (d *nativeDict) reset() {
	clear(d.slots)
	d.keys, d.plain, d.data, d.ends, d.seen = d.keys[:0], d.plain[:0], d.data[:0], d.ends[:0], d.seen[:0]
	d.size = 0
	d.tiny.reset()
	clear(d.direct)
	d.directOff = false
}

// insertFixed returns the index of the fixed-width value with bits key,
// adding it (its plain form is v) when new.
func (d *nativeDict) insertFixed(key uint64, v []byte) int32 {
	s := d.slot(key)
	for {
		k := d.slots[s]
		if k == 0 {
			break
		}
		if d.keys[k-1] == key {
			return k - 1
		}
		s = (s + 1) & (len(d.slots) - 1)
	}
	k := int32(len(d.keys))
	d.keys = append(d.keys, key)
	d.plain = append(d.plain, v...)
	d.size += int64(len(v))
	d.slots[s] = k + 1
	if 2*len(d.keys) > len(d.slots) {
		d.grow(2 * len(d.slots))
	}
	return k
}

// appendFixed adds the fixed-width value with bits key (plain form v) as a
// new entry and returns its index, leaving the hash table alone (the
// direct table finds the entries meanwhile).
func (d *nativeDict) appendFixed(key uint64, v []byte) int32 {
	d.keys = append(d.keys, key)
	d.plain = append(d.plain, v...)
	d.size += int64(len(v))
	return int32(len(d.keys) - 1)
}

// entry is the plain-encoded value of index k (for byte arrays, the bytes).
func (d *nativeDict) entry(k int32) []byte {
	if d.kind == kBytes {
		start := uint32(0)
		if k > 0 {
			start = d.ends[k-1]
		}
		return d.data[start:d.ends[k]]
	}
	return d.plain[int(k)*d.width : int(k+1)*d.width]
}

func (d *nativeDict) insertBytes(v []byte) int32 {
	short := len(v) <= 7
	var h uint64
	if short {
		// The bytes themselves, with their length in the top byte, are
		// the key: equal keys are equal values of up to 7 bytes.
		h = shortKey(v)
	} else {
		h = longKey(d.seed, v)
	}
	s := d.slot(h)
	for {
		k := d.slots[s]
		if k == 0 {
			break
		}
		if d.keys[k-1] == h && (short || bytes.Equal(d.entry(k-1), v)) {
			return k - 1
		}
		s = (s + 1) & (len(d.slots) - 1)
	}
	k := int32(len(d.keys))
	d.keys = append(d.keys, h)
	d.data = append(d.data, v...)
	d.ends = append(d.ends, uint32(len(d.data)))
	d.seen = append(d.seen, 0)
	d.size += int64(4 + len(v))
	d.slots[s] = k + 1
	if 2*len(d.keys) > len(d.slots) {
		d.grow(2 * len(d.slots))
	}
	return k
}

// longTag marks the keys of byte-array values of more than 7 bytes.
const longTag = 0xFF << 56

// longKey hashes a value of more than 7 bytes. Its top byte is 0xFF,
// which no short value's key has: a short key found in the table is that
// value. Values of up to 32 bytes are hashed by wordsKey, longer ones
// with hash/maphash.
func longKey(seed maphash.Seed, v []byte) uint64 {
	if len(v) <= 32 {
		return wordsKey(v)
	}
	return maphash.Bytes(seed, v) | longTag
}

// wordsKey is longKey of a value of 8 to 32 bytes: its words mixed with
// per-process random keys (wyhash's mixing step), the first and last
// eight bytes, then for more than 16 bytes the two before the last.
func wordsKey(v []byte) uint64 {
	n := len(v)
	h := mix16(binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[n-8:]), n)
	if n > 16 {
		h = mix16(h^binary.LittleEndian.Uint64(v[8:]), binary.LittleEndian.Uint64(v[n-16:]), n)
	}
	return h | longTag
}

// mix16 is longKey's hash of two words of a value n bytes long.
func mix16(a, b uint64, n int) uint64 {
	hi, lo := bits.Mul64(a^mixKeys[0], b^mixKeys[1]^uint64(n))
	return hi ^ lo
}

// mixKeys are mix16's random keys, drawn once per process.
var mixKeys = [2]uint64{rand.Uint64() | 1, rand.Uint64() | 1}

// shortMask keeps the first n bytes of a little-endian word.
var shortMask = [8]uint64{0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFF, 0xFFFFFFFFFFFF, 0xFFFFFFFFFFFFFF}

// shortKey packs a value of at most 7 bytes and its length into a number.
// Values inside a larger buffer (Arrow's) are loaded 8 bytes at once.
func shortKey(v []byte) uint64 {
	var x uint64
	if cap(v) >= 8 {
		x = binary.LittleEndian.Uint64(v[:8]) & shortMask[len(v)]
	} else {
		var b [8]byte
		copy(b[:], v)
		x = binary.LittleEndian.Uint64(b[:])
	}
	return x | uint64(len(v))<<56
}

// fresh returns the indexes among idx not yet seen in the open page.
func (d *nativeDict) fresh(idx []int32) []int32 {
	d.newIdx = d.newIdx[:0]
	for _, k := range idx {
		if d.seen[k] != d.epoch {
			d.seen[k] = d.epoch
			d.newIdx = append(d.newIdx, k)
		}
	}
	return d.newIdx
}

// nativeScratch is one encoding goroutine's buffers.
type nativeScratch struct {
	i32    []int32
	i64    []int64
	fixed  []byte
	levels []byte
	vals   []byte
	body   []byte
	comp   []byte
	header bytes.Buffer
	bounds boundsScratch
}

// nativeEncoder writes one Parquet file of a flat schema.
type nativeEncoder struct {
	sink         *offsetWriter
	cols         []flatColumn
	nc           []*nativeColumn
	schema       []format.SchemaElement
	orders       []format.ColumnOrder
	pageRowLimit int
	pageBytes    int
	scratch      []nativeScratch
	rgRows       int64
	numRows      int64
	rowGroups    []format.RowGroup
	indexes      [][]*format.ColumnIndex // by row group and column; nil when a column has none
	offsets      [][]format.OffsetIndex
	decBounds    map[int]*decimalBound
	blooms       []*bloomBuilder
	filters      [][][]byte
	// held are borrowed batches of the buffered row group not encoded
	// yet (hold), heldBytes their Arrow size.
	held      []arrow.RecordBatch
	heldBytes int64
	// spills are the temporary files the columns' page buffers share, one
	// for the row group being encoded (side) and one for the row group
	// being written out, so that each is deleted once its row group is in
	// the file.
	spills [2]spillStore
	side   int
	// emitting is the row group being written out in the background, if
	// any; end is the file's size once it is written (the file's own
	// count is the goroutine's to update meanwhile).
	emitting *task
	end      int64
	// serial keeps the columns on one goroutine (Options.serialColumns);
	// pages is the pool of page buffers.
	serial bool
	pages  *spillPool
	openCount
}

func newNativeEncoder(out io.Writer, sc *arrow.Schema, cols []flatColumn, r resolved, noDict, raw []string, bloom map[int]BloomFilter) (*nativeEncoder, error) {
	nd, rw := map[string]bool{}, map[string]bool{}
	for _, n := range noDict {
		nd[n] = true
	}
	for _, n := range raw {
		rw[n] = true
	}
	codec := r.pageCodec()
	e := &nativeEncoder{
		sink: &offsetWriter{w: out}, cols: cols, nc: make([]*nativeColumn, len(cols)),
		pageRowLimit: int(min(r.PageRowLimit, math.MaxInt32)),
		pageBytes:    pageBytesFor(r, len(cols)),
		decBounds:    map[int]*decimalBound{},
		serial:       r.serialColumns,
		pages:        r.pages,
	}
	e.schema = append(e.schema, format.SchemaElement{Name: "schema", NumChildren: thrift.New(int32(len(cols)))})
	for i, c := range cols {
		f := sc.Field(i)
		t := c.node.Type()
		el := format.SchemaElement{Name: f.Name, FieldID: int32(max(c.id, 0))}
		if c.optional {
			el.RepetitionType = thrift.New(format.Optional)
		} else {
			el.RepetitionType = thrift.New(format.Required)
		}
		if lt := t.LogicalType(); lt != nil {
			el.LogicalType = *lt
			if d, ok := lt.Value.(*format.DecimalType); ok {
				el.Scale, el.Precision = thrift.New(d.Scale), thrift.New(d.Precision)
			}
		}
		if n := int32(t.Length()); n > 0 {
			el.TypeLength = thrift.New(n)
		}
		if pt := t.PhysicalType(); pt != nil {
			el.Type = thrift.New(*pt)
		}
		if ct := t.ConvertedType(); ct != nil {
			el.ConvertedType = thrift.New(*ct)
		}
		e.schema = append(e.schema, el)
		e.orders = append(e.orders, *t.ColumnOrder())

		nc := &nativeColumn{optional: c.optional, codec: codec, codecID: codec.CompressionCodec(),
			dictMax: r.DictionaryPageBytes, path: []string{f.Name}}
		switch t.Kind() {
		case pgo.Boolean:
			nc.kind = kBool
		case pgo.Int32:
			nc.kind, nc.width = kInt32, 4
		case pgo.Int64:
			nc.kind, nc.width = kInt64, 8
		case pgo.Float:
			nc.kind, nc.width = kFloat, 4
		case pgo.Double:
			nc.kind, nc.width = kDouble, 8
		case pgo.ByteArray:
			nc.kind = kBytes
		case pgo.FixedLenByteArray:
			nc.kind, nc.width = kFixed, t.Length()
		default:
			return nil, fmt.Errorf("native encoder: column %q of kind %v: %w", f.Name, t.Kind(), errs.ErrInvalidArgument)
		}
		nc.enc = format.Plain
		if !r.PlainEncodings {
			switch nc.kind {
			case kInt32, kInt64:
				nc.enc = format.DeltaBinaryPacked
			case kBytes:
				nc.enc = format.DeltaLengthByteArray
			}
		}
		useDict := c.dict && !nd[f.Name] && nc.kind != kFixed
		if useDict {
			nc.dict = newNativeDict(nc.kind, nc.width)
			nc.dictOn = true
		} else if rw[f.Name] && (nc.kind == kInt32 || nc.kind == kInt64) {
			// The codec would not shrink them (incompressibleColumns).
			nc.codec, nc.codecID = nil, format.Uncompressed
		}
		if nc.codecID == format.Uncompressed {
			nc.codec = nil
		}
		if c.fixed > 0 {
			nc.dec = true
			e.decBounds[i] = &decimalBound{}
		}
		nc.offs = []uint32{0}
		e.nc[i] = nc
	}
	if len(bloom) > 0 {
		e.blooms = make([]*bloomBuilder, len(cols))
		for i, bf := range bloom {
			e.blooms[i] = newBloomBuilder(bf, r.BloomMaxBytes)
		}
	}
	if _, err := e.sink.Write([]byte("PAR1")); err != nil {
		return nil, withIO(err)
	}
	e.openCount = newOpenCount(r.openFiles)
	return e, nil
}

func (e *nativeEncoder) overestimates() bool { return true }

// eachColumn runs fn on every column with eachColumnSpread: spread over
// the cores other encoders leave free when the batch has rows enough (and
// the encoder is not serial).
func (e *nativeEncoder) eachColumn(rows int, cost func(i int) int64, fn func(i int, sc *nativeScratch) error) error {
	if e.serial {
		rows = 0
	}
	return eachColumnSpread(&e.scratch, len(e.nc), rows, cost, fn)
}

// written is the file's size once the row group being written out, if
// any, is in it; the Writer sizes files with it.
func (e *nativeEncoder) written() int64 {
	if e.emitting != nil {
		return e.end
	}
	return e.sink.n
}

// rowGroupBytes counts the buffered row group's pages as written, its
// open pages and dictionaries plain-encoded, and its held batches at a
// quarter of their Arrow size.
func (e *nativeEncoder) rowGroupBytes(int64) int64 {
	n := e.heldBytes / assumedCompression
	for _, c := range e.nc {
		n += c.bufN + int64(c.plainBytes)
		if c.dict != nil && (c.usedDict || c.dictOn) {
			n += c.dict.size
		}
	}
	return n
}

func (e *nativeEncoder) write(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if err := checkRequired(e.cols, rec); err != nil {
		return err
	}
	if err := e.unhold(); err != nil {
		return err
	}
	err := e.eachColumn(n, func(i int) int64 { return sliceBytes(rec.Column(i)) }, func(i int, sc *nativeScratch) error {
		return e.writeColumn(i, rec.Column(i), n, sc)
	})
	if err != nil {
		return err
	}
	e.rgRows += int64(n)
	return nil
}

// hold keeps rec, a batch the caller keeps alive and unchanged until the
// file is closed, to be encoded with the rest of its row group. A row group
// made only of held batches is encoded column by column when it is
// complete, each column chunk going to the file as soon as it is encoded
// (writeHeld), instead of every column's pages waiting in page buffers
// until the row group ends: for a 6M-row lineitem append from memory those
// buffers were 138 MB, half of them written to and read back from a
// temporary file.
func (e *nativeEncoder) hold(rec arrow.RecordBatch) error {
	if err := checkRequired(e.cols, rec); err != nil {
		return err
	}
	rec.Retain()
	e.held = append(e.held, rec)
	e.heldBytes += RecordBytes(rec)
	return nil
}

// unhold encodes the held batches the usual way, in order: a batch that
// is not held joins the row group after them.
func (e *nativeEncoder) unhold() error {
	held := e.held
	e.held, e.heldBytes = nil, 0
	defer releaseAll(held)
	for _, rec := range held {
		if err := e.write(rec); err != nil {
			return err
		}
	}
	return nil
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// writeColumn appends rows [0, n) of arr to column i's pages.
func (e *nativeEncoder) writeColumn(i int, arr arrow.Array, n int, sc *nativeScratch) error {
	c := e.nc[i]
	rowLimit, byteLimit := pageLimitsFor(e.pageRowLimit, e.pageBytes, int(e.open.Load()))
	for off := 0; off < n; {
		if c.rows >= rowLimit || c.plainBytes >= byteLimit {
			if err := e.flushPage(c, sc); err != nil {
				return err
			}
		}
		rowsLeft := rowLimit - c.rows
		if c.dictOn {
			// The dictionary's size is checked after each chunk.
			rowsLeft = min(rowsLeft, dictChunkRows)
		}
		end, _ := chunkEndFor(e.cols[i].width, arr, off, n, rowsLeft, byteLimit-c.plainBytes)
		if err := e.add(i, c, arr, off, end, sc); err != nil {
			return err
		}
		if e.blooms != nil && e.blooms[i] != nil {
			e.blooms[i].addArrow(arr, off, end, sc.fixed, e.cols[i].fixed)
		}
		if c.rows >= rowLimit || c.plainBytes >= byteLimit {
			if err := e.flushPage(c, sc); err != nil {
				return err
			}
		}
		if c.dictOn && c.dict.size > c.dictMax {
			// The dictionary outgrew its limit: its pages so far keep it,
			// the column's next pages are written without it.
			if err := e.flushPage(c, sc); err != nil {
				return err
			}
			c.dictOn = false
		}
		off = end
	}
	return nil
}

// dictChunkRows bounds the rows a dictionary takes in before its size is
// checked against its limit (arrow-go checks every 1,024 values too).
const dictChunkRows = 1024

// add appends rows [off, end) of arr to c's open page.
func (e *nativeEncoder) add(i int, c *nativeColumn, arr arrow.Array, off, end int, sc *nativeScratch) error {
	rows := end - off
	nulls := 0
	if c.optional && arr.NullN() > 0 {
		nulls = nullsIn(arr, off, end)
	}
	switch {
	case nulls > 0:
		if !c.leveled {
			c.leveled = true
			c.levels = c.levels[:0]
			for range c.rows {
				c.levels = append(c.levels, 1)
			}
		}
		for j := off; j < end; j++ {
			c.levels = append(c.levels, b2byte(arr.IsValid(j)))
		}
	case c.leveled:
		for range rows {
			c.levels = append(c.levels, 1)
		}
	}
	c.rows += rows
	c.nulls += nulls
	valid := func(j int) bool { return true }
	if nulls > 0 {
		valid = arr.IsValid
	}
	switch a := arr.(type) {
	case *array.Boolean:
		lo, hi := byte(1), byte(0)
		for j := off; j < end; j++ {
			if nulls == 0 || valid(j) {
				v := b2byte(a.Value(j))
				c.plainBuf = append(c.plainBuf, v)
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		c.plainBytes += rows - nulls
		if rows > nulls {
			c.widen([]byte{lo}, []byte{hi})
		}
		return nil
	case *array.Int32:
		return addFixedWidth(c, a.Int32Values()[off:end], arr, off, nulls, sc)
	case *array.Date32:
		return addFixedWidth(c, a.Date32Values()[off:end], arr, off, nulls, sc)
	case *array.Int64:
		return addFixedWidth(c, a.Int64Values()[off:end], arr, off, nulls, sc)
	case *array.Time64:
		return addFixedWidth(c, a.Time64Values()[off:end], arr, off, nulls, sc)
	case *array.Timestamp:
		return addFixedWidth(c, a.TimestampValues()[off:end], arr, off, nulls, sc)
	case *array.Float32:
		return addFixedWidth(c, a.Float32Values()[off:end], arr, off, nulls, sc)
	case *array.Float64:
		return addFixedWidth(c, a.Float64Values()[off:end], arr, off, nulls, sc)
	case *array.Decimal128:
		nums := a.Values()[off:end]
		// A value beyond the column's precision (which Arrow does not
		// stop a producer from sending) would lose its high digits in
		// the INT32, INT64 or fixed-width value written: a row that
		// reads back as another number. Checked while the values are
		// converted; the slow look at which row is at fault only after.
		p := a.DataType().(*arrow.Decimal128Type).Precision
		bad := false
		switch {
		case p <= 9:
			sc.i32 = sc.i32[:0]
			var out uint64
			for _, n := range nums {
				v := int64(n.LowBits())
				out |= beyond(n, v, pow10[p])
				sc.i32 = append(sc.i32, int32(v))
			}
			bad = out != 0
		case p <= 18:
			sc.i64 = sc.i64[:0]
			var out uint64
			for _, n := range nums {
				v := int64(n.LowBits())
				out |= beyond(n, v, pow10[p])
				sc.i64 = append(sc.i64, v)
			}
			bad = out != 0
		default:
			for _, n := range nums {
				if !n.FitsInPrecision(p) {
					bad = true
					break
				}
			}
		}
		if bad {
			for j, n := range nums {
				if (nulls == 0 || valid(off+j)) && !n.FitsInPrecision(p) {
					return fmt.Errorf("column '%s': value %s does not fit its type decimal(%d, %d): %w", strings.Join(c.path, "."),
						n.ToString(a.DataType().(*arrow.Decimal128Type).Scale), p, a.DataType().(*arrow.Decimal128Type).Scale, errs.ErrValidation)
				}
			}
		}
		switch {
		case p <= 9:
			return addFixedWidth(c, sc.i32, arr, off, nulls, sc)
		case p <= 18:
			return addFixedWidth(c, sc.i64, arr, off, nulls, sc)
		}
		e.decBounds[i].add(nums, arr, off)
		w := c.width
		sc.fixed = sc.fixed[:0]
		var be [16]byte
		for _, n := range nums {
			binary.BigEndian.PutUint64(be[:8], uint64(n.HighBits()))
			binary.BigEndian.PutUint64(be[8:], n.LowBits())
			sc.fixed = append(sc.fixed, be[16-w:]...)
		}
		for j := range nums {
			if nulls == 0 || valid(off+j) {
				c.plainBuf = append(c.plainBuf, sc.fixed[j*w:(j+1)*w]...)
			}
		}
		c.plainBytes += (rows - nulls) * w
		return nil
	case *array.String:
		return addBytes(c, a.ValueOffsets(), a.ValueBytes(), arr, off, end, nulls, sc)
	case *array.Binary:
		return addBytes(c, a.ValueOffsets(), a.ValueBytes(), arr, off, end, nulls, sc)
	case *extensions.UUIDArray:
		return addFixedBytes(c, a.Storage().(*array.FixedSizeBinary), off, end, nulls)
	case *array.FixedSizeBinary:
		return addFixedBytes(c, a, off, end, nulls)
	}
	return fmt.Errorf("column %d: native encoder cannot write %s: %w", i, arr.DataType(), errs.ErrInvalidArgument)
}

func b2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// widen takes the bounds lo and hi (plain-encoded) into the open page's.
func (c *nativeColumn) widen(lo, hi []byte) {
	if !c.has || comparePlain(c.kind, lo, c.lo) < 0 {
		c.lo = append(c.lo[:0], lo...)
	}
	if !c.has || comparePlain(c.kind, hi, c.hi) > 0 {
		c.hi = append(c.hi[:0], hi...)
	}
	c.has = true
}

// comparePlain orders two plain-encoded values of kind k as Parquet's
// type-defined order does (signed numbers, unsigned bytes).
func comparePlain(k nativeKind, a, b []byte) int {
	switch k {
	case kBool:
		return int(a[0]) - int(b[0])
	case kInt32:
		x, y := int32(binary.LittleEndian.Uint32(a)), int32(binary.LittleEndian.Uint32(b))
		return cmpOrdered(x, y)
	case kInt64:
		x, y := int64(binary.LittleEndian.Uint64(a)), int64(binary.LittleEndian.Uint64(b))
		return cmpOrdered(x, y)
	case kFloat:
		x, y := math.Float32frombits(binary.LittleEndian.Uint32(a)), math.Float32frombits(binary.LittleEndian.Uint32(b))
		return cmpOrdered(x, y)
	case kDouble:
		x, y := math.Float64frombits(binary.LittleEndian.Uint64(a)), math.Float64frombits(binary.LittleEndian.Uint64(b))
		return cmpOrdered(x, y)
	}
	return bytes.Compare(a, b)
}

func cmpOrdered[T int32 | int64 | float32 | float64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

type fixedWidth interface {
	~int32 | ~int64 | ~float32 | ~float64
}

// addFixedWidth appends the valid values of vals (rows off.. of arr) to c's
// open page, as dictionary indexes or plain values, and widens its bounds.
func addFixedWidth[T fixedWidth](c *nativeColumn, vals []T, arr arrow.Array, off, nulls int, sc *nativeScratch) error {
	if nulls > 0 {
		kept := make([]T, 0, len(vals)-nulls)
		for j, v := range vals {
			if arr.IsValid(off + j) {
				kept = append(kept, v)
			}
		}
		vals = kept
	}
	if len(vals) == 0 {
		return nil
	}
	w := int(unsafe.Sizeof(vals[0]))
	c.plainBytes += len(vals) * w
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), len(vals)*w)
	lo, hi, ok := rangeOf(vals)
	if c.dictOn && ok && isInteger[T]() && c.dict.cover(int64(lo), int64(hi)) {
		d := c.dict
		mx := c.maxIdx + 1 // kept as index+1, as the table holds them
		direct, base := d.direct, d.dlo
		// Indexes are written into room made first, not appended: in
		// BenchmarkDictionaryInts, with rangeOf's two chains, 3.1-3.6 ns a
		// value went to 1.6-2.2 ns.
		start := len(c.idx)
		c.idx = slices.Grow(c.idx, len(vals))[:start+len(vals)]
		out := c.idx[start:]
		out = out[:len(vals)] // tells the compiler out[j] needs no check
		for j, v := range vals {
			at := int64(v) - base
			k := direct[at]
			if k == 0 {
				k = d.appendFixed(uint64(v), raw[j*w:(j+1)*w]) + 1
				direct[at] = k
			}
			out[j] = k - 1
			mx = max(mx, k)
		}
		c.maxIdx = mx - 1
	} else if c.dictOn {
		// The probe of insertFixed, inlined: most values are found.
		d := c.dict
		mx := c.maxIdx
		slots, keys, shift, mask := d.slots, d.keys, d.shift, len(d.slots)-1
		for j, v := range vals {
			key := uint64(v)
			s := int((key * 0x9E3779B97F4A7C15) >> shift)
			var k int32
			for {
				k = slots[s]
				if k == 0 {
					k = d.insertFixed(key, raw[j*w:(j+1)*w]) + 1
					slots, keys, shift, mask = d.slots, d.keys, d.shift, len(d.slots)-1
					break
				}
				if keys[k-1] == key {
					break
				}
				s = (s + 1) & mask
			}
			c.idx = append(c.idx, k-1)
			mx = max(mx, k-1)
		}
		c.maxIdx = mx
	} else {
		c.plainBuf = append(c.plainBuf, raw...)
	}
	if !ok {
		return nil // NaN only
	}
	var lb, hb [8]byte
	putPlain(lb[:w], lo)
	putPlain(hb[:w], hi)
	c.widen(lb[:w], hb[:w])
	return nil
}

// isInteger reports whether T holds integers (the direct table keys them
// by value).
func isInteger[T fixedWidth]() bool {
	var one T = 1
	return one/2 == 0
}

// rangeOf is the min and max of vals, NaN left out (ok is false when
// nothing else is there).
func rangeOf[T fixedWidth](vals []T) (lo, hi T, ok bool) {
	if isInteger[T]() && len(vals) > 0 {
		// Two chains of min and max, so that each step does not wait for
		// the one before it.
		lo, hi = vals[0], vals[0]
		lo1, hi1 := lo, hi
		rest := vals[1:]
		for len(rest) >= 2 {
			a, b := rest[0], rest[1]
			lo, hi = min(lo, a), max(hi, a)
			lo1, hi1 = min(lo1, b), max(hi1, b)
			rest = rest[2:]
		}
		for _, v := range rest {
			lo, hi = min(lo, v), max(hi, v)
		}
		return min(lo, lo1), max(hi, hi1), true
	}
	first := -1
	for j, v := range vals {
		if v == v {
			first = j
			break
		}
	}
	if first < 0 {
		return lo, hi, false
	}
	lo, hi = vals[first], vals[first]
	for _, v := range vals[first+1:] {
		lo = min(lo, v)
		hi = max(hi, v)
	}
	if lo != lo || hi != hi { // min/max propagate NaN
		lo, hi = vals[first], vals[first]
		for _, v := range vals[first+1:] {
			if v != v {
				continue
			}
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
	}
	return lo, hi, true
}

// putPlain writes v little-endian into b (len(b) is v's size).
func putPlain[T fixedWidth](b []byte, v T) {
	switch x := any(v).(type) {
	case float32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(x))
	case float64:
		binary.LittleEndian.PutUint64(b, math.Float64bits(x))
	default:
		if len(b) == 4 {
			binary.LittleEndian.PutUint32(b, uint32(int32(int64OfInt(v))))
		} else {
			binary.LittleEndian.PutUint64(b, uint64(int64OfInt(v)))
		}
	}
}

func int64OfInt[T fixedWidth](v T) int64 { return int64(v) }

// addDictBytes appends the valid values of rows [off, end) of a String
// or Binary array (offsets offs, not yet rebased, and data) to c's open
// page as dictionary indexes.
func addDictBytes(c *nativeColumn, offs []int32, data []byte, arr arrow.Array, off, end, nulls int) {
	base := offs[0]
	d := c.dict
	start := len(c.idx)
	idx := slices.Grow(c.idx, end-off)
	// The probe of insertBytes for values of up to 7 bytes, inlined:
	// their key is their bytes, loaded 8 at once (shortKey).
	slots, keys, shift, mask := d.slots, d.keys, d.shift, len(d.slots)-1
	plainBytes := 0
	t := &d.tiny
	if t.slots == nil && !t.off {
		t.slots = make([]tinyEntry, tinySlots)
	}
	for j := off; j < end; j++ {
		if nulls == 0 && !t.off {
			var n int
			idx, j, n = t.run(offs, base, data, j, end, idx)
			plainBytes += n
			if j == end {
				break
			}
		}
		if nulls > 0 && arr.IsNull(j) {
			continue
		}
		lo, hi := int(offs[j]-base), int(offs[j+1]-base)
		n := hi - lo
		plainBytes += 4 + n
		if n <= 24 && lo+24 <= len(data) && !t.off {
			idx = append(idx, t.lookup(d, data[lo:hi], data[lo:]))
			slots, keys, shift, mask = d.slots, d.keys, d.shift, len(d.slots)-1
			continue
		}
		if n <= 7 && lo+8 <= len(data) {
			key := binary.LittleEndian.Uint64(data[lo:lo+8])&shortMask[n] | uint64(n)<<56
			s := int((key * 0x9E3779B97F4A7C15) >> shift)
			for {
				k := slots[s]
				if k == 0 {
					break
				}
				if keys[k-1] == key {
					idx = append(idx, k-1)
					goto next
				}
				s = (s + 1) & mask
			}
		}
		if n > 7 && n <= 32 {
			// The probe of insertBytes for values of 8 to 32 bytes. (One
			// probe loop for both lengths, with the comparison of bytes
			// skipped for short keys, measured about 6% slower in
			// BenchmarkDictionaryStrings.)
			key := wordsKey(data[lo:hi])
			s := int((key * 0x9E3779B97F4A7C15) >> shift)
			for {
				k := slots[s]
				if k == 0 {
					break
				}
				if keys[k-1] == key && bytes.Equal(d.entry(k-1), data[lo:hi]) {
					idx = append(idx, k-1)
					goto next
				}
				s = (s + 1) & mask
			}
		}
		idx = append(idx, d.insertBytes(data[lo:hi]))
		slots, keys, shift, mask = d.slots, d.keys, d.shift, len(d.slots)-1
	next:
	}
	c.idx = idx
	c.plainBytes += plainBytes
	for _, k := range d.fresh(c.idx[start:]) {
		v := d.entry(k)
		c.widen(v, v)
		c.maxIdx = max(c.maxIdx, k)
	}
}

// addBytes appends the valid values of rows [off, end) of a String or
// Binary array (offsets offs, not yet rebased, and data) to c's open page.
func addBytes(c *nativeColumn, offs []int32, data []byte, arr arrow.Array, off, end, nulls int, sc *nativeScratch) error {
	base := offs[0]
	if c.dictOn {
		addDictBytes(c, offs, data, arr, off, end, nulls)
		return nil
	}
	if lo, hi, ok := sc.bounds.stringRange(offs, data, base, arr, off, end); ok {
		c.widen(lo, hi)
	}
	if nulls == 0 {
		shift := uint32(len(c.data)) - uint32(offs[off])
		c.data = append(c.data, data[offs[off]-base:offs[end]-base]...)
		for _, o := range offs[off+1 : end+1] {
			c.offs = append(c.offs, uint32(o)+shift)
		}
		c.plainBytes += int(offs[end]-offs[off]) + 4*(end-off)
		return nil
	}
	for j := off; j < end; j++ {
		if arr.IsNull(j) {
			continue
		}
		c.data = append(c.data, data[offs[j]-base:offs[j+1]-base]...)
		c.offs = append(c.offs, uint32(len(c.data)))
		c.plainBytes += 4 + int(offs[j+1]-offs[j])
	}
	return nil
}

// addFixedBytes appends the valid values of rows [off, end) of a
// FixedSizeBinary array (UUIDs, fixed) to c's open page.
func addFixedBytes(c *nativeColumn, a *array.FixedSizeBinary, off, end, nulls int) error {
	for j := off; j < end; j++ {
		if nulls > 0 && a.IsNull(j) {
			continue
		}
		v := a.Value(j)
		c.plainBuf = append(c.plainBuf, v...)
		c.plainBytes += len(v)
		c.widen(v, v)
	}
	return nil
}

// Encodings of pages, shared (they hold no state).
var (
	levelEncoding = &rle.Encoding{BitWidth: 1}
	deltaInts     = &delta.BinaryPackedEncoding{}
	deltaLengths  = &delta.LengthByteArrayEncoding{}
	plainEncoding = &plain.Encoding{}
)

// flushPage encodes and compresses c's open page into its chunk.
func (e *nativeEncoder) flushPage(c *nativeColumn, sc *nativeScratch) error {
	if c.rows == 0 {
		return nil
	}
	body := sc.body[:0]
	if c.optional {
		var lv []byte
		var err error
		if !c.leveled {
			// One RLE run of rows 1s.
			lv = binary.AppendUvarint(sc.levels[:0], uint64(c.rows)<<1)
			lv = append(lv, 1)
		} else if lv, err = levelEncoding.EncodeLevels(sc.levels, c.levels); err != nil {
			return err
		}
		sc.levels = lv
		body = binary.LittleEndian.AppendUint32(body, uint32(len(lv)))
		body = append(body, lv...)
	}
	enc := c.enc
	var vals []byte
	var err error
	switch {
	case c.dictOn:
		// The indexes' bit width, then their RLE/bit-packed runs.
		enc = format.RLEDictionary
		bw := max(1, bits.Len32(uint32(c.maxIdx)))
		body = append(body, byte(bw))
		vals, err = (&rle.Encoding{BitWidth: bw}).EncodeInt32(sc.vals, c.idx)
	case c.kind == kBool:
		vals = packBits(sc.vals[:0], c.plainBuf)
	case enc == format.DeltaBinaryPacked && c.kind == kInt32:
		vals, err = deltaInts.EncodeInt32(sc.vals, unsafeSlice[int32](c.plainBuf))
	case enc == format.DeltaBinaryPacked:
		vals, err = deltaInts.EncodeInt64(sc.vals, unsafeSlice[int64](c.plainBuf))
	case enc == format.DeltaLengthByteArray:
		vals, err = deltaLengths.EncodeByteArray(sc.vals, c.data, c.offs)
	case c.kind == kBytes:
		vals, err = plainEncoding.EncodeByteArray(sc.vals, c.data, c.offs)
	default:
		vals = c.plainBuf
	}
	if err != nil {
		return fmt.Errorf("encoding a page: %w", err)
	}
	body = append(body, vals...)
	if !c.dictOn && c.kind != kBool && c.kind != kBytes && enc == format.Plain {
		vals = nil // c.plainBuf itself
	}
	if vals != nil {
		sc.vals = vals // the scratch, possibly grown
	}
	sc.body = body
	hdr := format.PageHeader{Type: format.DataPage}
	hdr.DataPageHeader = thrift.New(format.DataPageHeader{
		NumValues: int32(c.rows), Encoding: enc,
		DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE,
	})
	n, err := e.writePage(c, &hdr, body, sc)
	if err != nil {
		return err
	}
	if c.dictOn {
		c.usedDict = true
	} else {
		c.usedEnc = true
	}
	c.pages = append(c.pages, format.PageLocation{Offset: c.bufN, CompressedPageSize: int32(n), FirstRowIndex: c.chunkRows})
	c.bufN += int64(n)
	c.noIndex = c.noIndex || !c.has && c.rows > c.nulls
	c.ci.NullPages = append(c.ci.NullPages, !c.has)
	c.ci.NullCounts = append(c.ci.NullCounts, int64(c.nulls))
	if c.has {
		lo, hi := c.lo, c.hi
		if c.kind == kBytes {
			lo, hi = indexMin(lo), indexMax(hi)
		}
		c.ci.MinValues = append(c.ci.MinValues, bytes.Clone(lo))
		c.ci.MaxValues = append(c.ci.MaxValues, bytes.Clone(hi))
		if !c.chas || comparePlain(c.kind, c.lo, c.cmin) < 0 {
			c.cmin = append(c.cmin[:0], c.lo...)
		}
		if !c.chas || comparePlain(c.kind, c.hi, c.cmax) > 0 {
			c.cmax = append(c.cmax[:0], c.hi...)
		}
		c.chas = true
	} else {
		c.ci.MinValues = append(c.ci.MinValues, []byte{})
		c.ci.MaxValues = append(c.ci.MaxValues, []byte{})
	}
	c.chunkRows += int64(c.rows)
	c.nullCount += int64(c.nulls)
	c.rows, c.nulls, c.plainBytes, c.has, c.maxIdx = 0, 0, 0, false, 0
	c.leveled = false
	c.plainBuf, c.data, c.offs, c.idx = c.plainBuf[:0], c.data[:0], c.offs[:1], c.idx[:0]
	if c.dict != nil {
		c.dict.epoch++
	}
	return nil
}

// writePage compresses body, prefixes it with hdr (sizes filled in) and
// appends both to c's chunk buffer; n is the bytes appended.
func (e *nativeEncoder) writePage(c *nativeColumn, hdr *format.PageHeader, body []byte, sc *nativeScratch) (n int, err error) {
	out := body
	if c.codec != nil {
		if out, err = c.codec.Encode(sc.comp[:0], body); err != nil {
			return 0, fmt.Errorf("compressing a page: %w", err)
		}
		sc.comp = out
	}
	hdr.UncompressedPageSize = int32(len(body))
	hdr.CompressedPageSize = int32(len(out))
	sc.header.Reset()
	if err := thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&sc.header)).Encode(hdr); err != nil {
		return 0, fmt.Errorf("encoding a page header: %w", err)
	}
	if c.buf == nil {
		c.buf = e.pages.bufferIn(&e.spills[e.side])
	}
	if _, err := c.buf.Write(sc.header.Bytes()); err != nil {
		return 0, withIO(err)
	}
	if _, err := c.buf.Write(out); err != nil {
		return 0, withIO(err)
	}
	c.uncompressed += int64(sc.header.Len() + len(body))
	return sc.header.Len() + len(out), nil
}

// packBits packs one-byte booleans into bits, least significant first.
func packBits(dst, vals []byte) []byte {
	for j := 0; j < len(vals); j += 8 {
		var b byte
		for k, v := range vals[j:min(j+8, len(vals))] {
			b |= v << k
		}
		dst = append(dst, b)
	}
	return dst
}

// unsafeSlice views plain little-endian bytes as numbers.
func unsafeSlice[T int32 | int64](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
}

// dictionaryPage encodes c's dictionary as a dictionary page (header and
// compressed body).
func (e *nativeEncoder) dictionaryPage(c *nativeColumn, sc *nativeScratch) ([]byte, int64, error) {
	d := c.dict
	body := sc.body[:0]
	if d.kind == kBytes {
		start := uint32(0)
		for _, end := range d.ends {
			body = plain.AppendByteArray(body, d.data[start:end])
			start = end
		}
	} else {
		body = append(body, d.plain...)
	}
	sc.body = body
	out := body
	var err error
	if c.codec != nil {
		if out, err = c.codec.Encode(sc.comp[:0], body); err != nil {
			return nil, 0, fmt.Errorf("compressing a dictionary page: %w", err)
		}
		sc.comp = out
	}
	hdr := format.PageHeader{Type: format.DictionaryPage, UncompressedPageSize: int32(len(body)), CompressedPageSize: int32(len(out))}
	hdr.DictionaryPageHeader = thrift.New(format.DictionaryPageHeader{NumValues: int32(d.len()), Encoding: format.Plain})
	sc.header.Reset()
	if err := thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&sc.header)).Encode(&hdr); err != nil {
		return nil, 0, fmt.Errorf("encoding a page header: %w", err)
	}
	page := append(bytes.Clone(sc.header.Bytes()), out...)
	return page, int64(sc.header.Len() + len(body)), nil
}

func (e *nativeEncoder) newRowGroup() error {
	if len(e.held) > 0 {
		if e.rgRows == 0 {
			return e.writeHeld()
		}
		if err := e.unhold(); err != nil {
			return err
		}
	}
	// The last pages, and the dictionary pages, are encoded and compressed
	// on the cores other encoders leave free.
	dictPages := make([][]byte, len(e.nc))
	dictRaw := make([]int64, len(e.nc))
	err := e.eachColumn(int(e.rgRows), func(i int) int64 { return int64(e.nc[i].plainBytes) }, func(i int, sc *nativeScratch) error {
		c := e.nc[i]
		var err error
		dictPages[i], dictRaw[i], err = e.finishChunk(c, sc)
		return err
	})
	if err != nil {
		return err
	}
	if e.rgRows == 0 {
		return nil
	}
	// The file is written by one goroutine at a time, in order.
	if err := e.wait(); err != nil {
		return err
	}
	rows, chunks := e.rgRows, make([]chunkOut, len(e.nc))
	size := e.sink.n
	for i, c := range e.nc {
		chunks[i] = e.takeChunk(i, c, dictPages[i], dictRaw[i])
		size += chunks[i].size()
	}
	e.endRowGroup()
	// The row group is copied into the file (from memory and the
	// temporary file, 150-200 ms for 128 MB) while the encoder goes on
	// with the next one, whose pages go to the other temporary file.
	// Written in line, a stream's batches piled up at the writers
	// meanwhile: its two files reach their row group size together, so
	// both stalled at once (bench/run.py W5, docs/decisions.md).
	e.side ^= 1
	e.end = size
	e.emitting = goTask(func() error { return e.writeRowGroup(rows, chunks) })
	return nil
}

// wait waits for the row group being written out, if any, and returns
// its error.
func (e *nativeEncoder) wait() error {
	t := e.emitting
	e.emitting = nil
	return t.wait()
}

// writeRowGroup writes a row group's chunks to the file and records it in
// the footer; every chunk's pages are handed back, written or not.
func (e *nativeEncoder) writeRowGroup(rows int64, chunks []chunkOut) error {
	defer func() {
		for i := range chunks {
			chunks[i].release()
		}
	}()
	o := e.startRowGroup(rows)
	for i := range chunks {
		if err := e.writeChunk(i, &chunks[i], o); err != nil {
			return err
		}
	}
	e.addRowGroup(o)
	return nil
}

// finishChunk writes c's open page out and returns the chunk's dictionary
// page (nil without one) and its uncompressed size.
func (e *nativeEncoder) finishChunk(c *nativeColumn, sc *nativeScratch) ([]byte, int64, error) {
	if err := e.flushPage(c, sc); err != nil {
		return nil, 0, err
	}
	if !c.usedDict {
		return nil, 0, nil
	}
	return e.dictionaryPage(c, sc)
}

// rowGroupOut is the footer entry and page indexes of the row group being
// written out.
type rowGroupOut struct {
	rg  format.RowGroup
	cis []*format.ColumnIndex
	ois []format.OffsetIndex
}

func (e *nativeEncoder) startRowGroup(rows int64) *rowGroupOut {
	return &rowGroupOut{
		rg:  format.RowGroup{NumRows: rows, FileOffset: e.sink.n, Ordinal: int16(len(e.rowGroups))},
		cis: make([]*format.ColumnIndex, len(e.nc)),
		ois: make([]format.OffsetIndex, len(e.nc)),
	}
}

// chunkOut is a finished column chunk on its way to the file: its
// dictionary page, its data pages (in buf, bufN bytes) and its metadata,
// which has no file offsets yet (page offsets count from the first data
// page).
type chunkOut struct {
	dictPage []byte
	buf      io.ReadWriteSeeker
	bufN     int64
	md       format.ColumnMetaData
	pages    []format.PageLocation
	ci       *format.ColumnIndex
}

func (ch *chunkOut) size() int64 { return int64(len(ch.dictPage)) + ch.bufN }

// release hands the chunk's page buffer back, once.
func (ch *chunkOut) release() {
	if ch.buf != nil {
		putBuffer(ch.buf)
		ch.buf = nil
	}
}

// takeChunk takes column c's finished chunk (with its dictionary page, if
// any) out of it, leaving c to start the next one.
func (e *nativeEncoder) takeChunk(i int, c *nativeColumn, dictPage []byte, dictRaw int64) chunkOut {
	ch := chunkOut{dictPage: dictPage, buf: c.buf, bufN: c.bufN, pages: c.pages}
	md := format.ColumnMetaData{
		Type: e.schema[i+1].Type.V, PathInSchema: c.path, Codec: c.codecID,
		NumValues: c.chunkRows, TotalUncompressedSize: c.uncompressed,
	}
	if dictPage != nil {
		md.TotalUncompressedSize += dictRaw
		md.Encoding = append(md.Encoding, format.Plain, format.RLE, format.RLEDictionary)
	}
	if c.usedEnc && (dictPage == nil || c.enc != format.Plain) {
		md.Encoding = append(md.Encoding, c.enc)
		if dictPage == nil {
			md.Encoding = append(md.Encoding, format.RLE)
		}
	}
	md.Statistics.NullCount = c.nullCount
	if c.chas && !c.dec {
		md.Statistics.MinValue, md.Statistics.MaxValue = bytes.Clone(c.cmin), bytes.Clone(c.cmax)
		if c.kind == kFloat || c.kind == kDouble {
			md.Statistics.MinValue, md.Statistics.MaxValue = signedZeroBounds(c.kind, md.Statistics.MinValue, md.Statistics.MaxValue)
		}
	}
	ch.md = md
	if !c.dec && !c.noIndex {
		ci := c.ci
		if c.kind == kFloat || c.kind == kDouble {
			for p := range ci.MinValues {
				if !ci.NullPages[p] {
					ci.MinValues[p], ci.MaxValues[p] = signedZeroBounds(c.kind, ci.MinValues[p], ci.MaxValues[p])
				}
			}
		}
		ci.BoundaryOrder = boundaryOrderBy(&ci, func(a, b []byte) int { return comparePlain(c.kind, a, b) })
		ch.ci = &ci
	}
	// The next chunk starts afresh.
	c.buf, c.pages, c.ci = nil, nil, format.ColumnIndex{}
	c.bufN, c.uncompressed, c.chunkRows, c.nullCount, c.chas = 0, 0, 0, 0, false
	c.usedDict, c.usedEnc, c.noIndex = false, false, false
	if c.dict != nil {
		c.dict.reset()
	}
	return ch
}

// writeChunk writes chunk ch of column i to the file and records it in
// o; its page buffer is handed back, written or not.
func (e *nativeEncoder) writeChunk(i int, ch *chunkOut, o *rowGroupOut) error {
	defer ch.release()
	start := e.sink.n
	md := ch.md
	if ch.dictPage != nil {
		md.DictionaryPageOffset = start
		if _, err := e.sink.Write(ch.dictPage); err != nil {
			return withIO(err)
		}
	}
	md.DataPageOffset = e.sink.n
	if ch.buf != nil {
		if err := copyPages(e.sink, ch.buf); err != nil {
			return withIO(err)
		}
	}
	md.TotalCompressedSize = e.sink.n - start
	for p := range ch.pages {
		ch.pages[p].Offset += md.DataPageOffset
	}
	o.ois[i] = format.OffsetIndex{PageLocations: ch.pages}
	o.cis[i] = ch.ci
	o.rg.Columns = append(o.rg.Columns, format.ColumnChunk{FileOffset: start, MetaData: md})
	o.rg.TotalByteSize += md.TotalUncompressedSize
	o.rg.TotalCompressedSize += md.TotalCompressedSize
	return nil
}

// copyPages copies a chunk's page buffer, from its start, to w.
func copyPages(w io.Writer, buf io.ReadWriteSeeker) error {
	if _, err := buf.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, buf)
	return err
}

// endRowGroup counts the buffered row group's rows as written and closes
// its bloom filters; the row group is on its way to the file.
func (e *nativeEncoder) endRowGroup() {
	e.numRows += e.rgRows
	e.rgRows = 0
	if e.blooms != nil {
		e.filters = append(e.filters, finishBlooms(e.blooms))
	}
}

// addRowGroup records a row group written to the file for the footer and
// the page index.
func (e *nativeEncoder) addRowGroup(o *rowGroupOut) {
	e.rowGroups = append(e.rowGroups, o.rg)
	e.indexes = append(e.indexes, o.cis)
	e.offsets = append(e.offsets, o.ois)
}

// writeHeld writes the held batches as one row group, column by column.
// Columns are encoded in order, on the cores other encoders leave free,
// and each chunk is written to the file as soon as it and the chunks
// before it are done, so that only the chunks in progress wait in page
// buffers.
func (e *nativeEncoder) writeHeld() error {
	held := e.held
	e.held, e.heldBytes = nil, 0
	defer releaseAll(held)
	for _, r := range held {
		e.rgRows += r.NumRows()
	}
	if e.rgRows == 0 {
		return nil
	}
	if err := e.wait(); err != nil {
		return err
	}
	o := e.startRowGroup(e.rgRows)
	var (
		mu       sync.Mutex
		next     int
		done     = make([]bool, len(e.nc))
		dictPage = make([][]byte, len(e.nc))
		dictRaw  = make([]int64, len(e.nc))
	)
	// With a file open per core (a large append spread over one writer per
	// core, which all reach here at their close) each file encodes its
	// columns in turn: helpers taken by the first file would leave the
	// last one alone on a core once the first is done.
	rows := int(e.rgRows)
	if int(e.open.Load()) >= runtime.GOMAXPROCS(0) {
		rows = 0
	}
	err := e.eachColumn(rows, nil, func(i int, sc *nativeScratch) error {
		c := e.nc[i]
		for _, r := range held {
			if err := e.writeColumn(i, r.Column(i), int(r.NumRows()), sc); err != nil {
				return err
			}
		}
		var err error
		if dictPage[i], dictRaw[i], err = e.finishChunk(c, sc); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		done[i] = true
		for ; next < len(e.nc) && done[next]; next++ {
			ch := e.takeChunk(next, e.nc[next], dictPage[next], dictRaw[next])
			if err := e.writeChunk(next, &ch, o); err != nil {
				return err
			}
			dictPage[next] = nil
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.endRowGroup()
	e.addRowGroup(o)
	return nil
}

// signedZeroBounds writes a zero minimum as -0 and a zero maximum as +0,
// as the Parquet format asks of floating-point bounds.
func signedZeroBounds(k nativeKind, lo, hi []byte) ([]byte, []byte) {
	if k == kFloat {
		if math.Float32frombits(binary.LittleEndian.Uint32(lo)) == 0 {
			lo = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.Copysign(0, -1))))
		}
		if math.Float32frombits(binary.LittleEndian.Uint32(hi)) == 0 {
			hi = binary.LittleEndian.AppendUint32(nil, 0)
		}
		return lo, hi
	}
	if math.Float64frombits(binary.LittleEndian.Uint64(lo)) == 0 {
		lo = binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Copysign(0, -1)))
	}
	if math.Float64frombits(binary.LittleEndian.Uint64(hi)) == 0 {
		hi = binary.LittleEndian.AppendUint64(nil, 0)
	}
	return lo, hi
}

// close writes the last row group, the page index, the bloom filters and
// the footer.
func (e *nativeEncoder) close() (*metadata.FileMetaData, error) {
	defer e.release()
	if err := e.newRowGroup(); err != nil {
		return nil, err
	}
	if err := e.wait(); err != nil {
		return nil, err
	}
	proto := new(thrift.CompactProtocol)
	for rg := range e.rowGroups {
		for i, ci := range e.indexes[rg] {
			if ci == nil {
				continue
			}
			raw, err := thrift.Marshal(proto, ci)
			if err != nil {
				return nil, fmt.Errorf("encoding a column index: %w", err)
			}
			cc := &e.rowGroups[rg].Columns[i]
			cc.ColumnIndexOffset, cc.ColumnIndexLength = e.sink.n, int32(len(raw))
			if _, err := e.sink.Write(raw); err != nil {
				return nil, withIO(err)
			}
		}
	}
	for rg := range e.rowGroups {
		for i := range e.offsets[rg] {
			raw, err := thrift.Marshal(proto, &e.offsets[rg][i])
			if err != nil {
				return nil, fmt.Errorf("encoding an offset index: %w", err)
			}
			cc := &e.rowGroups[rg].Columns[i]
			cc.OffsetIndexOffset, cc.OffsetIndexLength = e.sink.n, int32(len(raw))
			if _, err := e.sink.Write(raw); err != nil {
				return nil, withIO(err)
			}
		}
	}
	md := format.FileMetaData{
		Version: 1, Schema: e.schema, NumRows: e.numRows, RowGroups: e.rowGroups,
		CreatedBy: createdByNative, ColumnOrders: e.orders,
	}
	if err := writeBloomFilters(e.sink, &md, e.filters); err != nil {
		return nil, err
	}
	e.filters = nil
	return writeFooter(e.sink, &md)
}

// discard drops the unfinished file, handing its page buffers back.
func (e *nativeEncoder) discard() {
	defer e.release()
	_ = e.wait() // the file is dropped: its error does not matter
	releaseAll(e.held)
	e.held, e.heldBytes = nil, 0
	for _, c := range e.nc {
		if c.buf != nil {
			putBuffer(c.buf)
			c.buf = nil
		}
	}
}

func (e *nativeEncoder) fixMetrics(f *File) { fixDecimalMetrics(f, e.cols, e.decBounds) }

var _ fileEncoder = (*nativeEncoder)(nil)

// nullsIn counts the nulls among rows [off, end) of arr.
func nullsIn(arr arrow.Array, off, end int) int {
	bm := arr.NullBitmapBytes()
	if len(bm) == 0 {
		return 0
	}
	return end - off - bitutil.CountSetBits(bm, arr.Data().Offset()+off, end-off)
}

// beyond is non-zero when n (whose low 64 bits are v) is not in (-lim, lim):
// its high bits are not v's sign, or |v| >= lim. Without branches, so that
// the check costs the conversion loops little.
func beyond(n decimal128.Num, v, lim int64) uint64 {
	sign := v >> 63
	a := v ^ sign       // |v| for v >= 0, |v|-1 below
	t := lim - 1 + sign // the largest a allowed
	return uint64(n.HighBits()^sign) | uint64(t-a)>>63
}

// pow10 holds 10^p for the precisions of decimals stored as INT32 or INT64.
var pow10 = func() (t [19]int64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()
