package expr

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// arrowType is the Arrow type iceberg-go's scan uses for t.
func arrowType(t iceberg.Type) arrow.DataType {
	switch kindOf(t) {
	case kBool:
		return arrow.FixedWidthTypes.Boolean
	case kInt:
		return arrow.PrimitiveTypes.Int32
	case kLong:
		return arrow.PrimitiveTypes.Int64
	case kFloat:
		return arrow.PrimitiveTypes.Float32
	case kDouble:
		return arrow.PrimitiveTypes.Float64
	case kDecimal:
		return &arrow.Decimal128Type{Precision: int32(precOf(t)), Scale: int32(scaleOf(t))}
	case kString:
		return arrow.BinaryTypes.String
	case kBinary:
		return arrow.BinaryTypes.Binary
	case kFixed:
		return &arrow.FixedSizeBinaryType{ByteWidth: t.(iceberg.FixedType).Len()}
	case kUUID:
		return extensions.NewUUIDType()
	case kDate:
		return arrow.FixedWidthTypes.Date32
	case kTime:
		return arrow.FixedWidthTypes.Time64us
	case kTS:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case kTSTZ:
		return arrow.FixedWidthTypes.Timestamp_us
	}
	return arrow.Null
}

// columnArray finds the array of c in rec: top-level fields by name, nested
// fields inside struct columns by name. Nulls of enclosing structs are not
// applied here (loadColumn does that).
func columnArray(rec arrow.RecordBatch, c *colRef) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(c.path[0])
	if len(idx) == 0 {
		// tolerate a batch whose names differ only in case
		for i, f := range rec.Schema().Fields() {
			if strings.EqualFold(f.Name, c.path[0]) {
				idx = []int{i}
				break
			}
		}
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("column %q is missing from the record batch", c.name)
	}
	arr := rec.Column(idx[0])
	for _, part := range c.path[1:] {
		st, ok := arr.(*array.Struct)
		if !ok {
			return nil, fmt.Errorf("column %q: %s is not a struct in the record batch", c.name, arr.DataType())
		}
		stt := st.DataType().(*arrow.StructType)
		i, ok := stt.FieldIdx(part)
		if !ok {
			return nil, fmt.Errorf("column %q is missing from the record batch", c.name)
		}
		arr = st.Field(i)
	}
	return arr, nil
}

// loadColumn converts the Arrow column of c into a vec of c's type.
func loadColumn(rec arrow.RecordBatch, c *colRef, src string) (*vec, error) {
	arr, err := columnArray(rec, c)
	if err != nil {
		return nil, bindErr(src, 0, "%s", err.Error())
	}
	n := int(rec.NumRows())
	if arr.Len() != n {
		return nil, bindErr(src, 0, "column %q has %d rows, the batch %d", c.name, arr.Len(), n)
	}
	v := newVec(c.typ, n)
	// validity: the field's own nulls and those of every enclosing struct
	var valid []bool
	addNulls := func(a arrow.Array) {
		if a.NullN() == 0 {
			return
		}
		if valid == nil {
			valid = make([]bool, n)
			for i := range valid {
				valid[i] = true
			}
		}
		for i := range valid {
			if a.IsNull(i) {
				valid[i] = false
			}
		}
	}
	addNulls(arr)
	if len(c.path) > 1 {
		a := rec.Column(rec.Schema().FieldIndices(c.path[0])[0])
		for _, part := range c.path[1:] {
			addNulls(a)
			st := a.(*array.Struct)
			i, _ := st.DataType().(*arrow.StructType).FieldIdx(part)
			a = st.Field(i)
		}
	}
	v.valid = valid
	bad := func() (*vec, error) {
		return nil, bindErr(src, 0, "column %q has Arrow type %s, which does not match its Iceberg type %s", c.name, arr.DataType(), c.typ)
	}
	switch a := arr.(type) {
	case *array.Boolean:
		if v.k != kBool {
			return bad()
		}
		for i := range v.b {
			v.b[i] = a.Value(i)
		}
	case *array.Int32:
		if v.k != kInt {
			return bad()
		}
		for i, x := range a.Int32Values() {
			v.i[i] = int64(x)
		}
	case *array.Int64:
		if v.k != kLong {
			return bad()
		}
		copy(v.i, a.Int64Values())
	case *array.Float32:
		if v.k != kFloat {
			return bad()
		}
		for i, x := range a.Float32Values() {
			v.f[i] = float64(x)
		}
	case *array.Float64:
		if v.k != kDouble {
			return bad()
		}
		copy(v.f, a.Float64Values())
	case *array.Decimal128:
		dt := a.DataType().(*arrow.Decimal128Type)
		if v.k != kDecimal || int(dt.Scale) != scaleOf(c.typ) {
			return bad()
		}
		copy(v.d, a.Values())
	case *array.Date32:
		if v.k != kDate {
			return bad()
		}
		for i, x := range a.Date32Values() {
			v.i[i] = int64(x)
		}
	case *array.Time64:
		if v.k != kTime {
			return bad()
		}
		mul, div := unitScale(a.DataType().(*arrow.Time64Type).Unit)
		for i, x := range a.Time64Values() {
			v.i[i] = floorDiv(int64(x)*mul, div)
		}
	case *array.Timestamp:
		if v.k != kTS && v.k != kTSTZ {
			return bad()
		}
		mul, div := unitScale(a.DataType().(*arrow.TimestampType).Unit)
		for i, x := range a.TimestampValues() {
			v.i[i] = floorDiv(int64(x)*mul, div) // nanoseconds floored, as the write floors them
		}
	case *array.String:
		if v.k != kString {
			return bad()
		}
		for i := range v.s {
			v.s[i] = a.Value(i)
		}
	case *array.LargeString:
		if v.k != kString {
			return bad()
		}
		for i := range v.s {
			v.s[i] = a.Value(i)
		}
	case *array.StringView:
		if v.k != kString {
			return bad()
		}
		for i := range v.s {
			v.s[i] = a.Value(i)
		}
	case *array.Binary:
		if !isBytes(v.k) {
			return bad()
		}
		for i := range v.s {
			v.s[i] = a.ValueString(i)
		}
	case *array.LargeBinary:
		if !isBytes(v.k) {
			return bad()
		}
		for i := range v.s {
			v.s[i] = a.ValueString(i)
		}
	case *array.FixedSizeBinary:
		if !isBytes(v.k) {
			return bad()
		}
		for i := range v.s {
			v.s[i] = string(a.Value(i))
		}
	case array.ExtensionArray:
		fsb, ok := a.Storage().(*array.FixedSizeBinary)
		if !ok || !isBytes(v.k) {
			return bad()
		}
		for i := range v.s {
			v.s[i] = string(fsb.Value(i))
		}
	default:
		return bad()
	}
	return v, nil
}

