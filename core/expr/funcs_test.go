package expr

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Each predicate must evaluate to TRUE on every row of a small batch.
func TestFunctionsAndCasts(t *testing.T) {
	rows := []row{
		{"id": int64(7), "s": "  Hello ", "ts": int64(1710497472000000), "dt": int32(19797), "ntz": int64(1710497472000000), "d": 2.5, "dec": int64(-125)},
	}
	preds := []string{
		"date_trunc('MONTH', TIMESTAMP '2024-03-15 10:11:12') = TIMESTAMP '2024-03-01 00:00:00'",
		"date_trunc('week', TIMESTAMP '2024-03-15 10:11:12') = TIMESTAMP '2024-03-11 00:00:00'",
		"date_trunc('HOUR', ts) = TIMESTAMP '2024-03-15 10:00:00'",
		"year(ts) = 2024 AND month(ts) = 3 AND day(ts) = 15 AND hour(ts) = 10",
		"year(dt) = 2024 AND month(dt) = 3 AND day(dt) = 15",
		"dt = '2024-03-15' AND dt < ts AND CAST(dt AS timestamp) = '2024-03-15'",
		"ntz = TIMESTAMP_NTZ '2024-03-15 10:11:12'",
		"CAST(ts AS date) = DATE '2024-03-15'",
		"trim(s) = 'Hello' AND ltrim(s) = 'Hello ' AND rtrim(s) = '  Hello'",
		"lower(s) = '  hello ' AND upper(s) = '  HELLO '",
		"length(s) = 8 AND length('äöü') = 3 AND length(X'00FF') = 2",
		"substring('Spark SQL', 5) = 'k SQL' AND substring('Spark SQL', -3) = 'SQL' AND substr('Spark SQL', 0, 2) = 'Sp'",
		"substring('Spark SQL', 2, 0) = '' AND substring('Spark SQL', 100) = ''",
		"concat('a', 1, 'b') = 'a1b' AND concat('a', NULL) IS NULL",
		"coalesce(NULL, NULL, 3) = 3 AND coalesce(NULL) IS NULL",
		"nullif(id, 7) IS NULL AND nullif(id, 8) = 7",
		"if(id > 5, 'big', 'small') = 'big'",
		"abs(dec) = 1.25 AND abs(-2.5D) = d",
		"CAST('12' AS int) = 12 AND CAST(' 12.7 ' AS bigint) = 12 AND CAST('1e2' AS double) = 100",
		"CAST('3.14159' AS decimal(5,2)) = 3.14 AND CAST(2.675D AS decimal(4,2)) = 2.68",
		"CAST(1.5 AS int) = 1 AND CAST(-1.5D AS int) = -1 AND CAST(TRUE AS int) = 1",
		"CAST('yes' AS boolean) AND NOT CAST('0' AS boolean)",
		"CAST(1.0D AS string) = '1.0' AND CAST(1e10D AS string) = '1.0E10' AND CAST(0.0001D AS string) = '1.0E-4'",
		"CAST(dec AS string) = '-1.25' AND CAST(ts AS string) = '2024-03-15 10:11:12'",
		"CAST(X'4142' AS string) = 'AB' AND CAST('AB' AS binary) = X'4142'",
		"7 / 2 = 3.5 AND 7 % 3 = 1 AND -7 % 3 = -1 AND 7.0 / 2 = 3.5",
		"1.1 + 2.20 = 3.3 AND 1.5 * 1.5 = 2.25 AND 1 / 3.0 = 0.333333",
		"10.5 % 3 = 1.5 AND -(2.5) = -2.5",
		"CAST(NULL AS int) IS NULL AND NULL IS NULL AND NOT (NULL IS NOT NULL)",
		"'abc' < 'abd' AND 'b' > 'abc' AND X'01' < X'02'",
		"CAST('NaN' AS double) = CAST('NaN' AS double) AND CAST('NaN' AS double) > 1e308D",
		"current_date() >= DATE '2024-01-01' AND current_timestamp > TIMESTAMP '2024-01-01 00:00:00'",
		"CASE WHEN id > 10 THEN 'a' WHEN id > 5 THEN 'b' ELSE 'c' END = 'b'",
		"CASE id WHEN 6 THEN FALSE WHEN 7 THEN TRUE END",
		"CASE WHEN id > 10 THEN 1 END IS NULL",
		"TRUE IS TRUE AND FALSE IS NOT TRUE AND NULL IS NOT FALSE AND NOT (NULL IS FALSE)",
		"id BETWEEN 7 AND 7 AND id NOT BETWEEN 8 AND 9",
		"(TRUE OR NULL) AND (FALSE AND NULL) IS FALSE AND (NULL OR FALSE) IS NULL AND (TRUE AND NULL) IS NULL",
	}
	sc := testSchema()
	rec := makeBatch(t, sc, rows)
	defer rec.Release()
	for _, src := range preds {
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
		if arr.IsNull(0) || !arr.(*array.Boolean).Value(0) {
			t.Errorf("%s is not TRUE (bound as %s)", src, e)
		}
		arr.Release()
	}
}

func TestEvalResultTypes(t *testing.T) {
	sc := testSchema()
	rows := randRows(nil2(), 5, false)
	rec := makeBatch(t, sc, rows)
	defer rec.Release()
	cases := map[string]arrow.DataType{
		"id":               arrow.PrimitiveTypes.Int64,
		"st.x":             arrow.PrimitiveTypes.Int32,
		"i + 1":            arrow.PrimitiveTypes.Int32,
		"dec * 2":          &arrow.Decimal128Type{Precision: 20, Scale: 2},
		"ts":               arrow.FixedWidthTypes.Timestamp_us,
		"ntz":              &arrow.TimestampType{Unit: arrow.Microsecond},
		"dt":               arrow.FixedWidthTypes.Date32,
		"upper(s)":         arrow.BinaryTypes.String,
		"CAST(i AS float)": arrow.PrimitiveTypes.Float32,
		"X'00'":            arrow.BinaryTypes.Binary,
		"id > 1":           arrow.FixedWidthTypes.Boolean,
	}
	for src, want := range cases {
		e, err := Compile(src, sc)
		if err != nil {
			t.Fatal(err)
		}
		arr, err := e.Eval(context.Background(), rec, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		if !arrow.TypeEqual(arr.DataType(), want) || arr.Len() != 5 {
			t.Errorf("%s: %s with %d rows, want %s", src, arr.DataType(), arr.Len(), want)
		}
		arr.Release()
	}
	// nested fields inherit the nulls of their struct
	e, _ := Compile("st.x IS NULL", sc)
	arr, _ := e.Eval(context.Background(), rec, nil)
	for i, rw := range rows {
		want := rw["st"] == nil || rw["st"].(row)["x"] == nil
		if arr.(*array.Boolean).Value(i) != want {
			t.Errorf("row %d: st.x IS NULL = %v, want %v", i, !want, want)
		}
	}
}

func TestEvalConcurrent(t *testing.T) {
	sc := testSchema()
	e, err := Compile("CASE WHEN s LIKE 'a%' THEN id * 2 ELSE coalesce(i, 0) END > 3", sc)
	if err != nil {
		t.Fatal(err)
	}
	rec := makeBatch(t, sc, randRows(nil2(), 200, false))
	defer rec.Release()
	first, err := e.Eval(context.Background(), rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := e.Eval(context.Background(), rec, nil)
			if err != nil || !array.Equal(got, first) {
				t.Errorf("concurrent Eval differs: %v", err)
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Eval(ctx, rec, nil); err == nil {
		t.Error("Eval on a cancelled context succeeded")
	}
}
