package schema

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

const maxDecimalPrecision = 38

// FromArrow makes the Iceberg schema of a new table created from data with
// this Arrow schema: fresh field ids (1..n, numbered like Spark and PyIceberg
// number them), every field optional unless keepNullability (then required
// where the Arrow field is non-nullable). The type mapping is in the package
// documentation.
func FromArrow(sc *arrow.Schema, keepNullability bool) (*iceberg.Schema, error) {
	if sc == nil {
		return nil, fmt.Errorf("schema: no Arrow schema: %w", errs.ErrValidation)
	}
	if err := checkUniqueNames("", sc.Fields()); err != nil {
		return nil, err
	}
	fields := make([]iceberg.NestedField, len(sc.Fields()))
	for i, f := range sc.Fields() {
		t, err := fieldTypeOf(f.Name, f, keepNullability)
		if err != nil {
			return nil, err
		}
		fields[i] = iceberg.NestedField{Name: f.Name, Type: t, Required: keepNullability && !f.Nullable}
	}
	next := 0
	return assignIDs(fields, nil, func(string, iceberg.Type) int { next++; return next }), nil
}

func checkUniqueNames(path string, fields []arrow.Field) error {
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if seen[f.Name] {
			return fmt.Errorf("column '%s': duplicate name in the input: %w", join(path, f.Name), errs.ErrValidation)
		}
		seen[f.Name] = true
	}
	return nil
}

// extensionNameKey is the field metadata key naming an Arrow extension type.
const extensionNameKey = "ARROW:extension:name"

// fieldTypeOf is icebergTypeOf for a field's type, which the field's
// metadata may name as an extension type: arrow-go's C data import does not
// resolve extension types, so a pyarrow uuid column arrives as
// fixed_size_binary(16) with ARROW:extension:name=arrow.uuid in its
// metadata, and is a uuid column all the same.
func fieldTypeOf(path string, f arrow.Field, keepNullability bool) (iceberg.Type, error) {
	if fsb, ok := f.Type.(*arrow.FixedSizeBinaryType); ok && fsb.ByteWidth == 16 {
		if name, ok := f.Metadata.GetValue(extensionNameKey); ok && name == "arrow.uuid" {
			return iceberg.PrimitiveTypes.UUID, nil
		}
	}
	return icebergTypeOf(path, f.Type, keepNullability)
}

// icebergTypeOf converts an Arrow type to the Iceberg type with placeholder
// field ids.
func icebergTypeOf(path string, dt arrow.DataType, keepNullability bool) (iceberg.Type, error) {
	switch dt := dt.(type) {
	case *arrow.DictionaryType:
		return icebergTypeOf(path, dt.ValueType, keepNullability)
	case *arrow.StructType:
		if dt.NumFields() == 0 {
			return nil, fmt.Errorf("column '%s': a struct with no fields has no Parquet form: %w", path, errs.ErrValidation)
		}
		if err := checkUniqueNames(path, dt.Fields()); err != nil {
			return nil, err
		}
		fields := make([]iceberg.NestedField, dt.NumFields())
		for i, f := range dt.Fields() {
			t, err := fieldTypeOf(join(path, f.Name), f, keepNullability)
			if err != nil {
				return nil, err
			}
			fields[i] = iceberg.NestedField{Name: f.Name, Type: t, Required: keepNullability && !f.Nullable}
		}
		return &iceberg.StructType{FieldList: fields}, nil
	case *arrow.MapType:
		k, err := fieldTypeOf(path+".key", dt.KeyField(), keepNullability)
		if err != nil {
			return nil, err
		}
		v, err := fieldTypeOf(path+".value", dt.ItemField(), keepNullability)
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyType: k, ValueType: v, ValueRequired: keepNullability && !dt.ItemField().Nullable}, nil
	case arrow.ListLikeType: // list, large_list, list_view, large_list_view, fixed_size_list
		e, err := fieldTypeOf(path+".element", dt.ElemField(), keepNullability)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{Element: e, ElementRequired: keepNullability && !dt.ElemField().Nullable}, nil
	case *arrow.NullType:
		return nil, fmt.Errorf("column '%s': Arrow type null (every value null) has no Iceberg type; cast it to a concrete type first: %w",
			path, errs.ErrValidation)
	}
	return primitiveOf(path, dt)
}

