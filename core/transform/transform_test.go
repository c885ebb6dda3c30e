package transform

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The test values of the Iceberg spec, Appendix B (32-bit hash requirements).
// Inputs are derived with the time package so only the hashes are typed in.
func TestHashMatchesSpecAppendixB(t *testing.T) {
	ts := time.Date(2017, 11, 16, 22, 31, 8, 0, time.UTC)
	tsTZ := time.Date(2017, 11, 16, 14, 31, 8, 0, time.FixedZone("-08:00", -8*3600))
	days := ts.Unix() / 86400
	timeOfDay := (22*3600 + 31*60 + 8) * int64(time.Second/time.Microsecond)
	specUUID := uuid.MustParse("f79c3e09-677c-4bbd-a479-3f349cb785e7")

	cases := []struct {
		name string
		got  uint32
		want int32
	}{
		{"int 34", hashLong(int64(int32(34))), 2017239379},
		{"long 34L", hashLong(34), 2017239379},
		{"decimal 14.20", hashDecimal(decimal128.FromI64(1420), new([16]byte)), -500754589},
		{"date 2017-11-16", hashLong(days), -653330422},
		{"time 22:31:08", hashLong(timeOfDay), -662762989},
		{"timestamp 2017-11-16T22:31:08", hashLong(ts.UnixMicro()), -2047944441},
		{"timestamptz 2017-11-16T14:31:08-08:00", hashLong(tsTZ.UnixMicro()), -2047944441},
		{"string iceberg", hashBytes([]byte("iceberg")), 1210000089},
		{"uuid", hashBytes(specUUID[:]), 1488055340},
		{"fixed/binary 00010203", hashBytes([]byte{0, 1, 2, 3}), -188683207},
	}
	for _, c := range cases {
		if int32(c.got) != c.want {
			t.Errorf("%s: hash %d, spec says %d", c.name, int32(c.got), c.want)
		}
	}
}

// Bucket through Apply with N = MaxInt32 exposes (hash & MaxInt32) for the
// spec's Appendix B values of every bucketable Arrow input type.
func TestApplyBucketSpecAppendixB(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ts := time.Date(2017, 11, 16, 22, 31, 8, 0, time.UTC)
	days := int32(ts.Unix() / 86400)
	timeOfDay := (22*3600 + 31*60 + 8) * int64(time.Second/time.Microsecond)
	specUUID := uuid.MustParse("f79c3e09-677c-4bbd-a479-3f349cb785e7")
	b0123 := []byte{0, 1, 2, 3}
	cases := []struct {
		name string
		dt   arrow.DataType
		v    any
		hash int32
	}{
		{"int", arrow.PrimitiveTypes.Int32, int32(34), 2017239379},
		{"long", arrow.PrimitiveTypes.Int64, int64(34), 2017239379},
		{"decimal(9,2)", &arrow.Decimal128Type{Precision: 9, Scale: 2}, decimal128.FromI64(1420), -500754589},
		{"date", arrow.FixedWidthTypes.Date32, days, -653330422},
		{"time", arrow.FixedWidthTypes.Time64us, timeOfDay, -662762989},
		{"timestamp", &arrow.TimestampType{Unit: arrow.Microsecond}, ts.UnixMicro(), -2047944441},
		{"timestamptz", arrow.FixedWidthTypes.Timestamp_us, ts.UnixMicro(), -2047944441},
		// timestamp_ns hashes its microsecond value (floor), as Java does
		{"timestamp_ns", &arrow.TimestampType{Unit: arrow.Nanosecond}, ts.UnixNano() + 999, -2047944441},
		{"string", arrow.BinaryTypes.String, "iceberg", 1210000089},
		{"large_string", arrow.BinaryTypes.LargeString, "iceberg", 1210000089},
		{"uuid", extensions.NewUUIDType(), specUUID, 1488055340},
		{"fixed(4)", &arrow.FixedSizeBinaryType{ByteWidth: 4}, b0123, -188683207},
		{"binary", arrow.BinaryTypes.Binary, b0123, -188683207},
		{"large_binary", arrow.BinaryTypes.LargeBinary, b0123, -188683207},
	}
	for _, c := range cases {
		in := buildArray(t, mem, c.dt, []any{nil, c.v, nil})
		out, err := Apply(iceberg.BucketTransform{NumBuckets: math.MaxInt32}, in, mem)
		in.Release()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := out.(*array.Int32)
		want := (c.hash & math.MaxInt32) % math.MaxInt32
		if got.IsValid(0) || got.IsValid(2) || !got.IsValid(1) || got.Value(1) != want {
			t.Errorf("%s: got %v, want [null %d null]", c.name, got, want)
		}
		out.Release()
	}
}

