package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// zoneCases are core/tz's expected conversions, computed with Python's
// zoneinfo (core/tz/testdata/gen_cases.py).
type zoneCases struct {
	Walls []struct {
		Zone    string `json:"zone"`
		Wall    int64  `json:"wall"`
		Instant int64  `json:"instant"`
		Text    string `json:"text"`
	} `json:"walls"`
	Instants []struct {
		Zone    string `json:"zone"`
		Instant int64  `json:"instant"`
		Wall    int64  `json:"wall"`
	} `json:"instants"`
	Days []struct {
		Zone    string `json:"zone"`
		Day     int64  `json:"day"`
		Instant int64  `json:"instant"`
	} `json:"days"`
}

func loadZoneCases(t *testing.T) zoneCases {
	t.Helper()
	b, err := os.ReadFile("../tz/testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c zoneCases
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func zoneOpts(t *testing.T, id string) Options {
	t.Helper()
	z, err := tz.Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	o := strictOpts
	o.Zone = z
	return o
}

var units = []struct {
	unit arrow.TimeUnit
	per  int64 // units per microsecond, or (negative) microseconds per unit
}{{arrow.Second, -1_000_000}, {arrow.Millisecond, -1_000}, {arrow.Microsecond, 1}, {arrow.Nanosecond, 1_000}}

// inUnit expresses us microseconds in unit u; ns values get 789 ns more,
// which the write floors away. false when it does not fit exactly.
func inUnit(us int64, per int64) (int64, bool) {
	switch {
	case per < 0:
		if us%(-per) != 0 {
			return 0, false
		}
		return us / -per, true
	case per == 1:
		return us, true
	}
	if us > math.MaxInt64/per-1 || us < math.MinInt64/per+1 {
		return 0, false
	}
	return us*per + 789, true
}

// conformTimestamps writes vals (nil: a null) of Arrow type in into a column
// of type into and returns the column's values (nulls as nil).
func conformTimestamps(t *testing.T, mem memory.Allocator, opts Options, in arrow.DataType, into iceberg.Type, vals []*int64) ([]*int64, error) {
	t.Helper()
	b := array.NewTimestampBuilder(mem, in.(*arrow.TimestampType))
	b.AppendNull() // the conversion must keep the slice's offset
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(arrow.Timestamp(*v))
		}
	}
	full := b.NewArray()
	b.Release()
	arr := array.NewSlice(full, 1, int64(full.Len()))
	full.Release()
	out, err := conform(t, mem, iceberg.NewSchema(0, opt(1, "ts", into)), opts, []arrow.Field{field("ts", in)}, arr)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	col := out.Column(0).(*array.Timestamp)
	res := make([]*int64, col.Len())
	for i := range res {
		if col.IsValid(i) {
			v := int64(col.Value(i))
			res[i] = &v
		}
	}
	return res, nil
}

func TestConformNaiveTimestampsIntoTimestampTzUseTheSessionZone(t *testing.T) {
	mem := checkedMem(t)
	c := loadZoneCases(t)
	byZone := map[string][]int{}
	for i, w := range c.Walls {
		byZone[w.Zone] = append(byZone[w.Zone], i)
	}
	for zone, idx := range byZone {
		opts := zoneOpts(t, zone)
		for _, u := range units {
			var in, want []*int64
			for k, i := range idx {
				if k%5 == 2 {
					in, want = append(in, nil), append(want, nil)
				}
				v, ok := inUnit(c.Walls[i].Wall, u.per)
				if !ok {
					continue
				}
				w := c.Walls[i].Instant
				in, want = append(in, &v), append(want, &w)
			}
			got, err := conformTimestamps(t, mem, opts, &arrow.TimestampType{Unit: u.unit}, iceberg.PrimitiveTypes.TimestampTz, in)
			if err != nil {
				t.Fatalf("%s %s: %v", zone, u.unit, err)
			}
			for i := range want {
				if (got[i] == nil) != (want[i] == nil) || got[i] != nil && *got[i] != *want[i] {
					t.Errorf("%s, %s input %v: got %v, want %v", zone, u.unit, deref(in[i]), deref(got[i]), deref(want[i]))
				}
			}
		}
	}
}

