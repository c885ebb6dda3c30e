package transform

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// buildArray builds an Arrow array of type dt from Go values (nil is null).
func buildArray(t testing.TB, mem memory.Allocator, dt arrow.DataType, vals []any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			bb.Append(v.(bool))
		case *array.Int16Builder:
			bb.Append(v.(int16))
		case *array.Int32Builder:
			bb.Append(v.(int32))
		case *array.Int64Builder:
			bb.Append(v.(int64))
		case *array.Float32Builder:
			bb.Append(v.(float32))
		case *array.Float64Builder:
			bb.Append(v.(float64))
		case *array.Decimal128Builder:
			bb.Append(v.(decimal128.Num))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(v.(int32)))
		case *array.Time64Builder:
			bb.Append(arrow.Time64(v.(int64)))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(v.(int64)))
		case *array.StringBuilder:
			bb.Append(v.(string))
		case *array.LargeStringBuilder:
			bb.Append(v.(string))
		case *array.BinaryBuilder:
			bb.Append(v.([]byte))
		case *array.FixedSizeBinaryBuilder:
			bb.Append(v.([]byte))
		case *extensions.UUIDBuilder:
			bb.Append(v.(uuid.UUID))
		default:
			t.Fatalf("buildArray: no case for builder %T", b)
		}
	}
	return b.NewArray()
}

// srcCase is one source type of the differential test: the Arrow type, the
// Iceberg type it stands for, and a generator of random non-null values.
type srcCase struct {
	name string
	dt   arrow.DataType
	typ  iceberg.Type
	gen  func(r *rand.Rand) any
}

const decScale = 2

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func randInt64(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return r.Int64N(201) - 100
	case 1:
		return pick(r, int64(math.MinInt64), math.MaxInt64, math.MinInt64+1, 0, -1, 1)
	case 2:
		return int64(r.Uint64())
	default:
		return r.Int64N(2_000_000) - 1_000_000
	}
}

var runePool = []string{"a", "b", "Z", "0", " ", "é", "ß", "日", "本", "😀", "𝄞", "\u0000", "ü"}

