package schema

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

var strictOpts = Options{CheckNullability: true, CheckOrdering: true}

func checkedMem(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func fromJSON(t *testing.T, mem memory.Allocator, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(mem, dt, strings.NewReader(js))
	if err != nil {
		t.Fatalf("%s from %s: %v", dt, js, err)
	}
	return a
}

func field(name string, dt arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: dt, Nullable: true}
}

// conform builds a one-batch input from cols (released here) and conforms it.
func conform(t *testing.T, mem memory.Allocator, tbl *iceberg.Schema, opts Options, fields []arrow.Field, cols ...arrow.Array) (arrow.RecordBatch, error) {
	t.Helper()
	in := arrow.NewSchema(fields, nil)
	c, err := NewConformer(tbl, in, opts, mem)
	if err != nil {
		for _, a := range cols {
			a.Release()
		}
		return nil, err
	}
	rows := int64(0)
	if len(cols) > 0 {
		rows = int64(cols[0].Len())
	}
	rec := array.NewRecordBatch(in, cols, rows)
	for _, a := range cols {
		a.Release()
	}
	defer rec.Release()
	return c.Conform(rec)
}

func opt(id int, name string, typ iceberg.Type) iceberg.NestedField {
	return iceberg.NestedField{ID: id, Name: name, Type: typ}
}

func req(id int, name string, typ iceberg.Type) iceberg.NestedField {
	return iceberg.NestedField{ID: id, Name: name, Type: typ, Required: true}
}

func wantValidation(t *testing.T, err error, mentions ...string) {
	t.Helper()
	if !errors.Is(err, errs.ErrValidation) {
		t.Fatalf("error %v does not wrap ErrValidation", err)
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not mention %q", err, m)
		}
	}
}

func jsonOf(t *testing.T, a arrow.Array) string {
	t.Helper()
	b, err := a.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "\n", "")
}

func TestConformMatchesReorderedColumnsByName(t *testing.T) {
	mem := checkedMem(t)
	tbl := iceberg.NewSchema(0,
		opt(1, "id", iceberg.PrimitiveTypes.Int64),
		opt(2, "name", iceberg.PrimitiveTypes.String),
		opt(3, "score", iceberg.PrimitiveTypes.Float64))
	score := fromJSON(t, mem, arrow.PrimitiveTypes.Float32, `[0.1, null, -2.5]`)
	id := fromJSON(t, mem, arrow.PrimitiveTypes.Int32, `[7, 8, -9]`)
	name := fromJSON(t, mem, arrow.BinaryTypes.LargeString, `["a", "bé", null]`)
	wantScore := score.(*array.Float32).Float32Values()
	wantID := id.(*array.Int32).Int32Values()
	wantName := jsonOf(t, name)
	score.Retain()
	id.Retain()
	defer score.Release()
	defer id.Release()

	out, err := conform(t, mem, tbl, strictOpts,
		[]arrow.Field{field("score", score.DataType()), field("id", id.DataType()), field("name", name.DataType())},
		score, id, name)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	ws, err := table.SchemaToArrowSchema(tbl, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Schema().Equal(ws) {
		t.Fatalf("schema %s, want %s", out.Schema(), ws)
	}
	gotID := out.Column(0).(*array.Int64)
	for i, v := range wantID {
		if gotID.Value(i) != int64(v) {
			t.Errorf("id[%d] = %d, want %d", i, gotID.Value(i), v)
		}
	}
	gotScore := out.Column(2).(*array.Float64)
	for i, v := range wantScore {
		if score.IsValid(i) && gotScore.Value(i) != float64(v) || score.IsValid(i) != gotScore.IsValid(i) {
			t.Errorf("score[%d] = %v, want %v", i, gotScore.Value(i), v)
		}
	}
	if got := jsonOf(t, out.Column(1)); got != wantName {
		t.Errorf("name %s, want %s", got, wantName)
	}
}

func TestConformPassesMatchingColumnsWithoutCopy(t *testing.T) {
	mem := checkedMem(t)
	tbl := iceberg.NewSchema(0, opt(1, "v", iceberg.PrimitiveTypes.Int64), opt(2, "s", iceberg.PrimitiveTypes.String))
	v := fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[1, 2, 3]`)
	s := fromJSON(t, mem, arrow.BinaryTypes.String, `["x", "y", "z"]`)
	vbuf, sbuf := v.Data().Buffers()[1], s.Data().Buffers()[2]
	out, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("v", v.DataType()), field("s", s.DataType())}, v, s)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out.Column(0).Data().Buffers()[1] != vbuf || out.Column(1).Data().Buffers()[2] != sbuf {
		t.Error("matching columns were copied")
	}
}

func TestConformMissingAndExtraColumns(t *testing.T) {
	mem := checkedMem(t)
	tbl := iceberg.NewSchema(0,
		req(1, "k", iceberg.PrimitiveTypes.Int64),
		opt(2, "note", iceberg.PrimitiveTypes.String),
		opt(3, "s", &iceberg.StructType{FieldList: []iceberg.NestedField{
			opt(4, "a", iceberg.PrimitiveTypes.Int32), opt(5, "b", iceberg.PrimitiveTypes.Date)}}))
	k := arrow.Field{Name: "k", Type: arrow.PrimitiveTypes.Int64}
	sType := arrow.StructOf(field("a", arrow.PrimitiveTypes.Int32))

	out, err := conform(t, mem, tbl, strictOpts, []arrow.Field{k, field("s", sType)},
		fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[1, 2]`),
		fromJSON(t, mem, sType, `[{"a": 5}, null]`))
	if err != nil {
		t.Fatal(err)
	}
	if out.Column(1).NullN() != 2 || out.Column(1).DataType().ID() != arrow.STRING {
		t.Errorf("missing optional column: %s %s", out.Column(1).DataType(), jsonOf(t, out.Column(1)))
	}
	if got := jsonOf(t, out.Column(2)); got != `[{"a":5,"b":null},null]` {
		t.Errorf("missing optional struct field: %s", got)
	}
	out.Release()

	_, err = conform(t, mem, tbl, strictOpts, []arrow.Field{field("note", arrow.BinaryTypes.String)},
		fromJSON(t, mem, arrow.BinaryTypes.String, `["x"]`))
	wantValidation(t, err, "'k'", "missing")

	_, err = conform(t, mem, tbl, strictOpts, []arrow.Field{k, field("extra", arrow.PrimitiveTypes.Int32)},
		fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[1]`), fromJSON(t, mem, arrow.PrimitiveTypes.Int32, `[1]`))
	wantValidation(t, err, "'extra'")

	nested := arrow.StructOf(field("a", arrow.PrimitiveTypes.Int32), field("zz", arrow.PrimitiveTypes.Int32))
	_, err = conform(t, mem, tbl, strictOpts, []arrow.Field{k, field("s", nested)},
		fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[1]`), fromJSON(t, mem, nested, `[{"a":1,"zz":2}]`))
	wantValidation(t, err, "'s.zz'")
}

