package expr

import (
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// TokenKind is the kind of a Token.
type TokenKind int

// Token kinds.
const (
	EOF TokenKind = iota
	Ident
	QuotedIdent // `backtick quoted`
	Number
	String
	Op // operators and punctuation
)

// Token is one token of a statement, as the expression language reads it.
type Token struct {
	Kind TokenKind
	Text string // identifier or operator text, string body (unescaped), number text
	Pos  int    // 1-based character position
}

// Is reports whether t is the keyword kw (case-insensitive, unquoted).
func (t Token) Is(kw string) bool { return t.Kind == Ident && strings.EqualFold(t.Text, kw) }

// IsOp reports whether t is the operator or punctuation o.
func (t Token) IsOp(o string) bool { return t.Kind == Op && t.Text == o }

// IsName reports whether t can name something (an identifier, quoted or not).
func (t Token) IsName() bool { return t.Kind == Ident || t.Kind == QuotedIdent }

// Describe is t as an error message shows it.
func (t Token) Describe() string { return token{tokKind(t.Kind), t.Text, t.Pos}.describe() }

// Cursor reads a statement token by token, so that parsers of statements
// (core/sqlstmt) share the expression language's tokens, literals, types
// and expressions instead of having their own.
type Cursor struct {
	p     parser
	runes []rune
}

// NewCursor tokenizes src.
func NewCursor(src string) (*Cursor, error) {
	toks, err := lex(src)
	if err != nil {
		err.(*Error).What = "statement"
		return nil, err
	}
	return &Cursor{p: parser{src: src, toks: toks}, runes: []rune(src)}, nil
}

func exported(t token) Token { return Token{TokenKind(t.kind), t.text, t.pos} }

// Peek is the next token; Peek2 the one after it.
func (c *Cursor) Peek() Token  { return exported(c.p.peek()) }
func (c *Cursor) Peek2() Token { return exported(c.p.peek2()) }

// Next consumes and returns the next token.
func (c *Cursor) Next() Token { return exported(c.p.next()) }

// Keywords consumes the keywords kws if the next tokens are exactly them.
func (c *Cursor) Keywords(kws ...string) bool {
	for i, kw := range kws {
		if c.p.i+i >= len(c.p.toks) || !c.p.toks[c.p.i+i].is(kw) {
			return false
		}
	}
	c.p.i += len(kws)
	return true
}

// OpIf consumes the operator o if it comes next.
func (c *Cursor) OpIf(o string) bool {
	if c.p.peek().op(o) {
		c.p.next()
		return true
	}
	return false
}

// Expect consumes the keywords kws or fails naming what came instead.
func (c *Cursor) Expect(kws ...string) error {
	for _, kw := range kws {
		if err := c.p.expectKw(kw); err != nil {
			return c.stmt(err)
		}
	}
	return nil
}

// ExpectOp consumes the operator o or fails naming what came instead.
func (c *Cursor) ExpectOp(o string) error {
	_, err := c.p.expectOp(o)
	return c.stmt(err)
}

// Name consumes an identifier (quoted or not) and returns it.
func (c *Cursor) Name(what string) (string, error) {
	t := c.p.next()
	if t.kind != tkIdent && t.kind != tkQuoted {
		return "", c.Errorf(t.pos, "expected %s, found %s", what, t.describe())
	}
	return t.text, nil
}

// Path consumes a dotted name (a.b.`c d`) and returns its parts.
func (c *Cursor) Path(what string) ([]string, error) {
	first, err := c.Name(what)
	if err != nil {
		return nil, err
	}
	parts := []string{first}
	for c.p.peek().op(".") {
		c.p.next()
		n, err := c.Name("a name after \".\"")
		if err != nil {
			return nil, err
		}
		parts = append(parts, n)
	}
	return parts, nil
}

// StringLit consumes a string literal and returns its body.
func (c *Cursor) StringLit(what string) (string, error) {
	t := c.p.next()
	if t.kind != tkString {
		return "", c.Errorf(t.pos, "expected %s (a quoted string), found %s", what, t.describe())
	}
	return t.text, nil
}

// Int consumes an integer literal.
func (c *Cursor) Int(what string) (int64, error) {
	t := c.p.next()
	v, err := strconv.ParseInt(t.text, 10, 64)
	if t.kind != tkNumber || err != nil {
		return 0, c.Errorf(t.pos, "expected %s (an integer), found %s", what, t.describe())
	}
	return v, nil
}

// Expr parses one expression at the cursor and returns it with its text.
func (c *Cursor) Expr() (Node, string, error) {
	start := c.p.peek().pos
	n, err := c.p.parseOr()
	if err != nil {
		return nil, "", c.stmt(err)
	}
	return n, c.Text(start, c.p.peek().pos), nil
}

// Text is the statement's text from position from up to (not including)
// position to, trimmed.
func (c *Cursor) Text(from, to int) string {
	from, to = max(from-1, 0), min(max(to-1, 0), len(c.runes))
	if from >= to {
		return ""
	}
	return strings.TrimSpace(string(c.runes[from:to]))
}

// Type parses a Spark SQL data type: a primitive as CAST takes it (plus
// tinyint, smallint, char(n) and varchar(n), which Iceberg stores as int
// and string), array<T>, map<K, V> or struct<name[:] T [NOT NULL]
// [COMMENT 'doc'], ...>. Nested fields get placeholder ids (1, 2, ...).
func (c *Cursor) Type() (iceberg.Type, error) {
	t := c.p.peek()
	if t.kind == tkIdent {
		switch strings.ToLower(t.text) {
		case "tinyint", "byte", "smallint", "short":
			c.p.next()
			return iceberg.PrimitiveTypes.Int32, nil
		case "char", "varchar":
			c.p.next()
			if c.OpIf("(") {
				if _, err := c.Int("a length"); err != nil {
					return nil, err
				}
				if err := c.ExpectOp(")"); err != nil {
					return nil, err
				}
			}
			return iceberg.PrimitiveTypes.String, nil
		case "array":
			c.p.next()
			if err := c.ExpectOp("<"); err != nil {
				return nil, err
			}
			el, err := c.Type()
			if err != nil {
				return nil, err
			}
			return &iceberg.ListType{ElementID: 1, Element: el, ElementRequired: false}, c.closeAngle()
		case "map":
			c.p.next()
			if err := c.ExpectOp("<"); err != nil {
				return nil, err
			}
			k, err := c.Type()
			if err != nil {
				return nil, err
			}
			if err := c.ExpectOp(","); err != nil {
				return nil, err
			}
			v, err := c.Type()
			if err != nil {
				return nil, err
			}
			return &iceberg.MapType{KeyID: 1, KeyType: k, ValueID: 2, ValueType: v}, c.closeAngle()
		case "struct":
			c.p.next()
			if err := c.ExpectOp("<"); err != nil {
				return nil, err
			}
			fields, err := c.Fields()
			if err != nil {
				return nil, err
			}
			return &iceberg.StructType{FieldList: fields}, c.closeAngle()
		}
	}
	typ, err := c.p.parseType()
	return typ, c.stmt(err)
}

// Fields parses one or more comma-separated Field definitions, numbered
// 1, 2, ...
func (c *Cursor) Fields() ([]iceberg.NestedField, error) {
	var fields []iceberg.NestedField
	for {
		f, err := c.Field(len(fields) + 1)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
		if !c.OpIf(",") {
			return fields, nil
		}
	}
}

// Field parses a column definition, name[:] type [NOT NULL] [COMMENT 'doc'],
// giving it id.
func (c *Cursor) Field(id int) (iceberg.NestedField, error) {
	name, err := c.Name("a field name")
	if err != nil {
		return iceberg.NestedField{}, err
	}
	c.OpIf(":")
	typ, err := c.Type()
	if err != nil {
		return iceberg.NestedField{}, err
	}
	f := iceberg.NestedField{ID: id, Name: name, Type: typ}
	for {
		switch {
		case c.Keywords("NOT", "NULL"):
			f.Required = true
		case c.Keywords("COMMENT"):
			if f.Doc, err = c.StringLit("a comment"); err != nil {
				return f, err
			}
		default:
			return f, nil
		}
	}
}

// closeAngle consumes the ">" that ends a nested type. "<>" never
// appears here (no nested type is empty), so only ">" is accepted.
func (c *Cursor) closeAngle() error { return c.ExpectOp(">") }

// AtEnd reports whether only an optional ";" is left.
func (c *Cursor) AtEnd() bool {
	i := c.p.i
	if c.p.toks[i].op(";") {
		i++
	}
	return c.p.toks[i].kind == tkEOF
}

// Errorf is a syntax error at position pos of the statement.
func (c *Cursor) Errorf(pos int, format string, args ...any) error {
	e := syntaxErr(c.p.src, pos, format, args...)
	e.What = "statement"
	return e
}

// stmt marks an expression-language error as one in a statement.
func (c *Cursor) stmt(err error) error {
	if e, ok := err.(*Error); ok && e.Src == c.p.src {
		e.What = "statement"
	}
	return err
}

// InstantMicros reads a timestamp text as Spark's TIMESTAMP '...' literal
// does: microseconds since the epoch, in the zone the text names, else in
// zone (the session time zone; nil is UTC).
func InstantMicros(text string, zone *tz.Zone) (int64, bool) { return instantOfText(text, zone) }
