package expr

import (
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// testSchema is the table schema the tests bind against.
func testSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 3, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 4, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "dt", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 6, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 7, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 8, Name: "dec", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 9, Name: "st", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 10, Name: "x", Type: iceberg.PrimitiveTypes.Int32},
			{ID: 11, Name: "Name", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 12, Name: "my col", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 13, Name: "level", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 14, Name: "ntz", Type: iceberg.PrimitiveTypes.Timestamp},
	)
}

// row is one test row in plain Go values; nil is NULL.
type row map[string]any

var strPool = []string{"", "a", "ab", "abc", "b", "INFO", "info", "WARN", "a_c", "a%c", "äbc", " x ", "zz"}
var levelPool = []string{"INFO", "WARN", "ERROR", "DEBUG"}

const day = int64(86_400_000_000)

// randRows makes n random rows over small domains (so that comparisons hit),
// with occasional extreme values and ~15% nulls in nullable columns.
func randRows(r *rand.Rand, n int, extremes bool) []row {
	rows := make([]row, n)
	maybe := func(v any) any {
		if r.Intn(7) == 0 {
			return nil
		}
		return v
	}
	for k := range rows {
		i32 := int32(r.Intn(11) - 5)
		if extremes && r.Intn(25) == 0 {
			i32 = []int32{math.MaxInt32, math.MinInt32, 100000}[r.Intn(3)]
		}
		id := int64(r.Intn(200) - 20)
		if extremes && r.Intn(40) == 0 {
			id = []int64{math.MaxInt64, math.MinInt64, 1 << 40}[r.Intn(3)]
		}
		dv := float64(r.Intn(9)-4) / 2
		if extremes && r.Intn(20) == 0 {
			dv = []float64{math.NaN(), math.Inf(1), math.Copysign(0, -1), 1e300}[r.Intn(4)]
		}
		var st any
		if r.Intn(8) != 0 {
			st = row{"x": maybe(int32(r.Intn(7) - 3)), "Name": maybe(strPool[r.Intn(len(strPool))])}
		}
		rows[k] = row{
			"id":     id,
			"i":      maybe(i32),
			"d":      maybe(dv),
			"s":      maybe(strPool[r.Intn(len(strPool))]),
			"dt":     maybe(int32(19700 + r.Intn(60))),
			"ts":     maybe(int64(19700+r.Intn(60))*day + int64(r.Intn(48))*3_600_000_000),
			"b":      maybe(r.Intn(2) == 0),
			"dec":    maybe(int64(r.Intn(2001) - 1000)), // unscaled, scale 2
			"st":     st,
			"my col": maybe(strPool[r.Intn(len(strPool))]),
			"level":  maybe(levelPool[r.Intn(len(levelPool))]),
			"ntz":    maybe(int64(19700+r.Intn(60))*day + int64(r.Intn(48))*3_600_000_000),
		}
	}
	return rows
}

// makeBatch builds an Arrow batch with the Arrow schema iceberg-go's scan uses.
func makeBatch(t testing.TB, sc *iceberg.Schema, rows []row) arrow.RecordBatch {
	t.Helper()
	as, err := table.SchemaToArrowSchema(sc, nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for ci, f := range as.Fields() {
		for _, rw := range rows {
			appendValue(t, b.Field(ci), f.Type, rw[f.Name])
		}
	}
	return b.NewRecordBatch()
}

func appendValue(t testing.TB, fb array.Builder, dt arrow.DataType, v any) {
	if v == nil {
		fb.AppendNull()
		return
	}
	switch b := fb.(type) {
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.LargeStringBuilder:
		b.Append(v.(string))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int32)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(v.(int64)))
	case *array.StructBuilder:
		b.Append(true)
		st := dt.(*arrow.StructType)
		for i, f := range st.Fields() {
			appendValue(t, b.FieldBuilder(i), f.Type, v.(row)[f.Name])
		}
	default:
		t.Fatalf("unsupported builder %T", fb)
	}
}

// decRat is a scale-2 unscaled value as a rational.
func decRat(unscaled int64) *big.Rat { return big.NewRat(unscaled, 100) }

// nil2 is a fixed random source for small deterministic batches.
func nil2() *rand.Rand { return rand.New(rand.NewSource(3)) }
