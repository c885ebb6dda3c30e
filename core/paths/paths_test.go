package paths

import (
	"errors"
	"math"
	"math/big"
	"net/url"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The expected texts below are java.net.URLEncoder.encode(s, UTF_8) as its
// specification defines it: "a"-"z", "A"-"Z", "0"-"9", ".", "-", "*", "_"
// unchanged; " " to "+"; any other character as the %XX of each byte of
// its UTF-8 encoding, hex in upper case.
func TestEscapeIsJavaURLEncoder(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"abcXYZ019", "abcXYZ019"},
		{".-*_", ".-*_"},
		{"~", "%7E"},
		{" ", "+"},
		{"a b", "a+b"},
		{"+", "%2B"},
		{"%", "%25"},
		{"%C3%A9", "%25C3%25A9"},
		{"/", "%2F"},
		{`\`, "%5C"},
		{"..", ".."},
		{".", "."},
		{"x/../../../../tmp/somewhere", "x%2F..%2F..%2F..%2F..%2Ftmp%2Fsomewhere"},
		{"?#&=:;@,$!'()[]{}|^`\"<>", "%3F%23%26%3D%3A%3B%40%2C%24%21%27%28%29%5B%5D%7B%7D%7C%5E%60%22%3C%3E"},
		{"\x00\t\n\x7f", "%00%09%0A%7F"},
		{"yé", "y%C3%A9"},              // U+00E9, two bytes
		{"ü", "%C3%BC"},                // U+00FC
		{"€", "%E2%82%AC"},             // U+20AC, three bytes
		{"中", "%E4%B8%AD"},             // U+4E2D
		{"\uFFFD", "%EF%BF%BD"},        // U+FFFD
		{"😀", "%F0%9F%98%80"},          // U+1F600, four bytes (astral)
		{"\U0010FFFF", "%F4%8F%BF%BF"}, // the last code point
		{"\U00020000", "%F0%A0%80%80"}, // plane 2
	}
	for _, c := range cases {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Go's own form escaper is not URLEncoder: it would get these wrong.
	for _, s := range []string{"*", "~"} {
		if url.QueryEscape(s) == Escape(s) {
			t.Errorf("url.QueryEscape(%q) = Escape: the test would not tell them apart", s)
		}
	}
}

func TestEscapeNeverLeavesASlashOrAPercentSign(t *testing.T) {
	// Every byte value, alone and in a multi-byte context.
	for c := 0; c < 256; c++ {
		s := string([]byte{'a', byte(c), 'b'})
		e := Escape(s)
		if strings.ContainsAny(e, `/\ `) {
			t.Fatalf("Escape(%q) = %q keeps a separator", s, e)
		}
		// Decoding the escaped text gives the bytes back (injective).
		back, err := url.QueryUnescape(e)
		if err != nil || back != s {
			t.Fatalf("Escape(%q) = %q does not decode back (%q, %v)", s, e, back, err)
		}
	}
}

func dec(unscaled int64, scale int) iceberg.Decimal {
	return iceberg.Decimal{Val: decimal128.FromI64(unscaled), Scale: scale}
}

