package expr

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// op is the operation of a bound node.
type op int

const (
	opLit op = iota
	opCol
	opNot
	opAnd
	opOr
	opCmp   // sub: = != < <= > >= <=>
	opArith // sub: + - * / %
	opNeg
	opIs // sub: NULL, NOT NULL, TRUE, NOT TRUE, FALSE, NOT FALSE
	opIn
	opLike
	opCast
	opCase // kids: when1, then1, when2, then2, ..., [else]
	opCoalesce
	opFunc // sub: function name
)

// bnode is a bound, typed expression node. Bound trees are never mutated
// after Bind returns.
type bnode struct {
	op      op
	sub     string
	typ     iceberg.Type
	kids    []*bnode
	val     value    // opLit
	col     *colRef  // opCol
	not     bool     // opIn, opLike
	like    *matcher // opLike
	hasElse bool     // opCase
	pos     int
	// zone is the session time zone of the casts and functions whose
	// result depends on it (nil: UTC).
	zone *tz.Zone
}

// colRef is a resolved column.
type colRef struct {
	scope   int      // which input batch (Scope index; 0 for Bind)
	qual    []string // qualifier the canonical text writes before path (BindScopes)
	fieldID int      //
	path    []string // exact field names from the root of the schema
	name    string   // dotted full name as the schema spells it
	typ     iceberg.Type
}

// resolver resolves column name paths within one or more scopes. MERGE can
// add a resolver over two schemas (source.x / target.x) without changing
// the binder or the evaluator, which only see colRef.
type resolver interface {
	resolve(path []string) (*colRef, string) // string: error message when not found
	columns() string                         // known columns, for error hints
}

// schemaResolver resolves names case-insensitively against one schema.
type schemaResolver struct {
	sc    *iceberg.Schema
	scope int
}

func (r schemaResolver) columns() string {
	var names []string
	for _, f := range r.sc.Fields() {
		names = append(names, f.Name)
	}
	return "columns: " + strings.Join(names, ", ")
}

func (r schemaResolver) resolve(path []string) (*colRef, string) {
	c, msg, _ := r.lookup(path)
	return c, msg
}

// lookup is resolve that also reports whether path[0] names a top-level
// column of the schema (so a failure is about this schema's column).
func (r schemaResolver) lookup(path []string) (*colRef, string, bool) {
	fields := r.sc.Fields()
	var exact []string
	var f iceberg.NestedField
	for i, part := range path {
		var found []iceberg.NestedField
		for _, c := range fields {
			if strings.EqualFold(c.Name, part) {
				found = append(found, c)
			}
		}
		dotted := strings.Join(path[:i+1], ".")
		if len(found) == 0 {
			return nil, fmt.Sprintf("unknown column %q", dotted), i > 0
		}
		if len(found) > 1 {
			return nil, fmt.Sprintf("ambiguous column %q (matches %q and %q)", dotted, strings.Join(append(slices.Clone(exact), found[0].Name), "."), strings.Join(append(slices.Clone(exact), found[1].Name), ".")), true
		}
		f = found[0]
		exact = append(exact, f.Name)
		if i < len(path)-1 {
			st, ok := f.Type.(*iceberg.StructType)
			if !ok {
				return nil, fmt.Sprintf("column %q is not a struct", strings.Join(exact, ".")), true
			}
			fields = st.FieldList
		}
	}
	name, ok := r.sc.FindColumnName(f.ID)
	if !ok {
		name = strings.Join(exact, ".")
	}
	return &colRef{scope: r.scope, fieldID: f.ID, path: exact, name: name, typ: f.Type}, "", true
}

// Expr is a bound, type-checked expression. It is immutable and safe for
// concurrent use.
type Expr struct {
	src      string
	root     *bnode
	sc       *iceberg.Schema // the schema of scope 0
	scopes   []Scope         // nil for Bind: one unnamed scope, sc
	nullSafe bool            // e is a side of a null-safe Key (KeyRange admits NULL)
	zone     *tz.Zone        // the session time zone it was bound in (nil: UTC)
}

// Option is a setting of binding.
type Option func(*binder)

