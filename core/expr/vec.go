package expr

import (
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// vec is a column of values of one type during evaluation, held in typed
// slices: b for booleans, i for int/long/date/time/timestamps, f for
// float/double, d for decimals and s for strings and bytes.
type vec struct {
	t     iceberg.Type
	k     kind
	n     int
	valid []bool // nil: every row is valid
	b     []bool
	i     []int64
	f     []float64
	d     []decimal128.Num
	s     []string
}

func newVec(t iceberg.Type, n int) *vec {
	v := &vec{t: t, k: kindOf(t), n: n}
	switch v.k {
	case kBool:
		v.b = make([]bool, n)
	case kInt, kLong, kDate, kTime, kTS, kTSTZ:
		v.i = make([]int64, n)
	case kFloat, kDouble:
		v.f = make([]float64, n)
	case kDecimal:
		v.d = make([]decimal128.Num, n)
	case kString, kBinary, kFixed, kUUID:
		v.s = make([]string, n)
	case kNull:
		v.valid = make([]bool, n)
	}
	return v
}

// newVecValid allocates a vec with an explicit validity slice, all invalid.
func newVecValid(t iceberg.Type, n int) *vec {
	v := newVec(t, n)
	if v.valid == nil {
		v.valid = make([]bool, n)
	}
	return v
}

func (v *vec) ok(i int) bool { return v.valid == nil || v.valid[i] }

func (v *vec) get(i int) value {
	if !v.ok(i) {
		return nullValue
	}
	switch v.k {
	case kBool:
		return value{b: v.b[i]}
	case kInt, kLong, kDate, kTime, kTS, kTSTZ:
		return value{i: v.i[i]}
	case kFloat, kDouble:
		return value{f: v.f[i]}
	case kDecimal:
		return value{d: v.d[i]}
	case kString, kBinary, kFixed, kUUID:
		return value{s: v.s[i]}
	}
	return nullValue
}

// set stores x at row i; v must have an explicit validity slice.
func (v *vec) set(i int, x value) {
	if x.null {
		v.valid[i] = false
		return
	}
	v.valid[i] = true
	v.setRaw(i, x)
}

// broadcast makes a vec of n copies of x.
func broadcast(x value, t iceberg.Type, n int) *vec {
	v := newVec(t, n)
	if x.null {
		v.valid = make([]bool, n)
		return v
	}
	switch v.k {
	case kBool:
		for j := range v.b {
			v.b[j] = x.b
		}
	case kInt, kLong, kDate, kTime, kTS, kTSTZ:
		for j := range v.i {
			v.i[j] = x.i
		}
	case kFloat, kDouble:
		for j := range v.f {
			v.f[j] = x.f
		}
	case kDecimal:
		for j := range v.d {
			v.d[j] = x.d
		}
	case kString, kBinary, kFixed, kUUID:
		for j := range v.s {
			v.s[j] = x.s
		}
	}
	return v
}

// andValid combines validity: a row is valid when it is valid in every input.
func andValid(n int, vs ...*vec) []bool {
	var out []bool
	for _, v := range vs {
		if v.valid == nil {
			continue
		}
		if out == nil {
			out = make([]bool, n)
			copy(out, v.valid)
			continue
		}
		for i, ok := range v.valid {
			out[i] = out[i] && ok
		}
	}
	return out
}

// active reports whether row i is selected by mask (nil selects all).
func active(mask []bool, i int) bool { return mask == nil || mask[i] }

// live reports whether row i is selected and valid in all vs: only such rows
// can raise evaluation errors.
func live(mask, valid []bool, i int) bool {
	return (mask == nil || mask[i]) && (valid == nil || valid[i])
}