// Expected texts are Java's: TransformUtil (years, months, days, hours as
// "%04d" fields), DateTimeFormatter.ISO_LOCAL_DATE_TIME (timestamps, with
// "+00:00" for timestamptz), LocalTime.toString, BigDecimal.toString,
// Float/Double.toString, UUID.toString, Base64 of binary.
func TestHumanStringIsJavas(t *testing.T) {
	ts, tstz := iceberg.PrimitiveTypes.Timestamp, iceberg.PrimitiveTypes.TimestampTz
	id, tr := iceberg.IdentityTransform{}, iceberg.TruncateTransform{Width: 2}
	u := uuid.MustParse("F79C3E09-677C-4BBD-A479-3F349CB785E7")
	const y10000 = int64(253402300800) // 10000-01-01T00:00:00Z in seconds
	cases := []struct {
		name string
		tr   iceberg.Transform
		typ  iceberg.Type
		v    any
		want string
	}{
		{"null", id, iceberg.PrimitiveTypes.String, nil, "null"},
		{"null truncate", tr, iceberg.PrimitiveTypes.String, nil, "null"},
		{"string", id, iceberg.PrimitiveTypes.String, "a b/é", "a b/é"},
		{"empty string", id, iceberg.PrimitiveTypes.String, "", ""},
		{"bool", id, iceberg.PrimitiveTypes.Bool, true, "true"},
		{"int", id, iceberg.PrimitiveTypes.Int32, int32(-42), "-42"},
		{"long", id, iceberg.PrimitiveTypes.Int64, int64(math.MinInt64), "-9223372036854775808"},
		{"bucket", iceberg.BucketTransform{NumBuckets: 16}, iceberg.PrimitiveTypes.Int32, int32(7), "7"},
		{"binary", id, iceberg.PrimitiveTypes.Binary, []byte{0xfb, 0xff}, "+/8="},
		{"empty binary", id, iceberg.PrimitiveTypes.Binary, []byte{}, ""},
		{"truncate binary", tr, iceberg.PrimitiveTypes.Binary, []byte("ab"), "YWI="},
		{"uuid", id, iceberg.PrimitiveTypes.UUID, u, "f79c3e09-677c-4bbd-a479-3f349cb785e7"},
		// years / months / days / hours
		{"year 1970", iceberg.YearTransform{}, iceberg.PrimitiveTypes.Int32, int32(0), "1970"},
		{"year 0", iceberg.YearTransform{}, iceberg.PrimitiveTypes.Int32, int32(-1970), "0000"},
		{"year 5", iceberg.YearTransform{}, iceberg.PrimitiveTypes.Int32, int32(-1965), "0005"},
		{"year -1", iceberg.YearTransform{}, iceberg.PrimitiveTypes.Int32, int32(-1971), "-001"},
		{"year 10000", iceberg.YearTransform{}, iceberg.PrimitiveTypes.Int32, int32(8030), "10000"},
		{"month", iceberg.MonthTransform{}, iceberg.PrimitiveTypes.Int32, int32(0), "1970-01"},
		{"month -1", iceberg.MonthTransform{}, iceberg.PrimitiveTypes.Int32, int32(-1), "1969-12"},
		{"month -13", iceberg.MonthTransform{}, iceberg.PrimitiveTypes.Int32, int32(-13), "1968-12"},
		{"month year 0", iceberg.MonthTransform{}, iceberg.PrimitiveTypes.Int32, int32(-1970 * 12), "0000-01"},
		{"month year -1", iceberg.MonthTransform{}, iceberg.PrimitiveTypes.Int32, int32(-1970*12 - 1), "-001-12"},
		{"day", iceberg.DayTransform{}, iceberg.PrimitiveTypes.Date, iceberg.Date(19000), "2022-01-08"},
		{"day int", iceberg.DayTransform{}, iceberg.PrimitiveTypes.Date, int32(-1), "1969-12-31"},
		{"day 0001", iceberg.DayTransform{}, iceberg.PrimitiveTypes.Date, iceberg.Date(-719162), "0001-01-01"},
		{"day 0000", iceberg.DayTransform{}, iceberg.PrimitiveTypes.Date, iceberg.Date(-719528), "0000-01-01"},
		{"day -1", iceberg.DayTransform{}, iceberg.PrimitiveTypes.Date, iceberg.Date(-719529), "-001-12-31"},
		{"day 10000", iceberg.DayTransform{}, iceberg.PrimitiveTypes.Date, iceberg.Date(2932897), "10000-01-01"},
		{"hour", iceberg.HourTransform{}, iceberg.PrimitiveTypes.Int32, int32(-1), "1969-12-31-23"},
		{"hour 10000", iceberg.HourTransform{}, iceberg.PrimitiveTypes.Int32, int32(y10000 / 3600), "10000-01-01-00"},
		// identity dates and timestamps
		{"date", id, iceberg.PrimitiveTypes.Date, iceberg.Date(-719529), "-001-12-31"},
		{"timestamp", id, ts, iceberg.Timestamp(0), "1970-01-01T00:00:00"},
		{"timestamp fraction", id, ts, iceberg.Timestamp(1_500_000), "1970-01-01T00:00:01.5"},
		{"timestamp micro", id, ts, iceberg.Timestamp(1_700_000_000_123_400), "2023-11-14T22:13:20.1234"},
		{"timestamp before epoch", id, ts, iceberg.Timestamp(-1), "1969-12-31T23:59:59.999999"},
		{"timestamptz", id, tstz, iceberg.Timestamp(0), "1970-01-01T00:00:00+00:00"},
		{"timestamptz year 10000", id, tstz, iceberg.Timestamp(y10000 * 1_000_000), "+10000-01-01T00:00:00+00:00"},
		{"timestamp year -1", id, ts, iceberg.Timestamp(-62198755200 * 1_000_000), "-0001-01-01T00:00:00"},
		{"timestamp max", id, ts, iceberg.Timestamp(math.MaxInt64), "+294247-01-10T04:00:54.775807"},
		{"timestamp min", id, ts, iceberg.Timestamp(math.MinInt64), "-290308-12-21T19:59:05.224192"},
		{"timestamp_ns", id, iceberg.PrimitiveTypes.TimestampNs, iceberg.TimestampNano(1), "1970-01-01T00:00:00.000000001"},
		{"timestamptz_ns", id, iceberg.PrimitiveTypes.TimestampTzNs, iceberg.TimestampNano(-1), "1969-12-31T23:59:59.999999999+00:00"},
		// time of day: LocalTime.toString
		{"time", id, iceberg.PrimitiveTypes.Time, iceberg.Time(0), "00:00"},
		{"time minutes", id, iceberg.PrimitiveTypes.Time, iceberg.Time(630 * 60_000_000), "10:30"},
		{"time seconds", id, iceberg.PrimitiveTypes.Time, iceberg.Time(1_000_000), "00:00:01"},
		{"time millis", id, iceberg.PrimitiveTypes.Time, iceberg.Time(1_500_000), "00:00:01.500"},
		{"time micros", id, iceberg.PrimitiveTypes.Time, iceberg.Time(1), "00:00:00.000001"},
		// BigDecimal.toString
		{"decimal", id, iceberg.DecimalTypeOf(9, 2), dec(12345, 2), "123.45"},
		{"decimal negative", id, iceberg.DecimalTypeOf(9, 3), dec(-5, 3), "-0.005"},
		{"decimal zero", id, iceberg.DecimalTypeOf(9, 2), dec(0, 2), "0.00"},
		{"decimal integer", id, iceberg.DecimalTypeOf(9, 0), dec(100, 0), "100"},
		{"decimal 1e-6", id, iceberg.DecimalTypeOf(9, 6), dec(1, 6), "0.000001"},
		{"decimal 1e-7", id, iceberg.DecimalTypeOf(9, 7), dec(1, 7), "1E-7"},
		{"decimal 1.0e-7", id, iceberg.DecimalTypeOf(9, 8), dec(10, 8), "1.0E-7"},
		{"decimal -1.2e-7", id, iceberg.DecimalTypeOf(9, 8), dec(-12, 8), "-1.2E-7"},
		{"decimal zero scale 10", id, iceberg.DecimalTypeOf(20, 10), dec(0, 10), "0E-10"},
		{"decimal truncate", iceberg.TruncateTransform{Width: 10}, iceberg.DecimalTypeOf(9, 2), dec(12340, 2), "123.40"},
		// Float.toString / Double.toString
		{"double", id, iceberg.PrimitiveTypes.Float64, 1.0, "1.0"},
		{"double 100", id, iceberg.PrimitiveTypes.Float64, 100.0, "100.0"},
		{"double -0", id, iceberg.PrimitiveTypes.Float64, math.Copysign(0, -1), "-0.0"},
		{"double 0", id, iceberg.PrimitiveTypes.Float64, 0.0, "0.0"},
		{"double NaN", id, iceberg.PrimitiveTypes.Float64, math.NaN(), "NaN"},
		{"double inf", id, iceberg.PrimitiveTypes.Float64, math.Inf(1), "Infinity"},
		{"double -inf", id, iceberg.PrimitiveTypes.Float64, math.Inf(-1), "-Infinity"},
		{"double 1e7", id, iceberg.PrimitiveTypes.Float64, 1e7, "1.0E7"},
		{"double below 1e7", id, iceberg.PrimitiveTypes.Float64, 9999999.0, "9999999.0"},
		{"double 1.2345e7", id, iceberg.PrimitiveTypes.Float64, 1.2345e7, "1.2345E7"},
		{"double 0.001", id, iceberg.PrimitiveTypes.Float64, 0.001, "0.001"},
		{"double 1e-4", id, iceberg.PrimitiveTypes.Float64, 0.0001, "1.0E-4"},
		{"double 1.5e-5", id, iceberg.PrimitiveTypes.Float64, -1.5e-5, "-1.5E-5"},
		{"double 123.456", id, iceberg.PrimitiveTypes.Float64, 123.456, "123.456"},
		{"double 1e21", id, iceberg.PrimitiveTypes.Float64, 1e21, "1.0E21"},
		{"double max", id, iceberg.PrimitiveTypes.Float64, math.MaxFloat64, "1.7976931348623157E308"},
		{"float 0.1", id, iceberg.PrimitiveTypes.Float32, float32(0.1), "0.1"},
		{"float 1e10", id, iceberg.PrimitiveTypes.Float32, float32(1e10), "1.0E10"},
		{"float 3.4028235e38", id, iceberg.PrimitiveTypes.Float32, float32(math.MaxFloat32), "3.4028235E38"},
		{"void", iceberg.VoidTransform{}, iceberg.PrimitiveTypes.Int32, nil, "null"},
		// As a manifest read by iceberg-go gives them.
		{"manifest decimal", id, iceberg.DecimalTypeOf(9, 7), iceberg.DecimalLiteral(dec(1, 7)), "1E-7"},
		{"manifest raw date", id, iceberg.PrimitiveTypes.Date, int32(-1), "1969-12-31"},
		{"manifest raw timestamptz", id, tstz, int64(-1), "1969-12-31T23:59:59.999999+00:00"},
		{"manifest raw time", id, iceberg.PrimitiveTypes.Time, int64(1), "00:00:00.000001"},
		{"manifest uuid", id, iceberg.PrimitiveTypes.UUID, [16]byte(u), "f79c3e09-677c-4bbd-a479-3f349cb785e7"},
	}
	for _, c := range cases {
		if got := HumanString(c.tr, c.typ, c.v); got != c.want {
			t.Errorf("%s: HumanString(%v, %v) = %q, want %q", c.name, c.tr, c.v, got, c.want)
		}
	}
}

