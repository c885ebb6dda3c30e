// Package paths names the files of a table's data: the folder of a
// partition (spelled as Iceberg Java spells it, so that Spark, PyIceberg
// and this project agree on every file name), the data root a table's data
// files go under, and the check that a data file path stays inside it.
//
// Locations are strings, not URLs: the escaped text of a partition value
// is the literal name of a folder, on local disks and as part of an object
// key. Nothing here, or in the FileIOs, decodes a location.
package paths

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/pyiceberg-go/pyiceberg-go/core/internal/javafmt"
)

// Escape is java.net.URLEncoder.encode(s, UTF_8), which Iceberg applies to
// each partition field name and value: ASCII letters, digits and ".-*_"
// stay, a space becomes "+", every other byte of the UTF-8 encoding becomes
// %XX with upper-case hex. (Go's url.QueryEscape differs: it keeps "~" and
// escapes "*".) A string that is not valid UTF-8 is escaped byte by byte.
func Escape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// HumanString is Iceberg Java's Transform.toHumanString(resultType, value)
// for the partition value v of a field with transform tr: the text a
// partition folder is named with. v is the Go value a partition tuple
// holds (transform.Split's types); resultType is the field's result type
// (it tells a timestamptz from a timestamp). nil is "null".
func HumanString(tr iceberg.Transform, resultType iceberg.Type, v any) string {
	if v == nil {
		return "null"
	}
	switch tr.(type) {
	case iceberg.YearTransform:
		if n, ok := asInt(v); ok {
			return javaInt04(1970 + n)
		}
	case iceberg.MonthTransform:
		if n, ok := asInt(v); ok {
			return javaInt04(1970+floorDiv(n, 12)) + "-" + pad2(1+floorMod(n, 12))
		}
	case iceberg.DayTransform:
		if n, ok := asInt(v); ok {
			return humanDay(n)
		}
	case iceberg.HourTransform:
		if n, ok := asInt(v); ok {
			t := time.Unix(n*3600, 0).UTC()
			return javaInt04(int64(t.Year())) + "-" + pad2(int64(t.Month())) + "-" + pad2(int64(t.Day())) + "-" + pad2(int64(t.Hour()))
		}
	case iceberg.VoidTransform:
		return "null"
	}
	return valueString(resultType, v)
}

// valueString is Transform.toHumanString's default (identity, bucket,
// truncate) for value v of type typ.
func valueString(typ iceberg.Type, v any) string {
	// A manifest without logical types gives raw integers: the type says
	// what they count.
	if n, ok := v.(int32); ok {
		switch typ.(type) {
		case iceberg.DateType:
			v = iceberg.Date(n)
		}
	}
	if n, ok := v.(int64); ok {
		switch typ.(type) {
		case iceberg.TimeType:
			v = iceberg.Time(n)
		case iceberg.TimestampType, iceberg.TimestampTzType:
			v = iceberg.Timestamp(n)
		case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
			v = iceberg.TimestampNano(n)
		}
	}
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case bool:
		return strconv.FormatBool(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float32:
		return javafmt.Float(float64(x), 32)
	case float64:
		return javafmt.Float(x, 64)
	case iceberg.Date:
		return humanDay(int64(x))
	case iceberg.Time:
		return javaLocalTime(int64(x) * 1000)
	case iceberg.Timestamp:
		s := isoDateTime(floorDiv(int64(x), 1_000_000), floorMod(int64(x), 1_000_000)*1000)
		if _, tz := typ.(iceberg.TimestampTzType); tz {
			s += "+00:00"
		}
		return s
	case iceberg.TimestampNano:
		s := isoDateTime(floorDiv(int64(x), 1_000_000_000), floorMod(int64(x), 1_000_000_000))
		if _, tz := typ.(iceberg.TimestampTzNsType); tz {
			s += "+00:00"
		}
		return s
	case iceberg.Decimal:
		return javaBigDecimal(x.Val.BigInt(), x.Scale)
	case iceberg.DecimalLiteral:
		return javaBigDecimal(x.Val.BigInt(), x.Scale)
	case uuid.UUID:
		return x.String()
	case [16]byte:
		return uuid.UUID(x).String()
	}
	return fmt.Sprint(v)
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case iceberg.Date:
		return int64(x), true
	}
	return 0, false
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// javaInt04 is String.format("%04d", n): at least four digits, the sign
// counted in the width ("-001").
func javaInt04(n int64) string { return fmt.Sprintf("%04d", n) }