// unitScale converts a time unit to microseconds as x*mul/div.
func unitScale(u arrow.TimeUnit) (int64, int64) {
	switch u {
	case arrow.Second:
		return 1_000_000, 1
	case arrow.Millisecond:
		return 1000, 1
	case arrow.Nanosecond:
		return 1, 1000
	}
	return 1, 1
}

// toArrow builds the Arrow array of v's type.
func toArrow(v *vec, mem memory.Allocator) (arrow.Array, error) {
	valid := v.valid
	switch v.k {
	case kNull:
		return array.NewNull(v.n), nil
	case kBool:
		b := array.NewBooleanBuilder(mem)
		defer b.Release()
		b.AppendValues(v.b, valid)
		return b.NewArray(), nil
	case kInt:
		b := array.NewInt32Builder(mem)
		defer b.Release()
		xs := make([]int32, v.n)
		for i, x := range v.i {
			xs[i] = int32(x)
		}
		b.AppendValues(xs, valid)
		return b.NewArray(), nil
	case kLong:
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues(v.i, valid)
		return b.NewArray(), nil
	case kFloat:
		b := array.NewFloat32Builder(mem)
		defer b.Release()
		xs := make([]float32, v.n)
		for i, x := range v.f {
			xs[i] = float32(x)
		}
		b.AppendValues(xs, valid)
		return b.NewArray(), nil
	case kDouble:
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.AppendValues(v.f, valid)
		return b.NewArray(), nil
	case kDecimal:
		b := array.NewDecimal128Builder(mem, arrowType(v.t).(*arrow.Decimal128Type))
		defer b.Release()
		b.AppendValues(v.d, valid)
		return b.NewArray(), nil
	case kDate:
		b := array.NewDate32Builder(mem)
		defer b.Release()
		xs := make([]arrow.Date32, v.n)
		for i, x := range v.i {
			xs[i] = arrow.Date32(x)
		}
		b.AppendValues(xs, valid)
		return b.NewArray(), nil
	case kTime:
		b := array.NewTime64Builder(mem, arrow.FixedWidthTypes.Time64us.(*arrow.Time64Type))
		defer b.Release()
		xs := make([]arrow.Time64, v.n)
		for i, x := range v.i {
			xs[i] = arrow.Time64(x)
		}
		b.AppendValues(xs, valid)
		return b.NewArray(), nil
	case kTS, kTSTZ:
		b := array.NewTimestampBuilder(mem, arrowType(v.t).(*arrow.TimestampType))
		defer b.Release()
		xs := make([]arrow.Timestamp, v.n)
		for i, x := range v.i {
			xs[i] = arrow.Timestamp(x)
		}
		b.AppendValues(xs, valid)
		return b.NewArray(), nil
	case kString:
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendValues(v.s, valid)
		return b.NewArray(), nil
	case kBinary:
		b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		defer b.Release()
		b.AppendStringValues(v.s, valid)
		return b.NewArray(), nil
	case kFixed:
		b := array.NewFixedSizeBinaryBuilder(mem, arrowType(v.t).(*arrow.FixedSizeBinaryType))
		defer b.Release()
		for i, s := range v.s {
			if v.ok(i) {
				b.Append([]byte(s))
			} else {
				b.AppendNull()
			}
		}
		return b.NewArray(), nil
	case kUUID:
		b := extensions.NewUUIDBuilder(mem)
		defer b.Release()
		for i, s := range v.s {
			if v.ok(i) && len(s) == 16 {
				var u [16]byte
				copy(u[:], s)
				b.AppendBytes(u)
			} else {
				b.AppendNull()
			}
		}
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("cannot build an Arrow array of %s", v.t)
}
