// Package sqlstmt reads Spark SQL statements (Spark's and Iceberg's SQL
// extensions' DDL) into the request documents that run them, so a
// statement and the same operation sent as a document are one code path.
// It reads tokens, types and expressions with core/expr's Cursor: one
// parser for expressions and statements.
package sqlstmt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// Statement is a parsed statement: the request that runs it and what kind
// of statement it was ("CREATE TABLE", "ALTER TABLE ... ADD COLUMNS", ...).
type Statement struct {
	Kind    string
	Request *request.Request
	// DML is set for write statements (dml.go): what runs before the
	// request (its source rows, INSERT's columns and PARTITION clause).
	DML *DML
}

// Parse reads one statement (an optional trailing ";" allowed); zone is
// the session time zone TIMESTAMP '...' literals without a zone are read
// in (nil: UTC).
func Parse(src string, zone *tz.Zone) (*Statement, error) {
	c, err := expr.NewCursor(src)
	if err != nil {
		return nil, err
	}
	p := &stmtParser{c: c, zone: zone}
	st, err := p.statement()
	if err != nil {
		return nil, err
	}
	if !c.AtEnd() {
		t := c.Peek()
		return nil, c.Errorf(t.Pos, "unexpected %s after the end of the statement", t.Describe())
	}
	return st, nil
}

type stmtParser struct {
	c    *expr.Cursor
	zone *tz.Zone
}

func (p *stmtParser) unsupported(pos int, format string, args ...any) error {
	return fmt.Errorf("%w: %s (at position %d)", errs.ErrNotSupported, fmt.Sprintf(format, args...), pos)
}

func (p *stmtParser) statement() (*Statement, error) {
	c := p.c
	t := c.Peek()
	switch {
	case c.Keywords("CREATE", "OR", "REPLACE", "TABLE"):
		return p.createTable(request.ModeCreateOrReplace)
	case c.Keywords("CREATE", "TABLE"):
		return p.createTable(request.ModeCreate)
	case c.Keywords("REPLACE", "TABLE"):
		return p.createTable(request.ModeReplace)
	case c.Keywords("CREATE", "NAMESPACE"), c.Keywords("CREATE", "DATABASE"), c.Keywords("CREATE", "SCHEMA"):
		return p.createNamespace()
	case c.Keywords("DROP", "TABLE"):
		return p.dropTable()
	case c.Keywords("ALTER", "TABLE"):
		return p.alterTable()
	case c.Keywords("CALL"):
		return p.call()
	case c.Keywords("SELECT"):
		return p.selectRead()
	case c.Keywords("USE"):
		return p.use()
	}
	if st, ok, err := p.statementDML(); ok {
		return st, err
	}
	return nil, p.unsupported(t.Pos, "statement starting with %s: ig.sql runs CREATE [OR REPLACE] TABLE, REPLACE TABLE, CREATE NAMESPACE, DROP TABLE, ALTER TABLE, CALL, USE, SELECT of one table, INSERT INTO|OVERWRITE, DELETE FROM, UPDATE and MERGE INTO", t.Describe())
}

// tableName reads a table identifier as the request spells it.
func (p *stmtParser) tableName() (string, int, error) {
	pos := p.c.Peek().Pos
	parts, err := p.c.Path("a table name")
	if err != nil {
		return "", 0, err
	}
	for _, part := range parts {
		if strings.Contains(part, ".") || strings.TrimSpace(part) != part || part == "" {
			return "", 0, p.c.Errorf(pos, "name part %q: a quoted name part may not contain \".\" or surrounding spaces here", part)
		}
	}
	// A bare name resolves in the session's current namespace (USE, or the
	// catalog's default-namespace).
	return strings.Join(parts, "."), pos, nil
}

