package expr

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

func zone(t testing.TB, id string) *tz.Zone {
	t.Helper()
	z, err := tz.Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// evalConst evaluates a constant expression in zone id and renders the
// result: timestamps (with zone) as micros since the epoch, timestamp_ntz
// as "ntz:" and micros, dates as days, the rest as Arrow prints them.
func evalConst(t *testing.T, src, id string) string {
	t.Helper()
	e, err := Compile(src, testSchema(), InZone(zone(t, id)))
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	rec := makeBatch(t, testSchema(), []row{{"id": int64(1)}})
	defer rec.Release()
	arr, err := e.Eval(context.Background(), rec, nil)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	defer arr.Release()
	switch a := arr.(type) {
	case *array.Timestamp:
		if a.DataType().(*arrow.TimestampType).TimeZone == "" {
			return fmt.Sprintf("ntz:%d", a.Value(0))
		}
		return fmt.Sprint(int64(a.Value(0)))
	case *array.Date32:
		return fmt.Sprint(int32(a.Value(0)))
	}
	return arr.ValueStr(0)
}

// The expected values are Spark 4.1's (spark.sql.session.timeZone set to the
// zone, unix_micros of the result), checked by hand against the zone's rules:
// New York leaves EST (-05:00) at 2024-03-10 07:00Z (02:00 -> 03:00 local)
// and returns at 2024-11-03 06:00Z (02:00 -> 01:00 local); Santiago's clocks
// go from 00:00 (-04:00) to 01:00 (-03:00) on 2024-09-08; Lord Howe's from
// 02:00 (+10:30) to 02:30 (+11:00) on 2024-10-06.
func TestSessionZoneSemantics(t *testing.T) {
	cases := []struct{ zone, src, want string }{
		// literals: no zone is a wall-clock time in the session zone
		{"America/New_York", "TIMESTAMP '2024-03-10 02:30:00'", "1710055800000000"}, // gap: 03:30 EDT
		{"America/New_York", "TIMESTAMP '2024-11-03 01:30:00'", "1730611800000000"}, // overlap: EDT
		{"America/New_York", "TIMESTAMP '2024-03-10'", "1710046800000000"},
		{"America/New_York", "TIMESTAMP '2024-11-03 01:30:00 UTC'", "1730597400000000"},
		{"America/New_York", "TIMESTAMP '2024-11-03 01:30:00 -05:00'", "1730615400000000"},
		{"America/New_York", "TIMESTAMP '2024-11-03 01:30:00 Europe/Paris'", "1730593800000000"},
		{"America/New_York", "TIMESTAMP '2024-11-03 01:30:00 GMT+1'", "1730593800000000"},
		{"America/New_York", "TIMESTAMP '1800-06-01 00:00:00'", "-5351598238000000"}, // LMT -04:56:02
		{"UTC", "TIMESTAMP '2024-03-10 02:30:00'", "1710037800000000"},
		{"+05:30", "TIMESTAMP '2024-03-10 02:30:00'", "1710018000000000"},
		{"Australia/Lord_Howe", "TIMESTAMP '2024-10-06 02:15:00'", "1728143100000000"}, // 30-minute gap
		// casts
		{"America/New_York", "CAST(TIMESTAMP_NTZ '2024-03-10 02:30:00' AS TIMESTAMP)", "1710055800000000"},
		{"America/New_York", "CAST(TIMESTAMP '2024-11-03 06:30:00Z' AS TIMESTAMP_NTZ)", "ntz:1730597400000000"},
		{"America/New_York", "CAST(TIMESTAMP '2024-11-03 05:30:00Z' AS TIMESTAMP_NTZ)", "ntz:1730597400000000"},
		{"America/New_York", "CAST(TIMESTAMP '2024-11-03 06:30:00Z' AS STRING)", "2024-11-03 01:30:00"},
		{"America/New_York", "CAST(TIMESTAMP_NTZ '2024-11-03 06:30:00' AS STRING)", "2024-11-03 06:30:00"},
		{"America/New_York", "CAST('2024-03-10 02:30' AS TIMESTAMP)", "1710055800000000"},
		{"America/New_York", "CAST(CAST('2024-01-01 10:00:00+05:00' AS TIMESTAMP_NTZ) AS STRING)", "2024-01-01 10:00:00"},
		{"America/New_York", "CAST('2024-01-01 02:00:00+05:00' AS DATE)", "19723"},
		{"America/New_York", "CAST(TIMESTAMP '2024-07-01 02:00:00Z' AS DATE)", "19904"},
		{"America/New_York", "CAST(TIMESTAMP_NTZ '2024-03-10 02:30:00' AS DATE)", "19792"},
		{"America/New_York", "CAST(DATE '2024-03-10' AS TIMESTAMP)", "1710046800000000"},
		{"America/New_York", "CAST(DATE '2024-03-10' AS TIMESTAMP_NTZ)", "ntz:1710028800000000"},
		{"America/Santiago", "CAST(DATE '2024-09-08' AS TIMESTAMP)", "1725768000000000"}, // midnight in the gap: 01:00
		// fields and truncation in the session zone
		{"America/New_York", "hour(TIMESTAMP '2024-07-01 12:00:00Z')", "8"},
		{"America/New_York", "day(TIMESTAMP '2024-07-01 02:00:00Z')", "30"},
		{"America/New_York", "hour(TIMESTAMP_NTZ '2024-07-01 12:00:00')", "12"},
		{"America/New_York", "hour(DATE '2024-03-10')", "0"},
		{"America/Santiago", "hour(DATE '2024-09-08')", "1"},
		{"America/New_York", "date_trunc('DAY', TIMESTAMP '2024-07-01 02:00:00Z')", "1719720000000000"},
		{"America/New_York", "date_trunc('HOUR', TIMESTAMP_NTZ '2024-07-01 02:30:00')", "1719813600000000"},
		{"America/New_York", "date_trunc('HOUR', TIMESTAMP '2024-11-03 06:45:00Z')", "1730613600000000"}, // keeps EST
		{"America/New_York", "date_trunc('HOUR', TIMESTAMP '2024-11-03 05:45:00Z')", "1730610000000000"}, // keeps EDT
		{"America/New_York", "date_trunc('WEEK', TIMESTAMP '2024-03-12 12:00:00Z')", "1710129600000000"},
		{"America/New_York", "date_trunc('SECOND', TIMESTAMP '2024-03-12 12:00:00.5Z')", "1710244800000000"},
		{"America/Santiago", "date_trunc('MONTH', TIMESTAMP '2024-09-20 12:00:00Z')", "1725163200000000"},
		{"America/Santiago", "date_trunc('DAY', TIMESTAMP '2024-09-08 12:00:00Z')", "1725768000000000"},
		{"Asia/Kolkata", "date_trunc('HOUR', TIMESTAMP '2024-01-01 10:45:00Z')", "1704105000000000"},
		{"Asia/Kolkata", "date_trunc('MINUTE', TIMESTAMP '2024-01-01 10:45:30Z')", "1704105900000000"},
		{"Australia/Lord_Howe", "date_trunc('HOUR', TIMESTAMP '2024-10-05 15:45:00Z')", "1728142200000000"}, // 02:00 is in the gap
		// comparisons convert timestamp_ntz to timestamp in the session zone
		{"America/New_York", "TIMESTAMP_NTZ '2024-03-10 02:30:00' = TIMESTAMP '2024-03-10 07:30:00Z'", "true"},
		{"America/New_York", "TIMESTAMP_NTZ '2024-03-10 02:50:00' > TIMESTAMP_NTZ '2024-03-10 03:10:00'", "false"},
		{"America/New_York", "CAST(TIMESTAMP_NTZ '2024-03-10 02:50:00' AS TIMESTAMP) > TIMESTAMP_NTZ '2024-03-10 03:10:00'", "true"},
		{"America/New_York", "DATE '2024-03-10' = TIMESTAMP '2024-03-10 05:00:00Z'", "true"},
	}
	for _, c := range cases {
		if got := evalConst(t, c.src, c.zone); got != c.want {
			t.Errorf("%s in %s: %s, want %s", c.src, c.zone, got, c.want)
		}
	}
}

func TestCurrentDateIsTheSessionZonesDate(t *testing.T) {
	for _, id := range []string{"Pacific/Kiritimati", "Etc/GMT+12", "UTC"} {
		loc := zone(t, id).Location()
		before := time.Now().In(loc)
		got := evalConst(t, "current_date", id)
		after := time.Now().In(loc)
		day := func(tm time.Time) string {
			return fmt.Sprint(time.Date(tm.Year(), tm.Month(), tm.Day(), 0, 0, 0, 0, time.UTC).Unix() / 86400)
		}
		if got != day(before) && got != day(after) {
			t.Errorf("%s: current_date %s, want %s", id, got, day(before))
		}
	}
}

func TestColumnsInTheSessionZone(t *testing.T) {
	ny := InZone(zone(t, "America/New_York"))
	sc := testSchema()
	// ts (timestamptz) at 07:29:59Z and 07:30Z on 2024-03-10; ntz at
	// 02:30 (in the gap) and 03:30.
	rows := []row{
		{"id": int64(1), "ts": int64(1710055799000000), "ntz": int64(1710037800000000)},
		{"id": int64(2), "ts": int64(1710055800000000), "ntz": int64(1710041400000000)},
		{"id": int64(3)},
	}
	for src, want := range map[string]string{
		"ts >= TIMESTAMP '2024-03-10 02:30:00'":                    "[false true <nil>]",
		"ts >= TIMESTAMP_NTZ '2024-03-10 03:30:00'":                "[false true <nil>]",
		"ntz = TIMESTAMP '2024-03-10 07:30:00Z'":                   "[true true <nil>]",
		"ntz = TIMESTAMP_NTZ '2024-03-10 03:30:00'":                "[false true <nil>]",
		"ntz IN (TIMESTAMP '2024-03-10 03:30:00')":                 "[true true <nil>]",
		"CAST(ts AS STRING) = '2024-03-10 03:30:00'":               "[false true <nil>]",
		"CAST(ts AS TIMESTAMP_NTZ) > ntz":                          "[true false <nil>]",
		"date_trunc('HOUR', ts) = TIMESTAMP '2024-03-10 03:00:00'": "[true true <nil>]",
	} {
		e, err := Compile(src, sc, ny)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, err := truth(t, e, sc, rows)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if fmt.Sprint(got) != want {
			t.Errorf("%s: %v, want %s", src, got, want)
		}
	}
}

func TestAssignmentsConvertInTheSessionZone(t *testing.T) {
	sc := testSchema()
	ny := InZone(zone(t, "America/New_York"))
	rows := []row{{"id": int64(1), "ts": int64(1730615400000000), "ntz": int64(1710037800000000)}}
	for _, c := range []struct {
		src, col string
		typ      iceberg.Type
		want     int64
	}{
		{"ntz", "ts", iceberg.PrimitiveTypes.TimestampTz, 1710055800000000}, // 02:30 in the gap -> 07:30Z
		{"ts", "ntz", iceberg.PrimitiveTypes.Timestamp, 1730597400000000},   // 06:30Z -> 01:30 wall
		{"DATE '2024-03-10'", "ts", iceberg.PrimitiveTypes.TimestampTz, 1710046800000000},
		{"TIMESTAMP '2024-11-03 01:30:00'", "ntz", iceberg.PrimitiveTypes.Timestamp, 1730597400000000},
	} {
		e, err := Compile(c.src, sc, ny)
		if err == nil {
			e, err = e.AssignTo(c.col, c.typ)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		rec := makeBatch(t, sc, rows)
		arr, err := e.Eval(context.Background(), rec, nil)
		rec.Release()
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got := int64(arr.(*array.Timestamp).Value(0)); got != c.want {
			t.Errorf("%s into %s: %d, want %d", c.src, c.col, got, c.want)
		}
		arr.Release()
	}
}

func TestCanonicalTextKeepsTheInstant(t *testing.T) {
	sc := testSchema()
	e, err := Compile("ts >= TIMESTAMP '2024-03-10 02:30:00'", sc, InZone(zone(t, "America/New_York")))
	if err != nil {
		t.Fatal(err)
	}
	if want := "TIMESTAMP '2024-03-10 07:30:00Z'"; !strings.Contains(e.String(), want) {
		t.Errorf("%s does not hold %s", e, want)
	}
	again, err := Compile(e.String(), sc, InZone(zone(t, "Asia/Tokyo")))
	if err != nil || again.String() != e.String() {
		t.Errorf("rebinding in another zone: %v %v", again, err)
	}
	n, _ := Parse("ts >= TIMESTAMP '2024-03-10 02:30:00'")
	if got := n.String(); !strings.Contains(got, "TIMESTAMP '2024-03-10 02:30:00'") {
		t.Errorf("an unbound literal stays a wall-clock time: %s", got)
	}
}

// In a zone with DST, timestamp_ntz <-> timestamp is neither injective nor
// order-preserving (02:50 in New York's gap becomes 03:50 EDT, later than
// 03:10), so pruning must not push such a comparison down to the column.
// Rows every 10 minutes around both 2024 transitions, random files of them,
// and predicates mixing the two types: whatever the pruning keeps must
// hold every row the predicate matches.
func TestPruningIsSoundAcrossDSTTransitions(t *testing.T) {
	sc := testSchema()
	spec := levelSpec()
	var walls, instants []int64
	for _, start := range []int64{1710036000, 1730595600} { // 2024-03-10 02:00 and 2024-11-03 01:00 wall
		for m := int64(-90); m <= 150; m += 10 {
			walls = append(walls, (start+m*60)*1_000_000)
		}
	}
	for _, at := range []int64{1710054000, 1730613600} { // the transitions, in UTC
		for m := int64(-90); m <= 90; m += 10 {
			instants = append(instants, (at+m*60)*1_000_000)
		}
	}
	r := rand.New(rand.NewSource(7))
	wallText := func(us int64) string { return time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05") }
	for _, id := range []string{"America/New_York", "Australia/Lord_Howe", "+05:30", "UTC"} {
		in := InZone(zone(t, id))
		pruned, judged := 0, 0
		for k := 0; k < 400; k++ {
			w, i := walls[r.Intn(len(walls))], instants[r.Intn(len(instants))]
			op := []string{"=", "<", "<=", ">", ">=", "!="}[r.Intn(6)]
			src := []string{
				fmt.Sprintf("ntz %s TIMESTAMP '%s'", op, wallText(w)),
				fmt.Sprintf("ntz %s TIMESTAMP '%sZ'", op, wallText(i)),
				fmt.Sprintf("ts %s TIMESTAMP_NTZ '%s'", op, wallText(w)),
				fmt.Sprintf("CAST(ts AS TIMESTAMP_NTZ) %s TIMESTAMP_NTZ '%s'", op, wallText(w)),
				fmt.Sprintf("ntz IN (TIMESTAMP '%s', TIMESTAMP '%sZ')", wallText(w), wallText(i)),
				fmt.Sprintf("dt %s TIMESTAMP '%sZ'", op, wallText(i)),
				fmt.Sprintf("date_trunc('HOUR', ts) %s TIMESTAMP '%s'", op, wallText(w)),
				fmt.Sprintf("year(ts) %s 2024", op),
			}[r.Intn(8)]
			e, err := Compile(src, sc, in)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			eval, err := iceberg.ExpressionEvaluator(sc, e.Iceberg(), true)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			rows := make([]row, 1+r.Intn(6))
			for j := range rows {
				rows[j] = row{"id": int64(j), "ntz": walls[r.Intn(len(walls))], "ts": instants[r.Intn(len(instants))],
					"dt": int32(19791 + r.Intn(3))}
				if r.Intn(2) == 0 {
					rows[j]["dt"] = int32(20029 + r.Intn(3))
				}
			}
			got, err := truth(t, e, sc, rows)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			df := fileOf(t, r, sc, spec, rows, nil, false)
			might, every := e.MightMatch(df, spec), e.MatchesAll(df, spec)
			judged++
			if !might {
				pruned++
			}
			for j, v := range got {
				ok, err := eval(toStruct(sc.Fields(), rows[j]))
				if err != nil {
					t.Fatal(err)
				}
				if v == true && (!ok || !might) {
					t.Fatalf("%s in %s: row %v matches, but Iceberg() %s gives %v and MightMatch %v", src, id, rows[j], e.Iceberg(), ok, might)
				}
				if v != true && every {
					t.Fatalf("%s in %s: MatchesAll, but row %v gives %v", src, id, rows[j], v)
				}
			}
		}
		t.Logf("%s: %d of %d files pruned", id, pruned, judged)
		if id == "UTC" && pruned == 0 {
			t.Errorf("UTC: nothing pruned")
		}
	}
}

// A merge source's nanosecond timestamps are floored to microseconds, as
// an append floors them, also before 1970.
func TestNanosecondColumnsAreFloored(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp})
	e, err := Compile("CAST(ts AS STRING)", sc)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Nanosecond})
	b.Append(-1)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "ts", Type: col.DataType(), Nullable: true}}, nil), []arrow.Array{col}, 1)
	col.Release()
	defer rec.Release()
	out, err := e.Eval(context.Background(), rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got := out.ValueStr(0); got != "1969-12-31 23:59:59.999999" {
		t.Errorf("got %s", got)
	}
}