// InZone binds in session time zone z (nil: UTC, the default): a TIMESTAMP
// literal or a string without a zone is a wall-clock time there, and
// conversions between timestamp (with zone), timestamp_ntz, date and
// string, date_trunc, current_date and the fields of a timestamp use it.
func InZone(z *tz.Zone) Option { return func(b *binder) { b.zone = z } }

// Compile parses src and binds it to sc.
func Compile(src string, sc *iceberg.Schema, opts ...Option) (*Expr, error) {
	n, err := Parse(src)
	if err != nil {
		return nil, err
	}
	return Bind(n, sc, opts...)
}

// Bind resolves the columns of n against sc (case-insensitively) and type
// checks it.
func Bind(n Node, sc *iceberg.Schema, opts ...Option) (e *Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, bindErr(n.src(), 0, "internal error: %v", r)
		}
	}()
	if sc == nil {
		return nil, bindErr(n.src(), 0, "no schema to bind to")
	}
	b := &binder{src: n.src(), res: schemaResolver{sc: sc}}
	for _, o := range opts {
		o(b)
	}
	root, err := b.bind(n)
	if err != nil {
		return nil, err
	}
	return &Expr{src: n.src(), root: root, sc: sc, zone: b.zone}, nil
}

// String returns e as canonical SQL text.
func (e *Expr) String() string { return e.root.String() }

// Type returns the Iceberg type of e's result (iceberg.UnknownType for a bare NULL).
func (e *Expr) Type() iceberg.Type { return e.root.typ }

// IsPredicate reports whether e is boolean-typed.
func (e *Expr) IsPredicate() bool { return kindOf(e.root.typ) == kBool }

// FieldIDs returns the ids of the columns e references, sorted, without
// duplicates. For an expression bound with BindScopes they are those of
// scope 0 (the target); see FieldIDsOf.
func (e *Expr) FieldIDs() []int { return e.FieldIDsOf(0) }

// FieldIDsOf returns the ids of the columns of scope (an index into the
// scopes e was bound with) that e references, sorted, without duplicates.
func (e *Expr) FieldIDsOf(scope int) []int {
	var ids []int
	e.root.walk(func(n *bnode) {
		if n.op == opCol && n.col.scope == scope {
			ids = append(ids, n.col.fieldID)
		}
	})
	slices.Sort(ids)
	return slices.Compact(ids)
}

func (n *bnode) walk(f func(*bnode)) {
	f(n)
	for _, k := range n.kids {
		k.walk(f)
	}
}

type binder struct {
	src  string
	res  resolver
	zone *tz.Zone
}

func (b *binder) errf(pos int, format string, a ...any) error {
	return bindErr(b.src, pos, format, a...)
}

// describe names an operand for error messages: the column name or the SQL text.
func describe(n *bnode) string {
	if n.op == opCol {
		name := n.col.name
		if len(n.col.qual) > 0 {
			name = strings.Join(n.col.qual, ".") + "." + name
		}
		return fmt.Sprintf("column %q (%s)", name, sqlType(n.typ))
	}
	if n.op == opCast && n.kids[0].op == opCol {
		return describe(n.kids[0])
	}
	return fmt.Sprintf("%s (%s)", n.String(), sqlType(n.typ))
}

func lit(v value, t iceberg.Type, pos int) *bnode { return &bnode{op: opLit, val: v, typ: t, pos: pos} }