// use reads the rest of USE [NAMESPACE | DATABASE | SCHEMA] name.
func (p *stmtParser) use() (*Statement, error) {
	c := p.c
	if !c.Keywords("NAMESPACE") && !c.Keywords("DATABASE") {
		c.Keywords("SCHEMA")
	}
	pos := c.Peek().Pos
	parts, err := c.Path("a catalog or namespace")
	if err != nil {
		return nil, err
	}
	for _, part := range parts {
		if strings.Contains(part, ".") {
			return nil, c.Errorf(pos, "name part %q: a quoted name part may not contain \".\"", part)
		}
	}
	return &Statement{Kind: "USE", Request: &request.Request{Op: request.OpUse, Namespace: dotted(parts)}}, nil
}

func (p *stmtParser) ifNotExists() bool { return p.c.Keywords("IF", "NOT", "EXISTS") }
func (p *stmtParser) ifExists() bool    { return p.c.Keywords("IF", "EXISTS") }

// createTable reads the rest of CREATE [OR REPLACE] TABLE / REPLACE TABLE.
func (p *stmtParser) createTable(mode string) (*Statement, error) {
	c := p.c
	r := &request.Request{Op: request.OpCreateTable}
	r.Mode = mode
	if mode == request.ModeCreate && p.ifNotExists() {
		r.IfNotExists = true
	}
	name, _, err := p.tableName()
	if err != nil {
		return nil, err
	}
	r.Table = name
	if !c.Peek().IsOp("(") {
		t := c.Peek()
		if t.Is("AS") || t.Is("USING") {
			return nil, p.unsupported(t.Pos, "CREATE TABLE without a column list (AS SELECT): write the data with ig.writeTo(df).create()")
		}
		return nil, c.Errorf(t.Pos, "expected \"(\" and the table's columns, found %s", t.Describe())
	}
	c.Next()
	fields, err := c.Fields()
	if err != nil {
		return nil, err
	}
	if err := c.ExpectOp(")"); err != nil {
		return nil, err
	}
	r.Schema = iceberg.NewSchema(0, renumber(fields)...)
	seen := map[string]bool{}
	for !c.AtEnd() {
		t := c.Peek()
		clause := strings.ToUpper(t.Text)
		if t.Kind != expr.Ident {
			return nil, c.Errorf(t.Pos, "unexpected %s", t.Describe())
		}
		if seen[clause] {
			return nil, c.Errorf(t.Pos, "%s given twice", clause)
		}
		seen[clause] = true
		switch {
		case c.Keywords("USING"):
			u, err := c.Name("a table format")
			if err != nil {
				return nil, err
			}
			if !strings.EqualFold(u, "iceberg") {
				return nil, p.unsupported(t.Pos, "USING %s: only iceberg tables", u)
			}
		case c.Keywords("PARTITIONED", "BY"):
			if r.PartitionBy, err = p.partitionTerms(); err != nil {
				return nil, err
			}
		case c.Keywords("LOCATION"):
			if r.Location, err = c.StringLit("a location"); err != nil {
				return nil, err
			}
		case c.Keywords("COMMENT"):
			doc, err := c.StringLit("a comment")
			if err != nil {
				return nil, err
			}
			r.Properties = setProp(r.Properties, "comment", doc)
		case c.Keywords("TBLPROPERTIES"):
			props, err := p.properties()
			if err != nil {
				return nil, err
			}
			for k, v := range props {
				r.Properties = setProp(r.Properties, k, v)
			}
		case t.Is("AS"):
			return nil, p.unsupported(t.Pos, "CREATE TABLE ... AS SELECT: write the data with ig.writeTo(df).create()")
		default:
			return nil, c.Errorf(t.Pos, "unexpected %s (USING, PARTITIONED BY, LOCATION, COMMENT or TBLPROPERTIES)", t.Describe())
		}
	}
	kind := map[string]string{request.ModeCreate: "CREATE TABLE", request.ModeReplace: "REPLACE TABLE", request.ModeCreateOrReplace: "CREATE OR REPLACE TABLE"}[mode]
	return &Statement{Kind: kind, Request: r}, nil
}

