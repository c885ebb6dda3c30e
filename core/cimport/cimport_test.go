package cimport

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// export lays d out as an ArrowArray in Go memory (the checks only read
// it; nothing here goes through cgo). Buffers arrow-go drops on import are
// added back: a view array's data buffer sizes.
func export(d arrow.ArrayData) *cArray {
	a := &cArray{length: int64(d.Len()), nullCount: int64(d.NullN()), offset: int64(d.Offset()), release: unsafe.Pointer(&struct{}{})}
	var bufs []unsafe.Pointer
	for _, b := range d.Buffers() {
		if b == nil || b.Len() == 0 {
			bufs = append(bufs, nil)
			continue
		}
		bufs = append(bufs, unsafe.Pointer(&b.Bytes()[0]))
	}
	switch d.DataType().ID() {
	case arrow.NULL:
		bufs = nil
	case arrow.STRING_VIEW, arrow.BINARY_VIEW:
		var sizes []int64
		for _, b := range d.Buffers()[2:] {
			sizes = append(sizes, int64(b.Len()))
		}
		if len(sizes) == 0 {
			sizes = []int64{0}
		}
		bufs = append(bufs, unsafe.Pointer(&sizes[0]))
	}
	if len(bufs) > 0 {
		a.nBuffers, a.buffers = int64(len(bufs)), &bufs[0]
	}
	var kids []*cArray
	for _, c := range d.Children() {
		kids = append(kids, export(c))
	}
	if len(kids) > 0 {
		a.nChildren, a.children = int64(len(kids)), &kids[0]
	}
	if dict := d.Dictionary(); dict != nil && dict != (*array.Data)(nil) {
		a.dictionary = export(dict)
	}
	return a
}

func recordData(rec arrow.RecordBatch) arrow.ArrayData {
	st := array.RecordToStructArray(rec)
	return st.Data()
}

func check(rec arrow.RecordBatch) error {
	return CheckArray(unsafe.Pointer(export(recordData(rec))), arrow.StructOf(rec.Schema().Fields()...))
}

func sample(t testing.TB, n int) arrow.RecordBatch {
	t.Helper()
	mem := memory.DefaultAllocator
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.BinaryTypes.StringView, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(2).(*array.StringViewBuilder).SetBlockSize(128)
	for i := range n {
		if i%5 == 3 {
			for f := range sc.NumFields() {
				b.Field(f).AppendNull()
			}
			continue
		}
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprint("s", i))
		b.Field(2).(*array.StringViewBuilder).Append(fmt.Sprint("a value longer than twelve bytes ", i))
		lb := b.Field(3).(*array.ListBuilder)
		lb.Append(true)
		for k := range i % 3 {
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(k))
		}
		if err := b.Field(4).(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprint("c", i%4)); err != nil {
			t.Fatal(err)
		}
		sb := b.Field(5).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.BooleanBuilder).Append(i%2 == 0)
	}
	return b.NewRecordBatch()
}

func TestValidBatchesPass(t *testing.T) {
	rec := sample(t, 100)
	defer rec.Release()
	if err := check(rec); err != nil {
		t.Fatal(err)
	}
	sl := rec.NewSlice(7, 61)
	defer sl.Release()
	if err := check(sl); err != nil {
		t.Fatalf("a slice: %v", err)
	}
}

