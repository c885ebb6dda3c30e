package expr

import (
	"strings"

	"github.com/apache/iceberg-go"
)

// absVal over-approximates the values an expression takes over the rows of
// a data file.
type absVal struct {
	known   bool  // lo and hi bound every non-null, non-NaN value
	lo, hi  value //
	mayNull bool
	allNull bool
	mayNaN  bool
}

// absBool over-approximates the outcomes of a predicate over the rows of a file.
type absBool struct{ t, f, n bool }

var anything = absVal{mayNull: true, mayNaN: true}

type fileJudge struct {
	f    iceberg.DataFile
	spec iceberg.PartitionSpec
	part map[int]any
}

// MightMatch is false only when no row of the data file can make e TRUE,
// judged from the file's metadata alone: partition values of identity
// fields (spec is the file's partition spec) and column metrics. It is
// always true for a non-boolean e. For an expression bound with BindScopes
// the file belongs to scope 0 (the target); columns of other scopes may
// hold any value.
func (e *Expr) MightMatch(f iceberg.DataFile, spec iceberg.PartitionSpec) (out bool) {
	if !e.IsPredicate() {
		return true
	}
	if f.Count() == 0 {
		return false
	}
	defer func() {
		if recover() != nil {
			out = true
		}
	}()
	j := &fileJudge{f: f, spec: spec, part: f.Partition()}
	return j.boolOf(e.root).t
}

// MatchesAll is true only when e is TRUE for every row of the file, judged
// from the file's metadata alone (see MightMatch).
func (e *Expr) MatchesAll(f iceberg.DataFile, spec iceberg.PartitionSpec) (out bool) {
	if !e.IsPredicate() {
		return false
	}
	if f.Count() == 0 {
		return true
	}
	defer func() {
		if recover() != nil {
			out = false
		}
	}()
	j := &fileJudge{f: f, spec: spec, part: f.Partition()}
	b := j.boolOf(e.root)
	return !b.f && !b.n
}

// Residual returns e simplified for the rows of one data file (spec is the
// file's partition spec): each boolean part whose outcome the file's
// metadata settles for every row (TRUE, or FALSE) becomes that constant,
// and AND, OR and NOT fold around it. On every row of the file the result
// gives what e gives (TRUE, FALSE or NULL), and it may read fewer columns:
// `month IN (...) AND qty > 25` is `qty > 25` in a file whose partition
// value is in the list. e itself is returned when nothing simplifies.
func (e *Expr) Residual(f iceberg.DataFile, spec iceberg.PartitionSpec) (out *Expr) {
	if !e.IsPredicate() || f.Count() == 0 {
		return e
	}
	defer func() {
		if recover() != nil {
			out = e
		}
	}()
	j := &fileJudge{f: f, spec: spec, part: f.Partition()}
	root := j.residual(e.root)
	if root == e.root {
		return e
	}
	r := *e
	r.root = root
	return &r
}

// residual is Residual over the boolean node n.
func (j *fileJudge) residual(n *bnode) *bnode {
	if n.op == opLit {
		return n
	}
	switch b := j.boolOf(n); {
	case b.t && !b.f && !b.n:
		return lit(value{b: true}, tBool, n.pos)
	case b.f && !b.t && !b.n:
		return lit(value{b: false}, tBool, n.pos)
	}
	switch n.op {
	case opAnd, opOr:
		a, b := j.residual(n.kids[0]), j.residual(n.kids[1])
		// TRUE AND x = x, FALSE AND x = FALSE; FALSE OR x = x, TRUE OR x = TRUE
		unit := n.op == opAnd
		for _, x := range [2][2]*bnode{{a, b}, {b, a}} {
			if boolLit(x[0], unit) {
				return x[1]
			}
		}
		if a == n.kids[0] && b == n.kids[1] {
			return n
		}
		c := *n
		c.kids = []*bnode{a, b}
		return &c
	case opNot:
		if a := j.residual(n.kids[0]); a != n.kids[0] {
			c := *n
			c.kids = []*bnode{a}
			return &c
		}
	}
	return n
}

