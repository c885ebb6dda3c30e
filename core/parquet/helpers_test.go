package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// memFS is an in-memory WriteFileIO with injectable failures.
type memFS struct {
	mu         sync.Mutex
	files      map[string]*memFile
	order      []string
	failCreate int   // fail the n-th Create (1-based); 0 never
	failAfter  int64 // fail writes once a file holds this many bytes; 0 never
	panicWrite bool
	// gate, when set, holds every write that would take a file past
	// gateAfter bytes (past the 4-byte magic at least) until it is
	// closed; gated is closed when the first write waits.
	gate, gated chan struct{}
	gateAfter   int
	gatedOnce   sync.Once
}

func newMemFS() *memFS { return &memFS{files: map[string]*memFile{}} }

type memFile struct {
	fs     *memFS
	buf    bytes.Buffer
	closed bool
}

var errInjected = errors.New("injected failure")

func (m *memFS) Create(name string) (icebergio.FileWriter, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failCreate > 0 && len(m.order)+1 == m.failCreate {
		return nil, errInjected
	}
	f := &memFile{fs: m}
	m.files[name] = f
	m.order = append(m.order, name)
	return f, nil
}

func (m *memFS) WriteFile(name string, p []byte) error {
	w, err := m.Create(name)
	if err != nil {
		return err
	}
	if _, err := w.Write(p); err != nil {
		return err
	}
	return w.Close()
}

func (m *memFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, name)
	return nil
}

func (m *memFS) Open(name string) (icebergio.File, error) {
	return nil, errors.New("not readable")
}

func (f *memFile) Write(p []byte) (int, error) {
	if f.fs.panicWrite {
		panic("injected panic")
	}
	if f.fs.failAfter > 0 && int64(f.buf.Len()+len(p)) > f.fs.failAfter {
		return 0, errInjected
	}
	if f.fs.gate != nil && f.buf.Len()+len(p) > max(4, f.fs.gateAfter) {
		f.fs.gatedOnce.Do(func() { close(f.fs.gated) })
		<-f.fs.gate
	}
	return f.buf.Write(p)
}

func (f *memFile) ReadFrom(r io.Reader) (int64, error) { return f.buf.ReadFrom(r) }

func (f *memFile) Close() error { f.closed = true; return nil }

func (m *memFS) bytes(t *testing.T, name string) []byte {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[name]
	if !ok {
		t.Fatalf("no file %s", name)
	}
	if !f.closed {
		t.Fatalf("file %s not closed", name)
	}
	return f.buf.Bytes()
}

func pathGen(prefix string) func() string {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("%s/%05d.parquet", prefix, n)
	}
}

// allTypesSchema is an Iceberg schema covering every type the writer maps.
func allTypesSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 2, Name: "i", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 3, Name: "l", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 4, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 5, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 6, Name: "dec9", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 7, Name: "dec18", Type: iceberg.DecimalTypeOf(18, 4)},
		iceberg.NestedField{ID: 8, Name: "dec38", Type: iceberg.DecimalTypeOf(38, 10)},
		iceberg.NestedField{ID: 9, Name: "date", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 10, Name: "time", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 11, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 12, Name: "tstz", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 13, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 14, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 15, Name: "fx", Type: iceberg.FixedTypeOf(5)},
		iceberg.NestedField{ID: 16, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 17, Name: "st", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 18, Name: "si", Type: iceberg.PrimitiveTypes.Int32},
			{ID: 19, Name: "ss", Type: iceberg.PrimitiveTypes.String},
			{ID: 20, Name: "sd", Type: iceberg.PrimitiveTypes.Float64},
		}}},
		iceberg.NestedField{ID: 21, Name: "lst", Type: &iceberg.ListType{ElementID: 22, Element: iceberg.PrimitiveTypes.Float64}},
		iceberg.NestedField{ID: 23, Name: "mp", Type: &iceberg.MapType{KeyID: 24, KeyType: iceberg.PrimitiveTypes.String,
			ValueID: 25, ValueType: iceberg.PrimitiveTypes.Int64}},
	)
}

func arrowSchema(t testing.TB, sc *iceberg.Schema) *arrow.Schema {
	t.Helper()
	as, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

var runePool = []rune("abcxyzé中😀ÿ")

func randString(r *rand.Rand, maxLen int) string {
	n := r.IntN(maxLen + 1)
	rs := make([]rune, n)
	for i := range rs {
		rs[i] = runePool[r.IntN(len(runePool))]
	}
	return string(rs)
}

// randomBatch builds n random rows of schema (about 10% nulls in optional
// fields, some NaNs in floats).
func randomBatch(sc *arrow.Schema, n int, r *rand.Rand) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i, f := range sc.Fields() {
		for range n {
			appendRandom(b.Field(i), f.Type, f.Nullable, r)
		}
	}
	return b.NewRecordBatch()
}

