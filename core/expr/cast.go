package expr

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/pyiceberg-go/pyiceberg-go/core/internal/javafmt"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// cast converts x to n.typ with Spark's ANSI rules: invalid input and
// overflow are errors for active rows.
func (ev *evaluator) cast(n *bnode, x *vec, mask []bool) (*vec, error) {
	to := n.typ
	out := newVec(to, ev.n)
	if x.k == kNull {
		out.valid = make([]bool, ev.n)
		return out, nil
	}
	out.valid = x.valid
	fk, tk := x.k, out.k
	failRow := func(i int, format string, a ...any) error {
		if live(mask, x.valid, i) {
			return ev.fail(n, format, a...)
		}
		return nil
	}
	invalid := func(i int) error {
		return failRow(i, "cannot cast %s to %s", sqlLiteral(x.get(i), x.t), sqlType(to))
	}
	overflow := func(i int) error {
		return failRow(i, "value %s is out of range for %s", sqlLiteral(x.get(i), x.t), sqlType(to))
	}
	switch {
	case tk == kString:
		conv := n.zone.Converter()
		for i := range out.s {
			if x.ok(i) {
				out.s[i] = toText(x, i, conv)
			}
		}
	case fk == kString:
		for i, s := range x.s {
			if !x.ok(i) {
				continue
			}
			v, ok := parseText(s, out, n.zone)
			if !ok {
				if err := invalid(i); err != nil {
					return nil, err
				}
				continue
			}
			if !fits(v, out) {
				if err := overflow(i); err != nil {
					return nil, err
				}
				continue
			}
			out.setRaw(i, v)
		}
	case isIntegral(fk) || fk == kBool:
		for i := 0; i < ev.n; i++ {
			a := int64(0)
			if fk == kBool {
				if x.b[i] {
					a = 1
				}
			} else {
				a = x.i[i]
			}
			var v value
			switch tk {
			case kBool:
				v.b = a != 0
			case kInt, kLong:
				v.i = a
			case kFloat:
				v.f = float64(float32(a))
			case kDouble:
				v.f = float64(a)
			case kDecimal:
				v.d = decimal128.FromBigInt(new(big.Int).Mul(big.NewInt(a), pow10(scaleOf(to))))
				if new(big.Int).Abs(new(big.Int).Mul(big.NewInt(a), pow10(scaleOf(to)))).Cmp(pow10(precOf(to))) >= 0 {
					if err := overflow(i); err != nil {
						return nil, err
					}
					continue
				}
			}
			if !fits(v, out) {
				if err := overflow(i); err != nil {
					return nil, err
				}
				continue
			}
			out.setRaw(i, v)
		}
	case fk == kFloat || fk == kDouble:
		for i, f := range x.f {
			var v value
			switch tk {
			case kBool:
				v.b = f != 0
			case kFloat:
				v.f = float64(float32(f))
			case kDouble:
				v.f = f
			case kInt, kLong:
				// as Spark: floor/ceil must lie within the long range compared as
				// doubles, so 2^63 itself saturates to the maximum
				if math.IsNaN(f) || f > 0x1p63 || f < -0x1p63 {
					if err := overflow(i); err != nil {
						return nil, err
					}
					continue
				}
				if f == 0x1p63 {
					v.i = math.MaxInt64
				} else {
					v.i = int64(f)
				}
			case kDecimal:
				if math.IsNaN(f) || math.IsInf(f, 0) {
					if err := overflow(i); err != nil {
						return nil, err
					}
					continue
				}
				// from the shortest decimal text, as Spark's BigDecimal(double)
				d, ok := parseDecimal(strconv.FormatFloat(f, 'g', -1, 64), scaleOf(to))
				if !ok || !d.FitsInPrecision(int32(precOf(to))) {
					if err := overflow(i); err != nil {
						return nil, err
					}
					continue
				}
				v.d = d
			}
			if !fits(v, out) {
				if err := overflow(i); err != nil {
					return nil, err
				}
				continue
			}
			out.setRaw(i, v)
		}
	case fk == kDecimal && tk == kDecimal && scaleOf(x.t) == scaleOf(to) && precOf(to) >= precOf(x.t):
		out.d = x.d // a wider precision keeps the unscaled values
	case fk == kDecimal:
		fs := scaleOf(x.t)
		for i, d := range x.d {
			if !x.ok(i) {
				continue
			}
			var v value
			switch tk {
			case kBool:
				v.b = d.Sign() != 0
			case kFloat, kDouble:
				// via text: correctly rounded, as Java's BigDecimal.doubleValue
				f, _ := strconv.ParseFloat(d.ToString(int32(fs)), 64)
				if tk == kFloat {
					f32, _ := strconv.ParseFloat(d.ToString(int32(fs)), 32)
					f = f32
				}
				v.f = f
			case kInt, kLong:
				q := new(big.Int).Quo(d.BigInt(), pow10(fs)) // truncates toward zero
				if !q.IsInt64() {
					if err := overflow(i); err != nil {
						return nil, err
					}
					continue
				}
				v.i = q.Int64()
			case kDecimal:
				r := rescaleBig(d.BigInt(), fs, scaleOf(to))
				if new(big.Int).Abs(r).Cmp(pow10(precOf(to))) >= 0 {
					if err := overflow(i); err != nil {
						return nil, err
					}
					continue
				}
				v.d = decimal128.FromBigInt(r)
			}
			if !fits(v, out) {
				if err := overflow(i); err != nil {
					return nil, err
				}
				continue
			}
			out.setRaw(i, v)
		}
	case isTime(fk) && isTime(tk):
		// Between wall-clock values (date, timestamp_ntz) and instants
		// (timestamp) in the session time zone, as Spark's casts.
		conv := n.zone.Converter()
		utc := n.zone.IsUTC()
		for i, a := range x.i {
			if !x.ok(i) {
				continue
			}
			ok := true
			switch {
			case fk == kDate && tk == kTSTZ && !utc:
				out.i[i] = conv.StartOfDay(a) * 1_000_000
			case fk == kDate && tk != kDate:
				out.i[i] = a * 86_400_000_000
			case fk == kTSTZ && tk == kDate && !utc:
				var w int64
				w, ok = conv.ToWall(a, 1_000_000)
				out.i[i] = floorDiv(w, 86_400_000_000)
			case fk != kDate && tk == kDate:
				out.i[i] = floorDiv(a, 86_400_000_000)
			case fk == kTS && tk == kTSTZ && !utc:
				out.i[i], ok = conv.ToInstant(a, 1_000_000)
			case fk == kTSTZ && tk == kTS && !utc:
				out.i[i], ok = conv.ToWall(a, 1_000_000)
			default:
				out.i[i] = a
			}
			if !ok {
				if err := overflow(i); err != nil {
					return nil, err
				}
			}
		}
	case (fk == kBinary || fk == kFixed) && tk == kFixed:
		want := to.(iceberg.FixedType).Len()
		for i, s := range x.s {
			if x.ok(i) && len(s) != want {
				if err := failRow(i, "cannot store %s (%d bytes) in %s", sqlLiteral(x.get(i), x.t), len(s), sqlType(to)); err != nil {
					return nil, err
				}
			}
		}
		copy(out.s, x.s)
	case isBytes(fk) && isBytes(tk):
		copy(out.s, x.s)
	default:
		return nil, ev.fail(n, "cannot cast %s to %s", sqlType(x.t), sqlType(to))
	}
	return out, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// setRaw stores a valid value at row i.
func (v *vec) setRaw(i int, x value) {
	switch v.k {
	case kBool:
		v.b[i] = x.b
	case kInt, kLong, kDate, kTime, kTS, kTSTZ:
		v.i[i] = x.i
	case kFloat, kDouble:
		v.f[i] = x.f
	case kDecimal:
		v.d[i] = x.d
	case kString, kBinary, kFixed, kUUID:
		v.s[i] = x.s
	}
}

// fits reports whether an integral value is within the range of out's type.
func fits(v value, out *vec) bool {
	if out.k == kInt {
		return v.i >= math.MinInt32 && v.i <= math.MaxInt32
	}
	return true
}

// parseText parses a string for a cast to out's type; a timestamp without
// a zone is a wall-clock time in zone.
func parseText(s string, out *vec, zone *tz.Zone) (value, bool) {
	t := strings.TrimSpace(s)
	switch out.k {
	case kBool:
		switch strings.ToLower(t) {
		case "t", "true", "y", "yes", "1":
			return value{b: true}, true
		case "f", "false", "n", "no", "0":
			return value{b: false}, true
		}
	case kInt, kLong:
		body := t
		if i := strings.IndexByte(t, '.'); i >= 0 {
			frac := t[i+1:]
			if strings.Trim(frac, "0123456789") != "" {
				return value{}, false
			}
			body = t[:i]
			if body == "" || body == "-" || body == "+" {
				if frac == "" {
					return value{}, false
				}
				body += "0"
			}
		}
		v, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return value{}, false
		}
		return value{i: v}, true
	case kFloat, kDouble:
		var f float64
		switch strings.ToLower(t) {
		case "nan":
			f = math.NaN()
		case "inf", "infinity", "+inf", "+infinity":
			f = math.Inf(1)
		case "-inf", "-infinity":
			f = math.Inf(-1)
		default:
			var err error
			t = strings.TrimRight(t, "dDfF")
			if f, err = strconv.ParseFloat(t, 64); err != nil {
				return value{}, false
			}
		}
		if out.k == kFloat {
			f = float64(float32(f))
		}
		return value{f: f}, true
	case kDecimal:
		d, ok := parseDecimal(t, scaleOf(out.t))
		if !ok || !d.FitsInPrecision(int32(precOf(out.t))) {
			return value{}, false
		}
		return value{d: d}, true
	case kDate:
		if d, ok := parseDate(t); ok {
			return value{i: d}, true
		}
		// the date part of a timestamp text, whatever its zone
		if wall, _, ok := parseTimestamp(t); ok {
			return value{i: floorDiv(wall, 86_400_000_000)}, true
		}
	case kTS:
		// a zone in the text is ignored, as Spark's cast to TIMESTAMP_NTZ does
		if wall, _, ok := parseTimestamp(t); ok {
			return value{i: wall}, true
		}
	case kTSTZ:
		if ts, ok := instantOfText(t, zone); ok {
			return value{i: ts}, true
		}
	case kTime:
		if us, ok := parseTime(t); ok {
			return value{i: us}, true
		}
	case kUUID:
		if u, err := uuid.Parse(t); err == nil {
			return value{s: string(u[:])}, true
		}
	case kBinary:
		return value{s: s}, true
	}
	return value{}, false
}

// toText renders row i of x as Spark's cast to string does: a timestamp
// (with zone) as the wall-clock time conv's zone shows.
func toText(x *vec, i int, conv *tz.Converter) string {
	switch x.k {
	case kBool:
		return strconv.FormatBool(x.b[i])
	case kInt, kLong:
		return strconv.FormatInt(x.i[i], 10)
	case kFloat:
		return javafmt.Float(x.f[i], 32)
	case kDouble:
		return javafmt.Float(x.f[i], 64)
	case kDecimal:
		return x.d[i].ToString(int32(scaleOf(x.t)))
	case kDate:
		return formatDate(x.i[i])
	case kTS:
		return formatTS(x.i[i], false)
	case kTSTZ:
		if w, ok := conv.ToWall(x.i[i], 1_000_000); ok {
			return formatTS(w, false)
		}
		return formatTS(x.i[i], false)
	case kTime:
		return formatTime(x.i[i])
	case kUUID:
		u, _ := uuid.FromBytes([]byte(x.s[i]))
		return u.String()
	}
	return x.s[i]
}