// TestConformRepresentationChangesKeepValues writes each input type into the
// column of its Iceberg type (or an allowed promotion) and checks that the
// values read back the same as the input's.
func TestConformRepresentationChangesKeepValues(t *testing.T) {
	mem := checkedMem(t)
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	cases := []struct {
		in   arrow.DataType
		js   string
		into iceberg.Type
	}{
		{arrow.PrimitiveTypes.Int32, `[1, null, -2147483648]`, iceberg.PrimitiveTypes.Int64},
		{arrow.PrimitiveTypes.Int8, `[-128, null, 127]`, iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Int16, `[-32768, 5]`, iceberg.PrimitiveTypes.Int64},
		{arrow.PrimitiveTypes.Uint8, `[255, 0]`, iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Uint16, `[65535, null]`, iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Uint32, `[4294967295, 1]`, iceberg.PrimitiveTypes.Int64},
		{arrow.PrimitiveTypes.Uint64, `[9223372036854775807, 0]`, iceberg.PrimitiveTypes.Int64},
		{arrow.FixedWidthTypes.Float16, `[1.5, null, -0.25]`, iceberg.PrimitiveTypes.Float32},
		{arrow.FixedWidthTypes.Float16, `[65504]`, iceberg.PrimitiveTypes.Float64},
		{arrow.PrimitiveTypes.Float32, `[1.5, null, -0.25]`, iceberg.PrimitiveTypes.Float64},
		{&arrow.Decimal128Type{Precision: 10, Scale: 2}, `["12345678.91", null, "-0.01"]`, iceberg.DecimalTypeOf(12, 2)},
		{&arrow.Decimal32Type{Precision: 5, Scale: 2}, `["-123.45", null]`, iceberg.DecimalTypeOf(9, 2)},
		{&arrow.Decimal64Type{Precision: 18, Scale: 4}, `["-12345678901234.5678"]`, iceberg.DecimalTypeOf(18, 4)},
		{&arrow.Decimal256Type{Precision: 38, Scale: 3}, `["-99999999999999999999999999999999999.999"]`, iceberg.DecimalTypeOf(38, 3)},
		{arrow.BinaryTypes.StringView, `["short", null, "a string longer than twelve bytes"]`, iceberg.PrimitiveTypes.String},
		{arrow.BinaryTypes.LargeString, `["x", null]`, iceberg.PrimitiveTypes.String},
		{arrow.BinaryTypes.BinaryView, `["AAEC", null, "YWJjZGVmZ2hpamtsbW5vcA=="]`, iceberg.PrimitiveTypes.Binary},
		{arrow.BinaryTypes.LargeBinary, `["AAEC"]`, iceberg.PrimitiveTypes.Binary},
		{dict, `["b", null, "a", "b"]`, iceberg.PrimitiveTypes.String},
		{&arrow.FixedSizeBinaryType{ByteWidth: 3}, `["AAEC", null]`, iceberg.FixedTypeOf(3)},
		{arrow.FixedWidthTypes.Time32s, `[0, 86399]`, iceberg.PrimitiveTypes.Time},
		{arrow.FixedWidthTypes.Boolean, `[true, null, false]`, iceberg.PrimitiveTypes.Bool},
		{arrow.ListViewOf(arrow.PrimitiveTypes.Int16), `[[1, 2], null, [], [3, null]]`, &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.Int32}},
		{arrow.LargeListViewOf(arrow.BinaryTypes.String), `[["a"], null, ["b", "c"]]`, &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.String}},
		{arrow.LargeListOf(arrow.PrimitiveTypes.Int64), `[[1, 2], null, [3]]`, &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.Int64}},
		{arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), `[[1, 2], null, [3, null]]`, &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.Float64}},
		{arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Uint8)), `[[[1], null], null, [[2, 3]]]`,
			&iceberg.ListType{ElementID: 2, Element: &iceberg.ListType{ElementID: 3, Element: iceberg.PrimitiveTypes.Int32}}},
		{arrow.StructOf(field("a", arrow.PrimitiveTypes.Int16), field("b", arrow.BinaryTypes.StringView)), `[{"a": 1, "b": "x"}, null, {"a": null, "b": "y"}]`,
			&iceberg.StructType{FieldList: []iceberg.NestedField{opt(2, "a", iceberg.PrimitiveTypes.Int32), opt(3, "b", iceberg.PrimitiveTypes.String)}}},
		{arrow.MapOf(arrow.BinaryTypes.LargeString, arrow.PrimitiveTypes.Int32), `[[{"key": "a", "value": 1}, {"key": "b", "value": null}], null, []]`,
			&iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String, ValueID: 3, ValueType: iceberg.PrimitiveTypes.Int64}},
	}
	for _, c := range cases {
		tbl := iceberg.NewSchema(0, opt(1, "c", c.into))
		a := fromJSON(t, mem, c.in, c.js)
		// Also a slice, so that offsets into buffers are honoured.
		for _, arr := range []arrow.Array{a, array.NewSlice(a, 1, int64(a.Len()))} {
			want := jsonOf(t, arr)
			out, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("c", arr.DataType())}, arr)
			if err != nil {
				t.Errorf("%s into %s: %v", c.in, c.into, err)
				continue
			}
			wantType, _ := table.TypeToArrowType(c.into, true, false)
			if !arrow.TypeEqual(out.Column(0).DataType(), wantType) {
				t.Errorf("%s into %s: type %s, want %s", c.in, c.into, out.Column(0).DataType(), wantType)
			}
			if got := jsonOf(t, out.Column(0)); got != want {
				t.Errorf("%s into %s: got %s, want %s", c.in, c.into, got, want)
			}
			out.Release()
		}
	}
}

