package expr

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// evaluator evaluates bound nodes over one batch. Every node is evaluated
// under a mask of active rows; rows outside the mask produce arbitrary
// values and never raise errors (CASE, IF, COALESCE, AND and OR evaluate
// their later operands only where Spark would).
type evaluator struct {
	ctx  context.Context
	src  string
	n    int
	load func(c *colRef) (*vec, error) // column loader; cached per batch
}

// Eval evaluates e over rec (columns named as in the table schema) and
// returns an array of e's Arrow type with rec.NumRows() rows; predicates give
// a boolean array with nulls for UNKNOWN. Arithmetic overflow, division by
// zero and invalid casts fail with an *Error, as Spark does in ANSI mode.
// For an expression bound with BindScopes, rec is the batch of scope 0.
func (e *Expr) Eval(ctx context.Context, rec arrow.RecordBatch, mem memory.Allocator) (arrow.Array, error) {
	return e.EvalScopes(ctx, []arrow.RecordBatch{rec}, mem)
}

// EvalScopes evaluates e over one batch per scope (recs[k] for scope k),
// all with the same number of rows: rows i of the batches form joined row
// i. A batch may be nil, or recs shorter than the scopes, for scopes e does
// not read (see Scopes). Results and errors are as for Eval.
func (e *Expr) EvalScopes(ctx context.Context, recs []arrow.RecordBatch, mem memory.Allocator) (out arrow.Array, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("internal error evaluating %q: %v: %w", e.src, r, errs.ErrValidation)
		}
	}()
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := -1
	for k, rec := range recs {
		if rec == nil {
			continue
		}
		if rows := int(rec.NumRows()); n < 0 {
			n = rows
		} else if rows != n {
			return nil, bindErr(e.src, 0, "the batch of %s has %d rows, the others %d", e.scopeName(k), rows, n)
		}
	}
	for _, k := range e.Scopes() {
		if k >= len(recs) || recs[k] == nil {
			return nil, bindErr(e.src, 0, "no batch for %s, which the expression reads", e.scopeName(k))
		}
	}
	if n < 0 {
		return nil, bindErr(e.src, 0, "no batch to evaluate over")
	}
	// a bare top-level column of the right Arrow type is returned as is
	// (nested fields need their parents' nulls applied)
	if c := e.root.col; e.root.op == opCol && len(c.path) == 1 {
		if arr, err := columnArray(recs[c.scope], c); err == nil && arrow.TypeEqual(arr.DataType(), arrowType(e.root.typ)) {
			arr.Retain()
			return arr, nil
		}
	}
	cache := map[*colRef]*vec{}
	ev := &evaluator{ctx: ctx, src: e.src, n: n, load: func(c *colRef) (*vec, error) {
		if v, ok := cache[c]; ok {
			return v, nil
		}
		v, err := loadColumn(recs[c.scope], c, e.src)
		if err != nil {
			return nil, err
		}
		cache[c] = v
		return v, nil
	}}
	v, err := ev.eval(e.root, nil)
	if err != nil {
		return nil, err
	}
	return toArrow(v, mem)
}

// foldConst evaluates a node without columns on one row (bind-time folding).
func foldConst(n *bnode) (value, error) {
	ev := &evaluator{ctx: context.Background(), n: 1, load: func(*colRef) (*vec, error) {
		return nil, bindErr("", 0, "column in constant")
	}}
	v, err := ev.eval(n, nil)
	if err != nil {
		if e, ok := err.(*Error); ok {
			return value{}, errString(e.Msg)
		}
		return value{}, err
	}
	return v.get(0), nil
}

type errString string

func (e errString) Error() string { return string(e) }

func (ev *evaluator) fail(n *bnode, format string, a ...any) error {
	return bindErr(ev.src, n.pos, format, a...)
}