func TestJavaBigDecimalOfLargeUnscaled(t *testing.T) {
	v, _ := new(big.Int).SetString("-12345678901234567890123456789012345678", 10)
	if got, want := javaBigDecimal(v, 10), "-1234567890123456789012345678.9012345678"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func spec(fields ...iceberg.PartitionField) iceberg.PartitionSpec {
	return iceberg.NewPartitionSpec(fields...)
}

var testSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "s", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
)

func TestDirIsPartitionToPath(t *testing.T) {
	sp := spec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "s", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1001, Name: "s_trunc", Transform: iceberg.TruncateTransform{Width: 2}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1002, Name: "ts", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1003, Name: "ts day", Transform: iceberg.DayTransform{}},
	)
	r := DataRoot("file:///w/db.db/t", nil)
	got, err := r.Dir(sp, testSchema, map[int]any{1000: "x/../../../../tmp/somewhere", 1001: "yé", 1002: iceberg.Timestamp(0), 1003: nil})
	if err != nil {
		t.Fatal(err)
	}
	want := "file:///w/db.db/t/data/s=x%2F..%2F..%2F..%2F..%2Ftmp%2Fsomewhere/s_trunc=y%C3%A9/ts=1970-01-01T00%3A00%3A00%2B00%3A00/ts+day=null"
	if got != want {
		t.Errorf("Dir =\n %s\nwant\n %s", got, want)
	}
	if d, err := r.Dir(*iceberg.UnpartitionedSpec, testSchema, nil); err != nil || d != "file:///w/db.db/t/data" {
		t.Errorf("unpartitioned: %q %v", d, err)
	}
}