func TestConformRejectsDisallowedTypeChanges(t *testing.T) {
	mem := checkedMem(t)
	cases := []struct {
		in   arrow.DataType
		into iceberg.Type
	}{
		{arrow.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.Int32},
		{arrow.BinaryTypes.String, iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Float64, iceberg.PrimitiveTypes.Float32},
		{arrow.PrimitiveTypes.Uint32, iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.String},
		{&arrow.Decimal128Type{Precision: 10, Scale: 2}, iceberg.DecimalTypeOf(12, 3)},
		{&arrow.Decimal128Type{Precision: 12, Scale: 2}, iceberg.DecimalTypeOf(10, 2)},
		{arrow.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.TimestampTz},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, iceberg.PrimitiveTypes.Int64},
		{extensions.NewUUIDType(), iceberg.FixedTypeOf(16)},
		{arrow.BinaryTypes.Binary, iceberg.PrimitiveTypes.String},
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), iceberg.PrimitiveTypes.Int32},
		{arrow.PrimitiveTypes.Int32, &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.Int32}},

		{arrow.FixedWidthTypes.Duration_s, iceberg.PrimitiveTypes.Int64},
	}
	for _, c := range cases {
		tbl := iceberg.NewSchema(0, opt(1, "col", c.into))
		_, err := NewConformer(tbl, arrow.NewSchema([]arrow.Field{field("col", c.in)}, nil), strictOpts, mem)
		if err == nil {
			t.Errorf("%s into %s: accepted", c.in, c.into)
			continue
		}
		wantValidation(t, err, "'col'", c.in.String(), c.into.String())
	}
	// A nested mismatch names the nested path and the types found there.
	tbl := iceberg.NewSchema(0, opt(1, "col", &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.Int32}))
	_, err := NewConformer(tbl, arrow.NewSchema([]arrow.Field{field("col", arrow.ListOf(arrow.PrimitiveTypes.Int64))}, nil), strictOpts, mem)
	wantValidation(t, err, "'col.element'", "int64", "int")
}

func TestConformUint64OverflowIsAnError(t *testing.T) {
	mem := checkedMem(t)
	tbl := iceberg.NewSchema(0, opt(1, "u", iceberg.PrimitiveTypes.Int64))
	_, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("u", arrow.PrimitiveTypes.Uint64)},
		fromJSON(t, mem, arrow.PrimitiveTypes.Uint64, `[1, 9223372036854775808]`))
	wantValidation(t, err, "'u'")
}

// pandasTimestamps returns random ns values around the epoch, negative ones
// included, plus edge cases around microsecond boundaries.
func pandasTimestamps() []int64 {
	r := rand.New(rand.NewPCG(1, 2))
	vals := []int64{-1, -999, -1000, -1001, 0, 1, 999, 1000, 1001, math.MinInt64, math.MaxInt64}
	for range 200 {
		vals = append(vals, r.Int64N(4e18)-2e18)
	}
	return vals
}

func TestConformFloorsNanosecondTimestampsToMicroseconds(t *testing.T) {
	mem := checkedMem(t)
	vals := pandasTimestamps()
	for _, tz := range []string{"", "+00:00"} {
		into := iceberg.Type(iceberg.PrimitiveTypes.Timestamp)
		if tz != "" {
			into = iceberg.PrimitiveTypes.TimestampTz
		}
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: tz})
		for _, v := range vals {
			b.Append(arrow.Timestamp(v))
		}
		b.AppendNull()
		in := b.NewArray()
		b.Release()
		out, err := conform(t, mem, iceberg.NewSchema(0, opt(1, "ts", into)), strictOpts,
			[]arrow.Field{field("ts", in.DataType())}, in)
		if err != nil {
			t.Fatal(err)
		}
		got := out.Column(0).(*array.Timestamp)
		if gt := got.DataType().(*arrow.TimestampType); gt.Unit != arrow.Microsecond || (tz != "" && gt.TimeZone != "UTC") {
			t.Errorf("type %s", gt)
		}
		for i, v := range vals {
			// time.Time keeps nanoseconds in [0, 1e9), so UnixMicro floors.
			if want := time.Unix(0, v).UnixMicro(); int64(got.Value(i)) != want {
				t.Errorf("tz %q: %d ns -> %d us, want %d", tz, v, got.Value(i), want)
			}
		}
		if !got.IsNull(len(vals)) {
			t.Error("null lost")
		}
		out.Release()
	}
}

