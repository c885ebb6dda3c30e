package expr

import (
	"errors"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
)

// Node is a parsed, unbound expression. Bind resolves it against a schema.
type Node interface {
	// Pos is the 1-based character position where the node starts.
	Pos() int
	// String renders the node as SQL text.
	String() string
	src() string
}

type base struct {
	pos  int
	text string // the whole source, for error messages
}

func (b base) Pos() int          { return b.pos }
func (b base) src() string       { return b.text }
func mk(p *parser, pos int) base { return base{pos: pos, text: p.src} }

// ColumnNode references a column by its name path (a.b.c).
type ColumnNode struct {
	base
	Path []string
}

// litKind is the syntactic kind of a literal.
type litKind int

const (
	litNull litKind = iota
	litBool
	litInt     // fits int32
	litBigint  // int64
	litDecimal // 1.5
	litDouble  // 1.5D, 1e3
	litFloat   // 1.5F
	litString
	litDate
	litTimestamp    // timestamptz
	litTimestampNTZ // timestamp without zone
	litBinary
)

// LiteralNode is a constant.
type LiteralNode struct {
	base
	Kind litKind
	Text string // the literal's text (number text, unescaped string, ...)
}

// UnaryNode is NOT x or -x.
type UnaryNode struct {
	base
	Op string // "NOT" or "-"
	X  Node
}

// BinaryNode is a logical, comparison or arithmetic operator.
type BinaryNode struct {
	base
	Op   string // AND OR = != < <= > >= <=> + - * / %
	L, R Node
}

// IsNode is x IS [NOT] NULL|TRUE|FALSE.
type IsNode struct {
	base
	X    Node
	Not  bool
	What string // NULL, TRUE, FALSE
}

// InNode is x [NOT] IN (list).
type InNode struct {
	base
	X    Node
	List []Node
	Not  bool
}

// BetweenNode is x [NOT] BETWEEN lo AND hi.
type BetweenNode struct {
	base
	X, Lo, Hi Node
	Not       bool
}

// LikeNode is x [NOT] LIKE pattern.
type LikeNode struct {
	base
	X, Pattern Node
	Not        bool
}

// CallNode is a function call.
type CallNode struct {
	base
	Name string // lower case
	Args []Node
}

// CastNode is CAST(x AS type).
type CastNode struct {
	base
	X  Node
	To iceberg.Type
}

// CaseNode is CASE [operand] WHEN ... THEN ... [ELSE ...] END.
type CaseNode struct {
	base
	Operand Node // nil for a searched CASE
	Whens   []Node
	Thens   []Node
	Else    Node // may be nil
}

type parser struct {
	src  string
	toks []token
	i    int
}

// Parse parses a Spark SQL expression.
func Parse(src string) (Node, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	n, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tkEOF {
		return nil, p.unexpected(t)
	}
	return n, nil
}

func (p *parser) peek() token  { return p.toks[p.i] }
func (p *parser) peek2() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tkEOF {
		p.i++
	}
	return t
}

func (p *parser) unexpected(t token) error {
	return syntaxErr(p.src, t.pos, "unexpected %s", t.describe())
}

func (p *parser) expectOp(o string) (token, error) {
	t := p.next()
	if !t.op(o) {
		return t, syntaxErr(p.src, t.pos, "expected %q, found %s", o, t.describe())
	}
	return t, nil
}

func (p *parser) expectKw(kw string) error {
	t := p.next()
	if !t.is(kw) {
		return syntaxErr(p.src, t.pos, "expected %s, found %s", kw, t.describe())
	}
	return nil
}

func (p *parser) parseOr() (Node, error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.peek().is("OR") {
		t := p.next()
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		l = &BinaryNode{mk(p, t.pos), "OR", l, r}
	}
	return l, nil
}

func (p *parser) parseAnd() (Node, error) {
	l, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.peek().is("AND") {
		t := p.next()
		r, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		l = &BinaryNode{mk(p, t.pos), "AND", l, r}
	}
	return l, nil
}

func (p *parser) parseNot() (Node, error) {
	if t := p.peek(); t.is("NOT") {
		p.next()
		x, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &UnaryNode{mk(p, t.pos), "NOT", x}, nil
	}
	return p.parsePredicate()
}