func TestDataRootHonoursWriteDataPath(t *testing.T) {
	if got := DataRoot("s3://b/t/", nil).String(); got != "s3://b/t/data" {
		t.Errorf("default: %s", got)
	}
	if got := DataRoot("s3://b/t", map[string]string{PropDataPath: "s3://b/elsewhere/"}).String(); got != "s3://b/elsewhere" {
		t.Errorf("write.data.path: %s", got)
	}
}

func identitySpec() iceberg.PartitionSpec {
	return spec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "s", Transform: iceberg.IdentityTransform{}})
}

func TestTooLongValueIsAValidationErrorNamingTheField(t *testing.T) {
	r := DataRoot("/w/t", nil)
	// "s=" + 253 bytes is the longest name a local file system takes.
	if _, err := r.Dir(identitySpec(), testSchema, map[int]any{1000: strings.Repeat("a", 253)}); err != nil {
		t.Fatalf("255 bytes: %v", err)
	}
	for _, v := range []string{strings.Repeat("a", 254), strings.Repeat("é", 43), strings.Repeat("x", 100_000)} {
		_, err := r.Dir(identitySpec(), testSchema, map[int]any{1000: v})
		if !errors.Is(err, errs.ErrValidation) {
			t.Fatalf("%d bytes: %v", len(v), err)
		}
		if msg := err.Error(); !strings.Contains(msg, `"s"`) || !strings.Contains(msg, v[:20]) || len(msg) > 400 {
			t.Errorf("the message must name the field and the start of the value, briefly: %s", msg)
		}
	}
	// An object store has no per-name limit, but a key has at most 1024 bytes.
	s3 := DataRoot("s3://bucket/w/t", nil)
	if _, err := s3.Dir(identitySpec(), testSchema, map[int]any{1000: strings.Repeat("a", 600)}); err != nil {
		t.Fatalf("600 bytes on S3: %v", err)
	}
	_, err := s3.Dir(identitySpec(), testSchema, map[int]any{1000: strings.Repeat("a", 1000)})
	if !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), `"s"`) {
		t.Fatalf("1000 bytes on S3: %v", err)
	}
	// The whole local path is bounded too.
	deep := DataRoot("/"+strings.Repeat("d/", 1950), nil)
	if _, err := deep.Dir(identitySpec(), testSchema, map[int]any{1000: strings.Repeat("a", 200)}); !errors.Is(err, errs.ErrValidation) {
		t.Fatalf("a path over 4095 bytes: %v", err)
	}
}

