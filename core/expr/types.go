package expr

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// kind is the evaluation class of an Iceberg primitive type.
type kind int

const (
	kNull kind = iota
	kBool
	kInt
	kLong
	kDecimal
	kFloat
	kDouble
	kString
	kBinary
	kFixed
	kUUID
	kDate
	kTime
	kTS   // timestamp without zone
	kTSTZ // timestamp with zone (UTC)
	kOther
)

var (
	tNull   iceberg.Type = iceberg.PrimitiveTypes.Unknown
	tBool   iceberg.Type = iceberg.PrimitiveTypes.Bool
	tInt    iceberg.Type = iceberg.PrimitiveTypes.Int32
	tLong   iceberg.Type = iceberg.PrimitiveTypes.Int64
	tFloat  iceberg.Type = iceberg.PrimitiveTypes.Float32
	tDouble iceberg.Type = iceberg.PrimitiveTypes.Float64
	tString iceberg.Type = iceberg.PrimitiveTypes.String
	tBinary iceberg.Type = iceberg.PrimitiveTypes.Binary
	tDate   iceberg.Type = iceberg.PrimitiveTypes.Date
	tTS     iceberg.Type = iceberg.PrimitiveTypes.Timestamp
	tTSTZ   iceberg.Type = iceberg.PrimitiveTypes.TimestampTz
)

func kindOf(t iceberg.Type) kind {
	switch t.(type) {
	case iceberg.UnknownType:
		return kNull
	case iceberg.BooleanType:
		return kBool
	case iceberg.Int32Type:
		return kInt
	case iceberg.Int64Type:
		return kLong
	case iceberg.DecimalType:
		return kDecimal
	case iceberg.Float32Type:
		return kFloat
	case iceberg.Float64Type:
		return kDouble
	case iceberg.StringType:
		return kString
	case iceberg.BinaryType:
		return kBinary
	case iceberg.FixedType:
		return kFixed
	case iceberg.UUIDType:
		return kUUID
	case iceberg.DateType:
		return kDate
	case iceberg.TimeType:
		return kTime
	case iceberg.TimestampType:
		return kTS
	case iceberg.TimestampTzType:
		return kTSTZ
	}
	return kOther
}

func isNumeric(k kind) bool  { return k >= kInt && k <= kDouble }
func isIntegral(k kind) bool { return k == kInt || k == kLong }
func isBytes(k kind) bool    { return k == kBinary || k == kFixed || k == kUUID }
func isTime(k kind) bool     { return k == kDate || k == kTS || k == kTSTZ }

// sqlType renders t as Spark SQL type text.
func sqlType(t iceberg.Type) string {
	switch k := kindOf(t); k {
	case kNull:
		return "void"
	case kBool:
		return "boolean"
	case kInt:
		return "int"
	case kLong:
		return "bigint"
	case kFloat:
		return "float"
	case kDouble:
		return "double"
	case kDecimal:
		d := t.(iceberg.DecimalType)
		return fmt.Sprintf("decimal(%d,%d)", d.Precision(), d.Scale())
	case kString:
		return "string"
	case kBinary:
		return "binary"
	case kDate:
		return "date"
	case kTS:
		return "timestamp_ntz"
	case kTSTZ:
		return "timestamp"
	}
	return t.String()
}

// decimalOf returns the decimal type an integral or decimal type widens to.
func decimalOf(t iceberg.Type) (int, int) {
	switch kindOf(t) {
	case kInt:
		return 10, 0
	case kLong:
		return 20, 0
	case kDecimal:
		d := t.(iceberg.DecimalType)
		return d.Precision(), d.Scale()
	}
	return 38, 0
}

// boundedDecimal caps precision at 38 the way Spark does when precision loss
// is allowed: keep the integral digits and at least min(scale, 6) fraction digits.
func boundedDecimal(p, s int) iceberg.Type {
	if p <= 38 {
		return iceberg.DecimalTypeOf(p, s)
	}
	intDigits := p - s
	minScale := min(s, 6)
	s = max(38-intDigits, minScale)
	return iceberg.DecimalTypeOf(38, s)
}

// wider returns the common type of two numeric types (Spark's widening).
func widerNumeric(a, b iceberg.Type) iceberg.Type {
	ka, kb := kindOf(a), kindOf(b)
	if ka == kb && ka != kDecimal {
		return a
	}
	if ka == kDouble || kb == kDouble || ka == kFloat && kb == kDecimal || kb == kFloat && ka == kDecimal {
		return tDouble
	}
	if ka == kFloat || kb == kFloat {
		return tFloat
	}
	if ka == kDecimal || kb == kDecimal {
		p1, s1 := decimalOf(a)
		p2, s2 := decimalOf(b)
		s := max(s1, s2)
		return boundedDecimal(max(p1-s1, p2-s2)+s, s)
	}
	if ka == kLong || kb == kLong {
		return tLong
	}
	return tInt
}