func TestConformInstantsIntoTimestampShowTheSessionZonesWallTime(t *testing.T) {
	mem := checkedMem(t)
	c := loadZoneCases(t)
	byZone := map[string][]int{}
	for i, x := range c.Instants {
		byZone[x.Zone] = append(byZone[x.Zone], i)
	}
	for zone, idx := range byZone {
		opts := zoneOpts(t, zone)
		// The Arrow column's own zone is a label: Spark converts the
		// instant in the session time zone.
		for _, label := range []string{"UTC", "Asia/Tokyo"} {
			for _, u := range units {
				var in, want []*int64
				for k, i := range idx {
					if k%4 == 1 {
						in, want = append(in, nil), append(want, nil)
					}
					v, ok := inUnit(c.Instants[i].Instant, u.per)
					if !ok {
						continue
					}
					w := c.Instants[i].Wall
					in, want = append(in, &v), append(want, &w)
				}
				got, err := conformTimestamps(t, mem, opts, &arrow.TimestampType{Unit: u.unit, TimeZone: label},
					iceberg.PrimitiveTypes.Timestamp, in)
				if err != nil {
					t.Fatalf("%s %s: %v", zone, u.unit, err)
				}
				for i := range want {
					if (got[i] == nil) != (want[i] == nil) || got[i] != nil && *got[i] != *want[i] {
						t.Errorf("%s, %s[%s] input %v: got %v, want %v", zone, u.unit, label, deref(in[i]), deref(got[i]), deref(want[i]))
					}
				}
			}
		}
	}
}

func TestConformNanosecondColumnsKeepNanoseconds(t *testing.T) {
	mem := checkedMem(t)
	opts := zoneOpts(t, "America/New_York")
	// 2024-11-03 01:30:00.000000789 in the overlap: the earlier offset (EDT).
	wall := int64(1730597400)*1_000_000_000 + 789
	got, err := conformTimestamps(t, mem, opts, &arrow.TimestampType{Unit: arrow.Nanosecond}, iceberg.PrimitiveTypes.TimestampTzNs, []*int64{&wall})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1730611800)*1_000_000_000 + 789; *got[0] != want {
		t.Errorf("got %d, want %d", *got[0], want)
	}
	// A microsecond instant into timestamp_ns: the wall time, scaled up.
	inst := int64(1730615400) * 1_000_000 // 06:30Z, the second 01:30
	got, err = conformTimestamps(t, mem, opts, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, iceberg.PrimitiveTypes.TimestampNs, []*int64{&inst})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1730597400) * 1_000_000_000; *got[0] != want {
		t.Errorf("got %d, want %d", *got[0], want)
	}
}

func TestConformTimestampsInAUTCSessionAreRelabelled(t *testing.T) {
	mem := checkedMem(t)
	for _, opts := range []Options{strictOpts, zoneOpts(t, "UTC"), zoneOpts(t, "+00:00")} {
		v := int64(-1)
		got, err := conformTimestamps(t, mem, opts, &arrow.TimestampType{Unit: arrow.Microsecond}, iceberg.PrimitiveTypes.TimestampTz, []*int64{&v, nil})
		if err != nil || *got[0] != -1 || got[1] != nil {
			t.Errorf("%v: %v %v", opts.Zone, got, err)
		}
		got, err = conformTimestamps(t, mem, opts, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}, iceberg.PrimitiveTypes.Timestamp, []*int64{&v})
		if err != nil || *got[0] != -1 {
			t.Errorf("%v: %v %v", opts.Zone, got, err)
		}
	}
}

func TestConformZoneConversionOutOfRangeIsAnError(t *testing.T) {
	mem := checkedMem(t)
	v := int64(math.MaxInt64)
	_, err := conformTimestamps(t, mem, zoneOpts(t, "America/New_York"), &arrow.TimestampType{Unit: arrow.Microsecond}, iceberg.PrimitiveTypes.TimestampTz, []*int64{&v})
	wantValidation(t, err, "'ts'", "America/New_York", "out of range")
}

