package expr

import (
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// Iceberg returns an unbound iceberg-go expression implied by e: every row
// for which e is TRUE satisfies it. Parts that cannot be expressed
// (functions, arithmetic on columns, ...) become iceberg.AlwaysTrue{}; NOT is
// pushed down first so that this stays sound. Use it with
// table.WithRowFilter for pruning. A non-boolean e gives AlwaysTrue. For an
// expression bound with BindScopes the predicate is over scope 0 (the
// target): parts that read other scopes become AlwaysTrue.
func (e *Expr) Iceberg() (out iceberg.BooleanExpression) {
	if !e.IsPredicate() {
		return iceberg.AlwaysTrue{}
	}
	defer func() {
		// iceberg-go constructors panic on invalid input; never let that escape
		if recover() != nil {
			out = iceberg.AlwaysTrue{}
		}
	}()
	return toIce(e.root, false)
}

// toIce converts n to an iceberg expression that holds whenever n is TRUE
// (neg=false) or whenever n is FALSE (neg=true).
func toIce(n *bnode, neg bool) iceberg.BooleanExpression {
	all := iceberg.AlwaysTrue{}
	switch n.op {
	case opLit:
		if n.val.null || n.val.b == neg {
			return iceberg.AlwaysFalse{}
		}
		return all
	case opNot:
		return toIce(n.kids[0], !neg)
	case opAnd, opOr:
		l, r := toIce(n.kids[0], neg), toIce(n.kids[1], neg)
		if (n.op == opAnd) != neg {
			return iceberg.NewAnd(l, r)
		}
		return iceberg.NewOr(l, r)
	case opCol:
		if kindOf(n.typ) == kBool && n.col.scope == 0 {
			return iceberg.EqualTo(iceberg.Reference(n.col.name), !neg)
		}
	case opCmp:
		return cmpToIce(n, neg)
	case opIs:
		x := n.kids[0]
		switch n.sub {
		case "TRUE", "NOT FALSE":
			if neg == (n.sub == "TRUE") {
				return all // NOT TRUE includes NULL
			}
			return toIce(x, n.sub == "NOT FALSE")
		case "FALSE", "NOT TRUE":
			if neg == (n.sub == "FALSE") {
				return all
			}
			return toIce(x, n.sub == "FALSE")
		}
		c, _, ok := colTerm(x)
		if !ok {
			return all
		}
		if (n.sub == "NULL") != neg {
			return iceberg.IsNull(iceberg.Reference(c.name))
		}
		return iceberg.NotNull(iceberg.Reference(c.name))
	case opIn:
		return inToIce(n, neg == n.not)
	case opLike:
		c, _, ok := colTerm(n.kids[0])
		if !ok || c.typ != nil && kindOf(c.typ) != kString || n.like == nil {
			if n.like == nil {
				return iceberg.AlwaysFalse{}
			}
			return all
		}
		m, ref := n.like, iceberg.Reference(c.name)
		if neg == n.not { // LIKE is TRUE
			switch {
			case m.exact:
				return iceberg.EqualTo(ref, m.prefix)
			case m.prefix != "":
				return iceberg.StartsWith(ref, m.prefix)
			}
			return all
		}
		switch {
		case m.exact:
			return iceberg.NotEqualTo(ref, m.prefix)
		case m.prefixOnly:
			return iceberg.NotStartsWith(ref, m.prefix)
		}
	}
	return all
}

// colTerm returns the column of n when n is a column of scope 0, possibly
// under a widening cast whose literal can be converted back exactly, and
// the session time zone of that cast (for litFor). Columns of other
// scopes (MERGE's source) are unknown to pruning.
func colTerm(n *bnode) (*colRef, *tz.Zone, bool) {
	if n.op == opCol && n.col.scope == 0 {
		return n.col, nil, true
	}
	if n.op == opCast && n.kids[0].op == opCol && n.kids[0].col.scope == 0 && exactCast(n.kids[0].typ, n.typ, n.zone) {
		return n.kids[0].col, n.zone, true
	}
	return nil, nil, false
}

// exactCast reports whether casting from a to b (in session time zone
// zone) is injective and order-preserving wherever it succeeds, so that a
// comparison of the cast column with a literal is the same comparison of
// the column with the literal converted back. (long to double, say, is
// not: two longs can map to one double; nor is timestamp_ntz to timestamp
// in a zone with DST: a wall-clock time in a gap maps to the instant of
// one an hour later.)
func exactCast(a, b iceberg.Type, zone *tz.Zone) bool {
	ka, kb := kindOf(a), kindOf(b)
	switch {
	case isIntegral(ka) && isIntegral(kb):
		return true
	case isIntegral(ka) && kb == kDecimal:
		digits := 10
		if ka == kLong {
			digits = 19
		}
		return precOf(b)-scaleOf(b) >= digits
	case ka == kInt && kb == kDouble, ka == kFloat && kb == kDouble:
		return true
	case ka == kDecimal && kb == kDecimal:
		return scaleOf(b) >= scaleOf(a) && precOf(b)-scaleOf(b) >= precOf(a)-scaleOf(a)
	case isTime(ka) && isTime(kb):
		return !(ka != kDate && kb == kDate) && (zone.Fixed() || !shiftsZone(ka, kb))
	}
	return false
}

// shiftsZone reports whether a cast between time kinds converts between
// wall-clock times and instants in the session time zone.
func shiftsZone(from, to kind) bool {
	return (from == kTSTZ) != (to == kTSTZ)
}

// monotoneCast reports whether casting from a to b (in session time zone
// zone) preserves order (so that bounds map through it) and is exact.
// timestamp_ntz to timestamp is not in a zone with DST (02:50 in a
// one-hour gap becomes 03:50, after 03:10), nor timestamp to timestamp_ntz
// (an overlap shows its hour twice); a date's start is.
func monotoneCast(a, b iceberg.Type, zone *tz.Zone) bool {
	ka, kb := kindOf(a), kindOf(b)
	switch {
	case isIntegral(ka) && (isIntegral(kb) || kb == kDecimal || kb == kDouble || kb == kFloat):
		return true
	case ka == kFloat && kb == kDouble:
		return true
	case ka == kDecimal && (kb == kDecimal || kb == kDouble || kb == kFloat):
		return true
	case isTime(ka) && isTime(kb) && !(ka != kDate && kb == kDate):
		return zone.Fixed() || ka == kDate || !shiftsZone(ka, kb)
	}
	return false
}

// litFor converts v (of type from) to the column type to, exactly, in
// session time zone zone; false when the value has no exact counterpart.
func litFor(v value, from, to iceberg.Type, zone *tz.Zone) (value, bool) {
	if from.Equals(to) {
		return v, true
	}
	back, err := foldConst(&bnode{op: opCast, typ: to, kids: []*bnode{lit(v, from, 0)}, zone: zone})
	if err != nil || back.null {
		return value{}, false
	}
	again, err := foldConst(&bnode{op: opCast, typ: from, kids: []*bnode{lit(back, to, 0)}, zone: zone})
	if err != nil || again.null || cmpValues(kindOf(from), again, v) != 0 {
		return value{}, false
	}
	return back, true
}

// iceLiteral converts a non-null value of type t to an iceberg literal.
func iceLiteral(v value, t iceberg.Type) (iceberg.Literal, bool) {
	switch kindOf(t) {
	case kBool:
		return iceberg.NewLiteral(v.b), true
	case kInt:
		return iceberg.NewLiteral(int32(v.i)), true
	case kLong:
		return iceberg.NewLiteral(v.i), true
	case kFloat:
		return iceberg.NewLiteral(float32(v.f)), true
	case kDouble:
		return iceberg.NewLiteral(v.f), true
	case kDecimal:
		return iceberg.NewLiteral(iceberg.Decimal{Val: v.d, Scale: scaleOf(t)}), true
	case kString:
		return iceberg.NewLiteral(v.s), true
	case kBinary, kFixed:
		return iceberg.NewLiteral([]byte(v.s)), true
	case kUUID:
		u, err := uuid.FromBytes([]byte(v.s))
		return iceberg.NewLiteral(u), err == nil
	case kDate:
		return iceberg.NewLiteral(iceberg.Date(v.i)), true
	case kTime:
		return iceberg.NewLiteral(iceberg.Time(v.i)), true
	case kTS, kTSTZ:
		return iceberg.NewLiteral(iceberg.Timestamp(v.i)), true
	}
	return nil, false
}

var flipOp = map[string]string{"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<=", "<=>": "<=>"}
var negOp = map[string]string{"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}

func cmpToIce(n *bnode, neg bool) iceberg.BooleanExpression {
	all := iceberg.AlwaysTrue{}
	l, r, o := n.kids[0], n.kids[1], n.sub
	if l.op == opLit {
		l, r, o = r, l, flipOp[o]
	}
	c, zone, ok := colTerm(l)
	if !ok || r.op != opLit {
		return all
	}
	ref := iceberg.Reference(c.name)
	if r.val.null {
		if o != "<=>" {
			return iceberg.AlwaysFalse{} // a comparison with NULL is never TRUE or FALSE
		}
		if neg {
			return iceberg.NotNull(ref)
		}
		return iceberg.IsNull(ref)
	}
	if o == "<=>" {
		if neg {
			return all
		}
		o = "="
	} else if neg {
		o = negOp[o]
	}
	v, ok := litFor(r.val, r.typ, c.typ, zone)
	if !ok {
		return all
	}
	isFloat := kindOf(c.typ) == kFloat || kindOf(c.typ) == kDouble
	if isFloat && math.IsNaN(v.f) {
		return all
	}
	lit, ok := iceLiteral(v, c.typ)
	if !ok {
		return all
	}
	var p iceberg.BooleanExpression
	switch o {
	case "=":
		p = iceberg.LiteralPredicate(iceberg.OpEQ, ref, lit)
	case "!=":
		p = iceberg.LiteralPredicate(iceberg.OpNEQ, ref, lit)
	case "<":
		p = iceberg.LiteralPredicate(iceberg.OpLT, ref, lit)
	case "<=":
		p = iceberg.LiteralPredicate(iceberg.OpLTEQ, ref, lit)
	case ">":
		p = iceberg.LiteralPredicate(iceberg.OpGT, ref, lit)
	case ">=":
		p = iceberg.LiteralPredicate(iceberg.OpGTEQ, ref, lit)
	default:
		return all
	}
	if isFloat && (o == ">" || o == ">=" || o == "!=") {
		// Spark orders NaN above every number
		p = iceberg.NewOr(p, iceberg.IsNaN(ref))
	}
	return p
}

// inToIce converts x IN (...) when in is true, or x NOT IN (...) otherwise.
func inToIce(n *bnode, in bool) iceberg.BooleanExpression {
	all := iceberg.AlwaysTrue{}
	c, zone, ok := colTerm(n.kids[0])
	if !ok {
		return all
	}
	ref := iceberg.Reference(c.name)
	isFloat := kindOf(c.typ) == kFloat || kindOf(c.typ) == kDouble
	var lits []iceberg.Literal
	for _, e := range n.kids[1:] {
		if e.op != opLit {
			return all
		}
		if e.val.null {
			if !in {
				return iceberg.AlwaysFalse{} // NOT IN with a NULL is never TRUE
			}
			continue
		}
		v, ok := litFor(e.val, e.typ, c.typ, zone)
		if !ok || isFloat && math.IsNaN(v.f) {
			return all
		}
		l, ok := iceLiteral(v, c.typ)
		if !ok {
			return all
		}
		lits = append(lits, l)
	}
	if in {
		if len(lits) == 0 {
			return iceberg.AlwaysFalse{}
		}
		return iceberg.SetPredicate(iceberg.OpIn, ref, lits)
	}
	if len(lits) == 0 {
		return iceberg.NotNull(ref)
	}
	p := iceberg.SetPredicate(iceberg.OpNotIn, ref, lits)
	if isFloat {
		p = iceberg.NewOr(p, iceberg.IsNaN(ref))
	}
	return p
}

// fromGo converts a Go value as found in partition tuples and iceberg
// literals into a value of type t.
func fromGo(x any, t iceberg.Type) (value, bool) {
	k := kindOf(t)
	switch x := x.(type) {
	case nil:
		return nullValue, true
	case iceberg.Literal:
		return fromGo(x.Any(), t)
	case bool:
		return value{b: x}, k == kBool
	case int32:
		return value{i: int64(x)}, k == kInt || k == kLong || k == kDate
	case int64:
		return value{i: x}, k == kLong || k == kInt || k == kTS || k == kTSTZ || k == kTime
	case int:
		return value{i: int64(x)}, isIntegral(k)
	case float32:
		return value{f: float64(x)}, k == kFloat || k == kDouble
	case float64:
		return value{f: x}, k == kFloat || k == kDouble
	case string:
		if k == kUUID {
			u, err := uuid.Parse(x)
			return value{s: string(u[:])}, err == nil
		}
		return value{s: x}, k == kString || k == kBinary || k == kFixed
	case []byte:
		return value{s: string(x)}, isBytes(k) || k == kString
	case [16]byte:
		return value{s: string(x[:])}, k == kUUID || k == kFixed
	case uuid.UUID:
		return value{s: string(x[:])}, k == kUUID || k == kFixed
	case iceberg.Date:
		return value{i: int64(x)}, k == kDate
	case iceberg.Time:
		return value{i: int64(x)}, k == kTime
	case iceberg.Timestamp:
		return value{i: int64(x)}, k == kTS || k == kTSTZ
	case time.Time:
		if k == kDate {
			return value{i: floorDiv(x.Unix(), 86400)}, true
		}
		return value{i: x.UnixMicro()}, k == kTS || k == kTSTZ
	case iceberg.Decimal:
		return decFromGo(x.Val, x.Scale, t)
	}
	return value{}, false
}

func decFromGo(d decimal128.Num, scale int, t iceberg.Type) (value, bool) {
	if kindOf(t) != kDecimal {
		return value{}, false
	}
	if scale == scaleOf(t) {
		return value{d: d}, true
	}
	r := d.BigInt()
	if scale > scaleOf(t) {
		return value{}, false // would round: not exact
	}
	return value{d: decimal128.FromBigInt(rescaleBig(r, scale, scaleOf(t)))}, true
}
