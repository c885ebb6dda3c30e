package evolve

import (
	"errors"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestParseType(t *testing.T) {
	good := map[string]iceberg.Type{
		"long":           iceberg.PrimitiveTypes.Int64,
		" Decimal(12,2)": iceberg.DecimalTypeOf(12, 2),
		"fixed[16]":      iceberg.FixedTypeOf(16),
		"timestamptz":    iceberg.PrimitiveTypes.TimestampTz,
		"list<int>":      &iceberg.ListType{ElementID: 1, Element: iceberg.PrimitiveTypes.Int32},
		"map<string, decimal(9, 3)>": &iceberg.MapType{KeyID: 1, KeyType: iceberg.PrimitiveTypes.String, ValueID: 2,
			ValueType: iceberg.DecimalTypeOf(9, 3)},
		"struct<a: int, b: list<string>>": &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
			{ID: 2, Name: "b", Type: &iceberg.ListType{ElementID: 1, Element: iceberg.PrimitiveTypes.String}},
		}},
	}
	for in, want := range good {
		got, err := ParseType(in)
		if err != nil || !got.Equals(want) {
			t.Errorf("ParseType(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "bigint", "decimal(40, 2)", "decimal(5, 6)", "list<int", "struct<a int>", "map<int>", "long long", "fixed[0]"} {
		if _, err := ParseType(bad); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("ParseType(%q): err = %v, want invalid argument", bad, err)
		}
	}
}

func TestCheckSchemaRejectsDuplicatesAndBadIdentifiers(t *testing.T) {
	dup := iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "a", Type: iceberg.PrimitiveTypes.Int32}, {ID: 3, Name: "a", Type: iceberg.PrimitiveTypes.Int64},
		}}})
	if err := checkSchema(dup); err == nil || !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("duplicate s.a: %v", err)
	}
	float := iceberg.NewSchemaWithIdentifiers(1, []int{1}, iceberg.NestedField{ID: 1, Name: "f", Type: iceberg.PrimitiveTypes.Float64, Required: true})
	if err := checkSchema(float); err == nil {
		t.Error("a double identifier field was accepted")
	}
	nested := iceberg.NewSchemaWithIdentifiers(1, []int{2},
		iceberg.NestedField{ID: 1, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "k", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		}}})
	if err := checkSchema(nested); err == nil {
		t.Error("an identifier field in an optional struct was accepted")
	}
	ok := iceberg.NewSchemaWithIdentifiers(1, []int{1}, iceberg.NestedField{ID: 1, Name: "k", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	if err := checkSchema(ok); err != nil {
		t.Error(err)
	}
}
