package sqlstmt

import (
	"regexp"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// Spark's write statements (DELETE, UPDATE, MERGE INTO, INSERT [OVERWRITE])
// read into the documents of the builder API's operations (delete, update,
// merge, append, overwrite, overwritePartitions). What the document cannot
// say (where the rows of an INSERT or a MERGE come from, INSERT's column
// list and PARTITION clause, and whether INSERT OVERWRITE is static or
// dynamic, which the session decides) is kept in DML and applied by
// Prepare (values.go) once the table's schema and the session are known.

// Source kinds: where the rows of an INSERT or the source of a MERGE come from.
const (
	// SourceValues is INSERT ... VALUES: rows built from literal expressions.
	SourceValues = "values"
	// SourceView is a temporary view (a one-part name) whose Arrow stream
	// the caller passes as the operation's input.
	SourceView = "view"
	// SourceTable is an Iceberg table ([catalog.]namespace.table) the
	// caller reads and passes as the input.
	SourceTable = "table"
	// SourceQuery is a query that needs an engine: the caller evaluates
	// Query and passes its result as the input.
	SourceQuery = "query"
)

// Source is where a statement's input rows come from.
type Source struct {
	Kind  string `json:"kind"`
	Name  string `json:"name,omitempty"`  // view or table (SourceView, SourceTable)
	Query string `json:"query,omitempty"` // SourceQuery: the query's text
	Pos   int    `json:"pos"`             // where the source starts in the statement
	// TimeTravel reads a SourceTable as of a snapshot, ref or time.
	TimeTravel
	// Tables are Iceberg tables Query reads under names of its own.
	Tables map[string]TargetRead `json:"tables,omitempty"`
	rows   [][]expr.Node
	rowAt  []int
}

// NeedsInput reports whether the caller must pass the source's rows.
func (s *Source) NeedsInput() bool { return s != nil && s.Kind != SourceValues }

// Static is one column = value of INSERT's PARTITION clause.
type Static struct {
	Column string
	Value  expr.Node
	Text   string
}

// DML is what a write statement needs beyond its request document.
type DML struct {
	Source *Source
	// Insert is set for INSERT INTO / INSERT OVERWRITE.
	Insert *Insert
	// Subquery is set for DELETE and UPDATE conditions the engine
	// evaluates over the target's rows (subquery.go); BindTarget finishes
	// the statement.
	Subquery *Subquery
}

// Insert is the part of an INSERT the document does not carry.
type Insert struct {
	Overwrite bool
	// Columns is the column list (nil: every column of the table, in order).
	Columns    []string
	ColumnsPos int
	ByName     bool
	// Static are the PARTITION clause's columns with a value; Dynamic
	// those without one (PARTITION (col)).
	Static  []Static
	Dynamic []string
	PartPos int
}

// statementDML dispatches the write statements; ok is false for others.
func (p *stmtParser) statementDML() (*Statement, bool, error) {
	c := p.c
	switch {
	case c.Keywords("DELETE", "FROM"):
		st, err := p.deleteFrom()
		return st, true, err
	case c.Peek().Is("UPDATE"):
		c.Next()
		st, err := p.update()
		return st, true, err
	case c.Keywords("MERGE", "INTO"):
		st, err := p.mergeInto()
		return st, true, err
	case c.Keywords("INSERT", "INTO"):
		st, err := p.insert(false)
		return st, true, err
	case c.Keywords("INSERT", "OVERWRITE"):
		st, err := p.insert(true)
		return st, true, err
	}
	return nil, false, nil
}

// clauseWords end a table reference: they are never read as its alias.
var clauseWords = map[string]bool{
	"WHERE": true, "SET": true, "USING": true, "ON": true, "WHEN": true, "VALUES": true,
	"SELECT": true, "TABLE": true, "PARTITION": true, "BY": true, "WITH": true, "FROM": true,
}

// alias reads [AS] name after a table reference.
func (p *stmtParser) alias() (string, error) {
	c := p.c
	if c.Keywords("AS") {
		return c.Name("an alias")
	}
	if t := c.Peek(); t.Kind == expr.QuotedIdent || t.Kind == expr.Ident && !clauseWords[strings.ToUpper(t.Text)] {
		c.Next()
		return t.Text, nil
	}
	return "", nil
}

// lastPart is the last part of a dotted table name.
func lastPart(name string) string { return name[strings.LastIndex(name, ".")+1:] }

var subquery = regexp.MustCompile(`(?is)(\(\s*(SELECT|WITH|VALUES|TABLE)\b)|\bEXISTS\s*\(`)

// condition reads a boolean expression; a subquery in it (IN (SELECT ...),
// EXISTS (...)) is refused as not supported rather than as a syntax error.
// qualifiers are stripped from its columns (see unqualify).
func (p *stmtParser) condition(qualifiers ...string) (string, error) {
	c := p.c
	start := c.Peek().Pos
	n, text, err := c.Expr()
	if err != nil {
		return "", p.subqueryError(start, err)
	}
	return unqualify(n, text, qualifiers), nil
}

// subqueryError is err, a condition starting at start that did not parse,
// or ErrNotSupported when the condition holds a subquery: ig.sql reads
// subqueries in the WHERE of DELETE and UPDATE only.
func (p *stmtParser) subqueryError(start int, err error) error {
	rest := p.c.Text(start, 1<<30)
	if loc := subquery.FindStringIndex(rest); loc != nil {
		return p.unsupported(start+len([]rune(rest[:loc[0]])), "a subquery in this condition (ig.sql reads subqueries in the WHERE of DELETE and UPDATE; join the view in the MERGE's USING instead)")
	}
	return err
}

// unqualify drops a leading qualifier (the table's alias or name) from the
// columns of n: DELETE and UPDATE bind their conditions to the table's
// columns alone. n's text is kept as written when no column is qualified.
func unqualify(n expr.Node, text string, qualifiers []string) string {
	changed := false
	walkColumns(n, func(col *expr.ColumnNode) {
		if len(col.Path) < 2 {
			return
		}
		for _, q := range qualifiers {
			if q != "" && strings.EqualFold(col.Path[0], q) {
				col.Path = col.Path[1:]
				changed = true
				return
			}
		}
	})
	if !changed {
		return text
	}
	return n.String()
}

// walkColumns calls f on every column of n.
func walkColumns(n expr.Node, f func(*expr.ColumnNode)) {
	var walk func(n expr.Node)
	walkAll := func(ns []expr.Node) {
		for _, x := range ns {
			walk(x)
		}
	}
	walk = func(n expr.Node) {
		switch n := n.(type) {
		case *expr.ColumnNode:
			f(n)
		case *expr.UnaryNode:
			walk(n.X)
		case *expr.BinaryNode:
			walk(n.L)
			walk(n.R)
		case *expr.IsNode:
			walk(n.X)
		case *expr.InNode:
			walk(n.X)
			walkAll(n.List)
		case *expr.BetweenNode:
			walk(n.X)
			walk(n.Lo)
			walk(n.Hi)
		case *expr.LikeNode:
			walk(n.X)
			walk(n.Pattern)
		case *expr.CallNode:
			walkAll(n.Args)
		case *expr.CastNode:
			walk(n.X)
		case *expr.CaseNode:
			if n.Operand != nil {
				walk(n.Operand)
			}
			walkAll(n.Whens)
			walkAll(n.Thens)
			if n.Else != nil {
				walk(n.Else)
			}
		}
	}
	walk(n)
}

// deleteFrom reads the rest of DELETE FROM t [[AS] a] [WHERE cond].
func (p *stmtParser) deleteFrom() (*Statement, error) {
	name, _, err := p.tableName()
	if err != nil {
		return nil, err
	}
	a, err := p.alias()
	if err != nil {
		return nil, err
	}
	r := &request.Request{Op: request.OpDelete, Table: name, Filter: "true"}
	if p.c.Keywords("WHERE") {
		if p.hasSubquery() {
			return p.subqueryWhere(name, a, nil, "DELETE")
		}
		if r.Filter, err = p.condition(a, lastPart(name)); err != nil {
			return nil, err
		}
	}
	return &Statement{Kind: "DELETE", Request: r}, nil
}

// update reads the rest of UPDATE t [[AS] a] SET c = e, ... [WHERE cond].
func (p *stmtParser) update() (*Statement, error) {
	c := p.c
	name, _, err := p.tableName()
	if err != nil {
		return nil, err
	}
	a, err := p.alias()
	if err != nil {
		return nil, err
	}
	if err := c.Expect("SET"); err != nil {
		return nil, err
	}
	quals := []string{a, lastPart(name)}
	set, err := p.assignments(quals)
	if err != nil {
		return nil, err
	}
	r := &request.Request{Op: request.OpUpdate, Table: name, Set: set}
	if c.Keywords("WHERE") {
		if p.hasSubquery() {
			return p.subqueryWhere(name, a, set, "UPDATE")
		}
		if r.Filter, err = p.condition(quals...); err != nil {
			return nil, err
		}
	}
	return &Statement{Kind: "UPDATE", Request: r}, nil
}

// assignments reads col = expr, ... (SET of UPDATE and of MERGE's UPDATE);
// a column may be qualified by one of quals.
func (p *stmtParser) assignments(quals []string) (map[string]string, error) {
	c := p.c
	out := map[string]string{}
	for {
		pos := c.Peek().Pos
		path, err := c.Path("a column to set")
		if err != nil {
			return nil, err
		}
		if len(path) > 1 {
			for _, q := range quals {
				if q != "" && strings.EqualFold(path[0], q) {
					path = path[1:]
					break
				}
			}
		}
		col := dotted(path)
		if err := c.ExpectOp("="); err != nil {
			return nil, err
		}
		n, text, err := c.Expr()
		if err != nil {
			return nil, err
		}
		for k := range out {
			if strings.EqualFold(k, col) {
				return nil, c.Errorf(pos, "column %q is set twice", col)
			}
		}
		out[col] = unqualify(n, text, quals)
		if !c.OpIf(",") {
			return out, nil
		}
	}
}

// relation reads a MERGE source or an INSERT's FROM: a view (one-part
// name), a table (a dotted name) or a parenthesized query.
func (p *stmtParser) relation() (*Source, error) {
	c := p.c
	t := c.Peek()
	if t.IsOp("(") {
		q, err := p.parenthesized()
		if err != nil {
			return nil, err
		}
		if src, ok := p.selectStar(q, t.Pos+1); ok {
			return src, nil
		}
		return &Source{Kind: SourceQuery, Query: q, Pos: t.Pos}, nil
	}
	parts, err := c.Path("a view or table name")
	if err != nil {
		return nil, err
	}
	return p.namedSource(parts, t.Pos)
}

// selectStar reads q, a query at pos, as SELECT * FROM <view or table>
// [time travel]: the view or table itself, no engine needed (Spark's MERGE
// reads a table as of a version only so: USING (SELECT * FROM t VERSION AS
// OF ...)).
func (p *stmtParser) selectStar(q string, pos int) (*Source, bool) {
	c, err := expr.NewCursor(q)
	if err != nil || !c.Keywords("SELECT") || !c.OpIf("*") || !c.Keywords("FROM") {
		return nil, false
	}
	sub := &stmtParser{c: c, zone: p.zone}
	parts, err := c.Path("a view or table name")
	if err != nil {
		return nil, false
	}
	src, err := sub.namedSource(parts, pos)
	if err != nil || !c.AtEnd() {
		return nil, false
	}
	return src, true
}

// namedSource is the view or table parts names, with its time travel
// clause if one follows (a table's only: Spark has no time travel on
// temporary views).
func (p *stmtParser) namedSource(parts []string, pos int) (*Source, error) {
	at := p.c.Peek().Pos
	tt, err := p.timeTravel()
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		if tt.Set() {
			return nil, p.unsupported(at, "time travel on the temporary view %s (only Iceberg tables have versions)", parts[0])
		}
		return &Source{Kind: SourceView, Name: parts[0], Pos: pos}, nil
	}
	return &Source{Kind: SourceTable, Name: dotted(parts), Pos: pos, TimeTravel: tt}, nil
}

