package transform

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// FieldIDKey is the Arrow field metadata key holding an Iceberg field id.
const FieldIDKey = "PARQUET:field_id"

// Partition is one partition's slice of a record batch.
type Partition struct {
	// Key is a stable, unique (binary) encoding of the partition tuple; equal
	// tuples give equal keys across batches of the same spec.
	Key string
	// Values maps partition field id to value, in the Go types
	// iceberg.NewDataFileBuilder expects (nil for null): int32, int64,
	// bool, float32, float64, string, []byte, uuid.UUID, iceberg.Decimal,
	// iceberg.Date, iceberg.Time, iceberg.Timestamp, iceberg.TimestampNano.
	Values map[int]any
	// Record holds the rows of the input batch in this partition, in input
	// order. The caller releases it.
	Record arrow.RecordBatch
	// Owned is true when Record's buffers hold its rows only; otherwise it
	// is a slice of the input batch and keeps all of it alive.
	Owned bool
}

// Split groups rec's rows by the partition tuple of spec. Source columns are
// found by field id in schema and looked up in rec by the Arrow field
// metadata key "PARQUET:field_id" when present, else by name; nested sources
// (a.b) are supported. Partitions come in the order their first row appears
// in rec. An unpartitioned spec returns one Partition holding rec (retained);
// an empty batch returns none. mem allocates the partitions' buffers; when
// it is a *Recycler only the buffers the scatter fills in full come from it
// (everything else from the default allocator).
func Split(rec arrow.RecordBatch, spec iceberg.PartitionSpec, schema *iceberg.Schema, mem memory.Allocator) ([]Partition, error) {
	if rec == nil || schema == nil {
		return nil, fmt.Errorf("%w: split needs a record batch and a schema", errs.ErrInvalidArgument)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	scatterMem := mem
	if _, ok := mem.(*Recycler); ok {
		mem = memory.DefaultAllocator
	}
	var fields []iceberg.PartitionField
	for _, f := range spec.Fields() {
		fields = append(fields, f)
	}
	if spec.IsUnpartitioned() {
		values := make(map[int]any, len(fields))
		for _, f := range fields {
			values[f.FieldID] = nil
		}
		rec.Retain()
		return []Partition{{Key: tupleKey(nil, 0), Values: values, Record: rec}}, nil
	}

	n := int(rec.NumRows())
	parts := make([]arrow.Array, len(fields))
	resultTypes := make([]iceberg.Type, len(fields))
	defer func() {
		for _, p := range parts {
			if p != nil {
				p.Release()
			}
		}
	}()
	for i, f := range fields {
		if _, void := f.Transform.(iceberg.VoidTransform); void {
			// always null; the source column need not exist any more
			parts[i] = array.MakeArrayOfNull(mem, arrow.PrimitiveTypes.Int32, n)
			continue
		}
		if len(f.SourceIDs) > 1 {
			return nil, fmt.Errorf("%w: partition field %q has %d source columns; multi-argument transforms are not supported",
				errs.ErrNotSupported, f.Name, len(f.SourceIDs))
		}
		src, srcType, name, err := sourceColumn(rec, schema, f.SourceID(), mem)
		if err != nil {
			return nil, fmt.Errorf("partition field %q: %w", f.Name, err)
		}
		parts[i], err = Apply(f.Transform, src, mem)
		src.Release()
		if err != nil {
			return nil, fmt.Errorf("partition field %q on column %q: %w", f.Name, name, err)
		}
		resultTypes[i] = f.Transform.ResultType(srcType)
	}

	if n == 0 {
		return nil, nil
	}
	sc := getScratch()
	defer putScratch(sc)
	gid, ngroups := groupIDs(parts, n, sc)

	out := make([]Partition, ngroups)
	first := make([]int, ngroups)
	for i := range first {
		first[i] = -1
	}
	for row, g := range gid {
		if first[g] < 0 {
			first[g] = row
		}
	}
	for g := range out {
		out[g].Values = make(map[int]any, len(fields))
		for i, f := range fields {
			out[g].Values[f.FieldID] = valueAt(parts[i], first[g], resultTypes[i])
		}
		out[g].Key = tupleKey(parts, first[g])
	}
	if err := gather(rec, gid, out, mem, scatterMem, sc); err != nil {
		for _, p := range out {
			if p.Record != nil {
				p.Record.Release()
			}
		}
		return nil, err
	}
	return out, nil
}

// gather fills out[g].Record with the rows of group g in input order.
// The buffers of flat columns, written in full, come from scatterMem.
func gather(rec arrow.RecordBatch, gid []uint32, out []Partition, mem, scatterMem memory.Allocator, sc *splitScratch) error {
	n := len(gid)
	counts := make([]int, len(out))
	clustered := true
	for i, g := range gid {
		counts[g]++
		if i > 0 && g < gid[i-1] {
			clustered = false
		}
	}
	if len(out) == 1 {
		rec.Retain()
		out[0].Record = rec
		return nil
	}
	starts := make([]int, len(out)+1)
	for g, c := range counts {
		starts[g+1] = starts[g] + c
	}
	if clustered {
		// Each group's rows are already together: zero-copy slices.
		for g := range out {
			out[g].Record = rec.NewSlice(int64(starts[g]), int64(starts[g+1]))
		}
		return nil
	}
	// Each row's place in its group; every column is scattered once into
	// arrays of each group's own.
	gr := &groups{gid: gid, pos: resize(&sc.pos, n), counts: counts, mem: mem, out: scatterMem}
	defer gr.release()
	next := make([]int32, len(out))
	for row, g := range gid {
		gr.pos[row] = next[g]
		next[g]++
	}
	cols := make([][]arrow.Array, len(out))
	for g := range cols {
		cols[g] = make([]arrow.Array, rec.NumCols())
	}
	defer func() {
		for _, c := range cols {
			for _, a := range c {
				if a != nil {
					a.Release()
				}
			}
		}
	}()
	for i, col := range rec.Columns() {
		parts, err := gr.scatter(col)
		if err != nil {
			return fmt.Errorf("%w: splitting column %q of type %s by partition: %v",
				errs.ErrNotSupported, rec.ColumnName(i), col.DataType(), err)
		}
		for g := range parts {
			cols[g][i] = parts[g]
		}
	}
	for g := range out {
		out[g].Record = array.NewRecordBatch(rec.Schema(), cols[g], int64(counts[g]))
		out[g].Owned = true
	}
	return nil
}

// sourceColumn finds the source field id in rec and returns its values with
// the validity of every enclosing struct folded in (a null parent makes the
// leaf null). The caller releases the array.
func sourceColumn(rec arrow.RecordBatch, schema *iceberg.Schema, id int, mem memory.Allocator) (arrow.Array, iceberg.Type, string, error) {
	path, ok := icebergPath(schema.Fields(), id)
	if !ok {
		return nil, nil, "", fmt.Errorf("%w: source field id %d is not in the table schema", errs.ErrInvalidArgument, id)
	}
	names := make([]string, len(path))
	for i, f := range path {
		names[i] = f.Name
	}
	name := strings.Join(names, ".")

	arrowFields := rec.Schema().Fields()
	cols := rec.Columns()
	var chain []arrow.Array
	for depth, f := range path {
		idx := matchField(arrowFields, f)
		if idx < 0 {
			return nil, nil, "", fmt.Errorf("%w: source column %q (field id %d) is not in the record batch", errs.ErrInvalidArgument, name, id)
		}
		col := cols[idx]
		chain = append(chain, col)
		if depth == len(path)-1 {
			break
		}
		st, ok := col.(*array.Struct)
		if !ok {
			return nil, nil, "", fmt.Errorf("%w: source column %q: %q is %s in the record batch, not a struct",
				errs.ErrInvalidArgument, name, f.Name, col.DataType())
		}
		arrowFields = st.DataType().(*arrow.StructType).Fields()
		cols = make([]arrow.Array, st.NumField())
		for j := range cols {
			cols[j] = st.Field(j)
		}
	}
	leafField := path[len(path)-1]
	leaf := chain[len(chain)-1]
	if !arrowMatchesIceberg(leafField.Type, leaf.DataType()) {
		return nil, nil, "", fmt.Errorf("%w: source column %q is Arrow %s, which does not hold Iceberg %s",
			errs.ErrInvalidArgument, name, leaf.DataType(), leafField.Type)
	}
	return withParentNulls(leaf, chain[:len(chain)-1], mem), leafField.Type, name, nil
}

// icebergPath returns the struct fields from the schema root down to id.
func icebergPath(fields []iceberg.NestedField, id int) ([]iceberg.NestedField, bool) {
	for _, f := range fields {
		if f.ID == id {
			return []iceberg.NestedField{f}, true
		}
		if st, ok := f.Type.(*iceberg.StructType); ok {
			if sub, ok := icebergPath(st.FieldList, id); ok {
				return append([]iceberg.NestedField{f}, sub...), true
			}
		}
	}
	return nil, false
}

// matchField finds f among Arrow fields: by field id metadata first, then by
// name when that Arrow field carries no (other) field id.
func matchField(fields []arrow.Field, f iceberg.NestedField) int {
	byName := -1
	for i, af := range fields {
		fid, hasID := arrowFieldID(af)
		if hasID && fid == f.ID {
			return i
		}
		if byName < 0 && !hasID && af.Name == f.Name {
			byName = i
		}
	}
	return byName
}

func arrowFieldID(f arrow.Field) (int, bool) {
	i := f.Metadata.FindKey(FieldIDKey)
	if i < 0 {
		return 0, false
	}
	id, err := strconv.Atoi(f.Metadata.Values()[i])
	return id, err == nil
}

// arrowMatchesIceberg reports whether an Arrow column can carry values of
// Iceberg type t without a cast (so partition values come out right).
func arrowMatchesIceberg(t iceberg.Type, dt arrow.DataType) bool {
	k := kindOf(dt)
	switch t := t.(type) {
	case iceberg.BooleanType:
		return k == kindBool
	case iceberg.Int32Type:
		return k == kindInt32
	case iceberg.Int64Type:
		return k == kindInt64
	case iceberg.Float32Type:
		return k == kindFloat32
	case iceberg.Float64Type:
		return k == kindFloat64
	case iceberg.DecimalType:
		d, ok := dt.(*arrow.Decimal128Type)
		return ok && int(d.Scale) == t.Scale()
	case iceberg.DateType:
		return k == kindDate
	case iceberg.TimeType:
		return k == kindTime
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return k == kindTimestampUS
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return k == kindTimestampNS
	case iceberg.StringType:
		return k == kindString || k == kindLargeString
	case iceberg.BinaryType:
		return k == kindBinary || k == kindLargeBinary
	case iceberg.FixedType:
		f, ok := dt.(*arrow.FixedSizeBinaryType)
		return ok && f.ByteWidth == t.Len()
	case iceberg.UUIDType:
		f, ok := dt.(*arrow.FixedSizeBinaryType)
		return k == kindUUID || (ok && f.ByteWidth == 16)
	}
	return false
}

// withParentNulls returns leaf (retained) or, when an enclosing struct has
// nulls, a copy of leaf's data whose validity also clears those rows.
func withParentNulls(leaf arrow.Array, parents []arrow.Array, mem memory.Allocator) arrow.Array {
	hasParentNulls := false
	for _, p := range parents {
		if p.NullN() > 0 {
			hasParentNulls = true
		}
	}
	if !hasParentNulls {
		leaf.Retain()
		return leaf
	}
	n := leaf.Len()
	data := leaf.Data()
	off := data.Offset()
	bm := memory.NewResizableBuffer(mem)
	bm.Resize(int(bitutil.BytesForBits(int64(off + n))))
	b := bm.Bytes()
	nulls := 0
	for i := 0; i < n; i++ {
		valid := leaf.IsValid(i)
		for _, p := range parents {
			valid = valid && p.IsValid(i)
		}
		bitutil.SetBitTo(b, off+i, valid)
		if !valid {
			nulls++
		}
	}
	bufs := append([]*memory.Buffer{bm}, data.Buffers()[1:]...)
	nd := array.NewData(data.DataType(), n, bufs, data.Children(), nulls, off)
	bm.Release()
	out := array.MakeFromData(nd)
	nd.Release()
	return out
}

// valueAt boxes row i of a partition value array in the Go type that
// iceberg.NewDataFileBuilder expects for result type t. It copies, so the
// value outlives arr. Called once per group, never per row.
func valueAt(arr arrow.Array, i int, t iceberg.Type) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Date32:
		return iceberg.Date(a.Value(i))
	case *array.Time64:
		return iceberg.Time(a.Value(i))
	case *array.Timestamp:
		if a.DataType().(*arrow.TimestampType).Unit == arrow.Nanosecond {
			return iceberg.TimestampNano(a.Value(i))
		}
		return iceberg.Timestamp(a.Value(i))
	case *array.Decimal128:
		return iceberg.Decimal{Val: a.Value(i), Scale: int(a.DataType().(*arrow.Decimal128Type).Scale)}
	case *array.String:
		return strings.Clone(a.Value(i))
	case *array.LargeString:
		return strings.Clone(a.Value(i))
	case *array.Binary:
		return ownedBytes(a.Value(i))
	case *array.LargeBinary:
		return ownedBytes(a.Value(i))
	}
	if kindOf(arr.DataType()) == kindUUID || kindOf(arr.DataType()) == kindFixed {
		vals, w := fixedBytes(arr)
		v := vals[i*w : (i+1)*w]
		if _, ok := t.(iceberg.UUIDType); ok {
			return uuid.UUID(v)
		}
		return bytes.Clone(v)
	}
	return nil
}