// value is one scalar: the field used depends on the kind of its type.
type value struct {
	null bool
	b    bool
	i    int64          // int, long, date (days), time/timestamps (micros)
	f    float64        // float, double
	d    decimal128.Num // decimal (unscaled)
	s    string         // string, binary, fixed, uuid bytes
}

var nullValue = value{null: true}

var (
	reDate = regexp.MustCompile(`^\s*([+-]?\d{4,6})-(\d{1,2})-(\d{1,2})\s*$`)
	reTS   = regexp.MustCompile(`^\s*([+-]?\d{4,6})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,9}))?)?)?\s*(\S.*?)?\s*$`)
	reTime = regexp.MustCompile(`^\s*(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,9}))?)?\s*$`)
)

func atoi(s string) int { v, _ := strconv.Atoi(s); return v }

func fracMicros(s string) int64 {
	if s == "" {
		return 0
	}
	s = (s + "000000")[:6]
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

func parseDate(s string) (int64, bool) {
	m := reDate.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	y, mo, d := atoi(m[1]), atoi(m[2]), atoi(m[3])
	t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	if t.Year() != y || int(t.Month()) != mo || t.Day() != d {
		return 0, false
	}
	return t.Unix() / 86400, true
}

// parseTimestamp parses a timestamp text: its wall-clock time (micros
// since 1970-01-01 00:00) and the zone it names (Z, UTC, +01:00,
// Europe/Paris, ... as the session time zone's ids; nil when it names none).
func parseTimestamp(s string) (wall int64, zone *tz.Zone, ok bool) {
	m := reTS.FindStringSubmatch(s)
	if m == nil {
		return 0, nil, false
	}
	y, mo, d := atoi(m[1]), atoi(m[2]), atoi(m[3])
	h, mi, sec := atoi(m[4]), atoi(m[5]), atoi(m[6])
	if h > 23 || mi > 59 || sec > 59 {
		return 0, nil, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC)
	if t.Year() != y || int(t.Month()) != mo || t.Day() != d {
		return 0, nil, false
	}
	// Microseconds since 1970 must fit 64 bits (about 290,000 years
	// either way), as in Spark; a zone moves it by a day at most.
	if sec := t.Unix(); sec > math.MaxInt64/1_000_000-86400 || sec < math.MinInt64/1_000_000+86400 {
		return 0, nil, false
	}
	if m[8] != "" {
		z, err := tz.Parse(m[8])
		if err != nil {
			return 0, nil, false
		}
		zone = z
	}
	return t.Unix()*1_000_000 + fracMicros(m[7]), zone, true
}

// instantOfText parses a timestamp text as an instant: in the zone the
// text names, else a wall-clock time in zone (the session time zone).
func instantOfText(s string, zone *tz.Zone) (int64, bool) {
	wall, own, ok := parseTimestamp(s)
	if !ok {
		return 0, false
	}
	if own == nil {
		own = zone
	}
	return own.ToInstant(wall, 1_000_000)
}

// wallOfText parses a timestamp text without a zone as a wall-clock time.
func wallOfText(s string) (int64, bool) {
	wall, own, ok := parseTimestamp(s)
	return wall, ok && own == nil
}

func parseTime(s string) (int64, bool) {
	m := reTime.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	h, mi, sec := atoi(m[1]), atoi(m[2]), atoi(m[3])
	if h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	return int64(h*3600+mi*60+sec)*1_000_000 + fracMicros(m[4]), true
}

func formatDate(days int64) string {
	return time.Unix(days*86400, 0).UTC().Format("2006-01-02")
}

func formatTS(us int64, tz bool) string {
	t := time.UnixMicro(us).UTC()
	s := t.Format("2006-01-02 15:04:05.999999")
	if tz {
		s += "Z"
	}
	return s
}

func formatTime(us int64) string {
	return time.UnixMicro(us).UTC().Format("15:04:05.999999")
}

// parseDecimal parses s as a decimal of the given scale, rounding half up.
func parseDecimal(s string, scale int) (decimal128.Num, bool) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok {
		return decimal128.Num{}, false
	}
	return ratToDecimal(r, scale)
}

var bigTen = big.NewInt(10)

func pow10(n int) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil) }