// boolLit reports whether n is the non-null boolean literal v.
func boolLit(n *bnode, v bool) bool {
	return n.op == opLit && !n.val.null && kindOf(n.typ) == kBool && n.val.b == v
}

func exactVal(v value) absVal {
	if v.null {
		return absVal{mayNull: true, allNull: true}
	}
	return absVal{known: true, lo: v, hi: v}
}

// point reports whether every non-null value equals a.lo.
func (a absVal) point(k kind) bool {
	if !a.known || a.mayNaN || cmpValues(k, a.lo, a.hi) != 0 {
		return false
	}
	if (k == kFloat || k == kDouble) && a.lo.f == 0 {
		return false // bounds of 0 may hide -0.0
	}
	return true
}

func (j *fileJudge) column(c *colRef) absVal {
	if c.scope != 0 {
		return anything // another input (MERGE's source): the file says nothing about it
	}
	k := kindOf(c.typ)
	for _, pf := range j.spec.Fields() {
		if pf.SourceID() != c.fieldID {
			continue
		}
		if _, ok := pf.Transform.(iceberg.IdentityTransform); !ok {
			continue
		}
		pv, present := j.part[pf.FieldID]
		if !present {
			continue
		}
		if v, ok := fromGo(pv, c.typ); ok {
			a := exactVal(v)
			if (k == kFloat || k == kDouble) && !v.null && v.f != v.f {
				return absVal{mayNaN: true}
			}
			return a
		}
	}
	a := absVal{mayNull: true, mayNaN: k == kFloat || k == kDouble}
	id := c.fieldID
	count := j.f.Count()
	if vc, ok := j.f.ValueCounts()[id]; ok {
		count = vc
	}
	if nc, ok := j.f.NullValueCounts()[id]; ok {
		a.mayNull = nc > 0
		a.allNull = nc >= count
	}
	if a.mayNaN {
		if nn, ok := j.f.NaNValueCounts()[id]; ok {
			a.mayNaN = nn > 0
		}
	}
	lb, okl := j.f.LowerBoundValues()[id]
	ub, oku := j.f.UpperBoundValues()[id]
	if okl && oku {
		ll, err1 := iceberg.LiteralFromBytes(c.typ, lb)
		ul, err2 := iceberg.LiteralFromBytes(c.typ, ub)
		if err1 == nil && err2 == nil {
			lo, ok1 := fromGo(ll, c.typ)
			hi, ok2 := fromGo(ul, c.typ)
			if ok1 && ok2 && !lo.null && !hi.null {
				a.known, a.lo, a.hi = true, lo, hi
				if k == kFloat || k == kDouble {
					// NaN bounds are not meaningful
					a.known = lo.f == lo.f && hi.f == hi.f
				}
			}
		}
	}
	return a
}

// monotoneFunc reports whether n's function maps ordered inputs to ordered outputs.
func monotoneNode(n *bnode) bool {
	switch n.op {
	case opCast:
		return monotoneCast(n.kids[0].typ, n.typ, n.zone)
	case opFunc:
		// In a zone with DST the wall-clock time of instants goes back
		// at each overlap; take nothing for granted there.
		switch n.sub {
		case "year":
			return kindOf(n.kids[0].typ) != kTSTZ || n.zone.Fixed()
		case "date_trunc":
			return n.zone.Fixed()
		}
	}
	return false
}