func TestConformScalesCoarseTimestampsAndTimes(t *testing.T) {
	mem := checkedMem(t)
	secs := []int64{-86401, -1, 0, 1, 1_700_000_000}
	cases := []struct {
		unit arrow.TimeUnit
		into iceberg.Type
		want func(int64) int64
	}{
		{arrow.Second, iceberg.PrimitiveTypes.Timestamp, func(v int64) int64 { return time.Unix(v, 0).UnixMicro() }},
		{arrow.Millisecond, iceberg.PrimitiveTypes.Timestamp, func(v int64) int64 { return time.UnixMilli(v).UnixMicro() }},
		{arrow.Microsecond, iceberg.PrimitiveTypes.TimestampNs, func(v int64) int64 { return time.UnixMicro(v).UnixNano() }},
		{arrow.Second, iceberg.PrimitiveTypes.TimestampNs, func(v int64) int64 { return time.Unix(v, 0).UnixNano() }},
	}
	for _, c := range cases {
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: c.unit})
		for _, v := range secs {
			b.Append(arrow.Timestamp(v))
		}
		in := b.NewArray()
		b.Release()
		out, err := conform(t, mem, iceberg.NewSchema(0, opt(1, "ts", c.into)), strictOpts, []arrow.Field{field("ts", in.DataType())}, in)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range secs {
			if got := int64(out.Column(0).(*array.Timestamp).Value(i)); got != c.want(v) {
				t.Errorf("%s into %s: %d -> %d, want %d", c.unit, c.into, v, got, c.want(v))
			}
		}
		out.Release()
	}
	// Seconds far from the epoch do not fit nanoseconds.
	_, err := conform(t, mem, iceberg.NewSchema(0, opt(1, "ts", iceberg.PrimitiveTypes.TimestampNs)), strictOpts,
		[]arrow.Field{field("ts", &arrow.TimestampType{Unit: arrow.Second})},
		fromJSON(t, mem, &arrow.TimestampType{Unit: arrow.Second}, `[253370764800]`))
	wantValidation(t, err, "'ts'", "out of range")

	// date64 (ms) floors to days; time64 ns floors to us.
	ms := []int64{-86_400_001, -1, 0, 86_399_999, 86_400_000, 1_700_000_000_123}
	db := array.NewDate64Builder(mem)
	tb := array.NewTime64Builder(mem, arrow.FixedWidthTypes.Time64ns.(*arrow.Time64Type))
	for _, v := range ms {
		db.Append(arrow.Date64(v))
		tb.Append(arrow.Time64(max(v, 0) * 1000_001 % 86_400_000_000_000))
	}
	dates, times := db.NewArray(), tb.NewArray()
	db.Release()
	tb.Release()
	times.Retain()
	defer times.Release()
	out, err := conform(t, mem, iceberg.NewSchema(0, opt(1, "d", iceberg.PrimitiveTypes.Date), opt(2, "t", iceberg.PrimitiveTypes.Time)),
		strictOpts, []arrow.Field{field("d", dates.DataType()), field("t", times.DataType())}, dates, times)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	for i, v := range ms {
		d := time.UnixMilli(v).UTC()
		wantDays := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC).Unix() / 86400
		if got := out.Column(0).(*array.Date32).Value(i); int64(got) != wantDays {
			t.Errorf("date64 %d -> %d, want %d", v, got, wantDays)
		}
		ns := int64(times.(*array.Time64).Value(i))
		if got := out.Column(1).(*array.Time64).Value(i); int64(got) != time.Duration(ns).Truncate(time.Microsecond).Microseconds() {
			t.Errorf("time64 ns %d -> %d", ns, got)
		}
	}
}

func TestConformDecodesDictionaryStrings(t *testing.T) {
	mem := checkedMem(t)
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.LargeString}
	// pandas categoricals arrive as int8 indices into a dictionary; the
	// dictionary here is large_string so decoding is followed by a cast.
	words := fromJSON(t, mem, arrow.BinaryTypes.LargeString, `["red", "green", "blue", "unused"]`)
	idx := fromJSON(t, mem, arrow.PrimitiveTypes.Int8, `[0, 1, 0, null, 2, 1]`)
	in := array.NewDictionaryArray(dt, idx, words)
	words.Release()
	idx.Release()
	// Independent decoding: look each index up in the dictionary.
	var want []*string
	dict := in.Dictionary().(*array.LargeString)
	for i := range in.Len() {
		if in.IsNull(i) {
			want = append(want, nil)
			continue
		}
		s := dict.Value(in.GetValueIndex(i))
		want = append(want, &s)
	}
	out, err := conform(t, mem, iceberg.NewSchema(0, opt(1, "color", iceberg.PrimitiveTypes.String)), strictOpts,
		[]arrow.Field{field("color", dt)}, in)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	got := out.Column(0).(*array.String)
	for i, w := range want {
		if (w == nil) != got.IsNull(i) || (w != nil && got.Value(i) != *w) {
			t.Errorf("row %d: got %q (null %v), want %v", i, got.Value(i), got.IsNull(i), w)
		}
	}
}

func TestConformNullTypedColumn(t *testing.T) {
	mem := checkedMem(t)
	tbl := iceberg.NewSchema(0, opt(1, "s", iceberg.PrimitiveTypes.String), opt(2, "l", &iceberg.ListType{ElementID: 3, Element: iceberg.PrimitiveTypes.Int32}))
	out, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("s", arrow.Null), field("l", arrow.Null)},
		array.NewNull(4), array.NewNull(4))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if c := out.Column(i); c.NullN() != 4 || !arrow.TypeEqual(c.DataType(), out.Schema().Field(i).Type) {
			t.Errorf("column %d: %s with %d nulls", i, c.DataType(), c.NullN())
		}
	}
	out.Release()

	reqTbl := iceberg.NewSchema(0, req(1, "s", iceberg.PrimitiveTypes.String))
	_, err = conform(t, mem, reqTbl, strictOpts, []arrow.Field{field("s", arrow.Null)}, array.NewNull(1))
	wantValidation(t, err, "'s'", "nullable")
	_, err = conform(t, mem, reqTbl, Options{}, []arrow.Field{field("s", arrow.Null)}, array.NewNull(1))
	wantValidation(t, err, "'s'", "null")
}