// parenthesized reads ( ... ) and returns the text between the parentheses.
func (p *stmtParser) parenthesized() (string, error) {
	c := p.c
	open := c.Next()
	depth := 1
	for {
		t := c.Next()
		switch {
		case t.Kind == expr.EOF:
			return "", c.Errorf(open.Pos, "unclosed \"(\"")
		case t.IsOp("("):
			depth++
		case t.IsOp(")"):
			depth--
			if depth == 0 {
				return c.Text(open.Pos+1, t.Pos), nil
			}
		}
	}
}

// rest consumes every token up to the end (an optional ";" left) and
// returns their text.
func (p *stmtParser) rest(from int) string {
	c := p.c
	for !c.AtEnd() {
		c.Next()
	}
	return strings.TrimSpace(c.Text(from, c.Peek().Pos))
}

// mergeInto reads the rest of MERGE INTO t [[AS] a] USING src [[AS] b] ON
// cond WHEN ...
func (p *stmtParser) mergeInto() (*Statement, error) {
	c := p.c
	name, _, err := p.tableName()
	if err != nil {
		return nil, err
	}
	ta, err := p.alias()
	if err != nil {
		return nil, err
	}
	if err := c.Expect("USING"); err != nil {
		return nil, err
	}
	src, err := p.relation()
	if err != nil {
		return nil, err
	}
	sa, err := p.alias()
	if err != nil {
		return nil, err
	}
	if sa == "" {
		switch src.Kind {
		case SourceView, SourceTable:
			sa = lastPart(src.Name)
		default:
			// Spark names an unaliased subquery's columns by their own names only.
			sa = "__subquery"
		}
	}
	if err := c.Expect("ON"); err != nil {
		return nil, err
	}
	onAt := c.Peek().Pos
	_, on, err := c.Expr()
	if err != nil {
		return nil, p.subqueryError(onAt, err)
	}
	m := &request.Merge{On: on, SourceAlias: sa, TargetAlias: ta}
	tquals := []string{ta, lastPart(name), "target"}
	for c.Peek().Is("WHEN") {
		cl, err := p.whenClause(tquals)
		if err != nil {
			return nil, err
		}
		m.Clauses = append(m.Clauses, cl)
	}
	if len(m.Clauses) == 0 {
		t := c.Peek()
		return nil, c.Errorf(t.Pos, "expected WHEN [NOT] MATCHED, found %s", t.Describe())
	}
	r := &request.Request{Op: request.OpMerge, Table: name, Merge: m}
	return &Statement{Kind: "MERGE INTO", Request: r, DML: &DML{Source: src}}, nil
}