func (j *fileJudge) valueOf(n *bnode) absVal {
	switch n.op {
	case opNot, opAnd, opOr, opCmp, opIs, opIn, opLike:
		b := j.boolOf(n)
		return absVal{known: b.t || b.f, lo: value{b: !b.f}, hi: value{b: b.t}, mayNull: b.n, allNull: b.n && !b.t && !b.f}
	case opLit:
		return exactVal(n.val)
	case opCol:
		return j.column(n.col)
	}
	// constant inputs: fold the node on them
	kids := make([]absVal, len(n.kids))
	constant := true
	for i, k := range n.kids {
		kids[i] = j.valueOf(k)
		if !(kids[i].allNull || !kids[i].mayNull && kids[i].point(kindOf(k.typ))) {
			constant = false
		}
	}
	if constant && len(n.kids) > 0 {
		c := *n
		c.kids = make([]*bnode, len(n.kids))
		for i, k := range n.kids {
			v := kids[i].lo
			if kids[i].allNull {
				v = nullValue
			}
			c.kids[i] = lit(v, k.typ, k.pos)
		}
		if v, err := foldConst(&c); err == nil {
			return exactVal(v)
		}
		return anything
	}
	if monotoneNode(n) {
		x := kids[len(kids)-1]
		if n.op == opFunc && n.sub == "date_trunc" {
			x = kids[1]
		}
		out := absVal{mayNull: x.mayNull, allNull: x.allNull, mayNaN: x.mayNaN}
		if x.known && !x.mayNaN {
			lo, err1 := j.apply(n, x.lo)
			hi, err2 := j.apply(n, x.hi)
			if err1 == nil && err2 == nil {
				out.known, out.lo, out.hi = true, lo, hi
			}
		}
		return out
	}
	return anything
}

// apply evaluates a one-argument monotone node on a value.
func (j *fileJudge) apply(n *bnode, v value) (value, error) {
	c := *n
	c.kids = append([]*bnode(nil), n.kids...)
	arg := len(c.kids) - 1
	c.kids[arg] = lit(v, n.kids[arg].typ, 0)
	return foldConst(&c)
}

func (j *fileJudge) boolOf(n *bnode) absBool {
	switch n.op {
	case opNot:
		b := j.boolOf(n.kids[0])
		return absBool{t: b.f, f: b.t, n: b.n}
	case opAnd:
		a, b := j.boolOf(n.kids[0]), j.boolOf(n.kids[1])
		return absBool{
			t: a.t && b.t,
			f: a.f || b.f,
			n: a.n && (b.t || b.n) || b.n && (a.t || a.n),
		}
	case opOr:
		a, b := j.boolOf(n.kids[0]), j.boolOf(n.kids[1])
		return absBool{
			t: a.t || b.t,
			f: a.f && b.f,
			n: a.n && (b.f || b.n) || b.n && (a.f || a.n),
		}
	case opCmp:
		return j.cmp(n)
	case opIs:
		switch n.sub {
		case "NULL", "NOT NULL":
			x := j.valueOf(n.kids[0])
			b := absBool{t: x.mayNull, f: !x.allNull}
			if n.sub == "NOT NULL" {
				b.t, b.f = b.f, b.t
			}
			return b
		}
		x := j.boolOf(n.kids[0])
		switch n.sub {
		case "TRUE":
			return absBool{t: x.t, f: x.f || x.n}
		case "NOT TRUE":
			return absBool{t: x.f || x.n, f: x.t}
		case "FALSE":
			return absBool{t: x.f, f: x.t || x.n}
		default: // NOT FALSE
			return absBool{t: x.t || x.n, f: x.f}
		}
	case opIn:
		b := j.in(n)
		if n.not {
			b.t, b.f = b.f, b.t
		}
		return b
	case opLike:
		b := j.like(n)
		if n.not {
			b.t, b.f = b.f, b.t
		}
		return b
	}
	x := j.valueOf(n)
	if x.allNull {
		return absBool{n: true}
	}
	b := absBool{t: true, f: true, n: x.mayNull}
	if x.known {
		b.t, b.f = x.hi.b, !x.lo.b
	}
	return b
}

// overlaps reports whether ranges a and b can share a value.
func overlaps(k kind, a, b absVal) bool {
	return cmpValues(k, a.lo, b.hi) <= 0 && cmpValues(k, b.lo, a.hi) <= 0
}

