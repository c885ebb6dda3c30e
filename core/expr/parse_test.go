package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestParsePrecedence(t *testing.T) {
	cases := map[string]string{
		"a OR b AND c":                   "(a OR (b AND c))",
		"NOT a = 1 AND b":                "((NOT (a = 1)) AND b)",
		"a + b * c - d":                  "((a + (b * c)) - d)",
		"a - b - c":                      "((a - b) - c)",
		"-a * b":                         "((- a) * b)",
		"a = 1 OR NOT b IS NULL":         "((a = 1) OR (NOT (b IS NULL)))",
		"a + 1 > b * 2":                  "((a + 1) > (b * 2))",
		"x BETWEEN 1 AND 2 AND y":        "((x BETWEEN 1 AND 2) AND y)",
		"x NOT BETWEEN a + 1 AND b":      "(x NOT BETWEEN (a + 1) AND b)",
		"x NOT IN (1, 2) OR y IN (3)":    "((x NOT IN (1, 2)) OR (y IN (3)))",
		"s NOT LIKE 'a%' AND t LIKE 'b'": "((s NOT LIKE 'a%') AND (t LIKE 'b'))",
		"a == 1 AND b <> 2 AND c != 3":   "(((a = 1) AND (b != 2)) AND (c != 3))",
		"a <=> NULL":                     "(a <=> NULL)",
		"(a OR b) AND c":                 "((a OR b) AND c)",
		"a % 2 = 0":                      "((a % 2) = 0)",
		"x IS NOT TRUE":                  "(x IS NOT TRUE)",
		"NOT NOT x":                      "(NOT (NOT x))",
		"CASE WHEN a THEN 1 ELSE 2 END":  "CASE WHEN a THEN 1 ELSE 2 END",
		"case x when 1 then 'a' end":     "CASE x WHEN 1 THEN 'a' END",
		"COALESCE(a, b)":                 "coalesce(a, b)",
		"cast(a AS DECIMAL(10, 2))":      "CAST(a AS decimal(10,2))",
		"`my col`.`x.y`.z":               "`my col`.`x.y`.z",
		"`a``b`":                         "`a``b`",
	}
	for src, want := range cases {
		n, err := Parse(src)
		if err != nil {
			t.Errorf("Parse(%q): %v", src, err)
			continue
		}
		if got := n.String(); got != want {
			t.Errorf("Parse(%q) = %s, want %s", src, got, want)
		}
		// the rendering parses back to itself
		n2, err := Parse(n.String())
		if err != nil || n2.String() != n.String() {
			t.Errorf("round trip of %q: %v %v", src, n2, err)
		}
	}
}

func TestParseBackticks(t *testing.T) {
	n, err := Parse("`x.y` = 1 AND `a`.`b` = 2 AND a.b.c = 3")
	if err != nil {
		t.Fatal(err)
	}
	and := n.(*BinaryNode)
	l := and.L.(*BinaryNode).L.(*BinaryNode).L.(*ColumnNode)
	if len(l.Path) != 1 || l.Path[0] != "x.y" {
		t.Errorf("`x.y` parsed as %v", l.Path)
	}
	m := and.L.(*BinaryNode).R.(*BinaryNode).L.(*ColumnNode)
	if strings.Join(m.Path, "|") != "a|b" {
		t.Errorf("`a`.`b` parsed as %v", m.Path)
	}
	r := and.R.(*BinaryNode).L.(*ColumnNode)
	if strings.Join(r.Path, "|") != "a|b|c" {
		t.Errorf("a.b.c parsed as %v", r.Path)
	}
}