// whenClause reads WHEN [NOT] MATCHED [BY TARGET|SOURCE] [AND cond] THEN action.
func (p *stmtParser) whenClause(tquals []string) (request.MergeClause, error) {
	c := p.c
	var cl request.MergeClause
	c.Next() // WHEN
	switch {
	case c.Keywords("MATCHED"):
		cl.When = request.WhenMatched
	case c.Keywords("NOT", "MATCHED", "BY", "SOURCE"):
		cl.When = request.WhenNotMatchedBySource
	case c.Keywords("NOT", "MATCHED", "BY", "TARGET"), c.Keywords("NOT", "MATCHED"):
		cl.When = request.WhenNotMatched
	default:
		t := c.Peek()
		return cl, c.Errorf(t.Pos, "expected MATCHED or NOT MATCHED after WHEN, found %s", t.Describe())
	}
	if c.Keywords("AND") {
		start := c.Peek().Pos
		_, text, err := c.Expr()
		if err != nil {
			return cl, p.subqueryError(start, err)
		}
		cl.Condition = text
	}
	if err := c.Expect("THEN"); err != nil {
		return cl, err
	}
	t := c.Peek()
	var err error
	switch {
	case c.Keywords("DELETE"):
		cl.Action = request.ActionDelete
	case c.Keywords("UPDATE", "SET"):
		if c.OpIf("*") {
			cl.Action = request.ActionUpdateAll
		} else {
			cl.Action = request.ActionUpdate
			cl.Set, err = p.assignments(tquals)
		}
	case c.Keywords("INSERT"):
		if c.OpIf("*") {
			cl.Action = request.ActionInsertAll
		} else {
			cl.Action = request.ActionInsert
			cl.Set, err = p.insertValues()
		}
	default:
		return cl, c.Errorf(t.Pos, "expected DELETE, UPDATE SET or INSERT, found %s", t.Describe())
	}
	if err != nil {
		return cl, err
	}
	if cl.When == request.WhenNotMatched && cl.Action != request.ActionInsert && cl.Action != request.ActionInsertAll ||
		cl.When != request.WhenNotMatched && (cl.Action == request.ActionInsert || cl.Action == request.ActionInsertAll) ||
		cl.When == request.WhenNotMatchedBySource && cl.Action == request.ActionUpdateAll {
		return cl, c.Errorf(t.Pos, "WHEN %s cannot %s", strings.ToUpper(strings.ReplaceAll(cl.When, "_", " ")), strings.ToUpper(strings.ReplaceAll(cl.Action, "_all", " *")))
	}
	return cl, nil
}