func (j *fileJudge) cmp(n *bnode) absBool {
	x, y := j.valueOf(n.kids[0]), j.valueOf(n.kids[1])
	k := kindOf(n.kids[0].typ)
	if n.sub == "<=>" {
		if x.allNull && y.allNull {
			return absBool{t: true}
		}
		b := absBool{t: true, f: true}
		if !x.mayNull && !y.mayNull && x.known && y.known && !x.mayNaN && !y.mayNaN {
			b.t = overlaps(k, x, y)
			b.f = !(x.point(k) && y.point(k) && cmpValues(k, x.lo, y.lo) == 0)
		}
		return b
	}
	if x.allNull || y.allNull {
		return absBool{n: true}
	}
	b := absBool{t: true, f: true, n: x.mayNull || y.mayNull}
	if !x.known || !y.known || x.mayNaN && y.mayNaN {
		return b
	}
	b = cmpRanges(n.sub, k, x, y, b)
	if x.mayNaN || y.mayNaN {
		// NaN sorts above every number (Spark): its outcome is fixed
		c := 1
		if y.mayNaN {
			c = -1
		}
		nan := cmpHolds(n.sub, c)
		b.t, b.f = b.t || nan, b.f || !nan
	}
	return b
}

// cmpRanges judges x op y over the non-null, non-NaN values of both ranges.
func cmpRanges(o string, k kind, x, y absVal, b absBool) absBool {
	x.mayNaN, y.mayNaN = false, false
	switch o {
	case "=":
		b.t = overlaps(k, x, y)
		b.f = !(x.point(k) && y.point(k) && cmpValues(k, x.lo, y.lo) == 0)
	case "!=":
		b.f = overlaps(k, x, y)
		b.t = !(x.point(k) && y.point(k) && cmpValues(k, x.lo, y.lo) == 0)
	case "<":
		b.t = cmpValues(k, x.lo, y.hi) < 0
		b.f = cmpValues(k, x.hi, y.lo) >= 0
	case "<=":
		b.t = cmpValues(k, x.lo, y.hi) <= 0
		b.f = cmpValues(k, x.hi, y.lo) > 0
	case ">":
		b.t = cmpValues(k, x.hi, y.lo) > 0
		b.f = cmpValues(k, x.lo, y.hi) <= 0
	case ">=":
		b.t = cmpValues(k, x.hi, y.lo) >= 0
		b.f = cmpValues(k, x.lo, y.hi) < 0
	}
	return b
}

func (j *fileJudge) in(n *bnode) absBool {
	x := j.valueOf(n.kids[0])
	k := kindOf(n.kids[0].typ)
	if x.allNull {
		return absBool{n: true}
	}
	unknownX := !x.known || x.mayNaN
	b := absBool{n: x.mayNull}
	alwaysNull := false // a NULL element: no match gives NULL, never FALSE
	sureMatch := false  // every non-null x equals an element
	for _, e := range n.kids[1:] {
		y := j.valueOf(e)
		b.n = b.n || y.mayNull
		if y.allNull {
			alwaysNull = true
			continue
		}
		if unknownX || !y.known || y.mayNaN || overlaps(k, x, y) {
			b.t = true
		}
		if !unknownX && x.point(k) && !y.mayNull && y.point(k) && cmpValues(k, x.lo, y.lo) == 0 {
			sureMatch = true
		}
	}
	b.f = !alwaysNull && !sureMatch
	if sureMatch {
		b.n = x.mayNull
	}
	return b
}

func (j *fileJudge) like(n *bnode) absBool {
	x := j.valueOf(n.kids[0])
	if x.allNull || n.like == nil {
		return absBool{n: true}
	}
	b := absBool{t: true, f: true, n: x.mayNull}
	m := n.like
	if x.point(kString) && !x.mayNull {
		r := m.match(x.lo.s)
		return absBool{t: r, f: !r}
	}
	if !x.known {
		return b
	}
	lo, hi, p := x.lo.s, x.hi.s, m.prefix
	if m.exact {
		b.t = lo <= p && p <= hi
		b.f = !(lo == p && hi == p)
		return b
	}
	if p != "" {
		// values starting with p lie in [p, p+"\xff"...): the range must reach it
		b.t = hi >= p && lo[:min(len(lo), len(p))] <= p
	}
	if m.prefixOnly && strings.HasPrefix(lo, p) && strings.HasPrefix(hi, p) {
		b.f = false
	}
	return b
}