var cmpOps = map[string]string{"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "<=>": "<=>"}

func (p *parser) parsePredicate() (Node, error) {
	l, err := p.parseComparison()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		not := false
		if t.is("NOT") && (p.peek2().is("IN") || p.peek2().is("BETWEEN") || p.peek2().is("LIKE")) {
			p.next()
			not = true
			t = p.peek()
		}
		switch {
		case t.is("IN"):
			p.next()
			if _, err := p.expectOp("("); err != nil {
				return nil, err
			}
			var list []Node
			for {
				x, err := p.parseOr()
				if err != nil {
					return nil, err
				}
				list = append(list, x)
				if p.peek().op(",") {
					p.next()
					continue
				}
				break
			}
			if _, err := p.expectOp(")"); err != nil {
				return nil, err
			}
			l = &InNode{mk(p, l.Pos()), l, list, not}
		case t.is("BETWEEN"):
			p.next()
			lo, err := p.parseComparison()
			if err != nil {
				return nil, err
			}
			if err := p.expectKw("AND"); err != nil {
				return nil, err
			}
			hi, err := p.parseComparison()
			if err != nil {
				return nil, err
			}
			l = &BetweenNode{mk(p, l.Pos()), l, lo, hi, not}
		case t.is("LIKE"):
			p.next()
			pat, err := p.parseComparison()
			if err != nil {
				return nil, err
			}
			l = &LikeNode{mk(p, l.Pos()), l, pat, not}
		case t.is("IS") && !not:
			p.next()
			isNot := false
			if p.peek().is("NOT") {
				p.next()
				isNot = true
			}
			w := p.next()
			var what string
			switch {
			case w.is("NULL"):
				what = "NULL"
			case w.is("TRUE"):
				what = "TRUE"
			case w.is("FALSE"):
				what = "FALSE"
			default:
				return nil, syntaxErr(p.src, w.pos, "expected NULL, TRUE or FALSE after IS, found %s", w.describe())
			}
			l = &IsNode{mk(p, l.Pos()), l, isNot, what}
		default:
			return l, nil
		}
	}
}

func (p *parser) parseComparison() (Node, error) {
	l, err := p.parseAdditive()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		op, ok := cmpOps[t.text]
		if t.kind != tkOp || !ok {
			return l, nil
		}
		p.next()
		r, err := p.parseAdditive()
		if err != nil {
			return nil, err
		}
		l = &BinaryNode{mk(p, t.pos), op, l, r}
	}
}

func (p *parser) parseAdditive() (Node, error) {
	l, err := p.parseMul()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t.op("+") || t.op("-"); t = p.peek() {
		p.next()
		r, err := p.parseMul()
		if err != nil {
			return nil, err
		}
		l = &BinaryNode{mk(p, t.pos), t.text, l, r}
	}
	return l, nil
}

func (p *parser) parseMul() (Node, error) {
	l, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t.op("*") || t.op("/") || t.op("%"); t = p.peek() {
		p.next()
		r, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		l = &BinaryNode{mk(p, t.pos), t.text, l, r}
	}
	return l, nil
}

func (p *parser) parseUnary() (Node, error) {
	t := p.peek()
	if t.op("-") || t.op("+") {
		p.next()
		if nx := p.peek(); nx.kind == tkNumber {
			// A signed number is one literal, as Spark's grammar (MINUS? number)
			// reads it: -9223372036854775808L is the minimum bigint, not the
			// negation of an out-of-range one.
			p.next()
			sign := ""
			if t.op("-") {
				sign = "-"
			}
			return p.numberLit(token{kind: tkNumber, text: sign + nx.text, pos: t.pos})
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		if t.op("+") {
			return x, nil
		}
		// A negative numeric literal is a literal, as in Spark.
		if lit, ok := x.(*LiteralNode); ok && lit.Kind >= litInt && lit.Kind <= litFloat && !strings.HasPrefix(lit.Text, "-") {
			return newNumLit(p, t.pos, "-"+lit.Text, lit.Kind)
		}
		return &UnaryNode{mk(p, t.pos), "-", x}, nil
	}
	return p.parsePrimary()
}

func newNumLit(p *parser, pos int, text string, kind litKind) (Node, error) {
	if kind == litBigint || kind == litInt {
		// re-derive int vs bigint for the signed text
		body := strings.TrimRight(text, "LSYlsy")
		v, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, syntaxErr(p.src, pos, "integer literal %s out of range", text)
		}
		if v >= -1<<31 && v < 1<<31 && !strings.HasSuffix(strings.ToUpper(text), "L") {
			kind = litInt
		} else {
			kind = litBigint
		}
	}
	return &LiteralNode{mk(p, pos), kind, text}, nil
}