func (ev *evaluator) eval(n *bnode, mask []bool) (*vec, error) {
	switch n.op {
	case opLit:
		return broadcast(n.val, n.typ, ev.n), nil
	case opCol:
		return ev.load(n.col)
	case opNot:
		x, err := ev.eval(n.kids[0], mask)
		if err != nil {
			return nil, err
		}
		out := &vec{t: tBool, k: kBool, n: ev.n, valid: x.valid, b: make([]bool, ev.n)}
		for i, b := range x.b {
			out.b[i] = !b
		}
		return out, nil
	case opAnd, opOr:
		return ev.logic(n, mask)
	case opCmp:
		return ev.compare(n, mask)
	case opArith:
		return ev.arith(n, mask)
	case opNeg:
		return ev.neg(n, mask)
	case opIs:
		x, err := ev.eval(n.kids[0], mask)
		if err != nil {
			return nil, err
		}
		out := newVec(tBool, ev.n)
		for i := range out.b {
			ok := x.ok(i)
			switch n.sub {
			case "NULL":
				out.b[i] = !ok
			case "NOT NULL":
				out.b[i] = ok
			case "TRUE":
				out.b[i] = ok && x.b[i]
			case "NOT TRUE":
				out.b[i] = !ok || !x.b[i]
			case "FALSE":
				out.b[i] = ok && !x.b[i]
			case "NOT FALSE":
				out.b[i] = !ok || x.b[i]
			}
		}
		return out, nil
	case opIn:
		return ev.in(n, mask)
	case opLike:
		return ev.likeEval(n, mask)
	case opCast:
		x, err := ev.eval(n.kids[0], mask)
		if err != nil {
			return nil, err
		}
		return ev.cast(n, x, mask)
	case opCase:
		return ev.caseEval(n, mask)
	case opCoalesce:
		return ev.coalesce(n, mask)
	case opFunc:
		return ev.function(n, mask)
	}
	return nil, ev.fail(n, "cannot evaluate %s", n.String())
}

// narrow returns the rows of mask for which keep is true.
func narrow(mask []bool, n int, keep func(i int) bool) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = active(mask, i) && keep(i)
	}
	return out
}

func (ev *evaluator) logic(n *bnode, mask []bool) (*vec, error) {
	isAnd := n.op == opAnd
	l, err := ev.eval(n.kids[0], mask)
	if err != nil {
		return nil, err
	}
	// the right side only matters where the left does not decide
	m2 := narrow(mask, ev.n, func(i int) bool { return !l.ok(i) || l.b[i] == isAnd })
	r, err := ev.eval(n.kids[1], m2)
	if err != nil {
		return nil, err
	}
	out := newVecValid(tBool, ev.n)
	for i := 0; i < ev.n; i++ {
		lo, ro := l.ok(i), r.ok(i)
		switch {
		case lo && l.b[i] != isAnd: // FALSE AND x, TRUE OR x
			out.valid[i], out.b[i] = true, !isAnd
		case ro && r.b[i] != isAnd:
			out.valid[i], out.b[i] = true, !isAnd
		case lo && ro:
			out.valid[i], out.b[i] = true, isAnd
		}
	}
	return out, nil
}

// cmpFloat orders floats as Spark does: NaN equals NaN and is above every other value.
func cmpFloat(a, b float64) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

func cmpBool(a, b bool) int {
	if a == b {
		return 0
	}
	if b {
		return -1
	}
	return 1
}

// cmpAt compares row i of a with row j of b (same kind, both valid).
func cmpAt(a *vec, i int, b *vec, j int) int {
	switch a.k {
	case kBool:
		return cmpBool(a.b[i], b.b[j])
	case kInt, kLong, kDate, kTime, kTS, kTSTZ:
		return cmpInt(a.i[i], b.i[j])
	case kFloat, kDouble:
		return cmpFloat(a.f[i], b.f[j])
	case kDecimal:
		return a.d[i].Cmp(b.d[j])
	default:
		return strings.Compare(a.s[i], b.s[j])
	}
}

// cmpValues compares two valid values of kind k.
func cmpValues(k kind, a, b value) int {
	switch k {
	case kBool:
		return cmpBool(a.b, b.b)
	case kInt, kLong, kDate, kTime, kTS, kTSTZ:
		return cmpInt(a.i, b.i)
	case kFloat, kDouble:
		return cmpFloat(a.f, b.f)
	case kDecimal:
		return a.d.Cmp(b.d)
	default:
		return strings.Compare(a.s, b.s)
	}
}

