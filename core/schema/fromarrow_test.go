package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestFromArrowMapsEveryInputType(t *testing.T) {
	jsonType, err := extensions.NewJSONType(arrow.BinaryTypes.String)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in   arrow.DataType
		want iceberg.Type
	}{
		{arrow.FixedWidthTypes.Boolean, iceberg.PrimitiveTypes.Bool},
		{arrow.PrimitiveTypes.Int8, iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Int16, iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.Int64},
		{arrow.PrimitiveTypes.Uint8, iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Uint16, iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Uint32, iceberg.PrimitiveTypes.Int64},
		{arrow.PrimitiveTypes.Uint64, iceberg.PrimitiveTypes.Int64},
		{arrow.FixedWidthTypes.Float16, iceberg.PrimitiveTypes.Float32},
		{arrow.PrimitiveTypes.Float32, iceberg.PrimitiveTypes.Float32},
		{arrow.PrimitiveTypes.Float64, iceberg.PrimitiveTypes.Float64},
		{&arrow.Decimal32Type{Precision: 7, Scale: 2}, iceberg.DecimalTypeOf(7, 2)},
		{&arrow.Decimal64Type{Precision: 15, Scale: 3}, iceberg.DecimalTypeOf(15, 3)},
		{&arrow.Decimal128Type{Precision: 38, Scale: 10}, iceberg.DecimalTypeOf(38, 10)},
		{&arrow.Decimal256Type{Precision: 20, Scale: 0}, iceberg.DecimalTypeOf(20, 0)},
		{arrow.BinaryTypes.String, iceberg.PrimitiveTypes.String},
		{arrow.BinaryTypes.LargeString, iceberg.PrimitiveTypes.String},
		{arrow.BinaryTypes.StringView, iceberg.PrimitiveTypes.String},
		{arrow.BinaryTypes.Binary, iceberg.PrimitiveTypes.Binary},
		{arrow.BinaryTypes.LargeBinary, iceberg.PrimitiveTypes.Binary},
		{arrow.BinaryTypes.BinaryView, iceberg.PrimitiveTypes.Binary},
		{&arrow.FixedSizeBinaryType{ByteWidth: 5}, iceberg.FixedTypeOf(5)},
		{extensions.NewUUIDType(), iceberg.PrimitiveTypes.UUID},
		{arrow.FixedWidthTypes.Date32, iceberg.PrimitiveTypes.Date},
		{arrow.FixedWidthTypes.Date64, iceberg.PrimitiveTypes.Date},
		{arrow.FixedWidthTypes.Time32s, iceberg.PrimitiveTypes.Time},
		{arrow.FixedWidthTypes.Time32ms, iceberg.PrimitiveTypes.Time},
		{arrow.FixedWidthTypes.Time64us, iceberg.PrimitiveTypes.Time},
		{arrow.FixedWidthTypes.Time64ns, iceberg.PrimitiveTypes.Time},
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, iceberg.PrimitiveTypes.Timestamp},
		{&arrow.TimestampType{Unit: arrow.Millisecond}, iceberg.PrimitiveTypes.Timestamp},
		{&arrow.TimestampType{Unit: arrow.Second}, iceberg.PrimitiveTypes.Timestamp},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, iceberg.PrimitiveTypes.TimestampTz},
		{&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, iceberg.PrimitiveTypes.TimestampTz},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, iceberg.PrimitiveTypes.String},
		{jsonType, iceberg.PrimitiveTypes.String},
	}
	for _, c := range cases {
		if c.in == nil {
			t.Fatal("nil type")
		}
		sc, err := FromArrow(arrow.NewSchema([]arrow.Field{{Name: "c", Type: c.in, Nullable: true}}, nil), false)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := sc.Field(0).Type; !got.Equals(c.want) {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}

func TestFromArrowListLikesBecomeLists(t *testing.T) {
	for _, dt := range []arrow.DataType{
		arrow.ListOf(arrow.PrimitiveTypes.Int16),
		arrow.LargeListOf(arrow.PrimitiveTypes.Int16),
		arrow.ListViewOf(arrow.PrimitiveTypes.Int16),
		arrow.LargeListViewOf(arrow.PrimitiveTypes.Int16),
		arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int16),
	} {
		sc, err := FromArrow(arrow.NewSchema([]arrow.Field{{Name: "l", Type: dt, Nullable: true}}, nil), false)
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		lt, ok := sc.Field(0).Type.(*iceberg.ListType)
		if !ok || !lt.Element.Equals(iceberg.PrimitiveTypes.Int32) || lt.ElementID != 2 {
			t.Errorf("%s: got %s", dt, sc)
		}
	}
}