func (p *parser) parsePrimary() (Node, error) {
	t := p.next()
	switch t.kind {
	case tkNumber:
		return p.numberLit(t)
	case tkString:
		return &LiteralNode{mk(p, t.pos), litString, t.text}, nil
	case tkOp:
		if t.op("(") {
			x, err := p.parseOr()
			if err != nil {
				return nil, err
			}
			if _, err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return x, nil
		}
		return nil, p.unexpected(t)
	case tkQuoted:
		return p.columnRest(t, []string{t.text})
	case tkIdent:
		up := strings.ToUpper(t.text)
		nx := p.peek()
		switch up {
		case "NULL":
			return &LiteralNode{mk(p, t.pos), litNull, "NULL"}, nil
		case "TRUE", "FALSE":
			return &LiteralNode{mk(p, t.pos), litBool, up}, nil
		case "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ", "X":
			if nx.kind == tkString {
				p.next()
				kind := map[string]litKind{"DATE": litDate, "TIMESTAMP": litTimestamp, "TIMESTAMP_LTZ": litTimestamp, "TIMESTAMP_NTZ": litTimestampNTZ, "X": litBinary}[up]
				lit := &LiteralNode{mk(p, t.pos), kind, nx.text}
				if _, err := literalValue(lit, nil); err != nil {
					return nil, err
				}
				return lit, nil
			}
		case "CAST":
			if nx.op("(") {
				return p.parseCast(t)
			}
		case "CASE":
			return p.parseCase(t)
		case "AND", "OR", "NOT", "IN", "IS", "BETWEEN", "LIKE", "WHEN", "THEN", "ELSE", "END", "AS":
			return nil, p.unexpected(t)
		}
		if nx.op("(") {
			return p.parseCall(t)
		}
		return p.columnRest(t, []string{t.text})
	}
	return nil, p.unexpected(t)
}

func (p *parser) columnRest(first token, path []string) (Node, error) {
	for p.peek().op(".") {
		p.next()
		t := p.next()
		if t.kind != tkIdent && t.kind != tkQuoted {
			return nil, syntaxErr(p.src, t.pos, "expected a field name after \".\", found %s", t.describe())
		}
		path = append(path, t.text)
	}
	return &ColumnNode{mk(p, first.pos), path}, nil
}

func (p *parser) numberLit(t token) (Node, error) {
	s := t.text
	up := strings.ToUpper(s)
	var kind litKind
	switch {
	case strings.HasSuffix(up, "BD"):
		kind = litDecimal
	case strings.HasSuffix(up, "D"):
		kind = litDouble
	case strings.HasSuffix(up, "F"):
		kind = litFloat
	case strings.HasSuffix(up, "L"), strings.HasSuffix(up, "S"), strings.HasSuffix(up, "Y"):
		if strings.ContainsAny(up, ".E") {
			return nil, syntaxErr(p.src, t.pos, "invalid number %s", s)
		}
		kind = litBigint
		if !strings.HasSuffix(up, "L") {
			kind = litInt
		}
	case strings.Contains(up, "E"):
		kind = litDouble
	case strings.Contains(up, "."):
		kind = litDecimal
	default:
		kind = litBigint
		if _, err := strconv.ParseInt(s, 10, 64); errors.Is(err, strconv.ErrRange) {
			// Spark: an integer literal beyond bigint is a decimal(p,0) (up to 38 digits)
			kind = litDecimal
		}
	}
	if strings.Count(up, ".") > 1 {
		return nil, syntaxErr(p.src, t.pos, "invalid number %s", s)
	}
	lit, err := newNumLit(p, t.pos, s, kind)
	if err != nil {
		return nil, err
	}
	if _, err := literalValue(lit.(*LiteralNode), nil); err != nil {
		return nil, err
	}
	return lit, nil
}