// insertValues reads MERGE's (col, ...) VALUES (expr, ...).
func (p *stmtParser) insertValues() (map[string]string, error) {
	c := p.c
	pos := c.Peek().Pos
	cols, err := p.insertColumns()
	if err != nil {
		return nil, err
	}
	if err := c.Expect("VALUES"); err != nil {
		return nil, err
	}
	if err := c.ExpectOp("("); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i := 0; ; i++ {
		_, text, err := c.Expr()
		if err != nil {
			return nil, err
		}
		if i < len(cols) {
			out[cols[i]] = text
		}
		if !c.OpIf(",") {
			if i+1 != len(cols) {
				return nil, c.Errorf(pos, "INSERT names %d columns but gives %d values", len(cols), i+1)
			}
			break
		}
	}
	return out, c.ExpectOp(")")
}

// insertColumns reads (col, ...), refusing a name given twice.
func (p *stmtParser) insertColumns() ([]string, error) {
	c := p.c
	if err := c.ExpectOp("("); err != nil {
		return nil, err
	}
	var out []string
	for {
		pos := c.Peek().Pos
		parts, err := c.Path("a column name")
		if err != nil {
			return nil, err
		}
		if len(parts) > 1 {
			return nil, c.Errorf(pos, "a column list names top-level columns, not %q", dotted(parts))
		}
		for _, o := range out {
			if strings.EqualFold(o, parts[0]) {
				return nil, c.Errorf(pos, "column %q is named twice", parts[0])
			}
		}
		out = append(out, parts[0])
		if !c.OpIf(",") {
			break
		}
	}
	return out, c.ExpectOp(")")
}