func pad2(n int64) string { return fmt.Sprintf("%02d", n) }

// humanDay is TransformUtil.humanDay: "%04d-%02d-%02d" of the day's date.
func humanDay(days int64) string {
	t := time.Unix(days*86400, 0).UTC()
	return javaInt04(int64(t.Year())) + "-" + pad2(int64(t.Month())) + "-" + pad2(int64(t.Day()))
}

// isoYear is the year as DateTimeFormatter.ISO_LOCAL_DATE prints it
// (appendValue(YEAR, 4, 10, EXCEEDS_PAD)): four digits, a "+" before a
// longer positive year, "-" before a negative one.
func isoYear(y int64) string {
	switch {
	case y < 0:
		return fmt.Sprintf("-%04d", -y)
	case y > 9999:
		return "+" + strconv.FormatInt(y, 10)
	}
	return fmt.Sprintf("%04d", y)
}

// isoDateTime is DateTimeFormatter.ISO_LOCAL_DATE_TIME of the UTC time
// sec seconds and nanos nanoseconds after the epoch: seconds always, the
// fraction without trailing zeros and only when not zero.
func isoDateTime(sec, nanos int64) string {
	t := time.Unix(sec, 0).UTC()
	s := isoYear(int64(t.Year())) + "-" + pad2(int64(t.Month())) + "-" + pad2(int64(t.Day())) +
		"T" + pad2(int64(t.Hour())) + ":" + pad2(int64(t.Minute())) + ":" + pad2(int64(t.Second()))
	if nanos != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%09d", nanos), "0")
	}
	return s
}

// javaLocalTime is java.time.LocalTime.toString of a time of day in
// nanoseconds: HH:mm, then :ss when seconds or nanoseconds are not zero,
// then the fraction in groups of three digits.
func javaLocalTime(nanoOfDay int64) string {
	h, rest := nanoOfDay/3_600_000_000_000, nanoOfDay%3_600_000_000_000
	m, rest := rest/60_000_000_000, rest%60_000_000_000
	sec, nano := rest/1_000_000_000, rest%1_000_000_000
	s := pad2(h) + ":" + pad2(m)
	if sec > 0 || nano > 0 {
		s += ":" + pad2(sec)
		switch {
		case nano == 0:
		case nano%1_000_000 == 0:
			s += fmt.Sprintf(".%03d", nano/1_000_000)
		case nano%1000 == 0:
			s += fmt.Sprintf(".%06d", nano/1000)
		default:
			s += fmt.Sprintf(".%09d", nano)
		}
	}
	return s
}

// javaBigDecimal is java.math.BigDecimal.toString of unscaled * 10^-scale:
// plain notation when scale >= 0 and the adjusted exponent is at least -6,
// else scientific ("1E-7", "0E-10", "1.23E-8").
func javaBigDecimal(unscaled *big.Int, scale int) string {
	neg := unscaled.Sign() < 0
	coeff := new(big.Int).Abs(unscaled).String()
	adjusted := -scale + (len(coeff) - 1)
	var s string
	switch {
	case scale == 0:
		s = coeff
	case scale > 0 && adjusted >= -6:
		if len(coeff) > scale {
			s = coeff[:len(coeff)-scale] + "." + coeff[len(coeff)-scale:]
		} else {
			s = "0." + strings.Repeat("0", scale-len(coeff)) + coeff
		}
	default:
		s = coeff[:1]
		if len(coeff) > 1 {
			s += "." + coeff[1:]
		}
		if adjusted != 0 {
			s += "E"
			if adjusted > 0 {
				s += "+"
			}
			s += strconv.Itoa(adjusted)
		}
	}
	if neg {
		s = "-" + s
	}
	return s
}