func setProp(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// renumber gives every field of the tree a distinct id (1, 2, ... depth
// first); the catalog assigns the real ones.
func renumber(fields []iceberg.NestedField) []iceberg.NestedField {
	next := 0
	var typ func(t iceberg.Type) iceberg.Type
	walk := func(fs []iceberg.NestedField) []iceberg.NestedField {
		out := make([]iceberg.NestedField, len(fs))
		for i, f := range fs {
			next++
			f.ID = next
			f.Type = typ(f.Type)
			out[i] = f
		}
		return out
	}
	typ = func(t iceberg.Type) iceberg.Type {
		switch t := t.(type) {
		case *iceberg.StructType:
			return &iceberg.StructType{FieldList: walk(t.FieldList)}
		case *iceberg.ListType:
			next++
			id := next // read before typ moves next on
			return &iceberg.ListType{ElementID: id, Element: typ(t.Element), ElementRequired: t.ElementRequired}
		case *iceberg.MapType:
			next += 2
			k, v := next-1, next
			return &iceberg.MapType{KeyID: k, KeyType: typ(t.KeyType), ValueID: v, ValueType: typ(t.ValueType), ValueRequired: t.ValueRequired}
		}
		return t
	}
	return walk(fields)
}

// properties reads ('key' = 'value', ...); keys may be dotted names,
// values strings, numbers or booleans.
func (p *stmtParser) properties() (map[string]string, error) {
	c := p.c
	if err := c.ExpectOp("("); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for {
		k, err := p.propertyKey()
		if err != nil {
			return nil, err
		}
		c.OpIf("=")
		t := c.Next()
		switch {
		case t.Kind == expr.String, t.Kind == expr.Number:
			out[k] = t.Text
		case t.Is("true"), t.Is("false"):
			out[k] = strings.ToLower(t.Text)
		default:
			return nil, c.Errorf(t.Pos, "expected the value of property %q (a string, number or boolean), found %s", k, t.Describe())
		}
		if !c.OpIf(",") {
			break
		}
	}
	return out, c.ExpectOp(")")
}

func (p *stmtParser) propertyKey() (string, error) {
	c := p.c
	if t := c.Peek(); t.Kind == expr.String {
		c.Next()
		return t.Text, nil
	}
	parts, err := c.Path("a property key")
	if err != nil {
		return "", err
	}
	return strings.Join(parts, "."), nil
}

// propertyKeys reads ('key', ...).
func (p *stmtParser) propertyKeys() ([]string, error) {
	c := p.c
	if err := c.ExpectOp("("); err != nil {
		return nil, err
	}
	var out []string
	for {
		k, err := p.propertyKey()
		if err != nil {
			return nil, err
		}
		out = append(out, k)
		if !c.OpIf(",") {
			break
		}
	}
	return out, c.ExpectOp(")")
}

// partitionTerms reads (term, ...) of PARTITIONED BY.
func (p *stmtParser) partitionTerms() ([]request.PartitionField, error) {
	c := p.c
	if err := c.ExpectOp("("); err != nil {
		return nil, err
	}
	var out []request.PartitionField
	for {
		pos := c.Peek().Pos
		col, tr, err := p.transform()
		if err != nil {
			return nil, err
		}
		if t := c.Peek(); t.IsName() && !t.Is("AS") {
			return nil, p.unsupported(pos, "a partition column with a type (Hive's PARTITIONED BY (col type)): partition by a column of the table")
		}
		out = append(out, request.PartitionField{Transform: tr, Column: col})
		if !c.OpIf(",") {
			break
		}
	}
	return out, c.ExpectOp(")")
}

// transforms maps Spark's transform functions to Iceberg's transform names.
var transforms = map[string]string{
	"years": "year", "year": "year", "months": "month", "month": "month",
	"days": "day", "day": "day", "date": "day", "hours": "hour", "hour": "hour", "date_hour": "hour",
	"identity": "identity", "bucket": "bucket", "truncate": "truncate",
}

// transform reads a partition term: a column or years/months/days/hours(col),
// bucket(N, col), truncate(W, col) (either argument order, as Spark). It
// returns the column as a dotted name and the transform as Iceberg spells
// it ("bucket[16]").
func (p *stmtParser) transform() (string, string, error) {
	c := p.c
	n, text, err := c.Expr()
	if err != nil {
		return "", "", err
	}
	if col, ok := n.(*expr.ColumnNode); ok {
		return dotted(col.Path), "identity", nil
	}
	call, ok := n.(*expr.CallNode)
	tr := ""
	if ok {
		tr = transforms[call.Name]
	}
	bad := c.Errorf(n.Pos(), "%q is not a partition transform: expected a column, years/months/days/hours(col), bucket(N, col) or truncate(W, col)", text)
	if tr == "" {
		return "", "", bad
	}
	var col *expr.ColumnNode
	width := int64(-1)
	for _, a := range call.Args {
		switch a := a.(type) {
		case *expr.ColumnNode:
			if col != nil {
				return "", "", bad
			}
			col = a
		case *expr.LiteralNode:
			v, err := strconv.ParseInt(strings.TrimRight(a.Text, "LlSsYy"), 10, 32)
			if err != nil || width >= 0 || v <= 0 {
				return "", "", c.Errorf(a.Pos(), "%q: the width must be a positive integer", text)
			}
			width = v
		default:
			return "", "", bad
		}
	}
	needsWidth := tr == "bucket" || tr == "truncate"
	if col == nil || needsWidth != (width >= 0) {
		return "", "", bad
	}
	if needsWidth {
		tr = fmt.Sprintf("%s[%d]", tr, width)
	}
	return dotted(col.Path), tr, nil
}

func dotted(path []string) string { return strings.Join(path, ".") }

// createNamespace reads the rest of CREATE NAMESPACE|DATABASE|SCHEMA.
func (p *stmtParser) createNamespace() (*Statement, error) {
	c := p.c
	r := &request.Request{Op: request.OpCreateNamespace}
	r.IfNotExists = p.ifNotExists()
	parts, err := c.Path("a namespace")
	if err != nil {
		return nil, err
	}
	for _, part := range parts {
		if strings.Contains(part, ".") || part == "" {
			return nil, c.Errorf(c.Peek().Pos, "namespace part %q may not contain \".\"", part)
		}
	}
	r.Namespace = dotted(parts)
	for !c.AtEnd() {
		t := c.Peek()
		switch {
		case c.Keywords("COMMENT"):
			v, err := c.StringLit("a comment")
			if err != nil {
				return nil, err
			}
			r.Properties = setProp(r.Properties, "comment", v)
		case c.Keywords("LOCATION"):
			v, err := c.StringLit("a location")
			if err != nil {
				return nil, err
			}
			r.Properties = setProp(r.Properties, "location", v)
		case c.Keywords("WITH", "DBPROPERTIES"), c.Keywords("WITH", "PROPERTIES"):
			props, err := p.properties()
			if err != nil {
				return nil, err
			}
			for k, v := range props {
				r.Properties = setProp(r.Properties, k, v)
			}
		default:
			return nil, c.Errorf(t.Pos, "unexpected %s (COMMENT, LOCATION or WITH DBPROPERTIES)", t.Describe())
		}
	}
	return &Statement{Kind: "CREATE NAMESPACE", Request: r}, nil
}

// dropTable reads the rest of DROP TABLE [IF EXISTS] t [PURGE].
func (p *stmtParser) dropTable() (*Statement, error) {
	r := &request.Request{Op: request.OpDropTable}
	r.IfExists = p.ifExists()
	name, _, err := p.tableName()
	if err != nil {
		return nil, err
	}
	r.Table = name
	r.Purge = p.c.Keywords("PURGE")
	return &Statement{Kind: "DROP TABLE", Request: r}, nil
}