func TestLiteralForms(t *testing.T) {
	cases := []struct {
		src  string
		typ  iceberg.Type
		text string // canonical rendering
	}{
		{"1", iceberg.PrimitiveTypes.Int32, "1"},
		{"-2147483648", iceberg.PrimitiveTypes.Int32, "-2147483648"},
		{"2147483648", iceberg.PrimitiveTypes.Int64, "2147483648L"},
		{"7L", iceberg.PrimitiveTypes.Int64, "7L"},
		{"7S", iceberg.PrimitiveTypes.Int32, "7"},
		{"7Y", iceberg.PrimitiveTypes.Int32, "7"},
		// a signed number is one literal (Spark's MINUS? number), so the minimum bigint parses
		{"-9223372036854775808L", iceberg.PrimitiveTypes.Int64, "-9223372036854775808L"},
		{"-9223372036854775808", iceberg.PrimitiveTypes.Int64, "-9223372036854775808L"},
		{"- 2147483648", iceberg.PrimitiveTypes.Int32, "-2147483648"},
		// beyond bigint an integer literal is a decimal(p,0), as in Spark
		{"9223372036854775808", iceberg.DecimalTypeOf(19, 0), "9223372036854775808BD"},
		{"-99999999999999999999999999999999999999", iceberg.DecimalTypeOf(38, 0), "-99999999999999999999999999999999999999BD"},
		{"1.5", iceberg.DecimalTypeOf(2, 1), "1.5BD"},
		{"0.05", iceberg.DecimalTypeOf(2, 2), "0.05BD"},
		{"-12.340", iceberg.DecimalTypeOf(5, 3), "-12.340BD"},
		{"1.5D", iceberg.PrimitiveTypes.Float64, "1.5D"},
		{"1e3", iceberg.PrimitiveTypes.Float64, "1000D"},
		{"1.5F", iceberg.PrimitiveTypes.Float32, "1.5F"},
		{"'it''s'", iceberg.PrimitiveTypes.String, `'it\'s'`},
		{`'a\'b\\c'`, iceberg.PrimitiveTypes.String, `'a\'b\\c'`},
		{`"dq"`, iceberg.PrimitiveTypes.String, `'dq'`},
		{"DATE '2024-01-31'", iceberg.PrimitiveTypes.Date, "DATE '2024-01-31'"},
		{"TIMESTAMP '2024-01-31 10:00:00'", iceberg.PrimitiveTypes.TimestampTz, "TIMESTAMP '2024-01-31 10:00:00Z'"},
		{"TIMESTAMP '2024-01-31 10:00:00.5+02:00'", iceberg.PrimitiveTypes.TimestampTz, "TIMESTAMP '2024-01-31 08:00:00.5Z'"},
		{"timestamp '2024-01-31T10:00:00.123456Z'", iceberg.PrimitiveTypes.TimestampTz, "TIMESTAMP '2024-01-31 10:00:00.123456Z'"},
		{"TIMESTAMP_NTZ '2024-01-31 10:00:00'", iceberg.PrimitiveTypes.Timestamp, "TIMESTAMP_NTZ '2024-01-31 10:00:00'"},
		{"X'0AFF'", iceberg.PrimitiveTypes.Binary, "X'0AFF'"},
		{"NULL", iceberg.PrimitiveTypes.Unknown, "NULL"},
		{"true", iceberg.PrimitiveTypes.Bool, "TRUE"},
		{"FALSE", iceberg.PrimitiveTypes.Bool, "FALSE"},
	}
	sc := testSchema()
	for _, c := range cases {
		e, err := Compile(c.src, sc)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if !e.Type().Equals(c.typ) {
			t.Errorf("%s: type %s, want %s", c.src, e.Type(), c.typ)
		}
		if e.String() != c.text {
			t.Errorf("%s: renders as %s, want %s", c.src, e.String(), c.text)
		}
		// the canonical text binds to the same type and text
		e2, err := Compile(e.String(), sc)
		if err != nil || !e2.Type().Equals(e.Type()) || e2.String() != e.String() {
			t.Errorf("%s: canonical text %s does not round trip: %v", c.src, e.String(), err)
		}
	}
	// timestamp literal values: a zone shifts the instant, none means UTC
	a, _ := Compile("TIMESTAMP '2024-01-31 10:00:00+02:00' = TIMESTAMP '2024-01-31 08:00:00'", sc)
	if v, err := foldConst(a.root); err != nil || !v.b {
		t.Errorf("zoned timestamp literal: %v %v", v, err)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		src string
		pos int
		msg string
	}{
		{"a = = 1", 5, `unexpected "="`},
		{"a AND", 6, "unexpected end of input"},
		{"(a = 1", 7, `expected ")"`},
		{"a IN 1", 6, `expected "("`},
		{"'abc", 1, "unterminated string"},
		{"a # 1", 3, `unexpected "#"`},
		{"x BETWEEN 1 OR 2", 13, "expected AND"},
		{"CAST(a AS foo)", 11, `unknown type "foo"`},
		{"DATE '2024-02-30'", 1, "invalid date literal"},
		{"9223372036854775808L", 1, "out of range"},
		{"-9223372036854775809L", 1, "out of range"},
		{"999999999999999999999999999999999999999", 1, "exceeds precision 38"},
		{"a IS 5", 6, "expected NULL, TRUE or FALSE"},
		{"CASE END", 6, `unexpected "END"`},
		{"CASE WHEN a END", 13, "expected THEN"},
		{"a.", 3, "expected a field name"},
		{"ä = = 1", 5, `unexpected "="`}, // positions count characters, not bytes
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q): %v is not an *Error", c.src, err)
			continue
		}
		if e.Pos != c.pos || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("Parse(%q) = pos %d %q, want pos %d %q", c.src, e.Pos, e.Msg, c.pos, c.msg)
		}
		if !errors.Is(err, errs.ErrInvalidArgument) || errors.Is(err, errs.ErrValidation) {
			t.Errorf("Parse(%q): error kind %v", c.src, err)
		}
	}
	_, err := Parse("a = = 1")
	if got := err.Error(); got != `invalid expression "a = = 1": unexpected "=" at position 5` {
		t.Errorf("message: %s", got)
	}
}