// Each corruption of a valid batch's layout is an invalid argument naming
// the column.
func TestCorruptionsAreRefused(t *testing.T) {
	col := func(a *cArray, i int) *cArray { return unsafe.Slice(a.children, a.nChildren)[i] }
	buffer := func(a *cArray, i int) unsafe.Pointer { return unsafe.Slice(a.buffers, a.nBuffers)[i] }
	for _, c := range []struct {
		name, want string
		spoil      func(a *cArray)
	}{
		{"decreasing string offsets", "column 's': offsets decrease", func(a *cArray) {
			(*[3]int32)(buffer(col(a, 1), 1))[1] = 100
		}},
		{"list offsets past the child", "column 'l': offsets reach element", func(a *cArray) {
			l := col(a, 3)
			o := unsafe.Slice((*int32)(buffer(l, 1)), l.length+1)
			o[l.length] = int32(col(l, 0).length + 1)
		}},
		{"dictionary index out of range", "column 'd': dictionary index 9", func(a *cArray) {
			*(*int16)(buffer(col(a, 4), 1)) = 9
		}},
		{"view past its data buffer", "column 'v': view at slot 0", func(a *cArray) {
			*(*int32)(unsafe.Add(buffer(col(a, 2), 1), 12)) = 1 << 20
		}},
		{"struct child shorter", "column 'st.b': length 3 is shorter", func(a *cArray) {
			b := col(col(a, 5), 0)
			b.length, b.nullCount = 3, -1
		}},
		{"null count off by one", "column 'id': null_count is 9", func(a *cArray) {
			col(a, 0).nullCount = 9
		}},
		{"buffer count", "column 'id': int64 needs 2 buffers", func(a *cArray) {
			col(a, 0).nBuffers = 3
		}},
		{"dictionary missing", "column 'd': dictionary array has no dictionary", func(a *cArray) {
			col(a, 4).dictionary = nil
		}},
		{"length past 2^31-1", "write smaller batches", func(a *cArray) {
			a.length = 1 << 31
		}},
	} {
		rec := sample(t, 40) // each case spoils buffers of its own
		a := export(recordData(rec))
		c.spoil(a)
		err := CheckArray(unsafe.Pointer(a), arrow.StructOf(rec.Schema().Fields()...))
		rec.Release()
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}

// lineitem is TPC-H lineitem's column types (money as decimal(15,2) in 64
// bits, as the benchmarks' data has it), n rows, strings of its lengths.
func lineitem(n int) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	fs := []arrow.Field{}
	for _, name := range []string{"l_orderkey", "l_partkey", "l_suppkey", "l_linenumber"} {
		fs = append(fs, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	for _, name := range []string{"l_quantity", "l_extendedprice", "l_discount", "l_tax"} {
		fs = append(fs, arrow.Field{Name: name, Type: dec, Nullable: true})
	}
	for _, name := range []string{"l_returnflag", "l_linestatus"} {
		fs = append(fs, arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	for _, name := range []string{"l_shipdate", "l_commitdate", "l_receiptdate"} {
		fs = append(fs, arrow.Field{Name: name, Type: arrow.FixedWidthTypes.Date32, Nullable: true})
	}
	for _, name := range []string{"l_shipinstruct", "l_shipmode", "l_comment"} {
		fs = append(fs, arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fs, nil))
	defer b.Release()
	comment := strings.Repeat("x", 27)
	for i := range n {
		for f := range 4 {
			b.Field(f).(*array.Int64Builder).Append(int64(i * (f + 1)))
		}
		for f := 4; f < 8; f++ {
			b.Field(f).(*array.Decimal128Builder).Append(decimalOf(int64(i % 5000)))
		}
		b.Field(8).(*array.StringBuilder).Append("N")
		b.Field(9).(*array.StringBuilder).Append("O")
		for f := 10; f < 13; f++ {
			b.Field(f).(*array.Date32Builder).Append(arrow.Date32(9000 + i%2500))
		}
		b.Field(13).(*array.StringBuilder).Append("DELIVER IN PERSON")
		b.Field(14).(*array.StringBuilder).Append("TRUCK")
		b.Field(15).(*array.StringBuilder).Append(comment[:10+i%17])
	}
	return b.NewRecordBatch()
}

// BenchmarkCheckLineitem: the checks on a 128k-row batch of lineitem's
// types (the batch size pyarrow hands over when it reads Parquet).
func BenchmarkCheckLineitem(b *testing.B) {
	const rows = 128 << 10
	rec := lineitem(rows)
	defer rec.Release()
	a := unsafe.Pointer(export(recordData(rec)))
	dt := arrow.StructOf(rec.Schema().Fields()...)
	// CPU time as well as wall time: on a shared machine the wall time
	// mostly measures the wait for a core.
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	start := cpu()
	for b.Loop() {
		if err := CheckArray(a, dt); err != nil {
			b.Fatal(err)
		}
	}
	used := cpu() - start
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
	b.ReportMetric(float64(used.Nanoseconds())/float64(b.N)/rows, "cpu-ns/row")
}

func decimalOf(v int64) decimal128.Num { return decimal128.FromI64(v) }