// ratToDecimal rounds r half up (away from zero) to scale digits.
func ratToDecimal(r *big.Rat, scale int) (decimal128.Num, bool) {
	num := new(big.Int).Mul(r.Num(), pow10(scale))
	q, m := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	m.Abs(m).Mul(m, big.NewInt(2))
	if m.Cmp(r.Denom()) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	if q.BitLen() > 127 { // decimal128 is signed: magnitudes below 2^127 (every 38-digit value) fit
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(q), true
}

// literalValue computes a literal's value and type; a TIMESTAMP literal
// without a zone is a wall-clock time in zone (nil: UTC).
func literalValue(l *LiteralNode, zone *tz.Zone) (tv typedValue, err error) {
	fail := func(format string, a ...any) (typedValue, error) {
		return typedValue{}, syntaxErr(l.text, l.pos, format, a...)
	}
	txt := l.Text
	num := strings.TrimRight(txt, "LSYDFlsydf")
	if strings.HasSuffix(strings.ToUpper(txt), "BD") {
		num = txt[:len(txt)-2]
	}
	switch l.Kind {
	case litNull:
		return typedValue{nullValue, tNull}, nil
	case litBool:
		return typedValue{value{b: txt == "TRUE"}, tBool}, nil
	case litInt, litBigint:
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return fail("integer literal %s out of range", txt)
		}
		if l.Kind == litInt {
			if v < -1<<31 || v >= 1<<31 {
				return fail("integer literal %s out of range", txt)
			}
			return typedValue{value{i: v}, tInt}, nil
		}
		return typedValue{value{i: v}, tLong}, nil
	case litDouble, litFloat:
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return fail("invalid number %s", txt)
		}
		if l.Kind == litFloat {
			return typedValue{value{f: float64(float32(v))}, tFloat}, nil
		}
		return typedValue{value{f: v}, tDouble}, nil
	case litDecimal:
		digits := strings.TrimLeft(strings.ReplaceAll(strings.TrimPrefix(num, "-"), ".", ""), "0")
		scale := 0
		if i := strings.IndexByte(num, '.'); i >= 0 {
			scale = len(num) - i - 1
		}
		prec := max(len(digits), scale, 1)
		if prec > 38 {
			return fail("decimal literal %s exceeds precision 38", txt)
		}
		d, ok := parseDecimal(num, scale)
		if !ok {
			return fail("invalid decimal %s", txt)
		}
		return typedValue{value{d: d}, iceberg.DecimalTypeOf(prec, scale)}, nil
	case litString:
		return typedValue{value{s: txt}, tString}, nil
	case litDate:
		d, ok := parseDate(txt)
		if !ok {
			return fail("invalid date literal '%s'", txt)
		}
		return typedValue{value{i: d}, tDate}, nil
	case litTimestampNTZ:
		ts, ok := wallOfText(txt)
		if !ok {
			return fail("invalid timestamp literal '%s'", txt)
		}
		return typedValue{value{i: ts}, tTS}, nil
	case litTimestamp:
		ts, ok := instantOfText(txt, zone)
		if !ok {
			return fail("invalid timestamp literal '%s'", txt)
		}
		return typedValue{value{i: ts}, tTSTZ}, nil
	case litBinary:
		if len(txt)%2 != 0 {
			txt = "0" + txt
		}
		b := make([]byte, len(txt)/2)
		for i := range b {
			v, err := strconv.ParseUint(txt[2*i:2*i+2], 16, 8)
			if err != nil {
				return fail("invalid binary literal X'%s'", l.Text)
			}
			b[i] = byte(v)
		}
		return typedValue{value{s: string(b)}, tBinary}, nil
	}
	return fail("unknown literal")
}

type typedValue struct {
	v value
	t iceberg.Type
}

// sqlLiteral renders a value of type t as SQL literal text.
func sqlLiteral(v value, t iceberg.Type) string {
	if v.null {
		if kindOf(t) == kNull {
			return "NULL"
		}
		return "CAST(NULL AS " + sqlType(t) + ")"
	}
	switch kindOf(t) {
	case kBool:
		if v.b {
			return "TRUE"
		}
		return "FALSE"
	case kInt:
		return strconv.FormatInt(v.i, 10)
	case kLong:
		return strconv.FormatInt(v.i, 10) + "L"
	case kFloat:
		return strconv.FormatFloat(v.f, 'g', -1, 32) + "F"
	case kDouble:
		return strconv.FormatFloat(v.f, 'g', -1, 64) + "D"
	case kDecimal:
		d := t.(iceberg.DecimalType)
		txt := v.d.ToString(int32(d.Scale()))
		digits := len(strings.TrimLeft(strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, txt), "0"))
		if max(digits, d.Scale(), 1) == d.Precision() {
			return txt + "BD"
		}
		return "CAST(" + txt + "BD AS " + sqlType(t) + ")"
	case kString:
		return quoteString(v.s)
	case kBinary, kFixed:
		return fmt.Sprintf("X'%X'", v.s)
	case kUUID:
		u, _ := uuid.FromBytes([]byte(v.s))
		return quoteString(u.String())
	case kDate:
		return "DATE '" + formatDate(v.i) + "'"
	case kTS:
		return "TIMESTAMP_NTZ '" + formatTS(v.i, false) + "'"
	case kTSTZ:
		return "TIMESTAMP '" + formatTS(v.i, true) + "'"
	case kTime:
		return quoteString(formatTime(v.i))
	}
	return "NULL"
}

func quoteString(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

func quoteIdent(s string) string {
	ok := s != ""
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			ok = false
		}
	}
	if ok && !reserved[strings.ToUpper(s)] {
		return s
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

var reserved = map[string]bool{"AND": true, "OR": true, "NOT": true, "IN": true, "IS": true, "NULL": true, "TRUE": true, "FALSE": true,
	"BETWEEN": true, "LIKE": true, "CASE": true, "WHEN": true, "THEN": true, "ELSE": true, "END": true, "CAST": true, "AS": true}