func TestConformUUID(t *testing.T) {
	mem := checkedMem(t)
	tbl := iceberg.NewSchema(0, opt(1, "u", iceberg.PrimitiveTypes.UUID))
	raw := `["AAECAwQFBgcICQoLDA0ODw==", null]`
	for _, dt := range []arrow.DataType{extensions.NewUUIDType(), &arrow.FixedSizeBinaryType{ByteWidth: 16}} {
		var in arrow.Array
		if ext, ok := dt.(arrow.ExtensionType); ok {
			st := fromJSON(t, mem, ext.StorageType(), raw)
			in = array.NewExtensionArrayWithStorage(ext, st)
			st.Release()
		} else {
			in = fromJSON(t, mem, dt, raw)
		}
		want := in.Data().Buffers()[1].Bytes()[:16]
		wantCopy := bytes.Clone(want)
		out, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("u", dt)}, in)
		if err != nil {
			t.Fatal(err)
		}
		col := out.Column(0)
		if _, ok := col.DataType().(*extensions.UUIDType); !ok {
			t.Errorf("%s: type %s", dt, col.DataType())
		}
		got := col.(array.ExtensionArray).Storage().(*array.FixedSizeBinary)
		if !bytes.Equal(got.Value(0), wantCopy) || !got.IsNull(1) {
			t.Errorf("%s: got %x", dt, got.Value(0))
		}
		out.Release()
	}
}

// listViewOutOfOrder builds the list view [[3, 4], [1], null] whose views are
// not in child order.
func listViewOutOfOrder(mem memory.Allocator) arrow.Array {
	child := array.NewInt32Builder(mem)
	child.AppendValues([]int32{1, 2, 3, 4}, nil)
	ca := child.NewArray()
	child.Release()
	defer ca.Release()
	offs := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{2, 0, 1}))
	sizes := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{2, 1, 3}))
	valid := memory.NewBufferBytes([]byte{0b011})
	d := array.NewData(arrow.ListViewOf(arrow.PrimitiveTypes.Int32), 3, []*memory.Buffer{valid, offs, sizes}, []arrow.ArrayData{ca.Data()}, 1, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func TestConformFlattensOutOfOrderListViews(t *testing.T) {
	mem := checkedMem(t)
	in := listViewOutOfOrder(mem)
	out, err := conform(t, mem, iceberg.NewSchema(0, opt(1, "l", &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.Int64})),
		strictOpts, []arrow.Field{field("l", in.DataType())}, in)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got := jsonOf(t, out.Column(0)); got != `[[3,4],[1],null]` {
		t.Errorf("got %s", got)
	}
}

func addressTable(zipRequired bool) *iceberg.Schema {
	zip := opt(3, "zip", iceberg.PrimitiveTypes.String)
	zip.Required = zipRequired
	return iceberg.NewSchema(0,
		opt(1, "address", &iceberg.StructType{FieldList: []iceberg.NestedField{
			opt(2, "street", iceberg.PrimitiveTypes.String), zip, opt(4, "city", iceberg.PrimitiveTypes.String)}}))
}

func TestConformCheckOrderingInsideStructs(t *testing.T) {
	mem := checkedMem(t)
	reordered := arrow.StructOf(field("city", arrow.BinaryTypes.String), field("street", arrow.BinaryTypes.String), field("zip", arrow.BinaryTypes.String))
	js := `[{"city": "Paris", "street": "rue A", "zip": "75001"}, null]`
	_, err := conform(t, mem, addressTable(false), strictOpts, []arrow.Field{field("address", reordered)}, fromJSON(t, mem, reordered, js))
	wantValidation(t, err, "'address.", "order")

	out, err := conform(t, mem, addressTable(false), Options{CheckNullability: true}, []arrow.Field{field("address", reordered)},
		fromJSON(t, mem, reordered, js))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	sa := out.Column(0).(*array.Struct)
	for j, want := range map[int]string{0: `["rue A",null]`, 1: `["75001",null]`, 2: `["Paris",null]`} {
		if got := jsonOf(t, sa.Field(j)); got != want || sa.IsValid(1) {
			t.Errorf("field %d (%s): got %s, want %s", j, sa.DataType().(*arrow.StructType).Field(j).Name, got, want)
		}
	}
	// A subset in the table's order is fine with check-ordering on.
	subset := arrow.StructOf(field("street", arrow.BinaryTypes.String), field("city", arrow.BinaryTypes.String))
	out2, err := conform(t, mem, addressTable(false), strictOpts, []arrow.Field{field("address", subset)},
		fromJSON(t, mem, subset, `[{"street": "s", "city": "c"}]`))
	if err != nil {
		t.Fatal(err)
	}
	out2.Release()
}

