// Package javafmt prints values the way the JVM does where Spark and
// Iceberg Java show them to users or put them in paths: a cast to string
// and a partition folder name must read the same as theirs.
package javafmt

import (
	"math"
	"strconv"
	"strings"
)

// Float is Float.toString / Double.toString (bits 32 or 64) as Java 19
// and later print it, the shortest digits that read back to the same value
// (the closest of those): "1.0", "-0.0", "NaN", "Infinity", plain from
// 10^-3 up to 10^7, else "1.0E10", "1.5E-5". Java 17 agrees except for
// integral floats from 2^24 and doubles from 2^53 (up to 2^63), which it
// prints with more digits ("1.43193216E8" for 1.4319322E8), and an
// occasional last digit of an equally short form.
func Float(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// d.ddde±x: the shortest digits and the decimal exponent.
	e := strconv.FormatFloat(f, 'e', -1, bits)
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	digits := strings.Replace(mant, ".", "", 1)
	// FloatingDecimal decides on the digits' exponent, not the exact value.
	if exp >= -3 && exp <= 6 {
		var ip, fp string
		if exp >= 0 {
			if len(digits) <= exp+1 {
				ip, fp = digits+strings.Repeat("0", exp+1-len(digits)), "0"
			} else {
				ip, fp = digits[:exp+1], digits[exp+1:]
			}
		} else {
			ip, fp = "0", strings.Repeat("0", -exp-1)+digits
		}
		return sign + ip + "." + fp
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(exp)
}
