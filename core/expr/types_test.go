package expr

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Columns of the less common Iceberg types, built with the Arrow types
// iceberg-go's scan produces (large_string here).
func TestOtherColumnTypes(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 2, Name: "fx", Type: iceberg.FixedTypeOf(2)},
		iceberg.NestedField{ID: 3, Name: "tm", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 4, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 5, Name: "ls", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 6, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
	)
	as, err := table.SchemaToArrowSchema(sc, nil, false, true) // large types
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	u1 := uuid.MustParse("123e4567-e89b-12d3-a456-426614174000")
	u2 := uuid.MustParse("00000000-0000-0000-0000-000000000001")
	b.Field(0).(*extensions.UUIDBuilder).AppendValues([]uuid.UUID{u1, u2}, nil)
	b.Field(1).(*array.FixedSizeBinaryBuilder).AppendValues([][]byte{{1, 2}, {3, 4}}, nil)
	b.Field(2).(*array.Time64Builder).AppendValues([]arrow.Time64{36_000_000_000, 7_200_000_000}, nil)
	b.Field(3).(*array.BinaryBuilder).AppendValues([][]byte{{0}, {0xff, 1}}, nil)
	b.Field(4).(*array.LargeStringBuilder).AppendValues([]string{"x", "yy"}, nil)
	b.Field(5).(*array.Float32Builder).AppendValues([]float32{1.5, 0.1}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	cases := map[string][]bool{
		"u = '123e4567-e89b-12d3-a456-426614174000'": {true, false},
		"fx = X'0304'":                   {false, true},
		"tm > '09:00:00'":                {true, false},
		"bin < X'FF'":                    {true, false},
		"length(bin) = 2":                {false, true},
		"ls LIKE 'y%'":                   {false, true},
		"upper(ls) IN ('X', 'Z')":        {true, false},
		"f = 1.5":                        {true, false},
		"f * 2 > 0.15":                   {true, true},
		"CAST(f AS double) = 0.1":        {false, false}, // 0.1f widened is not 0.1
		"f = 0.1F":                       {false, true},
		"CAST(u AS string) LIKE '123e%'": {true, false},
	}
	for src, want := range cases {
		e, err := Compile(src, sc)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		arr, err := e.Eval(context.Background(), rec, nil)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		for i, w := range want {
			if arr.IsNull(i) || arr.(*array.Boolean).Value(i) != w {
				t.Errorf("%s row %d: got %v, want %v", src, i, arr, w)
			}
		}
		arr.Release()
		// the converted filter binds against the schema
		if _, err := iceberg.BindExpr(sc, e.Iceberg(), true); err != nil {
			t.Errorf("%s: %s does not bind: %v", src, e.Iceberg(), err)
		}
	}
	// a bare uuid column comes back with its own Arrow type
	e, _ := Compile("u", sc)
	arr, err := e.Eval(context.Background(), rec, nil)
	if err != nil || arr.DataType().ID() != extensions.NewUUIDType().ID() {
		t.Errorf("uuid column: %v %v", arr, err)
	}
}

// Years with a sign or more than four digits parse, as Spark's
// [+-]yyyy* timestamp and date texts do, so the canonical text of any
// timestamp compiles again (FuzzCompile found '-0001-12-31 23:50:00Z');
// a year whose microseconds overflow 64 bits does not.
func TestSignedAndLongYears(t *testing.T) {
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{"-0001-12-31 23:50:00Z", true},
		{"+2024-01-02 03:04:05", true},
		{"10000-01-01 00:00:00", true},
		{"-290000-01-01 00:00:00", true},
		{"294248-01-01 00:00:00", false},
		{"-294248-01-01 00:00:00", false},
		{"1234567-01-01 00:00:00", false},
	} {
		if _, _, ok := parseTimestamp(c.text); ok != c.ok {
			t.Errorf("parseTimestamp(%q): ok %v, want %v", c.text, ok, c.ok)
		}
	}
	if d, ok := parseDate("-0001-12-31"); !ok || formatDate(d) != "-0001-12-31" {
		t.Errorf("parseDate(-0001-12-31) = %d %v (%s)", d, ok, formatDate(d))
	}
}
