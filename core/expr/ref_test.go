package expr

// An independent row-by-row reference for the SQL subset the random tests
// generate: scalar Go code implementing Spark's semantics (three-valued
// logic, lazy AND/OR/CASE/COALESCE, ANSI overflow and division errors).

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

type ty int

const (
	tyInt ty = iota
	tyLong
	tyDec
	tyDouble
	tyStr
	tyBool
	tyDate
	tyTs // timestamp with zone
)

var errRef = errors.New("reference evaluation error")

// tv is a reference value.
type tv struct {
	null bool
	i    int64
	f    float64
	r    *big.Rat
	s    string
	b    bool
}

var tnull = tv{null: true}

type tn interface {
	sql() string
	ty() ty
	dec() (p, s int) // decimal precision and scale (tyDec only)
	eval(rw row) (tv, error)
}

type tCol struct {
	path []string
	t    ty
}

func (c tCol) sql() string {
	parts := make([]string, len(c.path))
	for i, p := range c.path {
		if strings.Contains(p, " ") {
			parts[i] = "`" + p + "`"
		} else {
			parts[i] = strings.ToUpper(p[:1]) + p[1:] // exercise case-insensitive names
		}
	}
	return strings.Join(parts, ".")
}
func (c tCol) ty() ty          { return c.t }
func (c tCol) dec() (int, int) { return 9, 2 }
func (c tCol) eval(rw row) (tv, error) {
	var v any = rw
	for _, p := range c.path {
		m, ok := v.(row)
		if !ok {
			return tnull, nil
		}
		v = m[p]
	}
	switch x := v.(type) {
	case nil:
		return tnull, nil
	case int32:
		if c.t == tyDate {
			return tv{i: int64(x)}, nil
		}
		return tv{i: int64(x)}, nil
	case int64:
		if c.t == tyDec {
			return tv{r: decRat(x)}, nil
		}
		return tv{i: x}, nil
	case float64:
		return tv{f: x}, nil
	case string:
		return tv{s: x}, nil
	case bool:
		return tv{b: x}, nil
	}
	panic(fmt.Sprintf("column value %T", v))
}

type tLit struct {
	v    tv
	t    ty
	text string
	p, s int
}

func (l tLit) sql() string          { return l.text }
func (l tLit) ty() ty               { return l.t }
func (l tLit) dec() (int, int)      { return l.p, l.s }
func (l tLit) eval(row) (tv, error) { return l.v, nil }

func isNum(t ty) bool { return t <= tyDouble }

// wider is the common numeric type (int < long < decimal < double).
func wider(a, b ty) ty {
	if a > b {
		return a
	}
	return b
}

func toF(v tv, t ty) float64 {
	switch t {
	case tyDouble:
		return v.f
	case tyDec:
		f, _ := v.r.Float64()
		return f
	}
	return float64(v.i)
}

func toR(v tv, t ty) *big.Rat {
	if t == tyDec {
		return v.r
	}
	return new(big.Rat).SetInt64(v.i)
}