func TestConformConvertsTimestampsInsideNestedTypes(t *testing.T) {
	mem := checkedMem(t)
	opts := zoneOpts(t, "America/New_York")
	tbl := iceberg.NewSchema(0,
		opt(1, "s", &iceberg.StructType{FieldList: []iceberg.NestedField{opt(2, "ts", iceberg.PrimitiveTypes.TimestampTz)}}),
		opt(3, "l", &iceberg.ListType{ElementID: 4, Element: iceberg.PrimitiveTypes.Timestamp, ElementRequired: false}))
	naive := &arrow.TimestampType{Unit: arrow.Microsecond}
	zoned := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	st := arrow.StructOf(field("ts", naive))
	lt := arrow.ListOf(zoned)
	// 2024-03-10 02:30 wall (in the gap) and the instant 2024-11-03 06:30Z.
	s := fromJSON(t, mem, st, `[{"ts": "2024-03-10T02:30:00"}, null]`)
	l := fromJSON(t, mem, lt, `[["2024-11-03T06:30:00Z"], [null]]`)
	out, err := conform(t, mem, tbl, opts, []arrow.Field{field("s", st), field("l", lt)}, s, l)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	got := out.Column(0).(*array.Struct).Field(0).(*array.Timestamp).Value(0)
	if want := arrow.Timestamp(1710055800000000); got != want {
		t.Errorf("struct field: %d, want %d", got, want)
	}
	elems := out.Column(1).(*array.List).ListValues().(*array.Timestamp)
	if want := arrow.Timestamp(1730597400000000); elems.Value(0) != want || !elems.IsNull(1) {
		t.Errorf("list element: %d, want %d", elems.Value(0), want)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Dates and timestamps fit each other's columns as Spark's store
// assignment casts them: a date into timestamptz is the day's first
// instant in the session time zone (core/tz's zoneinfo table), into
// timestamp midnight; a timestamp into date is its wall-clock date.
func TestConformDatesAndTimestampsCastIntoEachOther(t *testing.T) {
	mem := checkedMem(t)
	c := loadZoneCases(t)
	for _, d := range c.Days {
		opts := zoneOpts(t, d.Zone)
		for _, in := range []arrow.Array{
			fromJSON(t, mem, arrow.FixedWidthTypes.Date32, fmt.Sprintf("[%d, null]", d.Day)),
			fromJSON(t, mem, arrow.FixedWidthTypes.Date64, fmt.Sprintf("[%d, null]", d.Day*86_400_000+3_600_000)),
		} {
			for _, into := range []iceberg.Type{iceberg.PrimitiveTypes.TimestampTz, iceberg.PrimitiveTypes.Timestamp, iceberg.PrimitiveTypes.TimestampTzNs} {
				in.Retain()
				out, err := conform(t, mem, iceberg.NewSchema(0, opt(1, "d", into)), opts, []arrow.Field{field("d", in.DataType())}, in)
				if err != nil {
					t.Fatalf("%s %s into %s: %v", d.Zone, in.DataType(), into, err)
				}
				got := int64(out.Column(0).(*array.Timestamp).Value(0))
				want := d.Instant
				if _, ntz := into.(iceberg.TimestampType); ntz {
					want = d.Day * 86_400_000_000
				}
				if _, ns := into.(iceberg.TimestampTzNsType); ns {
					want *= 1000
				}
				if got != want || !out.Column(0).IsNull(1) {
					t.Errorf("%s day %d (%s) into %s: %d, want %d", d.Zone, d.Day, in.DataType(), into, got, want)
				}
				out.Release()
			}
			in.Release()
		}
	}
	ny := zoneOpts(t, "America/New_York")
	for _, tc := range []struct {
		in   arrow.DataType
		v    int64
		want int32
	}{
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, 1719799200000000, 19904}, // 2024-07-01 02:00Z is June 30 in New York
		{&arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, 1719799200, 19904},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, 1710037800000000, 19792}, // 2024-03-10 02:30 wall
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, -1, -1},                   // floored, not truncated
	} {
		b := array.NewTimestampBuilder(mem, tc.in.(*arrow.TimestampType))
		b.Append(arrow.Timestamp(tc.v))
		b.AppendNull()
		in := b.NewArray()
		b.Release()
		out, err := conform(t, mem, iceberg.NewSchema(0, opt(1, "d", iceberg.PrimitiveTypes.Date)), ny, []arrow.Field{field("d", tc.in)}, in)
		if err != nil {
			t.Fatal(err)
		}
		if got := int32(out.Column(0).(*array.Date32).Value(0)); got != tc.want || !out.Column(0).IsNull(1) {
			t.Errorf("%s %d into date: %d, want %d", tc.in, tc.v, got, tc.want)
		}
		out.Release()
	}
}