func cmpHolds(o string, c int) bool {
	switch o {
	case "=", "<=>":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

func (ev *evaluator) compare(n *bnode, mask []bool) (*vec, error) {
	if n.sub != "<=>" {
		// column op literal: compare against the scalar without broadcasting
		x, lit, o := n.kids[0], n.kids[1], n.sub
		if x.op == opLit {
			x, lit, o = lit, x, flipOp[o]
		}
		if lit.op == opLit && x.op != opLit {
			out := newVec(tBool, ev.n)
			if lit.val.null {
				// NULL op x is NULL; x is not evaluated (Spark folds it away)
				out.valid = make([]bool, ev.n)
				return out, nil
			}
			v, err := ev.eval(x, mask)
			if err != nil {
				return nil, err
			}
			if v.k == kNull {
				out.valid = make([]bool, ev.n)
				return out, nil
			}
			out.valid = v.valid
			c := lit.val
			switch v.k {
			case kInt, kLong, kDate, kTime, kTS, kTSTZ:
				cmpScalar(out.b, v.i, c.i, o)
			case kString, kBinary, kFixed, kUUID:
				cmpScalar(out.b, v.s, c.s, o)
			case kFloat, kDouble:
				for i, f := range v.f {
					out.b[i] = cmpHolds(o, cmpFloat(f, c.f))
				}
			case kDecimal:
				for i, d := range v.d {
					out.b[i] = cmpHolds(o, d.Cmp(c.d))
				}
			case kBool:
				for i, b := range v.b {
					out.b[i] = cmpHolds(o, cmpBool(b, c.b))
				}
			}
			return out, nil
		}
	}
	l, r, err := ev.binaryArgs(n, mask, n.sub != "<=>")
	if err != nil {
		return nil, err
	}
	out := newVec(tBool, ev.n)
	o := n.sub
	if o == "<=>" {
		for i := range out.b {
			lo, ro := l.ok(i), r.ok(i)
			out.b[i] = lo == ro && (!lo || cmpAt(l, i, r, i) == 0)
		}
		return out, nil
	}
	out.valid = andValid(ev.n, l, r)
	switch l.k {
	case kInt, kLong, kDate, kTime, kTS, kTSTZ:
		cmpLoop(out.b, l.i, r.i, o)
	case kString, kBinary, kFixed, kUUID:
		cmpLoop(out.b, l.s, r.s, o)
	case kNull:
		out.valid = make([]bool, ev.n)
	default:
		for i := range out.b {
			if out.valid == nil || out.valid[i] {
				out.b[i] = cmpHolds(o, cmpAt(l, i, r, i))
			}
		}
	}
	return out, nil
}

func isNullLit(n *bnode) bool { return n.op == opLit && n.val.null }

// binaryArgs evaluates both operands; with nullSkip the right one only
// where the left is not NULL, as Spark does.
func (ev *evaluator) binaryArgs(n *bnode, mask []bool, nullSkip bool) (*vec, *vec, error) {
	if nullSkip && (isNullLit(n.kids[0]) || isNullLit(n.kids[1])) {
		// x op NULL is NULL without evaluating x, as Spark's optimizer folds it
		nl := broadcast(nullValue, n.kids[0].typ, ev.n)
		return nl, broadcast(nullValue, n.kids[1].typ, ev.n), nil
	}
	l, err := ev.eval(n.kids[0], mask)
	if err != nil {
		return nil, nil, err
	}
	m2 := mask
	if nullSkip && l.valid != nil {
		m2 = narrow(mask, ev.n, l.ok)
	}
	r, err := ev.eval(n.kids[1], m2)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

func cmpScalar[T int64 | string](out []bool, a []T, c T, o string) {
	switch o {
	case "=":
		for i, x := range a {
			out[i] = x == c
		}
	case "!=":
		for i, x := range a {
			out[i] = x != c
		}
	case "<":
		for i, x := range a {
			out[i] = x < c
		}
	case "<=":
		for i, x := range a {
			out[i] = x <= c
		}
	case ">":
		for i, x := range a {
			out[i] = x > c
		}
	case ">=":
		for i, x := range a {
			out[i] = x >= c
		}
	}
}

func cmpLoop[T int64 | string](out []bool, a, b []T, o string) {
	switch o {
	case "=":
		for i := range out {
			out[i] = a[i] == b[i]
		}
	case "!=":
		for i := range out {
			out[i] = a[i] != b[i]
		}
	case "<":
		for i := range out {
			out[i] = a[i] < b[i]
		}
	case "<=":
		for i := range out {
			out[i] = a[i] <= b[i]
		}
	case ">":
		for i := range out {
			out[i] = a[i] > b[i]
		}
	case ">=":
		for i := range out {
			out[i] = a[i] >= b[i]
		}
	}
}

func (ev *evaluator) arith(n *bnode, mask []bool) (*vec, error) {
	l, r, err := ev.binaryArgs(n, mask, true)
	if err != nil {
		return nil, err
	}
	out := newVec(n.typ, ev.n)
	out.valid = andValid(ev.n, l, r)
	o := n.sub
	switch out.k {
	case kInt, kLong:
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		if out.k == kLong {
			lo, hi = math.MinInt64, math.MaxInt64
		}
		for i := range out.i {
			a, b := l.i[i], r.i[i]
			var res int64
			bad := false
			switch o {
			case "+":
				res = a + b
				bad = (a^res)&(b^res) < 0
			case "-":
				res = a - b
				bad = (a^b)&(a^res) < 0
			case "*":
				res = a * b
				bad = a != 0 && (res/a != b || a == -1 && b == math.MinInt64)
			case "%":
				if b == 0 {
					if live(mask, out.valid, i) {
						return nil, ev.fail(n, "division by zero in %s", n.String())
					}
					continue
				}
				res = a % b
			}
			if bad || res < lo || res > hi {
				if live(mask, out.valid, i) {
					return nil, ev.fail(n, "integer overflow in %s", n.String())
				}
				continue
			}
			out.i[i] = res
		}
	case kFloat, kDouble:
		for i := range out.f {
			a, b := l.f[i], r.f[i]
			var res float64
			switch o {
			case "+":
				res = a + b
			case "-":
				res = a - b
			case "*":
				res = a * b
			case "/", "%":
				if b == 0 {
					if live(mask, out.valid, i) {
						return nil, ev.fail(n, "division by zero in %s", n.String())
					}
					continue
				}
				if o == "/" {
					res = a / b
				} else {
					res = math.Mod(a, b)
				}
			}
			if out.k == kFloat {
				res = float64(float32(res))
			}
			out.f[i] = res
		}
	case kDecimal:
		return ev.decimalArith(n, l, r, out, mask)
	}
	return out, nil
}

func scaleOf(t iceberg.Type) int { return t.(iceberg.DecimalType).Scale() }
func precOf(t iceberg.Type) int  { return t.(iceberg.DecimalType).Precision() }

// rescaleBig changes x from scale `from` to scale `to`, rounding half up.
func rescaleBig(x *big.Int, from, to int) *big.Int {
	if to >= from {
		return x.Mul(x, pow10(to-from))
	}
	d := pow10(from - to)
	q, m := new(big.Int).QuoRem(x, d, new(big.Int))
	if m.Abs(m).Lsh(m, 1).Cmp(d) >= 0 {
		if x.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return x.Set(q)
}

func (ev *evaluator) decimalArith(n *bnode, l, r, out *vec, mask []bool) (*vec, error) {
	s1, s2, s, p := scaleOf(l.t), scaleOf(r.t), scaleOf(n.typ), precOf(n.typ)
	limit := pow10(p)
	for i := range out.d {
		if out.valid != nil && !out.valid[i] {
			continue
		}
		a, b := l.d[i].BigInt(), r.d[i].BigInt()
		var res *big.Int
		switch n.sub {
		case "+", "-", "%":
			m := max(s1, s2)
			a = rescaleBig(a, s1, m)
			b = rescaleBig(b, s2, m)
			switch n.sub {
			case "+":
				res = a.Add(a, b)
			case "-":
				res = a.Sub(a, b)
			default:
				if b.Sign() == 0 {
					if active(mask, i) {
						return nil, ev.fail(n, "division by zero in %s", n.String())
					}
					continue
				}
				res = a.Rem(a, b)
			}
			res = rescaleBig(res, m, s)
		case "*":
			res = rescaleBig(a.Mul(a, b), s1+s2, s)
		case "/":
			if b.Sign() == 0 {
				if active(mask, i) {
					return nil, ev.fail(n, "division by zero in %s", n.String())
				}
				continue
			}
			// a/10^s1 / (b/10^s2) at scale s = a*10^(s+s2-s1) / b, rounded half up
			e := s + s2 - s1
			if e >= 0 {
				a.Mul(a, pow10(e))
			} else {
				b.Mul(b, pow10(-e))
			}
			q, m := new(big.Int).QuoRem(a, b, new(big.Int))
			if m.Abs(m).Lsh(m, 1).CmpAbs(b) >= 0 {
				if a.Sign()*b.Sign() < 0 {
					q.Sub(q, big.NewInt(1))
				} else {
					q.Add(q, big.NewInt(1))
				}
			}
			res = q
		}
		if new(big.Int).Abs(res).Cmp(limit) >= 0 {
			if active(mask, i) {
				return nil, ev.fail(n, "decimal overflow in %s: the result does not fit %s", n.String(), sqlType(n.typ))
			}
			continue
		}
		out.d[i] = decimal128.FromBigInt(res)
	}
	return out, nil
}

func (ev *evaluator) neg(n *bnode, mask []bool) (*vec, error) {
	x, err := ev.eval(n.kids[0], mask)
	if err != nil {
		return nil, err
	}
	out := newVec(n.typ, ev.n)
	out.valid = x.valid
	switch x.k {
	case kInt, kLong:
		minV := int64(math.MinInt32)
		if x.k == kLong {
			minV = math.MinInt64
		}
		for i, a := range x.i {
			if a == minV {
				if live(mask, x.valid, i) {
					return nil, ev.fail(n, "integer overflow in %s", n.String())
				}
				continue
			}
			out.i[i] = -a
		}
	case kFloat, kDouble:
		for i, a := range x.f {
			out.f[i] = -a
		}
	case kDecimal:
		for i, a := range x.d {
			out.d[i] = a.Negate()
		}
	}
	return out, nil
}

func (ev *evaluator) in(n *bnode, mask []bool) (*vec, error) {
	x, err := ev.eval(n.kids[0], mask)
	if err != nil {
		return nil, err
	}
	if out, ok := inLiterals(n, x); ok {
		return out, nil
	}
	out := newVecValid(tBool, ev.n)
	// like Spark, the list is evaluated in order and only until a match
	pending := narrow(mask, ev.n, x.ok)
	sawNull := make([]bool, ev.n)
	for _, k := range n.kids[1:] {
		l, err := ev.eval(k, pending)
		if err != nil {
			return nil, err
		}
		for i, p := range pending {
			if !p {
				continue
			}
			if !l.ok(i) {
				sawNull[i] = true
			} else if cmpAt(x, i, l, i) == 0 {
				pending[i] = false
				out.valid[i], out.b[i] = true, !n.not
			}
		}
	}
	for i := range out.b {
		if x.ok(i) && !out.valid[i] && !sawNull[i] {
			out.valid[i], out.b[i] = true, n.not
		}
	}
	return out, nil
}

// inLiterals evaluates x IN (literals) with a hash set for integer-like and
// string-like kinds; ok is false when the list is not all literals.
func inLiterals(n *bnode, x *vec) (*vec, bool) {
	hasNull := false
	for _, k := range n.kids[1:] {
		if k.op != opLit {
			return nil, false
		}
		hasNull = hasNull || k.val.null
	}
	out := newVec(tBool, x.n)
	set := func(i int, found bool) {
		if !found && hasNull {
			if out.valid == nil {
				out.valid = make([]bool, x.n)
				for j := range out.valid {
					out.valid[j] = x.ok(j)
				}
			}
			out.valid[i] = false
			return
		}
		out.b[i] = found != n.not
	}
	out.valid = x.valid
	if x.valid != nil {
		out.valid = append([]bool(nil), x.valid...)
	}
	switch x.k {
	case kInt, kLong, kDate, kTime, kTS, kTSTZ:
		m := map[int64]struct{}{}
		for _, k := range n.kids[1:] {
			if !k.val.null {
				m[k.val.i] = struct{}{}
			}
		}
		for i, v := range x.i {
			_, found := m[v]
			set(i, found)
		}
	case kString, kBinary, kFixed, kUUID:
		m := map[string]struct{}{}
		for _, k := range n.kids[1:] {
			if !k.val.null {
				m[k.val.s] = struct{}{}
			}
		}
		for i, v := range x.s {
			_, found := m[v]
			set(i, found)
		}
	default:
		return nil, false
	}
	// rows where x is NULL stay NULL
	if x.valid != nil {
		for i, ok := range x.valid {
			if !ok {
				out.valid[i] = false
			}
		}
	}
	return out, true
}

func (ev *evaluator) likeEval(n *bnode, mask []bool) (*vec, error) {
	x, err := ev.eval(n.kids[0], mask)
	if err != nil {
		return nil, err
	}
	out := newVec(tBool, ev.n)
	if n.like == nil {
		out.valid = make([]bool, ev.n)
		return out, nil
	}
	out.valid = x.valid
	m := n.like
	for i, s := range x.s {
		out.b[i] = m.match(s) != n.not
	}
	return out, nil
}

func (ev *evaluator) caseEval(n *bnode, mask []bool) (*vec, error) {
	out := newVecValid(n.typ, ev.n)
	remaining := narrow(mask, ev.n, func(int) bool { return true })
	k := n.kids
	i := 0
	for ; i+1 < len(k); i += 2 {
		c, err := ev.eval(k[i], remaining)
		if err != nil {
			return nil, err
		}
		sel := narrow(remaining, ev.n, func(r int) bool { return c.ok(r) && c.b[r] })
		th, err := ev.eval(k[i+1], sel)
		if err != nil {
			return nil, err
		}
		for r, s := range sel {
			if s {
				out.set(r, th.get(r))
				remaining[r] = false
			}
		}
	}
	if n.hasElse {
		e, err := ev.eval(k[i], remaining)
		if err != nil {
			return nil, err
		}
		for r, s := range remaining {
			if s {
				out.set(r, e.get(r))
			}
		}
	}
	return out, nil
}

func (ev *evaluator) coalesce(n *bnode, mask []bool) (*vec, error) {
	out := newVecValid(n.typ, ev.n)
	remaining := narrow(mask, ev.n, func(int) bool { return true })
	for _, k := range n.kids {
		v, err := ev.eval(k, remaining)
		if err != nil {
			return nil, err
		}
		for r, s := range remaining {
			if s && v.ok(r) {
				out.set(r, v.get(r))
				remaining[r] = false
			}
		}
	}
	return out, nil
}

func (ev *evaluator) function(n *bnode, mask []bool) (*vec, error) {
	args := make([]*vec, len(n.kids))
	m := mask
	for j, k := range n.kids {
		var err error
		if args[j], err = ev.eval(k, m); err != nil {
			return nil, err
		}
		// as Spark's binary/ternary expressions, later arguments are only
		// evaluated where the earlier ones are not NULL (concat evaluates all)
		if n.sub != "concat" && args[j].valid != nil {
			m = narrow(m, ev.n, args[j].ok)
		}
	}
	out := newVec(n.typ, ev.n)
	out.valid = andValid(ev.n, args...)
	a := args[0]
	switch n.sub {
	case "lower", "upper", "trim", "ltrim", "rtrim":
		f := map[string]func(string) string{
			"lower": strings.ToLower, "upper": strings.ToUpper,
			"trim":  func(s string) string { return strings.Trim(s, " ") },
			"ltrim": func(s string) string { return strings.TrimLeft(s, " ") },
			"rtrim": func(s string) string { return strings.TrimRight(s, " ") },
		}[n.sub]
		for i, s := range a.s {
			out.s[i] = f(s)
		}
	case "length":
		for i, s := range a.s {
			if a.k == kString {
				out.i[i] = int64(utf8.RuneCountInString(s))
			} else {
				out.i[i] = int64(len(s))
			}
		}
	case "abs":
		switch a.k {
		case kInt, kLong:
			minV := int64(math.MinInt32)
			if a.k == kLong {
				minV = math.MinInt64
			}
			for i, x := range a.i {
				if x == minV && live(mask, out.valid, i) {
					return nil, ev.fail(n, "integer overflow in %s", n.String())
				}
				out.i[i] = x
				if x < 0 {
					out.i[i] = -x
				}
			}
		case kFloat, kDouble:
			for i, x := range a.f {
				out.f[i] = math.Abs(x)
			}
		case kDecimal:
			for i, x := range a.d {
				out.d[i] = x.Abs()
			}
		}
	case "substring":
		for i, s := range a.s {
			if out.valid != nil && !out.valid[i] {
				continue
			}
			length := int64(math.MaxInt32)
			if len(args) > 2 {
				length = args[2].i[i]
			}
			out.s[i] = substringSQL(s, args[1].i[i], length, a.k == kString)
		}
	case "concat":
		for i := range out.s {
			var b strings.Builder
			for _, x := range args {
				b.WriteString(x.s[i])
			}
			out.s[i] = b.String()
		}
	case "year", "month", "day", "hour", "minute", "second":
		conv := n.zone.Converter()
		for i, x := range a.i {
			if !a.ok(i) {
				continue
			}
			var t time.Time
			switch a.k {
			case kDate:
				t = time.Unix(x*86400, 0).UTC()
			case kTSTZ:
				// the fields of the wall-clock time in the session time zone
				if w, ok := conv.ToWall(x, 1_000_000); ok {
					x = w
				}
				t = time.UnixMicro(x).UTC()
			default:
				t = time.UnixMicro(x).UTC()
			}
			switch n.sub {
			case "year":
				out.i[i] = int64(t.Year())
			case "month":
				out.i[i] = int64(t.Month())
			case "day":
				out.i[i] = int64(t.Day())
			case "hour":
				out.i[i] = int64(t.Hour())
			case "minute":
				out.i[i] = int64(t.Minute())
			case "second":
				out.i[i] = int64(t.Second())
			}
		}
	case "date_trunc":
		out.valid = args[1].valid
		unit := n.kids[0].val.s
		conv := n.zone.Converter()
		for i, x := range args[1].i {
			if args[1].ok(i) {
				out.i[i] = truncMicros(x, unit, conv)
			}
		}
	default:
		return nil, ev.fail(n, "unknown function %q", n.sub)
	}
	return out, nil
}

// substringSQL implements Spark's substring(s, pos, len): 1-based, a
// negative pos counts from the end, pos 0 acts as 1.
func substringSQL(s string, pos, length int64, chars bool) string {
	var rs []rune
	total := int64(len(s))
	if chars {
		rs = []rune(s)
		total = int64(len(rs))
	}
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
	case pos < 0:
		start = total + pos
	}
	end := start + length
	start = max(start, 0)
	end = min(end, total)
	if start >= end {
		return ""
	}
	if chars {
		return string(rs[start:end])
	}
	return s[start:end]
}

// truncMicros is Spark's date_trunc of instant us in conv's zone
// (DateTimeUtils.truncTimestamp): SECOND on the instant; MINUTE, HOUR and
// DAY truncate the wall-clock time and keep the offset it had when that is
// still valid (ZonedDateTime.truncatedTo); WEEK (to Monday), MONTH,
// QUARTER and YEAR truncate the local date and take the start of that day.
func truncMicros(us int64, unit string, conv *tz.Converter) int64 {
	const second, minute, hour, day = 1_000_000, 60_000_000, 3_600_000_000, 86_400_000_000
	if unit == "second" {
		return us - floorMod(us, second)
	}
	wall, ok := conv.ToWall(us, 1_000_000)
	if !ok {
		return us
	}
	off := (wall - us) / second
	var w int64
	switch unit {
	case "minute":
		w = wall - floorMod(wall, minute)
	case "hour":
		w = wall - floorMod(wall, hour)
	case "day":
		w = wall - floorMod(wall, day)
	default:
		t := time.UnixMicro(wall).UTC()
		var d time.Time
		switch unit {
		case "year":
			d = time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		case "quarter":
			d = time.Date(t.Year(), (t.Month()-1)/3*3+1, 1, 0, 0, 0, 0, time.UTC)
		case "month":
			d = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		default: // week
			d = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
			d = d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
		}
		return conv.StartOfDay(floorDiv(d.Unix(), 86400)) * second
	}
	r, ok := conv.ToInstantPreferring(w, 1_000_000, off)
	if !ok {
		return us
	}
	return r
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