// nestedArrow is a(struct<x int32, y list<int32>>), b(map<string,int32>), c int64,
// all fields and children non-nullable.
func nestedArrow() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32},
			arrow.Field{Name: "y", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32)},
		)},
		{Name: "b", Type: func() arrow.DataType {
			m := arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)
			m.SetItemNullable(false)
			return m
		}()},
		{Name: "c", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
}

func TestFromArrowNumbersFieldsLikeSparkAndPyIceberg(t *testing.T) {
	sc, err := FromArrow(nestedArrow(), false)
	if err != nil {
		t.Fatal(err)
	}
	// Java's AssignFreshIds (and PyIceberg's assign_fresh_schema_ids, checked
	// against pyiceberg 0.12 on this very schema): a struct's fields first,
	// then their nested types in order.
	want := map[string]int{"a": 1, "b": 2, "c": 3, "a.x": 4, "a.y": 5, "a.y.element": 6, "b.key": 7, "b.value": 8}
	got := map[string]iceberg.NestedField{}
	collectPaths("", sc.Fields(), got)
	if len(got) != len(want) {
		t.Fatalf("got paths %v", got)
	}
	for p, id := range want {
		if got[p].ID != id {
			t.Errorf("%s: id %d, want %d", p, got[p].ID, id)
		}
	}
	if sc.HighestFieldID() != 8 {
		t.Errorf("highest id %d", sc.HighestFieldID())
	}
}

func TestFromArrowNullabilityRule(t *testing.T) {
	loose, err := FromArrow(nestedArrow(), false)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := FromArrow(nestedArrow(), true)
	if err != nil {
		t.Fatal(err)
	}
	// Without keepNullability every field is optional, nested ones included;
	// with it, each follows its Arrow field. Map keys are always required.
	for name, s := range map[string]*iceberg.Schema{"loose": loose, "strict": strict} {
		keep := name == "strict"
		for _, f := range s.Fields() {
			if f.Required != keep {
				t.Errorf("%s: %s required=%v", name, f.Name, f.Required)
			}
		}
		a := s.Field(0).Type.(*iceberg.StructType)
		for _, f := range a.FieldList {
			if f.Required != keep {
				t.Errorf("%s: a.%s required=%v", name, f.Name, f.Required)
			}
		}
		if a.FieldList[1].Type.(*iceberg.ListType).ElementRequired != keep {
			t.Errorf("%s: a.y.element", name)
		}
		if s.Field(1).Type.(*iceberg.MapType).ValueRequired != keep {
			t.Errorf("%s: b.value", name)
		}
	}
	// A nullable Arrow field stays optional even with keepNullability.
	s, err := FromArrow(arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil), true)
	if err != nil || s.Field(0).Required {
		t.Errorf("nullable field: %v %v", s, err)
	}
}

func TestFromArrowRejectsTypesWithoutIcebergForm(t *testing.T) {
	cases := map[string]arrow.DataType{
		"nul":   arrow.Null,
		"dec":   &arrow.Decimal256Type{Precision: 40, Scale: 2},
		"dec0":  &arrow.Decimal128Type{Precision: 0, Scale: 0}, // found by FuzzImportStream: iceberg-go panicked
		"empty": arrow.StructOf(),                              // found by TestStreamsThroughExecute: Parquet has no form for it
		"dur":   arrow.FixedWidthTypes.Duration_s,
		"inner": arrow.StructOf(arrow.Field{Name: "z", Type: arrow.Null, Nullable: true}),
	}
	for name, dt := range cases {
		_, err := FromArrow(arrow.NewSchema([]arrow.Field{{Name: name, Type: dt, Nullable: true}}, nil), false)
		if !errors.Is(err, errs.ErrValidation) {
			t.Errorf("%s: error %v does not wrap ErrValidation", name, err)
			continue
		}
		want := "'" + name + "'"
		if name == "inner" {
			want = "'inner.z'"
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not name %s", name, err, want)
		}
	}
	dup := arrow.NewSchema([]arrow.Field{{Name: "d", Type: arrow.PrimitiveTypes.Int32}, {Name: "d", Type: arrow.PrimitiveTypes.Int32}}, nil)
	if _, err := FromArrow(dup, false); !errors.Is(err, errs.ErrValidation) {
		t.Errorf("duplicate names: %v", err)
	}
}