func TestConformNullabilityOfNestedFields(t *testing.T) {
	mem := checkedMem(t)
	listTbl := iceberg.NewSchema(0, opt(1, "tags", &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.String, ElementRequired: true}))
	mapTbl := iceberg.NewSchema(0, opt(1, "attrs", &iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String,
		ValueID: 3, ValueType: iceberg.PrimitiveTypes.Int64, ValueRequired: true}))
	nullableList := arrow.ListOf(arrow.BinaryTypes.String)
	nullableMap := arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64)

	_, err := conform(t, mem, listTbl, strictOpts, []arrow.Field{field("tags", nullableList)}, fromJSON(t, mem, nullableList, `[["a"]]`))
	wantValidation(t, err, "'tags.element'")
	_, err = conform(t, mem, mapTbl, strictOpts, []arrow.Field{field("attrs", nullableMap)},
		fromJSON(t, mem, nullableMap, `[[{"key": "a", "value": 1}]]`))
	wantValidation(t, err, "'attrs.value'")

	// check-nullability off: accepted unless a null really reaches a required field.
	off := Options{CheckOrdering: true}
	out, err := conform(t, mem, listTbl, off, []arrow.Field{field("tags", nullableList)}, fromJSON(t, mem, nullableList, `[["a"], null, []]`))
	if err != nil {
		t.Fatal(err)
	}
	out.Release()
	_, err = conform(t, mem, listTbl, off, []arrow.Field{field("tags", nullableList)}, fromJSON(t, mem, nullableList, `[["a", null]]`))
	wantValidation(t, err, "'tags.element'", "null")
	_, err = conform(t, mem, mapTbl, off, []arrow.Field{field("attrs", nullableMap)},
		fromJSON(t, mem, nullableMap, `[[{"key": "a", "value": null}]]`))
	wantValidation(t, err, "'attrs.value'", "null")

	// A non-nullable input element into a required element is accepted with the check on.
	strictList := arrow.ListOfNonNullable(arrow.BinaryTypes.String)
	out, err = conform(t, mem, listTbl, strictOpts, []arrow.Field{field("tags", strictList)}, fromJSON(t, mem, strictList, `[["a", "b"], null]`))
	if err != nil {
		t.Fatal(err)
	}
	out.Release()

	// A required struct field: a null zip matters only where the address is present.
	st := arrow.StructOf(field("street", arrow.BinaryTypes.String), field("zip", arrow.BinaryTypes.String))
	_, err = conform(t, mem, addressTable(true), strictOpts, []arrow.Field{field("address", st)}, fromJSON(t, mem, st, `[{"zip": "1"}]`))
	wantValidation(t, err, "'address.zip'", "nullable")
	_, err = conform(t, mem, addressTable(true), off, []arrow.Field{field("address", st)},
		fromJSON(t, mem, st, `[{"street": "s", "zip": "1"}, {"street": "s", "zip": null}]`))
	wantValidation(t, err, "'address.zip'", "null")

	b := array.NewStructBuilder(mem, st)
	b.Append(true)
	b.FieldBuilder(0).(*array.StringBuilder).Append("s")
	b.FieldBuilder(1).(*array.StringBuilder).Append("1")
	b.AppendNull() // a null address whose zip slot holds null too
	hidden := b.NewArray()
	b.Release()
	out, err = conform(t, mem, addressTable(true), off, []arrow.Field{field("address", st)}, hidden)
	if err != nil {
		t.Fatalf("null hidden by a null struct: %v", err)
	}
	out.Release()

	// A missing required nested field.
	noZip := arrow.StructOf(field("street", arrow.BinaryTypes.String))
	_, err = NewConformer(addressTable(true), arrow.NewSchema([]arrow.Field{field("address", noZip)}, nil), strictOpts, mem)
	wantValidation(t, err, "'address.zip'", "missing")
}

func TestConformRejectsBatchOfAnotherSchema(t *testing.T) {
	mem := checkedMem(t)
	tbl := iceberg.NewSchema(0, opt(1, "a", iceberg.PrimitiveTypes.Int64))
	c, err := NewConformer(tbl, arrow.NewSchema([]arrow.Field{field("a", arrow.PrimitiveTypes.Int64)}, nil), strictOpts, mem)
	if err != nil {
		t.Fatal(err)
	}
	other := arrow.NewSchema([]arrow.Field{field("a", arrow.PrimitiveTypes.Int32)}, nil)
	col := fromJSON(t, mem, arrow.PrimitiveTypes.Int32, `[1]`)
	defer col.Release()
	rec := array.NewRecordBatch(other, []arrow.Array{col}, 1)
	defer rec.Release()
	_, err = c.Conform(rec)
	wantValidation(t, err)
}