func randString(r *rand.Rand) string {
	var sb strings.Builder
	for range r.IntN(12) {
		sb.WriteString(pick(r, runePool...))
	}
	return sb.String()
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func randDecimal(r *rand.Rand) decimal128.Num {
	switch r.IntN(3) {
	case 0:
		return decimal128.FromI64(r.Int64N(20001) - 10000)
	case 1:
		return decimal128.FromI64(int64(r.Uint64()))
	default:
		// up to 38 digits, either sign
		n := decimal128.New(int64(r.Uint64()>>4), r.Uint64())
		if r.IntN(2) == 0 {
			n = n.Negate()
		}
		return n
	}
}

const (
	dayMicros = int64(86_400_000_000)
	dayNanos  = dayMicros * 1000
)

func sourceCases() []srcCase {
	return []srcCase{
		{"bool", arrow.FixedWidthTypes.Boolean, iceberg.PrimitiveTypes.Bool, func(r *rand.Rand) any { return r.IntN(2) == 0 }},
		{"int32", arrow.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Int32, func(r *rand.Rand) any {
			if r.IntN(5) == 0 {
				return pick(r, int32(math.MinInt32), math.MaxInt32, math.MinInt32+1, math.MaxInt32-1)
			}
			return int32(randInt64(r))
		}},
		{"int64", arrow.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.Int64, func(r *rand.Rand) any { return randInt64(r) }},
		{"float32", arrow.PrimitiveTypes.Float32, iceberg.PrimitiveTypes.Float32, func(r *rand.Rand) any { return float32(r.NormFloat64() * 1e3) }},
		{"float64", arrow.PrimitiveTypes.Float64, iceberg.PrimitiveTypes.Float64, func(r *rand.Rand) any { return r.NormFloat64() * 1e6 }},
		{"decimal", &arrow.Decimal128Type{Precision: 38, Scale: decScale}, iceberg.DecimalTypeOf(38, decScale), func(r *rand.Rand) any { return randDecimal(r) }},
		{"date32", arrow.FixedWidthTypes.Date32, iceberg.PrimitiveTypes.Date, func(r *rand.Rand) any {
			if r.IntN(2) == 0 {
				return int32(r.IntN(60_000) - 30_000) // 1888..2052
			}
			return int32(r.IntN(6_000_000) - 3_000_000) // years -6000..10000
		}},
		{"time64us", arrow.FixedWidthTypes.Time64us, iceberg.PrimitiveTypes.Time, func(r *rand.Rand) any { return r.Int64N(dayMicros) }},
		{"timestamp_us", &arrow.TimestampType{Unit: arrow.Microsecond}, iceberg.PrimitiveTypes.Timestamp, func(r *rand.Rand) any {
			switch r.IntN(3) {
			case 0:
				return r.Int64N(200*365*dayMicros) - 100*365*dayMicros
			case 1: // around midnight and the epoch
				return int64(r.IntN(5)-2)*dayMicros + r.Int64N(5) - 2
			default:
				return r.Int64N(2000*365*dayMicros) - 1000*365*dayMicros
			}
		}},
		{"timestamptz_us", arrow.FixedWidthTypes.Timestamp_us, iceberg.PrimitiveTypes.TimestampTz, func(r *rand.Rand) any {
			return r.Int64N(200*365*dayMicros) - 100*365*dayMicros
		}},
		{"timestamp_ns", &arrow.TimestampType{Unit: arrow.Nanosecond}, iceberg.PrimitiveTypes.TimestampNs, func(r *rand.Rand) any {
			if r.IntN(3) == 0 {
				return int64(r.IntN(5)-2)*dayNanos + r.Int64N(5001) - 2500
			}
			return int64(r.Uint64())
		}},
		{"string", arrow.BinaryTypes.String, iceberg.PrimitiveTypes.String, func(r *rand.Rand) any { return randString(r) }},
		{"large_string", arrow.BinaryTypes.LargeString, iceberg.PrimitiveTypes.String, func(r *rand.Rand) any { return randString(r) }},
		{"binary", arrow.BinaryTypes.Binary, iceberg.PrimitiveTypes.Binary, func(r *rand.Rand) any { return randBytes(r, r.IntN(20)) }},
		{"large_binary", arrow.BinaryTypes.LargeBinary, iceberg.PrimitiveTypes.Binary, func(r *rand.Rand) any { return randBytes(r, r.IntN(20)) }},
		{"fixed5", &arrow.FixedSizeBinaryType{ByteWidth: 5}, iceberg.FixedTypeOf(5), func(r *rand.Rand) any { return randBytes(r, 5) }},
		{"uuid", extensions.NewUUIDType(), iceberg.PrimitiveTypes.UUID, func(r *rand.Rand) any { return uuid.UUID(randBytes(r, 16)) }},
	}
}

// literalOf is the iceberg-go literal of a generated value for Iceberg type t.
func literalOf(t iceberg.Type, v any) iceberg.Literal {
	switch t.(type) {
	case iceberg.BooleanType:
		return iceberg.NewLiteral(v.(bool))
	case iceberg.Int32Type:
		return iceberg.NewLiteral(v.(int32))
	case iceberg.Int64Type:
		return iceberg.NewLiteral(v.(int64))
	case iceberg.Float32Type:
		return iceberg.NewLiteral(v.(float32))
	case iceberg.Float64Type:
		return iceberg.NewLiteral(v.(float64))
	case iceberg.DecimalType:
		return iceberg.NewLiteral(iceberg.Decimal{Val: v.(decimal128.Num), Scale: decScale})
	case iceberg.DateType:
		return iceberg.NewLiteral(iceberg.Date(v.(int32)))
	case iceberg.TimeType:
		return iceberg.NewLiteral(iceberg.Time(v.(int64)))
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return iceberg.NewLiteral(iceberg.Timestamp(v.(int64)))
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return iceberg.NewLiteral(iceberg.TimestampNano(v.(int64)))
	case iceberg.StringType:
		return iceberg.NewLiteral(v.(string))
	case iceberg.BinaryType:
		return iceberg.NewLiteral(v.([]byte))
	case iceberg.FixedType:
		return iceberg.FixedLiteral(v.([]byte))
	case iceberg.UUIDType:
		return iceberg.NewLiteral(v.(uuid.UUID))
	}
	panic(fmt.Sprintf("literalOf: %s", t))
}

func allTransforms() []iceberg.Transform {
	return []iceberg.Transform{
		iceberg.IdentityTransform{}, iceberg.VoidTransform{},
		iceberg.BucketTransform{NumBuckets: 1}, iceberg.BucketTransform{NumBuckets: 7},
		iceberg.BucketTransform{NumBuckets: 16}, iceberg.BucketTransform{NumBuckets: 1000},
		iceberg.TruncateTransform{Width: 1}, iceberg.TruncateTransform{Width: 3},
		iceberg.TruncateTransform{Width: 10}, iceberg.TruncateTransform{Width: 100},
		iceberg.YearTransform{}, iceberg.MonthTransform{}, iceberg.DayTransform{}, iceberg.HourTransform{},
	}
}