func TestReuseIDsKeepsIdsOfSameNamedCompatibleFields(t *testing.T) {
	prev := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "x", Type: iceberg.PrimitiveTypes.Float32},
		}}},
		iceberg.NestedField{ID: 5, Name: "l", Type: &iceberg.ListType{ElementID: 9, Element: iceberg.PrimitiveTypes.Int64}},
		iceberg.NestedField{ID: 6, Name: "gone", Type: iceberg.PrimitiveTypes.Int32},
	)
	next, err := FromArrow(arrow.NewSchema([]arrow.Field{
		{Name: "new", Type: arrow.PrimitiveTypes.Int32},
		{Name: "b", Type: arrow.PrimitiveTypes.Int32}, // string -> int: incompatible
		{Name: "a", Type: arrow.PrimitiveTypes.Int64}, // int -> long: promotion
		{Name: "s", Type: arrow.StructOf(
			arrow.Field{Name: "z", Type: arrow.BinaryTypes.String},
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		)},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)},
	}, nil), false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReuseIDs(next, prev)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]iceberg.NestedField{}
	collectPaths("", got.Fields(), ids)
	for p, id := range map[string]int{"a": 1, "s": 3, "s.x": 4, "l": 5, "l.element": 9} {
		if ids[p].ID != id {
			t.Errorf("%s: id %d, want the previous %d", p, ids[p].ID, id)
		}
	}
	seen := map[int]string{}
	for _, p := range []string{"new", "b", "s.z"} {
		if ids[p].ID <= prev.HighestFieldID() {
			t.Errorf("%s: fresh id %d not above %d", p, ids[p].ID, prev.HighestFieldID())
		}
	}
	for p, f := range ids {
		if other, dup := seen[f.ID]; dup {
			t.Errorf("id %d used by %s and %s", f.ID, p, other)
		}
		seen[f.ID] = p
	}
	// Types and names are next's.
	if !ids["a"].Type.Equals(iceberg.PrimitiveTypes.Int64) || !ids["b"].Type.Equals(iceberg.PrimitiveTypes.Int32) {
		t.Errorf("types changed: %s", got)
	}

	above, err := ReuseIDsAbove(next, prev, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range above.Fields() {
		if (f.Name == "new" || f.Name == "b") && f.ID <= 50 {
			t.Errorf("%s: id %d not above last-column-id 50", f.Name, f.ID)
		}
	}
}

func TestReuseIDsRemapsIdentifierFields(t *testing.T) {
	prev := iceberg.NewSchema(0, iceberg.NestedField{ID: 7, Name: "k", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	next := iceberg.NewSchemaWithIdentifiers(0, []int{2},
		iceberg.NestedField{ID: 1, Name: "v", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "k", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	got, err := ReuseIDs(next, prev)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.IdentifierFieldIDs) != 1 || got.IdentifierFieldIDs[0] != 7 {
		t.Errorf("identifier ids %v, want [7]", got.IdentifierFieldIDs)
	}
	if f, _ := got.FindFieldByName("v"); f.ID != 8 {
		t.Errorf("v: id %d, want 8", f.ID)
	}
}

// arrow-go's C data import leaves extension types unresolved: a pyarrow
// uuid column arrives as fixed_size_binary(16) whose field metadata names
// arrow.uuid (found by tests/py/test_model.py: such tables got fixed[16]).
func TestUUIDNamedByFieldMetadata(t *testing.T) {
	md := arrow.NewMetadata([]string{"ARROW:extension:name"}, []string{"arrow.uuid"})
	u := arrow.Field{Name: "u", Type: &arrow.FixedSizeBinaryType{ByteWidth: 16}, Nullable: true, Metadata: md}
	other := arrow.Field{Name: "f", Type: &arrow.FixedSizeBinaryType{ByteWidth: 16}, Nullable: true}
	sc, err := FromArrow(arrow.NewSchema([]arrow.Field{
		u, other,
		{Name: "s", Type: arrow.StructOf(u), Nullable: true},
		{Name: "l", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: u.Type, Nullable: true, Metadata: md}), Nullable: true},
	}, nil), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"uuid", "fixed[16]", "struct<5: u: optional uuid>", "list<uuid>"}
	for i, w := range want {
		if got := sc.Field(i).Type.String(); got != w {
			t.Errorf("field %d: %s, want %s", i, got, w)
		}
	}
}