func (b *binder) bindAll(ns []Node) ([]*bnode, error) {
	out := make([]*bnode, len(ns))
	for i, x := range ns {
		var err error
		if out[i], err = b.bind(x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (b *binder) bind(n Node) (*bnode, error) {
	switch n := n.(type) {
	case *LiteralNode:
		tv, err := literalValue(n, b.zone)
		if err != nil {
			return nil, err
		}
		return lit(tv.v, tv.t, n.pos), nil
	case *ColumnNode:
		c, msg := b.res.resolve(n.Path)
		if c == nil {
			if len(n.Path) == 1 {
				switch strings.ToLower(n.Path[0]) {
				case "current_date", "current_timestamp":
					return b.bindCall(&CallNode{base: n.base, Name: strings.ToLower(n.Path[0])})
				}
			}
			e := bindErr(b.src, n.pos, "%s", msg)
			e.Hint = b.res.columns()
			return nil, e
		}
		switch kindOf(c.typ) {
		case kOther, kNull:
			return nil, b.errf(n.pos, "column %q has type %s, which expressions do not support", c.name, c.typ)
		}
		return &bnode{op: opCol, col: c, typ: c.typ, pos: n.pos}, nil
	case *UnaryNode:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		if n.Op == "NOT" {
			if x, err = b.expectBool(x, "NOT"); err != nil {
				return nil, err
			}
			return &bnode{op: opNot, typ: tBool, kids: []*bnode{x}, pos: n.pos}, nil
		}
		k := kindOf(x.typ)
		if k == kNull {
			x = b.nullOf(x, tInt)
		} else if !isNumeric(k) {
			return nil, b.errf(n.pos, "cannot negate %s", describe(x))
		}
		return &bnode{op: opNeg, typ: x.typ, kids: []*bnode{x}, pos: n.pos}, nil
	case *BinaryNode:
		l, err := b.bind(n.L)
		if err != nil {
			return nil, err
		}
		r, err := b.bind(n.R)
		if err != nil {
			return nil, err
		}
		return b.binary(n.Op, l, r, n.pos)
	case *IsNode:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		sub := n.What
		if n.What != "NULL" {
			if x, err = b.expectBool(x, "IS "+n.What); err != nil {
				return nil, err
			}
		}
		if n.Not {
			sub = "NOT " + sub
		}
		return &bnode{op: opIs, sub: sub, typ: tBool, kids: []*bnode{x}, pos: n.pos}, nil
	case *InNode:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		list, err := b.bindAll(n.List)
		if err != nil {
			return nil, err
		}
		t := x.typ
		for _, e := range list {
			ct, ok := cmpType(t, e.typ)
			if !ok {
				return nil, b.errf(e.pos, "cannot compare %s with %s in IN", describe(x), describe(e))
			}
			t = ct
		}
		kids := []*bnode{}
		for _, e := range append([]*bnode{x}, list...) {
			c, err := b.castTo(e, t)
			if err != nil {
				return nil, err
			}
			kids = append(kids, c)
		}
		return &bnode{op: opIn, typ: tBool, kids: kids, not: n.Not, pos: n.pos}, nil
	case *BetweenNode:
		// x BETWEEN lo AND hi is x >= lo AND x <= hi, as in Spark.
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		lo, err := b.bind(n.Lo)
		if err != nil {
			return nil, err
		}
		hi, err := b.bind(n.Hi)
		if err != nil {
			return nil, err
		}
		ge, err := b.binary(">=", x, lo, n.pos)
		if err != nil {
			return nil, err
		}
		le, err := b.binary("<=", x, hi, n.pos)
		if err != nil {
			return nil, err
		}
		and := &bnode{op: opAnd, typ: tBool, kids: []*bnode{ge, le}, pos: n.pos}
		if n.Not {
			return &bnode{op: opNot, typ: tBool, kids: []*bnode{and}, pos: n.pos}, nil
		}
		return and, nil
	case *LikeNode:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		pat, err := b.bind(n.Pattern)
		if err != nil {
			return nil, err
		}
		switch kindOf(x.typ) {
		case kNull:
			x = b.nullOf(x, tString)
		case kString:
		default:
			return nil, b.errf(x.pos, "LIKE needs a string, found %s", describe(x))
		}
		if pat.op != opLit || kindOf(pat.typ) != kString && kindOf(pat.typ) != kNull {
			return nil, b.errf(pat.pos, "the LIKE pattern must be a string literal")
		}
		pat = b.nullOf(pat, tString)
		ln := &bnode{op: opLike, typ: tBool, kids: []*bnode{x, pat}, not: n.Not, pos: n.pos}
		if !pat.val.null {
			m, err := compileLike(pat.val.s)
			if err != nil {
				return nil, b.errf(pat.pos, "%s", err.Error())
			}
			ln.like = m
		}
		return ln, nil
	case *CastNode:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		if !canCast(x.typ, n.To) {
			return nil, b.errf(n.pos, "cannot cast %s to %s", describe(x), sqlType(n.To))
		}
		return b.castTo(x, n.To)
	case *CaseNode:
		return b.bindCase(n)
	case *CallNode:
		return b.bindCall(n)
	}
	return nil, b.errf(n.Pos(), "unsupported expression %s", n.String())
}

// nullOf gives an untyped NULL literal type t; other nodes are returned as is.
func (b *binder) nullOf(n *bnode, t iceberg.Type) *bnode {
	if kindOf(n.typ) == kNull {
		return lit(nullValue, t, n.pos)
	}
	return n
}

func (b *binder) expectBool(x *bnode, what string) (*bnode, error) {
	switch kindOf(x.typ) {
	case kBool:
		return x, nil
	case kNull:
		return b.nullOf(x, tBool), nil
	}
	return nil, b.errf(x.pos, "%s needs a boolean, found %s", what, describe(x))
}

func (b *binder) binary(opText string, l, r *bnode, pos int) (*bnode, error) {
	switch opText {
	case "AND", "OR":
		var err error
		if l, err = b.expectBool(l, opText); err != nil {
			return nil, err
		}
		if r, err = b.expectBool(r, opText); err != nil {
			return nil, err
		}
		o := opAnd
		if opText == "OR" {
			o = opOr
		}
		return &bnode{op: o, typ: tBool, kids: []*bnode{l, r}, pos: pos}, nil
	case "+", "-", "*", "/", "%":
		return b.arith(opText, l, r, pos)
	}
	t, ok := cmpType(l.typ, r.typ)
	if !ok {
		return nil, b.errf(pos, "cannot compare %s with %s", describe(l), describe(r))
	}
	if kindOf(t) == kNull {
		t = tBool
	}
	var err error
	if l, err = b.castTo(l, t); err != nil {
		return nil, err
	}
	if r, err = b.castTo(r, t); err != nil {
		return nil, err
	}
	return &bnode{op: opCmp, sub: opText, typ: tBool, kids: []*bnode{l, r}, pos: pos}, nil
}

// arithType returns the result type of l op r and the type both operands
// are cast to first.
func arithType(o string, lt, rt iceberg.Type) (res, operand iceberg.Type, ok bool) {
	lk, rk := kindOf(lt), kindOf(rt)
	if lk == kNull {
		lt, lk = rt, rk
		if lk == kNull {
			lt, lk = tInt, kInt
		}
	}
	if rk == kNull {
		rt, rk = lt, lk
	}
	if !isNumeric(lk) || !isNumeric(rk) {
		return nil, nil, false
	}
	w := widerNumeric(lt, rt)
	wk := kindOf(w)
	if o == "/" && wk != kDecimal && (isIntegral(wk) || wk == kFloat) {
		return tDouble, tDouble, true
	}
	if wk != kDecimal {
		return w, w, true
	}
	p1, s1 := decimalOf(lt)
	p2, s2 := decimalOf(rt)
	var p, s int
	switch o {
	case "+", "-":
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + s + 1
	case "*":
		p, s = p1+p2+1, s1+s2
	case "/":
		s = max(6, s1+p2+1)
		p = p1 - s1 + s2 + s
	case "%":
		s = max(s1, s2)
		p = min(p1-s1, p2-s2) + s
	}
	// Operands keep their own scale; the evaluator works on exact values.
	return boundedDecimal(p, s), nil, true
}

func (b *binder) arith(o string, l, r *bnode, pos int) (*bnode, error) {
	res, operand, ok := arithType(o, l.typ, r.typ)
	if !ok {
		return nil, b.errf(pos, "cannot apply %s to %s and %s", o, describe(l), describe(r))
	}
	var err error
	if operand != nil {
		if l, err = b.castTo(l, operand); err != nil {
			return nil, err
		}
		if r, err = b.castTo(r, operand); err != nil {
			return nil, err
		}
	} else {
		// decimal arithmetic: integral operands become decimals, NULL takes the other side's type
		for i, p := range []**bnode{&l, &r} {
			if k := kindOf((*p).typ); k != kDecimal {
				pp, ss := decimalOf((*p).typ)
				if k == kNull {
					other := []*bnode{r, l}[i]
					pp, ss = decimalOf(other.typ)
				}
				if *p, err = b.castTo(*p, iceberg.DecimalTypeOf(pp, ss)); err != nil {
					return nil, err
				}
			}
		}
	}
	return &bnode{op: opArith, sub: o, typ: res, kids: []*bnode{l, r}, pos: pos}, nil
}

// cmpType returns the type two operands of a comparison are cast to. A
// string next to a date, timestamp, time or uuid is converted to that type
// (a literal at bind time, so a malformed one is a bind error).
func cmpType(a, b iceberg.Type) (iceberg.Type, bool) {
	ka, kb := kindOf(a), kindOf(b)
	switch {
	case ka == kNull:
		return b, true
	case kb == kNull:
		return a, true
	case a.Equals(b):
		return a, true
	case isNumeric(ka) && isNumeric(kb):
		return widerNumeric(a, b), true
	case ka == kString && (isTime(kb) || kb == kTime || kb == kUUID):
		return b, true
	case kb == kString && (isTime(ka) || ka == kTime || ka == kUUID):
		return a, true
	}
	return commonType(a, b)
}

// commonType is the type the branches of CASE/IF/COALESCE are cast to.
func commonType(a, b iceberg.Type) (iceberg.Type, bool) {
	ka, kb := kindOf(a), kindOf(b)
	switch {
	case ka == kNull:
		return b, true
	case kb == kNull:
		return a, true
	case a.Equals(b):
		return a, true
	case isNumeric(ka) && isNumeric(kb):
		return widerNumeric(a, b), true
	case isTime(ka) && isTime(kb):
		if ka == kTS && kb == kTS || ka == kTS && kb == kDate || ka == kDate && kb == kTS {
			return tTS, true
		}
		return tTSTZ, true
	case isBytes(ka) && isBytes(kb):
		return tBinary, true
	}
	return nil, false
}

// canCast reports whether an explicit CAST from a to b is allowed.
func canCast(a, b iceberg.Type) bool {
	ka, kb := kindOf(a), kindOf(b)
	switch {
	case ka == kNull || a.Equals(b):
		return true
	case kb == kString:
		return ka != kOther
	case ka == kString:
		return kb == kBool || isNumeric(kb) || isTime(kb) || kb == kBinary || kb == kTime || kb == kUUID
	case isNumeric(ka) || ka == kBool:
		return isNumeric(kb) || kb == kBool
	case isTime(ka):
		return isTime(kb)
	case isBytes(ka):
		return kb == kBinary
	}
	return false
}

// castTo converts n to type t. Casts of literals are done at bind time.
func (b *binder) castTo(n *bnode, t iceberg.Type) (*bnode, error) {
	if n.typ.Equals(t) {
		return n, nil
	}
	c := &bnode{op: opCast, typ: t, kids: []*bnode{n}, pos: n.pos, zone: b.zone}
	if n.op == opLit {
		v, err := foldConst(c)
		if err != nil {
			return nil, b.errf(n.pos, "cannot convert %s to %s: %v", n.String(), sqlType(t), err)
		}
		return lit(v, t, n.pos), nil
	}
	return c, nil
}

func (b *binder) bindCase(n *CaseNode) (*bnode, error) {
	var operand *bnode
	var err error
	if n.Operand != nil {
		if operand, err = b.bind(n.Operand); err != nil {
			return nil, err
		}
	}
	var whens, thens []*bnode
	for i := range n.Whens {
		w, err := b.bind(n.Whens[i])
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if w, err = b.binary("=", operand, w, w.pos); err != nil {
				return nil, err
			}
		} else if w, err = b.expectBool(w, "WHEN"); err != nil {
			return nil, err
		}
		th, err := b.bind(n.Thens[i])
		if err != nil {
			return nil, err
		}
		whens = append(whens, w)
		thens = append(thens, th)
	}
	var els *bnode
	if n.Else != nil {
		if els, err = b.bind(n.Else); err != nil {
			return nil, err
		}
	}
	results := slices.Clone(thens)
	if els != nil {
		results = append(results, els)
	}
	t, err := b.common(results, "CASE")
	if err != nil {
		return nil, err
	}
	c := &bnode{op: opCase, typ: t, pos: n.pos, hasElse: els != nil}
	for i := range whens {
		th, err := b.castTo(thens[i], t)
		if err != nil {
			return nil, err
		}
		c.kids = append(c.kids, whens[i], th)
	}
	if els != nil {
		e, err := b.castTo(els, t)
		if err != nil {
			return nil, err
		}
		c.kids = append(c.kids, e)
	}
	return c, nil
}

// common computes the common type of ns, or an error naming the mismatch.
func (b *binder) common(ns []*bnode, what string) (iceberg.Type, error) {
	t := tNull
	for _, x := range ns {
		ct, ok := commonType(t, x.typ)
		if !ok {
			return nil, b.errf(x.pos, "%s branches have incompatible types %s and %s", what, sqlType(t), describe(x))
		}
		t = ct
	}
	return t, nil
}

func (b *binder) castAll(ns []*bnode, t iceberg.Type) ([]*bnode, error) {
	out := make([]*bnode, len(ns))
	for i, x := range ns {
		var err error
		if out[i], err = b.castTo(x, t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (b *binder) bindCall(n *CallNode) (*bnode, error) {
	args, err := b.bindAll(n.Args)
	if err != nil {
		return nil, err
	}
	arity := func(lo, hi int) error {
		if len(args) < lo || hi >= 0 && len(args) > hi {
			want := fmt.Sprintf("%d", lo)
			if hi < 0 {
				want = fmt.Sprintf("at least %d", lo)
			} else if hi != lo {
				want = fmt.Sprintf("%d to %d", lo, hi)
			}
			return b.errf(n.pos, "function %s takes %s arguments, got %d", n.Name, want, len(args))
		}
		return nil
	}
	fn := func(t iceberg.Type, kids ...*bnode) *bnode {
		return &bnode{op: opFunc, sub: n.Name, typ: t, kids: kids, pos: n.pos, zone: b.zone}
	}
	wantKind := func(i int, t iceberg.Type, accept func(kind) bool) (*bnode, error) {
		a := args[i]
		k := kindOf(a.typ)
		if k == kNull {
			return lit(nullValue, t, a.pos), nil
		}
		if accept(k) {
			return a, nil
		}
		return nil, b.errf(a.pos, "function %s: argument %d must be %s, found %s", n.Name, i+1, sqlType(t), describe(a))
	}
	isStr := func(k kind) bool { return k == kString }
	switch n.Name {
	case "coalesce":
		if err := arity(1, -1); err != nil {
			return nil, err
		}
		t, err := b.common(args, "coalesce")
		if err != nil {
			return nil, err
		}
		kids, err := b.castAll(args, t)
		if err != nil {
			return nil, err
		}
		return &bnode{op: opCoalesce, typ: t, kids: kids, pos: n.pos}, nil
	case "lower", "upper", "trim", "ltrim", "rtrim":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		a, err := wantKind(0, tString, isStr)
		if err != nil {
			return nil, err
		}
		return fn(tString, a), nil
	case "length", "char_length", "character_length":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		a, err := wantKind(0, tString, func(k kind) bool { return k == kString || k == kBinary })
		if err != nil {
			return nil, err
		}
		return &bnode{op: opFunc, sub: "length", typ: tInt, kids: []*bnode{a}, pos: n.pos}, nil
	case "negative":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		return b.bind(&UnaryNode{n.base, "-", n.Args[0]})
	case "abs":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		a, err := wantKind(0, tDouble, isNumeric)
		if err != nil {
			return nil, err
		}
		return fn(a.typ, a), nil
	case "substring", "substr":
		if err := arity(2, 3); err != nil {
			return nil, err
		}
		s, err := wantKind(0, tString, func(k kind) bool { return k == kString || k == kBinary })
		if err != nil {
			return nil, err
		}
		kids := []*bnode{s}
		for i := 1; i < len(args); i++ {
			a, err := wantKind(i, tInt, isIntegral)
			if err != nil {
				return nil, err
			}
			if a, err = b.castTo(a, tInt); err != nil {
				return nil, err
			}
			kids = append(kids, a)
		}
		return &bnode{op: opFunc, sub: "substring", typ: s.typ, kids: kids, pos: n.pos}, nil
	case "concat":
		if err := arity(1, -1); err != nil {
			return nil, err
		}
		var kids []*bnode
		for i, a := range args {
			k := kindOf(a.typ)
			if isBytes(k) {
				return nil, b.errf(a.pos, "function concat: argument %d must be a string, found %s", i+1, describe(a))
			}
			c, err := b.castTo(a, tString)
			if err != nil {
				return nil, err
			}
			kids = append(kids, c)
		}
		return fn(tString, kids...), nil
	case "if":
		if err := arity(3, 3); err != nil {
			return nil, err
		}
		c, err := b.expectBool(args[0], "if")
		if err != nil {
			return nil, err
		}
		t, err := b.common(args[1:], "if")
		if err != nil {
			return nil, err
		}
		br, err := b.castAll(args[1:], t)
		if err != nil {
			return nil, err
		}
		return &bnode{op: opCase, typ: t, kids: []*bnode{c, br[0], br[1]}, hasElse: true, pos: n.pos}, nil
	case "nullif":
		if err := arity(2, 2); err != nil {
			return nil, err
		}
		eq, err := b.binary("=", args[0], args[1], n.pos)
		if err != nil {
			return nil, err
		}
		// nullif(a, b) = CASE WHEN a = b THEN NULL ELSE a END
		return &bnode{op: opCase, typ: args[0].typ, kids: []*bnode{eq, lit(nullValue, args[0].typ, n.pos), args[0]}, hasElse: true, pos: n.pos}, nil
	case "year", "month", "day", "dayofmonth", "hour", "minute", "second":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		a := args[0]
		k := kindOf(a.typ)
		name := n.Name
		if name == "dayofmonth" {
			name = "day"
		}
		switch {
		case k == kNull:
			a = lit(nullValue, tTSTZ, a.pos)
		case k == kString && a.op == opLit:
			if a, err = b.castTo(a, tTSTZ); err != nil {
				return nil, err
			}
		case k == kDate && (name == "year" || name == "month" || name == "day"):
		case k == kDate:
			if a, err = b.castTo(a, tTSTZ); err != nil {
				return nil, err
			}
		case k == kTS || k == kTSTZ:
		default:
			return nil, b.errf(a.pos, "function %s: argument must be a date or timestamp, found %s", n.Name, describe(a))
		}
		return &bnode{op: opFunc, sub: name, typ: tInt, kids: []*bnode{a}, pos: n.pos, zone: b.zone}, nil
	case "date_trunc":
		if err := arity(2, 2); err != nil {
			return nil, err
		}
		f := args[0]
		if f.op != opLit || kindOf(f.typ) != kString {
			return nil, b.errf(f.pos, "function date_trunc: the unit must be a string literal")
		}
		unit, ok := truncUnits[strings.ToUpper(f.val.s)]
		if !ok {
			return nil, b.errf(f.pos, "function date_trunc: unknown unit %q", f.val.s)
		}
		// As Spark, the argument becomes a timestamp (with zone; a
		// timestamp_ntz too), truncated in the session time zone.
		a := args[1]
		switch kindOf(a.typ) {
		case kTSTZ:
		case kNull, kDate, kString, kTS:
			if a, err = b.castTo(b.nullOf(a, tTSTZ), tTSTZ); err != nil {
				return nil, err
			}
		default:
			return nil, b.errf(a.pos, "function date_trunc: argument 2 must be a timestamp, found %s", describe(a))
		}
		return &bnode{op: opFunc, sub: "date_trunc", typ: tTSTZ, kids: []*bnode{lit(value{s: unit}, tString, f.pos), a}, pos: n.pos, zone: b.zone}, nil
	case "current_date", "current_timestamp", "now":
		if err := arity(0, 0); err != nil {
			return nil, err
		}
		now := time.Now().UnixMicro()
		if n.Name == "current_date" {
			// the date in the session time zone, as Spark's
			wall, _ := b.zone.ToWall(now, 1_000_000)
			return lit(value{i: floorDiv(wall, 86_400_000_000)}, tDate, n.pos), nil
		}
		return lit(value{i: now}, tTSTZ, n.pos), nil
	}
	return nil, b.errf(n.pos, "unknown function %q", n.Name)
}

var truncUnits = map[string]string{
	"YEAR": "year", "YYYY": "year", "YY": "year", "QUARTER": "quarter", "MONTH": "month", "MM": "month", "MON": "month",
	"WEEK": "week", "DAY": "day", "DD": "day", "HOUR": "hour", "MINUTE": "minute", "SECOND": "second",
}