// insert reads the rest of INSERT INTO|OVERWRITE [TABLE] t [PARTITION
// (...)] [(cols) | BY NAME] VALUES ... | SELECT ... | TABLE v | (query).
func (p *stmtParser) insert(overwrite bool) (*Statement, error) {
	c := p.c
	c.Keywords("TABLE")
	name, _, err := p.tableName()
	if err != nil {
		return nil, err
	}
	ins := &Insert{Overwrite: overwrite}
	if t := c.Peek(); t.Is("PARTITION") {
		c.Next()
		ins.PartPos = t.Pos
		if err := p.partitionSpec(ins); err != nil {
			return nil, err
		}
		if c.Keywords("IF", "NOT", "EXISTS") {
			return nil, p.unsupported(t.Pos, "INSERT ... PARTITION (...) IF NOT EXISTS (Spark refuses it for Iceberg tables)")
		}
	}
	if t := c.Peek(); t.IsOp("(") && !startsQuery(c.Peek2()) {
		ins.ColumnsPos = t.Pos
		if ins.Columns, err = p.insertColumns(); err != nil {
			return nil, err
		}
	} else if c.Keywords("BY", "NAME") {
		ins.ByName = true
	}
	src, err := p.insertSource()
	if err != nil {
		return nil, err
	}
	if ins.ByName && src.Kind == SourceValues {
		return nil, c.Errorf(src.Pos, "INSERT ... BY NAME needs a query, not VALUES")
	}
	kind := "INSERT INTO"
	if overwrite {
		kind = "INSERT OVERWRITE"
	}
	r := &request.Request{Op: request.OpAppend, Table: name}
	return &Statement{Kind: kind, Request: r, DML: &DML{Source: src, Insert: ins}}, nil
}