func sparkCmpF(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
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

// cmpT compares two non-null values of types at and bt.
func cmpT(a tv, at ty, b tv, bt ty) int {
	if isNum(at) {
		w := wider(at, bt)
		switch w {
		case tyDouble:
			return sparkCmpF(toF(a, at), toF(b, bt))
		case tyDec:
			return toR(a, at).Cmp(toR(b, bt))
		}
		switch {
		case a.i < b.i:
			return -1
		case a.i > b.i:
			return 1
		}
		return 0
	}
	if at == tyDate && bt == tyTs {
		a.i, at = a.i*day, tyTs
	}
	if bt == tyDate && at == tyTs {
		b.i = b.i * day
	}
	switch at {
	case tyStr:
		return strings.Compare(a.s, b.s)
	case tyBool:
		switch {
		case a.b == b.b:
			return 0
		case b.b:
			return -1
		}
		return 1
	case tyDate, tyTs:
		switch {
		case a.i < b.i:
			return -1
		case a.i > b.i:
			return 1
		}
		return 0
	}
	panic("cmp type")
}

type tCmp struct {
	op   string
	l, r tn
}

func (c tCmp) sql() string     { return "(" + c.l.sql() + " " + c.op + " " + c.r.sql() + ")" }
func (c tCmp) ty() ty          { return tyBool }
func (c tCmp) dec() (int, int) { return 0, 0 }

// isNullT reports a NULL literal, also under a CAST (which binds to one).
func isNullT(n tn) bool {
	switch x := n.(type) {
	case tLit:
		return x.v.null
	case tFunc:
		return strings.HasPrefix(x.name, "cast_") && isNullT(x.args[0])
	}
	return false
}

func (c tCmp) eval(rw row) (tv, error) {
	if c.op != "<=>" && (isNullT(c.l) || isNullT(c.r)) {
		return tnull, nil // folded by Spark's optimizer: x is not evaluated
	}
	a, err := c.l.eval(rw)
	if err != nil {
		return tv{}, err
	}
	if a.null && c.op != "<=>" {
		return tnull, nil // the right side is not evaluated
	}
	b, err := c.r.eval(rw)
	if err != nil {
		return tv{}, err
	}
	if c.op == "<=>" {
		if a.null || b.null {
			return tv{b: a.null && b.null}, nil
		}
		return tv{b: cmpT(a, c.l.ty(), b, c.r.ty()) == 0}, nil
	}
	if b.null {
		return tnull, nil
	}
	k := cmpT(a, c.l.ty(), b, c.r.ty())
	var res bool
	switch c.op {
	case "=":
		res = k == 0
	case "!=":
		res = k != 0
	case "<":
		res = k < 0
	case "<=":
		res = k <= 0
	case ">":
		res = k > 0
	case ">=":
		res = k >= 0
	}
	return tv{b: res}, nil
}

type tLogic struct {
	and  bool
	l, r tn
}

func (c tLogic) sql() string {
	if c.and {
		return "(" + c.l.sql() + " AND " + c.r.sql() + ")"
	}
	return "(" + c.l.sql() + " OR " + c.r.sql() + ")"
}
func (c tLogic) ty() ty          { return tyBool }
func (c tLogic) dec() (int, int) { return 0, 0 }
func (c tLogic) eval(rw row) (tv, error) {
	a, err := c.l.eval(rw)
	if err != nil {
		return tv{}, err
	}
	if !a.null && a.b != c.and {
		return a, nil // FALSE AND ..., TRUE OR ...
	}
	b, err := c.r.eval(rw)
	if err != nil {
		return tv{}, err
	}
	if !b.null && b.b != c.and {
		return b, nil
	}
	if a.null || b.null {
		return tnull, nil
	}
	return tv{b: c.and}, nil
}

type tNot struct{ x tn }

func (c tNot) sql() string     { return "(NOT " + c.x.sql() + ")" }
func (c tNot) ty() ty          { return tyBool }
func (c tNot) dec() (int, int) { return 0, 0 }
func (c tNot) eval(rw row) (tv, error) {
	a, err := c.x.eval(rw)
	if err != nil || a.null {
		return a, err
	}
	return tv{b: !a.b}, nil
}

type tIs struct {
	x    tn
	what string // NULL, NOT NULL, TRUE, NOT TRUE, FALSE, NOT FALSE
}

func (c tIs) sql() string     { return "(" + c.x.sql() + " IS " + c.what + ")" }
func (c tIs) ty() ty          { return tyBool }
func (c tIs) dec() (int, int) { return 0, 0 }
func (c tIs) eval(rw row) (tv, error) {
	a, err := c.x.eval(rw)
	if err != nil {
		return tv{}, err
	}
	switch c.what {
	case "NULL":
		return tv{b: a.null}, nil
	case "NOT NULL":
		return tv{b: !a.null}, nil
	case "TRUE":
		return tv{b: !a.null && a.b}, nil
	case "NOT TRUE":
		return tv{b: a.null || !a.b}, nil
	case "FALSE":
		return tv{b: !a.null && !a.b}, nil
	}
	return tv{b: a.null || a.b}, nil
}

type tIn struct {
	x    tn
	list []tn
	not  bool
}

func (c tIn) sql() string {
	parts := make([]string, len(c.list))
	for i, l := range c.list {
		parts[i] = l.sql()
	}
	kw := " IN ("
	if c.not {
		kw = " NOT IN ("
	}
	return "(" + c.x.sql() + kw + strings.Join(parts, ", ") + "))"
}
func (c tIn) ty() ty          { return tyBool }
func (c tIn) dec() (int, int) { return 0, 0 }
func (c tIn) eval(rw row) (tv, error) {
	a, err := c.x.eval(rw)
	if err != nil || a.null {
		return a, err
	}
	sawNull := false
	for _, l := range c.list {
		b, err := l.eval(rw)
		if err != nil {
			return tv{}, err
		}
		if b.null {
			sawNull = true
			continue
		}
		if cmpT(a, c.x.ty(), b, l.ty()) == 0 {
			return tv{b: !c.not}, nil
		}
	}
	if sawNull {
		return tnull, nil
	}
	return tv{b: c.not}, nil
}

type tBetween struct {
	x, lo, hi tn
	not       bool
}

func (c tBetween) sql() string {
	kw := " BETWEEN "
	if c.not {
		kw = " NOT BETWEEN "
	}
	return "(" + c.x.sql() + kw + c.lo.sql() + " AND " + c.hi.sql() + ")"
}
func (c tBetween) ty() ty          { return tyBool }
func (c tBetween) dec() (int, int) { return 0, 0 }
func (c tBetween) eval(rw row) (tv, error) {
	v, err := tLogic{true, tCmp{">=", c.x, c.lo}, tCmp{"<=", c.x, c.hi}}.eval(rw)
	if err != nil || !c.not {
		return v, err
	}
	return tNot{tLit{v: v}}.eval(rw)
}

type tLike struct {
	x   tn
	pat string
	not bool
}

func (c tLike) sql() string {
	kw := " LIKE '"
	if c.not {
		kw = " NOT LIKE '"
	}
	return "(" + c.x.sql() + kw + strings.ReplaceAll(c.pat, `\`, `\\`) + "')"
}
func (c tLike) ty() ty          { return tyBool }
func (c tLike) dec() (int, int) { return 0, 0 }
func (c tLike) eval(rw row) (tv, error) {
	a, err := c.x.eval(rw)
	if err != nil || a.null {
		return a, err
	}
	var re strings.Builder
	re.WriteString(`(?s)^`)
	rs := []rune(c.pat)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '\\':
			i++
			re.WriteString(regexp.QuoteMeta(string(rs[i])))
		case '%':
			re.WriteString(".*")
		case '_':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(rs[i])))
		}
	}
	re.WriteString("$")
	m := regexp.MustCompile(re.String()).MatchString(a.s)
	return tv{b: m != c.not}, nil
}

type tArith struct {
	op   string
	l, r tn
}

func (c tArith) sql() string { return "(" + c.l.sql() + " " + c.op + " " + c.r.sql() + ")" }
func (c tArith) ty() ty {
	w := wider(c.l.ty(), c.r.ty())
	if c.op == "/" && w != tyDec {
		return tyDouble
	}
	return w
}
func decOf(n tn) (int, int) {
	switch n.ty() {
	case tyInt:
		return 10, 0
	case tyLong:
		return 20, 0
	}
	return n.dec()
}
func (c tArith) dec() (int, int) {
	p1, s1 := decOf(c.l)
	p2, s2 := decOf(c.r)
	switch c.op {
	case "+", "-":
		s := max(s1, s2)
		return max(p1-s1, p2-s2) + s + 1, s
	case "*":
		return p1 + p2 + 1, s1 + s2
	}
	s := max(s1, s2)
	return min(p1-s1, p2-s2) + s, s // %
}
func (c tArith) eval(rw row) (tv, error) {
	if isNullT(c.l) || isNullT(c.r) {
		return tnull, nil
	}
	a, err := c.l.eval(rw)
	if err != nil || a.null {
		return a, err
	}
	b, err := c.r.eval(rw)
	if err != nil || b.null {
		return b, err
	}
	t := c.ty()
	switch t {
	case tyDouble:
		x, y := toF(a, c.l.ty()), toF(b, c.r.ty())
		switch c.op {
		case "+":
			return tv{f: x + y}, nil
		case "-":
			return tv{f: x - y}, nil
		case "*":
			return tv{f: x * y}, nil
		case "/":
			if y == 0 {
				return tv{}, errRef
			}
			return tv{f: x / y}, nil
		}
		if y == 0 {
			return tv{}, errRef
		}
		return tv{f: math.Mod(x, y)}, nil
	case tyDec:
		x, y := toR(a, c.l.ty()), toR(b, c.r.ty())
		var res *big.Rat
		switch c.op {
		case "+":
			res = new(big.Rat).Add(x, y)
		case "-":
			res = new(big.Rat).Sub(x, y)
		case "*":
			res = new(big.Rat).Mul(x, y)
		case "%":
			if y.Sign() == 0 {
				return tv{}, errRef
			}
			q := new(big.Int).Quo(new(big.Rat).Quo(x, y).Num(), new(big.Rat).Quo(x, y).Denom()) // truncated quotient
			res = new(big.Rat).Sub(x, new(big.Rat).Mul(y, new(big.Rat).SetInt(q)))
		}
		p, s := c.dec()
		lim := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p-s)), nil))
		if new(big.Rat).Abs(res).Cmp(lim) >= 0 {
			return tv{}, errRef
		}
		return tv{r: res}, nil
	}
	x, y := big.NewInt(a.i), big.NewInt(b.i)
	var res *big.Int
	switch c.op {
	case "+":
		res = x.Add(x, y)
	case "-":
		res = x.Sub(x, y)
	case "*":
		res = x.Mul(x, y)
	case "%":
		if y.Sign() == 0 {
			return tv{}, errRef
		}
		res = x.Rem(x, y)
	}
	if !inRange(res, t) {
		return tv{}, errRef
	}
	return tv{i: res.Int64()}, nil
}

func inRange(x *big.Int, t ty) bool {
	if t == tyInt {
		return x.IsInt64() && x.Int64() >= math.MinInt32 && x.Int64() <= math.MaxInt32
	}
	return x.IsInt64()
}

type tNeg struct{ x tn }

func (c tNeg) sql() string     { return "-(" + c.x.sql() + ")" }
func (c tNeg) ty() ty          { return c.x.ty() }
func (c tNeg) dec() (int, int) { return c.x.dec() }
func (c tNeg) eval(rw row) (tv, error) {
	a, err := c.x.eval(rw)
	if err != nil || a.null {
		return a, err
	}
	switch c.ty() {
	case tyDouble:
		return tv{f: -a.f}, nil
	case tyDec:
		return tv{r: new(big.Rat).Neg(a.r)}, nil
	}
	r := new(big.Int).Neg(big.NewInt(a.i))
	if !inRange(r, c.ty()) {
		return tv{}, errRef
	}
	return tv{i: r.Int64()}, nil
}

// tCase is CASE WHEN ... (also IF and COALESCE, by kind).
type tCase struct {
	kind  string // case, if, coalesce
	whens []tn
	thens []tn
	els   tn
}

func (c tCase) sql() string {
	switch c.kind {
	case "if":
		return "if(" + c.whens[0].sql() + ", " + c.thens[0].sql() + ", " + c.els.sql() + ")"
	case "coalesce":
		parts := []string{}
		for _, t := range c.thens {
			parts = append(parts, t.sql())
		}
		return "coalesce(" + strings.Join(parts, ", ") + ")"
	}
	var b strings.Builder
	b.WriteString("CASE")
	for i := range c.whens {
		b.WriteString(" WHEN " + c.whens[i].sql() + " THEN " + c.thens[i].sql())
	}
	if c.els != nil {
		b.WriteString(" ELSE " + c.els.sql())
	}
	return b.String() + " END"
}
func (c tCase) ty() ty { return c.thens[0].ty() }
func (c tCase) dec() (int, int) {
	ip, s := 0, 0
	all := append([]tn{}, c.thens...)
	if c.els != nil {
		all = append(all, c.els)
	}
	for _, t := range all {
		p1, s1 := t.dec()
		ip, s = max(ip, p1-s1), max(s, s1)
	}
	return ip + s, s
}
func (c tCase) eval(rw row) (tv, error) {
	if c.kind == "coalesce" {
		for _, t := range c.thens {
			v, err := t.eval(rw)
			if err != nil || !v.null {
				return v, err
			}
		}
		return tnull, nil
	}
	for i, w := range c.whens {
		v, err := w.eval(rw)
		if err != nil {
			return tv{}, err
		}
		if !v.null && v.b {
			return c.thens[i].eval(rw)
		}
	}
	if c.els != nil {
		return c.els.eval(rw)
	}
	return tnull, nil
}

// tFunc is a scalar function.
type tFunc struct {
	name string
	args []tn
	t    ty
}

func (c tFunc) sql() string {
	parts := []string{}
	for _, a := range c.args {
		parts = append(parts, a.sql())
	}
	switch c.name {
	case "cast_long":
		return "CAST(" + parts[0] + " AS BIGINT)"
	case "cast_int":
		return "cast(" + parts[0] + " as int)"
	case "cast_string":
		return "CAST(" + parts[0] + " AS string)"
	}
	return strings.ToUpper(c.name) + "(" + strings.Join(parts, ", ") + ")"
}
func (c tFunc) ty() ty          { return c.t }
func (c tFunc) dec() (int, int) { return c.args[0].dec() }
func (c tFunc) eval(rw row) (tv, error) {
	vals := make([]tv, len(c.args))
	sawNull := false
	for i, a := range c.args {
		v, err := a.eval(rw)
		if err != nil {
			return tv{}, err
		}
		if v.null {
			// Spark's concat evaluates every argument; other functions stop
			if c.name != "concat" {
				return tnull, nil
			}
			sawNull = true
		}
		vals[i] = v
	}
	if sawNull {
		return tnull, nil
	}
	a := vals[0]
	switch c.name {
	case "lower":
		return tv{s: strings.ToLower(a.s)}, nil
	case "upper":
		return tv{s: strings.ToUpper(a.s)}, nil
	case "trim":
		return tv{s: strings.Trim(a.s, " ")}, nil
	case "length":
		return tv{i: int64(utf8.RuneCountInString(a.s))}, nil
	case "concat":
		return tv{s: a.s + vals[1].s}, nil
	case "substring":
		rs := []rune(a.s)
		pos, n := vals[1].i, vals[2].i
		// Spark: 1-based, negative from the end, 0 like 1
		start := pos - 1
		if pos < 0 {
			start = int64(len(rs)) + pos
		} else if pos == 0 {
			start = 0
		}
		end := start + n
		if start < 0 {
			start = 0
		}
		if end > int64(len(rs)) {
			end = int64(len(rs))
		}
		if start >= end {
			return tv{s: ""}, nil
		}
		return tv{s: string(rs[start:end])}, nil
	case "abs":
		switch c.t {
		case tyDouble:
			return tv{f: math.Abs(a.f)}, nil
		case tyDec:
			return tv{r: new(big.Rat).Abs(a.r)}, nil
		}
		r := new(big.Int).Abs(big.NewInt(a.i))
		if !inRange(r, c.t) {
			return tv{}, errRef
		}
		return tv{i: r.Int64()}, nil
	case "year", "month", "day", "hour":
		t := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(a.i))
		if c.args[0].ty() == tyTs {
			t = time.UnixMicro(a.i).UTC()
		}
		return tv{i: int64(map[string]int{"year": t.Year(), "month": int(t.Month()), "day": t.Day(), "hour": t.Hour()}[c.name])}, nil
	case "cast_long":
		if c.args[0].ty() == tyDouble {
			lim := math.Ldexp(1, 63)
			if math.IsNaN(a.f) || a.f > lim || a.f < -lim {
				return tv{}, errRef
			}
			if a.f == lim {
				return tv{i: math.MaxInt64}, nil
			}
			return tv{i: int64(math.Trunc(a.f))}, nil
		}
		return tv{i: a.i}, nil
	case "cast_int":
		if a.i > math.MaxInt32 || a.i < math.MinInt32 {
			return tv{}, errRef
		}
		return tv{i: a.i}, nil
	case "cast_string":
		return tv{s: fmt.Sprint(a.i)}, nil
	}
	panic(c.name)
}

// typed avoids an untyped NULL literal where Spark would give it a
// different type than the generator assumes (abs(NULL) is a double).
func (g gen) typed(n tn) tn {
	if l, ok := n.(tLit); ok && l.v.null {
		return g.col(l.t)
	}
	return n
}

// gen generates random typed expressions over the test schema.
type gen struct {
	r *rand.Rand
	// quals, when set, prefix every column with one of them (two-scope
	// tests: joined rows hold each input's row under its qualifiers)
	quals []string
	// op lets string columns be the unqualified, source-only column "op"
	op bool
}

func (g gen) pick(n int) int { return g.r.Intn(n) }

func (g gen) col(t ty) tn {
	if len(g.quals) == 0 {
		return g.col1(t)
	}
	if t == tyStr && g.op && g.pick(5) == 0 {
		return tCol{[]string{"op"}, tyStr}
	}
	c := g.col1(t).(tCol)
	c.path = append([]string{g.quals[g.pick(len(g.quals))]}, c.path...)
	return c
}

// col1 is a column of the test schema.
func (g gen) col1(t ty) tn {
	switch t {
	case tyInt:
		if g.pick(3) == 0 {
			return tCol{[]string{"st", "x"}, tyInt}
		}
		return tCol{[]string{"i"}, tyInt}
	case tyLong:
		return tCol{[]string{"id"}, tyLong}
	case tyDouble:
		return tCol{[]string{"d"}, tyDouble}
	case tyDec:
		return tCol{[]string{"dec"}, tyDec}
	case tyStr:
		return tCol{[][]string{{"s"}, {"my col"}, {"st", "Name"}, {"level"}}[g.pick(4)], tyStr}
	case tyBool:
		return tCol{[]string{"b"}, tyBool}
	case tyTs:
		return tCol{[]string{"ts"}, tyTs}
	}
	return tCol{[]string{"dt"}, tyDate}
}

func (g gen) lit(t ty) tn {
	if g.pick(12) == 0 {
		return tLit{v: tnull, t: t, text: "NULL"}
	}
	switch t {
	case tyInt:
		v := int64(g.pick(11) - 5)
		return tLit{v: tv{i: v}, t: t, text: fmt.Sprint(v)}
	case tyLong:
		v := int64(g.pick(200) - 20)
		return tLit{v: tv{i: v}, t: t, text: fmt.Sprintf("%dL", v)}
	case tyDouble:
		v := float64(g.pick(9)-4) / 2
		return tLit{v: tv{f: v}, t: t, text: fmt.Sprintf("%gD", v)}
	case tyDec:
		u := int64(g.pick(2001) - 1000)
		txt := new(big.Rat).SetFrac64(u, 100).FloatString(2)
		digits := len(strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(txt), "0"))
		return tLit{v: tv{r: decRat(u)}, t: t, text: txt, p: max(digits, 2), s: 2}
	case tyStr:
		v := strPool[g.pick(len(strPool))]
		return tLit{v: tv{s: v}, t: t, text: "'" + v + "'"}
	case tyBool:
		v := g.pick(2) == 0
		return tLit{v: tv{b: v}, t: t, text: strings.ToUpper(fmt.Sprint(v))}
	}
	if t == tyTs {
		us := int64(19700+g.pick(60))*day + int64(g.pick(48))*3_600_000_000
		return tLit{v: tv{i: us}, t: t, text: "TIMESTAMP '" + time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05") + "'"}
	}
	d := int64(19700 + g.pick(60))
	return tLit{v: tv{i: d}, t: t, text: "DATE '" + time.Unix(d*86400, 0).UTC().Format("2006-01-02") + "'"}
}

// strLit is a date or timestamp literal written as a plain string, which
// binds to the type of the column it is compared with.
func (g gen) strLit(t ty) tn {
	l := g.lit(t).(tLit)
	if !l.v.null {
		l.text = l.text[strings.Index(l.text, "'"):]
	}
	return l
}

func (g gen) leaf(t ty) tn {
	if g.pick(3) == 0 {
		return g.lit(t)
	}
	return g.col(t)
}

// value generates an expression of type t.
func (g gen) value(t ty, depth int) tn {
	if depth <= 0 || g.pick(3) == 0 {
		if t == tyBool {
			return g.pred(depth)
		}
		return g.leaf(t)
	}
	switch {
	case t == tyBool:
		return g.pred(depth)
	case g.pick(8) == 0:
		th := []tn{g.value(t, depth-1)}
		switch g.pick(3) {
		case 0:
			return tCase{kind: "if", whens: []tn{g.pred(depth - 1)}, thens: th, els: g.value(t, depth-1)}
		case 1:
			return tCase{kind: "coalesce", thens: append(th, g.value(t, depth-1))}
		}
		c := tCase{kind: "case", whens: []tn{g.pred(depth - 1), g.pred(depth - 1)}, thens: append(th, g.value(t, depth-1))}
		if g.pick(2) == 0 {
			c.els = g.value(t, depth-1)
		}
		return c
	case t == tyInt:
		switch g.pick(6) {
		case 0:
			return tFunc{"length", []tn{g.value(tyStr, depth-1)}, tyInt}
		case 1:
			return tFunc{"abs", []tn{g.typed(g.value(tyInt, depth-1))}, tyInt}
		case 2:
			return tNeg{g.value(tyInt, depth-1)}
		case 3:
			if g.pick(2) == 0 {
				return tFunc{[]string{"year", "month", "day", "hour"}[g.pick(4)], []tn{g.typed(g.leaf(tyTs))}, tyInt}
			}
			return tFunc{[]string{"year", "month", "day"}[g.pick(3)], []tn{g.typed(g.leaf(tyDate))}, tyInt}
		case 4:
			return tFunc{"cast_int", []tn{g.value(tyLong, depth-1)}, tyInt}
		}
		return tArith{[]string{"+", "-", "*", "%"}[g.pick(4)], g.value(tyInt, depth-1), g.value(tyInt, depth-1)}
	case t == tyLong:
		switch g.pick(4) {
		case 0:
			return tFunc{"cast_long", []tn{g.value(tyDouble, depth-1)}, tyLong}
		case 1:
			return tFunc{"abs", []tn{g.typed(g.value(tyLong, depth-1))}, tyLong}
		}
		l, r := g.value(tyLong, depth-1), g.value([]ty{tyInt, tyLong}[g.pick(2)], depth-1)
		if g.pick(2) == 0 {
			l, r = r, l
		}
		return tArith{[]string{"+", "-", "*", "%"}[g.pick(4)], l, r}
	case t == tyDouble:
		if g.pick(3) == 0 {
			return tArith{"/", g.value([]ty{tyInt, tyLong}[g.pick(2)], depth-1), g.value(tyInt, depth-1)}
		}
		l, r := g.value(tyDouble, depth-1), g.value([]ty{tyInt, tyDouble, tyDec}[g.pick(3)], depth-1)
		if g.pick(2) == 0 {
			l, r = r, l
		}
		return tArith{[]string{"+", "-", "*", "/", "%"}[g.pick(5)], l, r}
	case t == tyDec:
		if g.pick(4) == 0 {
			return tNeg{g.value(tyDec, depth-1)}
		}
		return tArith{[]string{"+", "-", "*"}[g.pick(3)], g.leaf(tyDec), g.leaf([]ty{tyInt, tyDec}[g.pick(2)])}
	case t == tyStr:
		switch g.pick(6) {
		case 0:
			return tFunc{"concat", []tn{g.value(tyStr, depth-1), g.value(tyStr, depth-1)}, tyStr}
		case 1:
			return tFunc{"substring", []tn{g.value(tyStr, depth-1), g.lit(tyInt), g.lit(tyInt)}, tyStr}
		case 2:
			return tFunc{"cast_string", []tn{g.value(tyInt, depth-1)}, tyStr}
		}
		return tFunc{[]string{"lower", "upper", "trim"}[g.pick(3)], []tn{g.value(tyStr, depth-1)}, tyStr}
	}
	return g.leaf(t)
}

var likePatterns = []string{"a%", "%c", "a_c", "%b%", "INFO", "_", "%", "a\\%c", "a\\_c", "ä%", "%a%c%", "__", ""}

// pred generates a boolean expression.
func (g gen) pred(depth int) tn {
	if depth <= 0 {
		if g.pick(4) == 0 {
			return g.leaf(tyBool)
		}
		t := []ty{tyInt, tyLong, tyDouble, tyDec, tyStr, tyDate, tyTs}[g.pick(7)]
		o := []string{"=", "!=", "<", "<=", ">", ">=", "<=>"}[g.pick(7)]
		switch {
		case (t == tyDate || t == tyTs) && g.pick(3) == 0:
			return tCmp{o, g.col(t), g.strLit(t)}
		case t == tyDate && g.pick(3) == 0:
			return tCmp{o, g.col(tyDate), g.lit(tyTs)}
		case t == tyTs && g.pick(3) == 0:
			return tCmp{o, g.lit(tyDate), g.col(tyTs)}
		}
		return tCmp{o, g.col(t), g.lit(t)}
	}
	switch g.pick(11) {
	case 0, 1:
		return tLogic{g.pick(2) == 0, g.pred(depth - 1), g.pred(depth - 1)}
	case 2:
		return tNot{g.pred(depth - 1)}
	case 3:
		return tIs{g.value([]ty{tyInt, tyStr, tyBool, tyDouble}[g.pick(4)], depth-1), []string{"NULL", "NOT NULL"}[g.pick(2)]}
	case 4:
		return tIs{g.pred(depth - 1), []string{"TRUE", "NOT TRUE", "FALSE", "NOT FALSE"}[g.pick(4)]}
	case 5:
		t := []ty{tyInt, tyLong, tyStr, tyDate, tyDouble, tyTs}[g.pick(6)]
		var list []tn
		for range 1 + g.pick(4) {
			list = append(list, g.lit(t))
		}
		return tIn{g.value(t, depth-1), list, g.pick(3) == 0}
	case 6:
		t := []ty{tyInt, tyLong, tyDate, tyDec, tyTs}[g.pick(5)]
		return tBetween{g.value(t, depth-1), g.lit(t), g.lit(t), g.pick(3) == 0}
	case 7:
		return tLike{g.value(tyStr, depth-1), likePatterns[g.pick(len(likePatterns))], g.pick(3) == 0}
	}
	// comparisons between numeric families, or within one type
	if g.pick(2) == 0 {
		nums := []ty{tyInt, tyLong, tyDouble, tyDec}
		return tCmp{[]string{"=", "!=", "<", "<=", ">", ">=", "<=>"}[g.pick(7)], g.value(nums[g.pick(4)], depth-1), g.value(nums[g.pick(4)], depth-1)}
	}
	t := []ty{tyStr, tyDate, tyBool, tyTs}[g.pick(4)]
	return tCmp{[]string{"=", "!=", "<", "<=", ">", ">=", "<=>"}[g.pick(7)], g.value(t, depth-1), g.value(t, depth-1)}
}