func TestCheckKeepsFilesInsideTheRoot(t *testing.T) {
	r := NewRoot("file:///w/t/data/")
	good := []string{
		"file:///w/t/data/f.parquet",
		"file:///w/t/data/s=..%2F../f.parquet",
		"file:///w/t/data/s=x../f.parquet",
		"file:///w/t/data/a=1/b=%2F/f.parquet",
	}
	for _, p := range good {
		if err := r.Check(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	bad := []string{
		"file:///w/t/data",
		"file:///w/t/data/",
		"file:///w/t/data2/f.parquet",
		"file:///w/t/f.parquet",
		"file:///w/t/data/../f.parquet",
		"file:///w/t/data/s=1/../../f.parquet",
		"file:///w/t/data/./f.parquet",
		"file:///w/t/data//f.parquet",
		"file:///w/t/data/s=1/",
		"/w/t/data/f.parquet",
		"file:///w/t/data/a\x00b/f.parquet",
		"file:///w/t/data/" + strings.Repeat("n", 256) + "/f.parquet",
	}
	for _, p := range bad {
		if err := r.Check(p); !errors.Is(err, errs.ErrValidation) {
			t.Errorf("%q: want a validation error, got %v", p, err)
		}
	}
}

func TestLocalPathNeverDecodes(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"file:///a/b%C3%A9", "/a/b%C3%A9", true},
		{"file:///a/b+c%2F..%2Fd", "/a/b+c%2F..%2Fd", true},
		{"file:///a/b?c#d", "/a/b?c#d", true},
		{"file:/a/b%20c", "/a/b%20c", true},
		{"FILE:///a", "/a", true},
		{"file://localhost/a%25", "/a%25", true},
		{"file://", "/", true},
		{"/a/b%zz", "/a/b%zz", true},
		{"rel/a:b", "rel/a:b", true},
		{"file://otherhost/a", "", false},
		{"s3://bucket/a", "", false},
	}
	for _, c := range cases {
		got, ok := LocalPath(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("LocalPath(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// recordingFS is a WriteFileIO that records the files created.
type recordingFS struct {
	icebergio.WriteFileIO
	created []string
}

func (r *recordingFS) Create(name string) (icebergio.FileWriter, error) {
	r.created = append(r.created, name)
	return nil, nil
}

func (r *recordingFS) WriteFile(name string, _ []byte) error {
	r.created = append(r.created, name)
	return nil
}

func TestConfineRefusesFilesOutsideTheRoot(t *testing.T) {
	inner := &recordingFS{}
	fs := Confine(inner, NewRoot("s3://b/t/data"))
	for _, p := range []string{"s3://b/t/data/s=..%2F/f.parquet", "s3://b/t/data/f.puffin"} {
		if _, err := fs.Create(p); err != nil {
			t.Errorf("Create(%s): %v", p, err)
		}
	}
	for _, p := range []string{"s3://b/t/data/../f.parquet", "s3://b/t/metadata/f.avro", "s3://b/t/data/s=1/../../x", "s3://other/t/data/f"} {
		if _, err := fs.Create(p); !errors.Is(err, errs.ErrValidation) {
			t.Errorf("Create(%s): %v", p, err)
		}
		if err := fs.WriteFile(p, nil); !errors.Is(err, errs.ErrValidation) {
			t.Errorf("WriteFile(%s): %v", p, err)
		}
	}
	if len(inner.created) != 2 {
		t.Errorf("created %v", inner.created)
	}
}