func startsQuery(t expr.Token) bool {
	return t.Is("SELECT") || t.Is("WITH") || t.Is("VALUES") || t.Is("TABLE") || t.Is("FROM") || t.IsOp("(")
}

// partitionSpec reads (col [= value], ...).
func (p *stmtParser) partitionSpec(ins *Insert) error {
	c := p.c
	if err := c.ExpectOp("("); err != nil {
		return err
	}
	for {
		pos := c.Peek().Pos
		col, err := c.Name("a partition column")
		if err != nil {
			return err
		}
		for _, s := range ins.Static {
			if strings.EqualFold(s.Column, col) {
				return c.Errorf(pos, "partition column %q is given twice", col)
			}
		}
		if c.OpIf("=") {
			n, text, err := c.Expr()
			if err != nil {
				return err
			}
			ins.Static = append(ins.Static, Static{Column: col, Value: n, Text: text})
		} else {
			ins.Dynamic = append(ins.Dynamic, col)
		}
		if !c.OpIf(",") {
			break
		}
	}
	return c.ExpectOp(")")
}

// insertSource reads VALUES (...), ... | SELECT * FROM v | TABLE v | a query.
func (p *stmtParser) insertSource() (*Source, error) {
	c := p.c
	t := c.Peek()
	switch {
	case c.Keywords("VALUES"):
		src := &Source{Kind: SourceValues, Pos: t.Pos}
		for {
			open := c.Peek()
			var row []expr.Node
			if c.OpIf("(") {
				for {
					n, _, err := c.Expr()
					if err != nil {
						return nil, err
					}
					row = append(row, n)
					if !c.OpIf(",") {
						break
					}
				}
				if err := c.ExpectOp(")"); err != nil {
					return nil, err
				}
			} else {
				// VALUES 1, 2: one column per row.
				n, _, err := c.Expr()
				if err != nil {
					return nil, err
				}
				row = []expr.Node{n}
			}
			src.rows = append(src.rows, row)
			src.rowAt = append(src.rowAt, open.Pos)
			if !c.OpIf(",") {
				break
			}
		}
		return src, nil
	case t.Is("TABLE"):
		c.Next()
		at := c.Peek().Pos
		parts, err := c.Path("a view or table name")
		if err != nil {
			return nil, err
		}
		return p.namedSource(parts, at)
	case t.Is("SELECT"):
		// SELECT * FROM name is the view or table itself; any other query
		// needs an engine.
		if c.Peek2().IsOp("*") {
			save := *c
			c.Next()
			c.Next()
			if c.Keywords("FROM") {
				at := c.Peek().Pos
				if parts, err := c.Path("a view or table name"); err == nil {
					if src, err := p.namedSource(parts, at); err == nil && c.AtEnd() {
						return src, nil
					}
				}
			}
			*c = save
		}
		return &Source{Kind: SourceQuery, Query: p.rest(t.Pos), Pos: t.Pos}, nil
	case t.Is("WITH"), t.Is("FROM"), t.IsOp("("):
		return &Source{Kind: SourceQuery, Query: p.rest(t.Pos), Pos: t.Pos}, nil
	}
	return nil, c.Errorf(t.Pos, "expected VALUES, SELECT, TABLE or a query, found %s", t.Describe())
}