// ownedBytes copies b, never as a nil slice: an empty value of an array
// without a data buffer reads as nil, which a manifest would record as a
// null partition value instead of empty binary.
func ownedBytes(b []byte) []byte {
	return append(make([]byte, 0, len(b)), b...)
}

// tupleKey encodes row i of the partition value arrays: per field a null
// marker, then a fixed-width value or a length-prefixed byte string.
func tupleKey(parts []arrow.Array, i int) string {
	var b []byte
	var scratch [16]byte
	for _, arr := range parts {
		if arr.IsNull(i) {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		switch a := arr.(type) {
		case *array.Boolean:
			if a.Value(i) {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case *array.Int32:
			b = binary.BigEndian.AppendUint32(b, uint32(a.Value(i)))
		case *array.Date32:
			b = binary.BigEndian.AppendUint32(b, uint32(a.Value(i)))
		case *array.Int64:
			b = binary.BigEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Time64:
			b = binary.BigEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Timestamp:
			b = binary.BigEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Float32:
			b = binary.BigEndian.AppendUint64(b, floatBits(float64(a.Value(i))))
		case *array.Float64:
			b = binary.BigEndian.AppendUint64(b, floatBits(a.Value(i)))
		case *array.Decimal128:
			v := a.Value(i)
			binary.BigEndian.PutUint64(scratch[:8], uint64(v.HighBits()))
			binary.BigEndian.PutUint64(scratch[8:], v.LowBits())
			b = append(b, scratch[:]...)
		case *array.String:
			b = appendBytes(b, []byte(a.Value(i)))
		case *array.LargeString:
			b = appendBytes(b, []byte(a.Value(i)))
		case *array.Binary:
			b = appendBytes(b, a.Value(i))
		case *array.LargeBinary:
			b = appendBytes(b, a.Value(i))
		default:
			vals, w := fixedBytes(arr)
			b = appendBytes(b, vals[i*w:(i+1)*w])
		}
	}
	return string(b)
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// floatBits canonicalises NaN so that all NaNs share one partition.
func floatBits(f float64) uint64 {
	if f != f {
		return 0x7ff8000000000000
	}
	return math.Float64bits(f)
}

// SourceColumn returns the values of field id in rec, found as Split finds
// partition sources (nested fields with their parents' nulls folded in).
// The caller releases the array.
func SourceColumn(rec arrow.RecordBatch, schema *iceberg.Schema, id int, mem memory.Allocator) (arrow.Array, error) {
	arr, _, _, err := sourceColumn(rec, schema, id, mem)
	return arr, err
}