func TestConformSlicedStructWithMissingFieldAndEmptyLists(t *testing.T) {
	mem := checkedMem(t)
	tbl := iceberg.NewSchema(0,
		opt(1, "s", &iceberg.StructType{FieldList: []iceberg.NestedField{
			opt(2, "a", iceberg.PrimitiveTypes.Int64), opt(3, "b", iceberg.PrimitiveTypes.String)}}),
		opt(4, "l", &iceberg.ListType{ElementID: 5, Element: iceberg.PrimitiveTypes.Int32}),
		opt(6, "m", &iceberg.MapType{KeyID: 7, KeyType: iceberg.PrimitiveTypes.String, ValueID: 8, ValueType: iceberg.PrimitiveTypes.Int32}))
	st := arrow.StructOf(field("a", arrow.PrimitiveTypes.Int32))
	full := fromJSON(t, mem, st, `[{"a": 1}, {"a": 2}, null, {"a": 4}]`)
	sliced := array.NewSlice(full, 1, 4)
	full.Release()
	// Producers may leave out the offsets buffer of empty lists and maps.
	lt, mt := arrow.ListOf(arrow.PrimitiveTypes.Int32), arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)
	empty := func(dt arrow.DataType) arrow.Array {
		c := array.MakeArrayOfNull(mem, dt.(arrow.ListLikeType).Elem(), 0)
		defer c.Release()
		d := array.NewData(dt, 0, []*memory.Buffer{nil, nil}, []arrow.ArrayData{c.Data()}, 0, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	tblEmpty := iceberg.NewSchema(0, tbl.Field(1), tbl.Field(2))
	out, err := conform(t, mem, tblEmpty, strictOpts, []arrow.Field{field("l", lt), field("m", mt)}, empty(lt), empty(mt))
	if err != nil {
		t.Fatal(err)
	}
	if out.NumRows() != 0 {
		t.Errorf("rows %d", out.NumRows())
	}
	out.Release()

	out, err = conform(t, mem, tbl, strictOpts, []arrow.Field{field("s", st)}, sliced)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got := jsonOf(t, out.Column(0)); got != `[{"a":2,"b":null},null,{"a":4,"b":null}]` {
		t.Errorf("got %s", got)
	}
}

// String and binary views become offset arrays equal to arrow-go's cast,
// over many data blocks, nulls, inline and long values, slices, and both
// offset widths.
func TestViewsConvertLikeTheCast(t *testing.T) {
	mem := checkedMem(t)
	p := &planner{mem: mem, ctx: exec.WithAllocator(context.Background(), mem)}
	rng := rand.New(rand.NewPCG(3, 5))
	sb := array.NewStringViewBuilder(mem)
	bb := array.NewBinaryViewBuilder(mem)
	for i := range 20000 {
		if rng.IntN(7) == 0 {
			sb.AppendNull()
			bb.AppendNull()
			continue
		}
		v := strings.Repeat(string(rune('a'+i%26)), rng.IntN(40)) // inline up to 12 bytes, longer ones in blocks
		sb.Append(v)
		bb.Append([]byte(v))
	}
	full := array.NewStringViewBuilder(mem) // no nulls at all: the path without a validity bitmap
	for i := range 20000 {
		full.Append(strings.Repeat("z", i%30))
	}
	views := []arrow.Array{sb.NewArray(), bb.NewArray(), full.NewArray()}
	for _, in := range views {
		defer in.Release()
		if n := len(in.Data().Buffers()) - 2; n < 2 {
			t.Fatalf("%s: %d data blocks, want several", in.DataType(), n)
		}
		outs := []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString}
		if in.DataType().ID() == arrow.BINARY_VIEW {
			outs = []arrow.DataType{arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary}
		}
		for _, out := range outs {
			conv, err := p.leaf("c", in.DataType(), out)
			if err != nil {
				t.Fatal(err)
			}
			n := int64(in.Len())
			for _, arr := range []arrow.Array{in, array.NewSlice(in, 0, 1), array.NewSlice(in, n/25, n*3/4)} {
				got, err := conv(arr)
				if err != nil {
					t.Fatal(err)
				}
				want, err := compute.CastArray(p.ctx, arr, compute.SafeCastOptions(out))
				if err != nil {
					t.Fatal(err)
				}
				if !arrow.TypeEqual(got.DataType(), out) || !array.Equal(got, want) {
					t.Errorf("%s -> %s (len %d, offset %d): differs from the cast", in.DataType(), out, arr.Len(), arr.Data().Offset())
				}
				if err := got.(interface{ ValidateFull() error }).ValidateFull(); err != nil {
					t.Errorf("%s -> %s: %v", in.DataType(), out, err)
				}
				got.Release()
				want.Release()
				if arr != in {
					arr.Release()
				}
			}
		}
	}
}

// BenchmarkViewsToOffsets converts a 128k-row string view column like
// lineitem's l_comment (10-43 bytes) with viewToOffsets and, for the
// comparison, with arrow-go's cast.
func BenchmarkViewsToOffsets(b *testing.B) {
	mem := memory.NewGoAllocator()
	p := &planner{mem: mem, ctx: exec.WithAllocator(context.Background(), mem)}
	rng := rand.New(rand.NewPCG(1, 2))
	sb := array.NewStringViewBuilder(mem)
	for range 128 << 10 {
		sb.Append(strings.Repeat("x", 10+rng.IntN(34)))
	}
	in := sb.NewArray()
	defer in.Release()
	conv, err := p.leaf("c", in.DataType(), arrow.BinaryTypes.String)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("viewToOffsets", func(b *testing.B) {
		for range b.N {
			out, err := conv(in)
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	})
	b.Run("arrow-go-cast", func(b *testing.B) {
		for range b.N {
			out, err := compute.CastArray(p.ctx, in, compute.SafeCastOptions(arrow.BinaryTypes.String))
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	})
}

// A view that points past its data buffers, or has a negative length, is
// a validation error naming the column, not a crash.
func TestMalformedViewsAreRejected(t *testing.T) {
	mem := checkedMem(t)
	p := &planner{mem: mem, ctx: exec.WithAllocator(context.Background(), mem)}
	conv, err := p.leaf("c", arrow.BinaryTypes.StringView, arrow.BinaryTypes.String)
	if err != nil {
		t.Fatal(err)
	}
	block := memory.NewBufferBytes([]byte("a value of twenty bytes.."))
	for name, h := range map[string]view{
		"buffer index":    {n: 20, buf: 1},
		"negative index":  {n: 20, buf: -1},
		"offset":          {n: 20, buf: 0, off: 10},
		"negative offset": {n: 20, buf: 0, off: -4},
		"negative length": {n: -3},
	} {
		raw := unsafe.Slice((*byte)(unsafe.Pointer(&h)), viewBytes)
		d := array.NewData(arrow.BinaryTypes.StringView, 1,
			[]*memory.Buffer{nil, memory.NewBufferBytes(bytes.Clone(raw)), block}, nil, 0, 0)
		arr := array.MakeFromData(d)
		out, err := conv(arr)
		if !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "column 'c'") {
			t.Errorf("%s: got %v, %v; want a validation error for column 'c'", name, out, err)
		}
		arr.Release()
		d.Release()
	}
}

// A null list or map slot may span elements in Arrow; the Parquet writer
// refuses such lists, so the conformer leaves those elements out.
func TestConformEmptiesNullListSlots(t *testing.T) {
	mem := checkedMem(t)
	for _, c := range []struct {
		in   arrow.DataType
		js   string
		into iceberg.Type
	}{
		{arrow.ListOf(arrow.BinaryTypes.StringView), `[["a"], ["a string longer than twelve bytes", "b"], ["c"]]`,
			&iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.String}},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), `[[{"key": "a", "value": 1}], [{"key": "b", "value": 2}], []]`,
			&iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String, ValueID: 3, ValueType: iceberg.PrimitiveTypes.Int64}},
	} {
		a := fromJSON(t, mem, c.in, c.js)
		d := a.Data()
		// Slot 1 becomes null but keeps its elements.
		nd := array.NewData(d.DataType(), d.Len(), []*memory.Buffer{memory.NewBufferBytes([]byte{0b101}), d.Buffers()[1]}, d.Children(), 1, 0)
		na := array.MakeFromData(nd)
		nd.Release()
		a.Release()
		want := jsonOf(t, na)
		tbl := iceberg.NewSchema(0, opt(1, "c", c.into))
		out, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("c", na.DataType())}, na)
		na.Release()
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		col := out.Column(0).(array.ListLike)
		if beg, end := col.ValueOffsets(1); col.IsValid(1) || beg != end {
			t.Errorf("%s: slot 1 valid %v, elements %d..%d", c.in, col.IsValid(1), beg, end)
		}
		if got := jsonOf(t, out.Column(0)); got != want {
			t.Errorf("%s: got %s, want %s", c.in, got, want)
		}
		out.Release()
	}
}