func (p *parser) parseCall(name token) (Node, error) {
	p.next() // (
	call := &CallNode{mk(p, name.pos), strings.ToLower(name.text), nil}
	if p.peek().op(")") {
		p.next()
		return call, nil
	}
	for {
		x, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		call.Args = append(call.Args, x)
		if p.peek().op(",") {
			p.next()
			continue
		}
		break
	}
	if _, err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return call, nil
}

func (p *parser) parseCast(t token) (Node, error) {
	p.next() // (
	x, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if err := p.expectKw("AS"); err != nil {
		return nil, err
	}
	typ, err := p.parseType()
	if err != nil {
		return nil, err
	}
	if _, err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return &CastNode{mk(p, t.pos), x, typ}, nil
}

func (p *parser) parseType() (iceberg.Type, error) {
	t := p.next()
	if t.kind != tkIdent {
		return nil, syntaxErr(p.src, t.pos, "expected a type name, found %s", t.describe())
	}
	switch strings.ToLower(t.text) {
	case "boolean":
		return iceberg.PrimitiveTypes.Bool, nil
	case "int", "integer":
		return iceberg.PrimitiveTypes.Int32, nil
	case "bigint", "long":
		return iceberg.PrimitiveTypes.Int64, nil
	case "float", "real":
		return iceberg.PrimitiveTypes.Float32, nil
	case "double":
		return iceberg.PrimitiveTypes.Float64, nil
	case "string":
		return iceberg.PrimitiveTypes.String, nil
	case "date":
		return iceberg.PrimitiveTypes.Date, nil
	case "timestamp", "timestamp_ltz":
		return iceberg.PrimitiveTypes.TimestampTz, nil
	case "timestamp_ntz":
		return iceberg.PrimitiveTypes.Timestamp, nil
	case "binary":
		return iceberg.PrimitiveTypes.Binary, nil
	case "decimal", "dec", "numeric":
		prec, scale := 10, 0
		if p.peek().op("(") {
			p.next()
			n := p.next()
			v, err := strconv.Atoi(n.text)
			if n.kind != tkNumber || err != nil {
				return nil, syntaxErr(p.src, n.pos, "expected a precision, found %s", n.describe())
			}
			prec = v
			if p.peek().op(",") {
				p.next()
				n = p.next()
				v, err = strconv.Atoi(n.text)
				if n.kind != tkNumber || err != nil {
					return nil, syntaxErr(p.src, n.pos, "expected a scale, found %s", n.describe())
				}
				scale = v
			}
			if _, err := p.expectOp(")"); err != nil {
				return nil, err
			}
		}
		if prec < 1 || prec > 38 || scale < 0 || scale > prec {
			return nil, syntaxErr(p.src, t.pos, "invalid decimal(%d,%d)", prec, scale)
		}
		return iceberg.DecimalTypeOf(prec, scale), nil
	}
	return nil, syntaxErr(p.src, t.pos, "unknown type %q", t.text)
}

func (p *parser) parseCase(t token) (Node, error) {
	c := &CaseNode{base: mk(p, t.pos)}
	if !p.peek().is("WHEN") {
		op, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		c.Operand = op
	}
	for p.peek().is("WHEN") {
		p.next()
		w, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if err := p.expectKw("THEN"); err != nil {
			return nil, err
		}
		th, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, w)
		c.Thens = append(c.Thens, th)
	}
	if len(c.Whens) == 0 {
		nx := p.peek()
		return nil, syntaxErr(p.src, nx.pos, "expected WHEN, found %s", nx.describe())
	}
	if p.peek().is("ELSE") {
		p.next()
		e, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		c.Else = e
	}
	if err := p.expectKw("END"); err != nil {
		return nil, err
	}
	return c, nil
}