// Every transform/type pair agrees with iceberg-go's row-at-a-time
// Transform.Apply on literals, over random values with nulls, on a sliced
// input (non-zero offset); pairs iceberg-go refuses are refused too.
func TestApplyMatchesIcebergGoRowByRow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(1, 2))
	const n = 3000
	for _, sc := range sourceCases() {
		vals := make([]any, n+7)
		for i := range vals {
			if r.IntN(10) != 0 {
				vals[i] = sc.gen(r)
			}
		}
		full := buildArray(t, mem, sc.dt, vals)
		in := array.NewSlice(full, 3, n+3)
		vals = vals[3 : n+3]
		for _, tr := range allTransforms() {
			out, err := Apply(tr, in, mem)
			if !tr.CanTransform(sc.typ) {
				if err == nil || !errors.Is(err, errs.ErrInvalidArgument) {
					t.Errorf("%s on %s: want ErrInvalidArgument, got %v", tr, sc.name, err)
				} else if !strings.Contains(err.Error(), tr.String()) || !strings.Contains(err.Error(), sc.dt.String()) {
					t.Errorf("%s on %s: error does not name transform and type: %v", tr, sc.name, err)
				}
				if out != nil {
					out.Release()
				}
				continue
			}
			if err != nil {
				t.Errorf("%s on %s: %v", tr, sc.name, err)
				continue
			}
			if out.Len() != n {
				t.Fatalf("%s on %s: length %d, want %d", tr, sc.name, out.Len(), n)
			}
			checkResultType(t, tr, in.DataType(), out.DataType())
			resultType := tr.ResultType(sc.typ)
			bad := 0
			for i, v := range vals {
				var want any
				if v != nil {
					res := tr.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: literalOf(sc.typ, v)})
					if res.Valid {
						want = res.Val.Any()
					}
				}
				got := valueAt(out, i, resultType)
				if !reflect.DeepEqual(got, want) && bad < 5 {
					bad++
					t.Errorf("%s on %s row %d (%v): got %#v, iceberg-go %#v", tr, sc.name, i, v, got, want)
				}
			}
			out.Release()
		}
		in.Release()
		full.Release()
	}
}

func checkResultType(t *testing.T, tr iceberg.Transform, in, out arrow.DataType) {
	t.Helper()
	var want arrow.DataType
	switch tr.(type) {
	case iceberg.IdentityTransform, iceberg.TruncateTransform, iceberg.VoidTransform:
		want = in
	case iceberg.DayTransform:
		want = arrow.FixedWidthTypes.Date32
	default:
		want = arrow.PrimitiveTypes.Int32
	}
	if !arrow.TypeEqual(out, want) {
		t.Errorf("%s on %s: result type %s, want %s", tr, in, out, want)
	}
}

func TestApplyVoidIsAllNullOfInputType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	in := buildArray(t, mem, arrow.BinaryTypes.String, []any{"a", nil, "b"})
	defer in.Release()
	out, err := Apply(iceberg.VoidTransform{}, in, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out.NullN() != 3 || !arrow.TypeEqual(out.DataType(), in.DataType()) {
		t.Errorf("void: got %v of %s", out, out.DataType())
	}
}

func TestApplyRefusesBadTransformsAndTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ints := buildArray(t, mem, arrow.PrimitiveTypes.Int32, []any{int32(1)})
	defer ints.Release()
	small := buildArray(t, mem, arrow.PrimitiveTypes.Int16, []any{int16(1)})
	defer small.Release()
	tsMillis := buildArray(t, mem, &arrow.TimestampType{Unit: arrow.Millisecond}, []any{int64(1)})
	defer tsMillis.Release()
	cases := []struct {
		tr  iceberg.Transform
		arr arrow.Array
	}{
		{iceberg.BucketTransform{NumBuckets: 0}, ints},
		{iceberg.TruncateTransform{Width: -1}, ints},
		{iceberg.HourTransform{}, ints},
		{iceberg.IdentityTransform{}, small},
		{iceberg.DayTransform{}, tsMillis},
		{iceberg.UnknownTransform{}, ints},
	}
	for _, c := range cases {
		out, err := Apply(c.tr, c.arr, mem)
		if !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%v on %s: want ErrInvalidArgument, got %v", c.tr, c.arr.DataType(), err)
		}
		if out != nil {
			out.Release()
		}
	}
}

// Hand-checked edge values: flooring before 1970 and truncating negatives.
func TestApplyFloorsNegativeValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	// 1969-12-31T23:59:59.999999 is day -1, hour -1, month -1, year -1.
	ts := buildArray(t, mem, &arrow.TimestampType{Unit: arrow.Microsecond}, []any{int64(-1)})
	defer ts.Release()
	for tr, want := range map[iceberg.Transform]int32{
		iceberg.YearTransform{}: -1, iceberg.MonthTransform{}: -1, iceberg.DayTransform{}: -1, iceberg.HourTransform{}: -1,
	} {
		out, err := Apply(tr, ts, mem)
		if err != nil {
			t.Fatal(err)
		}
		var got int32
		if d, ok := out.(*array.Date32); ok {
			got = int32(d.Value(0))
		} else {
			got = out.(*array.Int32).Value(0)
		}
		if got != want {
			t.Errorf("%s(-1us) = %d, want %d", tr, got, want)
		}
		out.Release()
	}
	ints := buildArray(t, mem, arrow.PrimitiveTypes.Int64, []any{int64(-1), int64(-10), int64(-11), int64(11)})
	defer ints.Release()
	out, err := Apply(iceberg.TruncateTransform{Width: 10}, ints, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got := out.(*array.Int64).Int64Values(); !reflect.DeepEqual(got, []int64{-10, -10, -20, 10}) {
		t.Errorf("truncate[10] = %v", got)
	}
}

// The multiply-shift remainder equals (h & MaxInt32) % n for every divisor
// size, including 1 and MaxInt32.
func TestBucketRemainderMatchesModulo(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	divisors := []uint32{1, 2, 3, 7, 16, 1000, 65537, math.MaxInt32 - 1, math.MaxInt32}
	for range 50 {
		divisors = append(divisors, uint32(r.Int32N(math.MaxInt32))+1)
	}
	hashes := []uint32{0, 1, math.MaxInt32, math.MaxInt32 + 1, math.MaxUint32}
	for range 2000 {
		hashes = append(hashes, r.Uint32())
	}
	for _, n := range divisors {
		b := newBuckets(n)
		for _, h := range hashes {
			if got, want := b.of(h), int32((h&math.MaxInt32)%n); got != want {
				t.Fatalf("bucket of %d mod %d = %d, want %d", h, n, got, want)
			}
		}
	}
}