func appendRandom(b array.Builder, t arrow.DataType, nullable bool, r *rand.Rand) {
	if nullable && r.IntN(10) == 0 {
		b.AppendNull()
		return
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		bb.Append(r.IntN(2) == 1)
	case *array.Int32Builder:
		bb.Append(int32(r.IntN(2_000_001) - 1_000_000))
	case *array.Int64Builder:
		bb.Append(r.Int64() - math.MaxInt64/2)
	case *array.Float32Builder:
		if r.IntN(30) == 0 {
			bb.Append(float32(math.NaN()))
		} else {
			bb.Append(float32(r.NormFloat64() * 1000))
		}
	case *array.Float64Builder:
		if r.IntN(30) == 0 {
			bb.Append(math.NaN())
		} else {
			bb.Append(r.NormFloat64() * 1e6)
		}
	case *array.Decimal128Builder:
		p := t.(*arrow.Decimal128Type).Precision
		limit := math.Pow10(int(min(p, 18)))
		v := int64(r.Float64()*2*limit - limit)
		n := decimal128.FromI64(v)
		if p > 18 {
			n = n.Mul(decimal128.FromI64(1_000_000_000_000)).Add(decimal128.FromI64(r.Int64N(1_000_000_000_000)))
		}
		bb.Append(n)
	case *array.Date32Builder:
		bb.Append(arrow.Date32(r.IntN(40000) - 10000))
	case *array.Time64Builder:
		bb.Append(arrow.Time64(r.Int64N(86_400_000_000)))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(r.Int64N(4e15) - 1e15))
	case *array.StringBuilder:
		bb.Append(randString(r, 40))
	case *extensions.UUIDBuilder:
		var u uuid.UUID
		for i := range u {
			u[i] = byte(r.IntN(256))
		}
		bb.Append(u)
	case *array.FixedSizeBinaryBuilder:
		v := make([]byte, t.(*arrow.FixedSizeBinaryType).ByteWidth)
		for i := range v {
			v[i] = byte(r.IntN(256))
		}
		bb.Append(v)
	case *array.BinaryBuilder:
		v := make([]byte, r.IntN(30))
		for i := range v {
			v[i] = byte(r.IntN(256))
		}
		bb.Append(v)
	case *array.StructBuilder:
		bb.Append(true)
		st := t.(*arrow.StructType)
		for i := 0; i < st.NumFields(); i++ {
			appendRandom(bb.FieldBuilder(i), st.Field(i).Type, st.Field(i).Nullable, r)
		}
	case *array.MapBuilder:
		bb.Append(true)
		mt := t.(*arrow.MapType)
		for range r.IntN(4) {
			appendRandom(bb.KeyBuilder(), mt.KeyType(), false, r)
			appendRandom(bb.ItemBuilder(), mt.ItemType(), mt.ItemField().Nullable, r)
		}
	case *array.ListBuilder:
		bb.Append(true)
		elem := t.(*arrow.ListType).ElemField()
		for range r.IntN(4) {
			appendRandom(bb.ValueBuilder(), elem.Type, elem.Nullable, r)
		}
	default:
		panic(fmt.Sprintf("test generator: unhandled builder %T", b))
	}
}

// readBack reads a Parquet file into an Arrow table.
func readBack(t testing.TB, data []byte) arrow.Table {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// columnJSON renders the i-th column of several batches (or table chunks)
// as one JSON array.
func columnJSON(t testing.TB, chunks []arrow.Array) string {
	t.Helper()
	if len(chunks) == 0 {
		return "[]"
	}
	arr, err := array.Concatenate(chunks, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	js, err := arr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// hangBound bounds the waits of tests for the writer's goroutines: long
// enough for any load the machine may be under, so that it only ever ends
// a hang (a wait that ends early is no failure in itself).
const hangBound = 2 * time.Minute

// writeAll writes recs with one Writer and closes it.
func writeAll(t testing.TB, fs *memFS, sc *arrow.Schema, opts Options, recs []arrow.RecordBatch) []File {
	t.Helper()
	w := NewWriter(t.Context(), fs, sc, opts, pathGen("mem://t"))
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	files, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func floatsSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "nan", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 2, Name: "f", Type: iceberg.PrimitiveTypes.Float32, Required: true},
	)
}

func stringsSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.PrimitiveTypes.String, Required: true},
	)
}

// encoderCase is one encoder the writer tests run against: pqarrow on the
// full schema (nested columns included), the native encoder on its flat
// part.
type encoderCase struct {
	name string
	flat bool
}

var encoderCases = []encoderCase{{"pqarrow", false}, {"native", true}}

// forEachEncoder runs fn as a subtest per encoder.
func forEachEncoder(t *testing.T, fn func(t *testing.T, ec encoderCase)) {
	t.Helper()
	for _, ec := range encoderCases {
		t.Run(ec.name, func(t *testing.T) { fn(t, ec) })
	}
}

// opts forces the case's encoder.
func (ec encoderCase) opts(o Options) Options {
	o.Pqarrow = !ec.flat
	return o
}

// batches is allTypesBatches, without the nested columns for a flat case.
func (ec encoderCase) batches(t testing.TB, nBatches, rows int, seed uint64) (*arrow.Schema, []arrow.RecordBatch) {
	if !ec.flat {
		return allTypesBatches(t, nBatches, rows, seed)
	}
	sc := arrowSchema(t, flatTypesSchema())
	r := rand.New(rand.NewPCG(seed, 7))
	recs := make([]arrow.RecordBatch, nBatches)
	for i := range recs {
		recs[i] = randomBatch(sc, rows, r)
	}
	return sc, recs
}

// flatTypesSchema is allTypesSchema without its struct, list and map.
func flatTypesSchema() *iceberg.Schema {
	var flat []iceberg.NestedField
	for _, f := range allTypesSchema().Fields() {
		if _, nested := f.Type.(iceberg.NestedType); !nested {
			flat = append(flat, f)
		}
	}
	return iceberg.NewSchema(0, flat...)
}
