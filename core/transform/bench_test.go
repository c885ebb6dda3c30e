package transform

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

const benchRows = 1 << 20

func BenchmarkApplyBucketInt64(b *testing.B) {
	mem := memory.DefaultAllocator
	bld := array.NewInt64Builder(mem)
	r := rand.New(rand.NewPCG(1, 1))
	for range benchRows {
		bld.Append(int64(r.Uint64()))
	}
	arr := bld.NewArray()
	bld.Release()
	defer arr.Release()
	tr := iceberg.BucketTransform{NumBuckets: 16}
	b.SetBytes(benchRows * 8)
	b.ResetTimer()
	for b.Loop() {
		out, err := Apply(tr, arr, mem)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
}

// BenchmarkSplitMonths splits 1M unsorted rows (ts, id, value, name) by
// month(ts) over ten years: 120 partitions.
func BenchmarkSplitMonths(b *testing.B) {
	mem := memory.DefaultAllocator
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "value", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 4, Name: "name", Type: iceberg.PrimitiveTypes.String},
	)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "value", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(mem, sc)
	r := rand.New(rand.NewPCG(2, 2))
	names := []string{"alpha", "beta", "gamma", "delta"}
	const start = int64(1_577_836_800_000_000) // 2020-01-01
	for i := range benchRows {
		rb.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(start + r.Int64N(10*365*dayMicros)))
		rb.Field(1).(*array.Int64Builder).Append(int64(i))
		rb.Field(2).(*array.Float64Builder).Append(r.Float64())
		rb.Field(3).(*array.StringBuilder).Append(names[i%len(names)])
	}
	rec := rb.NewRecordBatch()
	rb.Release()
	defer rec.Release()
	spec := iceberg.NewPartitionSpecID(1, partField(1000, 1, iceberg.MonthTransform{}))

	b.ResetTimer()
	for b.Loop() {
		parts, err := Split(rec, spec, schema, mem)
		if err != nil {
			b.Fatal(err)
		}
		if len(parts) != 120 {
			b.Fatalf("got %d partitions", len(parts))
		}
		releaseAll(parts)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
}

// BenchmarkScatterComments scatters l_comment-like strings (10 to 43
// bytes) into 7 groups, as W3 does.
func BenchmarkScatterComments(b *testing.B) {
	mem := memory.DefaultAllocator
	r := rand.New(rand.NewPCG(4, 4))
	sb := array.NewStringBuilder(mem)
	const n = 1 << 17
	// Output buffers come back through a Recycler, as Split's do.
	gr := &groups{gid: make([]uint32, n), pos: make([]int32, n), counts: make([]int, 7), mem: mem, out: NewRecycler(64 << 20)}
	for i := range n {
		buf := make([]byte, 10+r.IntN(34))
		for k := range buf {
			buf[k] = byte('a' + r.IntN(26))
		}
		sb.Append(string(buf))
		g := r.IntN(7)
		gr.gid[i], gr.pos[i] = uint32(g), int32(gr.counts[g])
		gr.counts[g]++
	}
	arr := sb.NewArray()
	sb.Release()
	defer arr.Release()
	for b.Loop() {
		out, err := gr.scatter(arr)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range out {
			o.Release()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
}

// BenchmarkScatterLineitem scatters lineitem-like columns (an int64, a
// decimal128, a date32, a 3-to-7-byte code and a 10-to-43-byte comment)
// of 128k unsorted rows into 84 groups, as W2's months(l_shipdate) does.
func BenchmarkScatterLineitem(b *testing.B) {
	mem := memory.DefaultAllocator
	r := rand.New(rand.NewPCG(5, 5))
	const n, ngroups = 1 << 17, 84
	gr := &groups{gid: make([]uint32, n), pos: make([]int32, n), counts: make([]int, ngroups), mem: mem, out: NewRecycler(64 << 20)}
	ib := array.NewInt64Builder(mem)
	db := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 15, Scale: 2})
	tb := array.NewDate32Builder(mem)
	cb := array.NewStringBuilder(mem)
	sb := array.NewStringBuilder(mem)
	codes := []string{"AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR"}
	for i := range n {
		ib.Append(r.Int64())
		db.Append(decimal128.FromI64(r.Int64N(10_000_000)))
		tb.Append(arrow.Date32(8000 + r.IntN(2500)))
		cb.Append(codes[r.IntN(len(codes))])
		buf := make([]byte, 10+r.IntN(34))
		for k := range buf {
			buf[k] = byte('a' + r.IntN(26))
		}
		sb.Append(string(buf))
		g := r.IntN(ngroups)
		gr.gid[i], gr.pos[i] = uint32(g), int32(gr.counts[g])
		gr.counts[g]++
	}
	var cols []arrow.Array
	for _, bld := range []array.Builder{ib, db, tb, cb, sb} {
		cols = append(cols, bld.NewArray())
		bld.Release()
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for b.Loop() {
		for _, c := range cols {
			out, err := gr.scatter(c)
			if err != nil {
				b.Fatal(err)
			}
			for _, o := range out {
				o.Release()
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
}
