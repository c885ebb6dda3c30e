package expr

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestBindCaseInsensitiveAndNested(t *testing.T) {
	sc := testSchema()
	cases := map[string][]int{
		"ID > 1":                          {1},
		"St.X = 1":                        {10},
		"st.name = 'a'":                   {11},
		"`ST`.`NAME` = 'a'":               {11},
		"`My Col` = 'a' AND i < id":       {1, 2, 12},
		"LEVEL = 'INFO' OR level IS NULL": {13},
	}
	for src, ids := range cases {
		e, err := Compile(src, sc)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if !slices.Equal(e.FieldIDs(), ids) {
			t.Errorf("%s: field ids %v, want %v", src, e.FieldIDs(), ids)
		}
		if !e.IsPredicate() {
			t.Errorf("%s: not a predicate", src)
		}
	}
	// names render with the schema's spelling
	e, _ := Compile("ST.NAME = 'a'", sc)
	if e.String() != "(st.Name = 'a')" {
		t.Errorf("rendering: %s", e.String())
	}
}

func TestBindErrors(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "level", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "Dup", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 5, Name: "dup", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 6, Name: "flag", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 7, Name: "d", Type: iceberg.PrimitiveTypes.Date},
	)
	cases := []struct {
		src string
		pos int
		msg []string
	}{
		{"lvl = 'x'", 1, []string{`unknown column "lvl"`}},
		{"dup = 1", 1, []string{`ambiguous column "dup"`}},
		{"level = 1", 7, []string{`column "level" (string)`, "int"}},
		{"flag = d", 6, []string{`column "flag" (boolean)`, `column "d" (date)`}},
		{"level + 1 > 0", 7, []string{"cannot apply +", `column "level"`}},
		{"nosuch(id)", 1, []string{`unknown function "nosuch"`}},
		{"id AND flag", 1, []string{"AND needs a boolean", `column "id"`}},
		{"ts >= 'yesterday'", 7, []string{"cannot convert", "timestamp"}},
		{"id LIKE 'a%'", 1, []string{"LIKE needs a string"}},
		{"level LIKE level", 12, []string{"must be a string literal"}},
		{"coalesce(id, level)", 14, []string{"incompatible types"}},
		{"upper(id)", 7, []string{"function upper", "must be string"}},
		{"substring(level)", 1, []string{"takes 2 to 3 arguments"}},
		{"id.x = 1", 1, []string{"not a struct"}},
		{"CAST(ts AS boolean)", 1, []string{"cannot cast"}},
	}
	for _, c := range cases {
		_, err := Compile(c.src, sc)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v is not an *Error", c.src, err)
			continue
		}
		if !errors.Is(err, errs.ErrValidation) || errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%s: wrong error kind: %v", c.src, err)
		}
		if e.Pos != c.pos {
			t.Errorf("%s: position %d, want %d (%v)", c.src, e.Pos, c.pos, err)
		}
		for _, m := range c.msg {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: %q does not mention %q", c.src, err.Error(), m)
			}
		}
	}
	_, err := Compile("lvl = 'x'", iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "level", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz}))
	want := `invalid expression "lvl = 'x'": unknown column "lvl" at position 1 (columns: id, level, ts)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestBindTyping(t *testing.T) {
	sc := testSchema()
	cases := map[string]iceberg.Type{
		"i + 1":           iceberg.PrimitiveTypes.Int32,
		"i + id":          iceberg.PrimitiveTypes.Int64,
		"i / 2":           iceberg.PrimitiveTypes.Float64,
		"i + 1.5D":        iceberg.PrimitiveTypes.Float64,
		"dec + dec":       iceberg.DecimalTypeOf(10, 2),
		"dec * dec":       iceberg.DecimalTypeOf(19, 4),
		"dec / dec":       iceberg.DecimalTypeOf(21, 12),
		"dec + i":         iceberg.DecimalTypeOf(13, 2),
		"dec + d":         iceberg.PrimitiveTypes.Float64,
		"i % 3":           iceberg.PrimitiveTypes.Int32,
		"coalesce(i, id)": iceberg.PrimitiveTypes.Int64,
		"if(b, dt, ts)":   iceberg.PrimitiveTypes.TimestampTz,
		"length(s)":       iceberg.PrimitiveTypes.Int32,
		"year(ts)":        iceberg.PrimitiveTypes.Int32,
		"CASE WHEN b THEN 1 WHEN i > 0 THEN 2L END": iceberg.PrimitiveTypes.Int64,
		"nullif(s, 'a')":          iceberg.PrimitiveTypes.String,
		"date_trunc('MONTH', ts)": iceberg.PrimitiveTypes.TimestampTz,
	}
	for src, want := range cases {
		e, err := Compile(src, sc)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if !e.Type().Equals(want) {
			t.Errorf("%s: type %s, want %s", src, e.Type(), want)
		}
		if e.IsPredicate() {
			t.Errorf("%s: reported as predicate", src)
		}
	}
	// a string literal compared with a date/timestamp column is converted at bind time
	e, err := Compile("dt >= '2024-01-01' AND ts < '2024-01-02 00:00:00'", sc)
	if err != nil {
		t.Fatal(err)
	}
	if e.String() != "((dt >= DATE '2024-01-01') AND (ts < TIMESTAMP '2024-01-02 00:00:00Z'))" {
		t.Errorf("string literal conversion: %s", e.String())
	}
}

func TestAssignTo(t *testing.T) {
	sc := testSchema()
	ok := []struct {
		src string
		to  iceberg.Type
	}{
		{"i", iceberg.PrimitiveTypes.Int64},
		{"id", iceberg.PrimitiveTypes.Int32},
		{"1.5", iceberg.PrimitiveTypes.Float64},
		{"NULL", iceberg.PrimitiveTypes.String},
		{"dt", iceberg.PrimitiveTypes.TimestampTz},
		{"ts", iceberg.PrimitiveTypes.Timestamp},
		{"d", iceberg.DecimalTypeOf(5, 1)},
		{"s", iceberg.PrimitiveTypes.String},
		{"ts", iceberg.PrimitiveTypes.Date}, // Spark's ANSI store assignment casts it
		// Spark sees fixed as binary and uuid as string
		{"X'0102'", iceberg.FixedTypeOf(2)},
		{"'123e4567-e89b-12d3-a456-426614174000'", iceberg.PrimitiveTypes.UUID},
	}
	for _, c := range ok {
		e, err := Compile(c.src, sc)
		if err != nil {
			t.Fatal(err)
		}
		a, err := e.AssignTo("col", c.to)
		if err != nil {
			t.Errorf("%s -> %s: %v", c.src, c.to, err)
			continue
		}
		if !a.Type().Equals(c.to) {
			t.Errorf("%s -> %s: type %s", c.src, c.to, a.Type())
		}
	}
	bad := []struct {
		src string
		to  iceberg.Type
	}{
		{"s", iceberg.PrimitiveTypes.Int32},
		{"i", iceberg.PrimitiveTypes.String},
		{"b", iceberg.PrimitiveTypes.Int32},
		{"dt", iceberg.PrimitiveTypes.Int32},
		{"X'01'", iceberg.FixedTypeOf(2)}, // a literal of another length is known to fail at bind time
		{"'not-a-uuid'", iceberg.PrimitiveTypes.UUID},
		{"s", iceberg.FixedTypeOf(2)},
	}
	for _, c := range bad {
		e, _ := Compile(c.src, sc)
		_, err := e.AssignTo("target_col", c.to)
		if err == nil || !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), `"target_col"`) {
			t.Errorf("%s -> %s: %v", c.src, c.to, err)
		}
	}
}