// primitiveOf maps an Arrow leaf type to its Iceberg primitive type.
func primitiveOf(path string, dt arrow.DataType) (iceberg.Type, error) {
	switch dt := dt.(type) {
	case *arrow.BooleanType:
		return iceberg.PrimitiveTypes.Bool, nil
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Uint8Type, *arrow.Uint16Type:
		return iceberg.PrimitiveTypes.Int32, nil
	case *arrow.Int64Type, *arrow.Uint32Type, *arrow.Uint64Type:
		return iceberg.PrimitiveTypes.Int64, nil
	case *arrow.Float16Type, *arrow.Float32Type:
		return iceberg.PrimitiveTypes.Float32, nil
	case *arrow.Float64Type:
		return iceberg.PrimitiveTypes.Float64, nil
	case arrow.DecimalType:
		p, s := dt.GetPrecision(), dt.GetScale()
		if p < 1 || p > maxDecimalPrecision || s < 0 || s > p {
			return nil, fmt.Errorf("column '%s': %s does not fit an Iceberg decimal (precision 1 to %d, 0 <= scale <= precision): %w",
				path, dt, maxDecimalPrecision, errs.ErrValidation)
		}
		return iceberg.DecimalTypeOf(int(p), int(s)), nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return iceberg.PrimitiveTypes.String, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType:
		return iceberg.PrimitiveTypes.Binary, nil
	case *arrow.FixedSizeBinaryType:
		return iceberg.FixedTypeOf(dt.ByteWidth), nil
	case *arrow.Date32Type, *arrow.Date64Type:
		return iceberg.PrimitiveTypes.Date, nil
	case *arrow.Time32Type, *arrow.Time64Type:
		return iceberg.PrimitiveTypes.Time, nil
	case *arrow.TimestampType:
		if dt.TimeZone == "" {
			return iceberg.PrimitiveTypes.Timestamp, nil
		}
		return iceberg.PrimitiveTypes.TimestampTz, nil
	case arrow.ExtensionType:
		if dt.ExtensionName() == "arrow.uuid" {
			return iceberg.PrimitiveTypes.UUID, nil
		}
		return primitiveOf(path, dt.StorageType())
	}
	return nil, fmt.Errorf("column '%s': Arrow type %s has no Iceberg type: %w", path, dt, errs.ErrValidation)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Fresh renumbers sc's fields 1..n in Java's AssignFreshIds order (what a
// catalog does to the schema of a created table).
func Fresh(sc *iceberg.Schema) *iceberg.Schema {
	next := 0
	return assignIDs(sc.Fields(), sc.IdentifierFieldIDs, func(string, iceberg.Type) int { next++; return next })
}

// assignIDs rebuilds fields with the ids idFor returns, in Java's
// AssignFreshIds order: a struct's own fields first, then their nested types;
// a list's element, a map's key then value, then their nested types. remap,
// if not nil, receives old id -> new id for every field.
func assignIDs(fields []iceberg.NestedField, identifierIDs []int, idFor func(path string, t iceberg.Type) int) *iceberg.Schema {
	remap := map[int]int{}
	a := assigner{idFor: idFor, remap: remap}
	out := a.fields("", fields)
	var ids []int
	for _, id := range identifierIDs {
		if n, ok := remap[id]; ok {
			ids = append(ids, n)
		}
	}
	return iceberg.NewSchemaWithIdentifiers(0, ids, out...)
}

type assigner struct {
	idFor func(path string, t iceberg.Type) int
	remap map[int]int
}

func (a assigner) fields(path string, in []iceberg.NestedField) []iceberg.NestedField {
	out := make([]iceberg.NestedField, len(in))
	for i, f := range in {
		out[i] = f
		out[i].ID = a.idFor(join(path, f.Name), f.Type)
		a.remap[f.ID] = out[i].ID
	}
	for i, f := range in {
		out[i].Type = a.typ(join(path, f.Name), f.Type)
	}
	return out
}

func (a assigner) typ(path string, t iceberg.Type) iceberg.Type {
	switch t := t.(type) {
	case *iceberg.StructType:
		return &iceberg.StructType{FieldList: a.fields(path, t.FieldList)}
	case *iceberg.ListType:
		l := *t
		l.ElementID = a.idFor(path+".element", t.Element)
		a.remap[t.ElementID] = l.ElementID
		l.Element = a.typ(path+".element", t.Element)
		return &l
	case *iceberg.MapType:
		m := *t
		m.KeyID = a.idFor(path+".key", t.KeyType)
		m.ValueID = a.idFor(path+".value", t.ValueType)
		a.remap[t.KeyID], a.remap[t.ValueID] = m.KeyID, m.ValueID
		m.KeyType = a.typ(path+".key", t.KeyType)
		m.ValueType = a.typ(path+".value", t.ValueType)
		return &m
	}
	return t
}

// ReuseIDs returns next with field ids taken from prev for fields that keep
// their path and a compatible type (the same type, an allowed promotion from
// prev's type, or the same kind of nested type), and fresh ids above prev's
// highest for the rest: what REPLACE TABLE does. Use ReuseIDsAbove when the
// table's last-column-id is known.
func ReuseIDs(next, prev *iceberg.Schema) (*iceberg.Schema, error) {
	return ReuseIDsAbove(next, prev, 0)
}

// ReuseIDsAbove is ReuseIDs with fresh ids above max(lastColumnID, prev's
// highest id), so that ids of columns dropped earlier are never handed out
// again.
func ReuseIDsAbove(next, prev *iceberg.Schema, lastColumnID int) (*iceberg.Schema, error) {
	if next == nil || prev == nil {
		return nil, fmt.Errorf("schema: ReuseIDs needs both schemas: %w", errs.ErrValidation)
	}
	old := map[string]iceberg.NestedField{}
	collectPaths("", prev.Fields(), old)
	last := max(prev.HighestFieldID(), lastColumnID)
	return assignIDs(next.Fields(), next.IdentifierFieldIDs, func(path string, t iceberg.Type) int {
		if f, ok := old[path]; ok && compatible(f.Type, t) {
			return f.ID
		}
		last++
		return last
	}), nil
}

// collectPaths records every field of fields (and below) by its path; the
// NestedField of a list element or map key/value carries its id and type.
func collectPaths(path string, fields []iceberg.NestedField, out map[string]iceberg.NestedField) {
	for _, f := range fields {
		p := join(path, f.Name)
		out[p] = f
		collectType(p, f.Type, out)
	}
}

func collectType(path string, t iceberg.Type, out map[string]iceberg.NestedField) {
	switch t := t.(type) {
	case *iceberg.StructType:
		collectPaths(path, t.FieldList, out)
	case *iceberg.ListType:
		out[path+".element"] = iceberg.NestedField{ID: t.ElementID, Type: t.Element}
		collectType(path+".element", t.Element, out)
	case *iceberg.MapType:
		out[path+".key"] = iceberg.NestedField{ID: t.KeyID, Type: t.KeyType}
		out[path+".value"] = iceberg.NestedField{ID: t.ValueID, Type: t.ValueType}
		collectType(path+".key", t.KeyType, out)
		collectType(path+".value", t.ValueType, out)
	}
}

// compatible reports whether a field of type from may keep its id as type to.
func compatible(from, to iceberg.Type) bool {
	switch from.(type) {
	case *iceberg.StructType:
		_, ok := to.(*iceberg.StructType)
		return ok
	case *iceberg.ListType:
		_, ok := to.(*iceberg.ListType)
		return ok
	case *iceberg.MapType:
		_, ok := to.(*iceberg.MapType)
		return ok
	}
	return from.Equals(to) || Promotable(from, to)
}

// Promotable reports whether a column of type from may become type to by
// one of Iceberg's allowed type promotions: int->long, float->double,
// decimal(P,S)->decimal(P'>P,S). The same type is no promotion: callers
// that accept it too test from.Equals(to) first.
func Promotable(from, to iceberg.Type) bool {
	switch f := from.(type) {
	case iceberg.Int32Type:
		_, ok := to.(iceberg.Int64Type)
		return ok
	case iceberg.Float32Type:
		_, ok := to.(iceberg.Float64Type)
		return ok
	case iceberg.DecimalType:
		t, ok := to.(iceberg.DecimalType)
		return ok && t.Scale() == f.Scale() && t.Precision() > f.Precision()
	}
	return false
}