// A decimal stored as FIXED_LEN_BYTE_ARRAY that is beyond its precision is
// refused while conforming (arrow-go's nested encoder would write it).
func TestConformRefusesWideDecimalsBeyondPrecision(t *testing.T) {
	mem := checkedMem(t)
	dt := &arrow.Decimal128Type{Precision: 30, Scale: 2}
	tbl := iceberg.NewSchema(0, opt(1, "c", iceberg.DecimalTypeOf(30, 2)))
	ok := fromJSON(t, mem, dt, `["99999999999999999999999999.99", null]`)
	defer ok.Release()
	out, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("c", dt)}, ok)
	if err != nil {
		t.Fatal(err)
	}
	out.Release()
	b := array.NewDecimal128Builder(mem, dt)
	b.Append(decimal128.GetScaleMultiplier(31))
	bad := b.NewArray()
	b.Release()
	defer bad.Release()
	if _, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("c", dt)}, bad); !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "does not fit") {
		t.Fatalf("error %v", err)
	}
}

// A list below a null struct slot is null there as well, its elements left
// out: the Parquet writer refused the list's elements under a null parent
// (found by FuzzWriteStream).
func TestConformNullStructSlotsHoldNoListElements(t *testing.T) {
	mem := checkedMem(t)
	lt := arrow.ListOf(arrow.PrimitiveTypes.Int32)
	st := arrow.StructOf(field("l", lt))
	a := fromJSON(t, mem, st, `[{"l": [1]}, {"l": [2, 3]}, {"l": [4]}]`)
	d := a.Data()
	nd := array.NewData(st, 3, []*memory.Buffer{memory.NewBufferBytes([]byte{0b101})}, d.Children(), 1, 0)
	na := array.MakeFromData(nd)
	nd.Release()
	a.Release()
	defer na.Release()
	tbl := iceberg.NewSchema(0, opt(1, "s", &iceberg.StructType{FieldList: []iceberg.NestedField{
		opt(2, "l", &iceberg.ListType{ElementID: 3, Element: iceberg.PrimitiveTypes.Int32})}}))
	out, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("s", st)}, na)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	l := out.Column(0).(*array.Struct).Field(0).(*array.List)
	if beg, end := l.ValueOffsets(1); l.IsValid(1) || beg != end {
		t.Fatalf("slot 1 of the list: valid %v, elements %d..%d", l.IsValid(1), beg, end)
	}
	if got := jsonOf(t, out.Column(0)); got != `[{"l":[1]},null,{"l":[4]}]` {
		t.Fatalf("got %s", got)
	}
}

// TestConformRefusesWideDecimalBeyondPrecision: a decimal stored as
// FIXED_LEN_BYTE_ARRAY (precision over 18) whose value has more digits than
// the column allows is a validation error naming the column; arrow-go's
// nested encoder would write it as it is. A null slot's value is not read.
func TestConformRefusesWideDecimalBeyondPrecision(t *testing.T) {
	mem := checkedMem(t)
	dt := &arrow.Decimal128Type{Precision: 30, Scale: 2}
	tbl := iceberg.NewSchema(0, opt(1, "c", iceberg.DecimalTypeOf(30, 2)))
	fits := decimal128.GetScaleMultiplier(30).Sub(decimal128.FromI64(1)) // 30 nines
	tooBig := decimal128.GetScaleMultiplier(30)
	build := func(vals []decimal128.Num, valid []bool) arrow.Array {
		b := array.NewDecimal128Builder(mem, dt)
		defer b.Release()
		b.AppendValues(vals, valid)
		a := b.NewArray()
		// The builder zeroes null slots; put the values back.
		copy(arrow.Decimal128Traits.CastFromBytes(a.Data().Buffers()[1].Bytes()), vals)
		return a
	}
	ok := build([]decimal128.Num{fits, fits.Negate(), tooBig}, []bool{true, true, false})
	defer ok.Release()
	out, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("c", dt)}, ok)
	if err != nil {
		t.Fatalf("in range, out of range in a null slot: %v", err)
	}
	out.Release()
	for _, v := range []decimal128.Num{tooBig, tooBig.Negate()} {
		bad := build([]decimal128.Num{fits, v}, nil)
		_, err := conform(t, mem, tbl, strictOpts, []arrow.Field{field("c", dt)}, bad)
		bad.Release()
		if !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "'c'") {
			t.Fatalf("value %s beyond precision 30: %v", v.ToString(2), err)
		}
	}
}
