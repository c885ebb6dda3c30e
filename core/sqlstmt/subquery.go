package sqlstmt

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// DELETE and UPDATE whose WHERE holds subqueries run as a MERGE whose
// source is a query the caller evaluates (with DuckDB). Two forms:
//
//   - One conjunct col IN (SELECT ...) and no other subquery: the source is
//     the subquery's distinct values. DELETE FROM t WHERE c IN (SELECT x
//     FROM v) AND rest is MERGE INTO t USING (SELECT DISTINCT x ...) ON t.c
//     = k WHEN MATCHED AND rest THEN DELETE. A NULL key matches nothing, as
//     c IN (...) holds for no NULL.
//   - Any other subquery (NOT IN, [NOT] EXISTS, correlated or not, scalar
//     subqueries, subqueries under OR or NOT): the conjuncts holding them
//     are evaluated by the engine over the target's own rows. The source is
//     SELECT DISTINCT <keys> FROM <target> AS a WHERE <those conjuncts>,
//     where the keys are every target column the conjuncts could read (each
//     name in their text that is a column of the target: a superset, so
//     target rows equal on the keys get the same answer), and the merge
//     joins on the keys with null-safe equality. Each target row matches at
//     most one source row, so UPDATE never trips MERGE's cardinality check.
//     The engine decides the subqueries with SQL's three-valued logic, as
//     Spark does (x NOT IN a set holding NULL is never true). The target is
//     read for the engine at its current state: a commit landing between
//     that read and the statement's own commit is treated as having come
//     after the statement (its rows are matched by value only).
//
// The other conjuncts stay in the WHEN MATCHED condition, evaluated by our
// expression language, and filter the engine's read of the target too.

// subqueryAlias names the subquery's rows in the merge; subqueryKey its column.
const (
	subqueryAlias = "__subquery"
	subqueryKey   = "__k"
)

// hasSubquery reports whether a subquery follows in the statement.
func (p *stmtParser) hasSubquery() bool {
	save := *p.c
	defer func() { *p.c = save }()
	for !p.c.AtEnd() {
		t := p.c.Next()
		if t.Is("EXISTS") && p.c.Peek().IsOp("(") || t.IsOp("(") && (p.c.Peek().Is("SELECT") || p.c.Peek().Is("WITH")) {
			return true
		}
	}
	return false
}

// subqueryWhere reads the rest of the statement as a WHERE holding
// subqueries and returns a merge of op's action (set nil: DELETE).
func (p *stmtParser) subqueryWhere(name, alias string, set map[string]string, kind string) (*Statement, error) {
	c := p.c
	start := c.Peek().Pos
	var conj [][2]int // text ranges of the conjuncts
	from, depth, between := start, 0, false
	for !c.AtEnd() {
		t := c.Next()
		switch {
		case t.IsOp("("):
			depth++
		case t.IsOp(")"):
			depth--
		case depth == 0 && t.Is("BETWEEN"):
			between = true
		case depth == 0 && t.Is("AND") && between:
			between = false
		case depth == 0 && t.Is("AND"):
			conj = append(conj, [2]int{from, t.Pos})
			from = c.Peek().Pos
		}
	}
	conj = append(conj, [2]int{from, c.Peek().Pos})
	quals := []string{alias, lastPart(name)}
	var col, in string
	var subs, rest, filter []string
	for _, r := range conj {
		text := c.Text(r[0], r[1])
		if !subquery.MatchString(text) {
			n, _, err := p.conjunct(text, r[0])
			if err != nil {
				return nil, err
			}
			rest = append(rest, "("+text+")")
			filter = append(filter, "("+unqualify(n, text, quals)+")")
			continue
		}
		if cc, sq, ok := inSubqueryConjunct(text); ok {
			col, in = cc, sq
		}
		subs = append(subs, "("+text+")")
	}
	target := alias
	if target == "" {
		target = lastPart(name)
	}
	clause := request.MergeClause{When: request.WhenMatched, Action: request.ActionDelete, Condition: strings.Join(rest, " AND ")}
	if set != nil {
		clause.Action, clause.Set = request.ActionUpdate, set
	}
	m := &request.Merge{SourceAlias: subqueryAlias, TargetAlias: target, Clauses: []request.MergeClause{clause}}
	st := &Statement{Kind: kind, Request: &request.Request{Op: request.OpMerge, Table: name, Merge: m}}
	if len(subs) == 1 && in != "" {
		m.On = col + " = " + subqueryAlias + "." + subqueryKey
		src := &Source{Kind: SourceQuery, Pos: start, Query: "SELECT DISTINCT " + subqueryKey + " FROM (" + in + ") AS __subquery_in(" + subqueryKey + ")"}
		st.DML = &DML{Source: src}
		return st, nil
	}
	st.DML = &DML{
		Source:   &Source{Kind: SourceQuery, Pos: start},
		Subquery: &Subquery{Table: name, Alias: target, Cond: strings.Join(subs, " AND "), Filter: strings.Join(filter, " AND ")},
	}
	return st, nil
}

// conjunct parses text, a condition of the statement at pos, on its own.
func (p *stmtParser) conjunct(text string, pos int) (expr.Node, string, error) {
	c, err := expr.NewCursor(text)
	if err == nil {
		var n expr.Node
		if n, _, err = c.Expr(); err == nil && c.AtEnd() {
			return n, text, nil
		}
	}
	return nil, "", p.c.Errorf(pos, "cannot read the condition %q", strings.TrimSpace(text))
}

// Subquery is a DELETE or UPDATE condition the engine evaluates over the
// target's rows (see the top of this file).
type Subquery struct {
	Table  string // the target ([catalog.]namespace.table[.branch_x])
	Alias  string // the name the conditions qualify the target's columns by
	Cond   string // the conjuncts holding subqueries, in Spark's SQL
	Filter string // the other conjuncts, unqualified (our expression language)
}

// TargetRead is an Iceberg table the caller reads and hands the engine
// under a name of the query: Columns (top-level) of the rows matching Filter.
type TargetRead struct {
	Table   string   `json:"table"`
	Columns []string `json:"columns"`
	Filter  string   `json:"filter,omitempty"`
}

// targetName is the name the engine's query reads the target by.
const targetName = "__pig_target"

// subqueryKey is the merge key: a column path of the target, or whether
// the struct at path is NULL.
type subqueryKeyCol struct {
	path   []string
	isNull bool
}

// BindTarget finishes a statement whose conditions the engine evaluates
// over the target's rows (Subquery set), once the target's schema is
// known: the keys, the engine's query and the merge's ON. Other statements
// are left as they are.
func (st *Statement) BindTarget(schema *iceberg.Schema) error {
	if st.DML == nil || st.DML.Subquery == nil || st.DML.Source.Query != "" {
		return nil
	}
	sq := st.DML.Subquery
	keys, err := subqueryKeys(sq.Cond, schema)
	if err != nil {
		return err
	}
	var sel, on []string
	top := map[string]bool{}
	var cols []string
	for i, k := range keys {
		if !top[k.path[0]] {
			top[k.path[0]] = true
			cols = append(cols, k.path[0])
		}
		ours := (&expr.ColumnNode{Path: append([]string{"target"}, k.path...)}).String()
		theirs := duckIdent(sq.Alias) + "." + duckPath(k.path)
		if k.isNull {
			ours, theirs = "("+ours+" IS NULL)", "("+theirs+" IS NULL)"
		}
		name := fmt.Sprintf("%s%d", subqueryKey, i)
		sel = append(sel, theirs+" AS "+duckIdent(name))
		on = append(on, ours+" <=> "+subqueryAlias+"."+name)
	}
	st.Request.Merge.On = strings.Join(on, " AND ")
	src := st.DML.Source
	src.Query = "SELECT DISTINCT " + strings.Join(sel, ", ") + " FROM " + targetName + " AS " + duckIdent(sq.Alias) + " WHERE " + sq.Cond
	src.Tables = map[string]TargetRead{targetName: {Table: sq.Table, Columns: cols, Filter: sq.Filter}}
	return nil
}

// subqueryKeys are the target's columns named in cond: each name token that
// is a top-level column, followed into its struct fields as far as the
// text names them. A struct used whole keys on its primitive fields and on
// whether each struct in it is NULL; a list or map used whole cannot be a
// key. With no column named, the first primitive column keys the rows (the
// conditions then hold for every row or none).
func subqueryKeys(cond string, schema *iceberg.Schema) ([]subqueryKeyCol, error) {
	c, err := expr.NewCursor(cond)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read the subquery condition: %v", errs.ErrNotSupported, err)
	}
	var toks []expr.Token
	for !c.AtEnd() {
		toks = append(toks, c.Next())
	}
	var out []subqueryKeyCol
	seen := map[string]bool{}
	add := func(k subqueryKeyCol) {
		id := fmt.Sprint(k.isNull, k.path)
		if !seen[id] {
			seen[id] = true
			out = append(out, k)
		}
	}
	var whole func(path []string, t iceberg.Type) error
	whole = func(path []string, t iceberg.Type) error {
		switch t := t.(type) {
		case *iceberg.StructType:
			add(subqueryKeyCol{path: path, isNull: true})
			for _, f := range t.FieldList {
				if err := whole(append(append([]string{}, path...), f.Name), f.Type); err != nil {
					return err
				}
			}
			return nil
		case *iceberg.ListType, *iceberg.MapType:
			return fmt.Errorf("%w: a subquery condition that reads the %s column %s of the target (it cannot be a join key; compare its elements in a MERGE INTO instead)", errs.ErrNotSupported, t, dotted(path))
		}
		add(subqueryKeyCol{path: path})
		return nil
	}
	for i := 0; i < len(toks); i++ {
		if !toks[i].IsName() {
			continue
		}
		f, ok := fieldByName(schema.Fields(), toks[i].Text)
		if !ok {
			continue
		}
		path := []string{f.Name}
		for j := i + 1; j+1 < len(toks) && toks[j].IsOp(".") && toks[j+1].IsName(); j += 2 {
			st, isStruct := f.Type.(*iceberg.StructType)
			if !isStruct {
				break
			}
			sub, ok := fieldByName(st.FieldList, toks[j+1].Text)
			if !ok {
				break
			}
			f, path = sub, append(path, sub.Name)
		}
		if err := whole(path, f.Type); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		for _, f := range schema.Fields() {
			if _, ok := f.Type.(iceberg.PrimitiveType); ok {
				return []subqueryKeyCol{{path: []string{f.Name}}}, nil
			}
		}
		return nil, fmt.Errorf("%w: a subquery condition on a table without a primitive top-level column", errs.ErrNotSupported)
	}
	return out, nil
}

func fieldByName(fields []iceberg.NestedField, name string) (iceberg.NestedField, bool) {
	for _, f := range fields {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return iceberg.NestedField{}, false
}

// duckIdent quotes a name for the engine's SQL (double quotes).
func duckIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func duckPath(path []string) string {
	q := make([]string, len(path))
	for i, s := range path {
		q[i] = duckIdent(s)
	}
	return strings.Join(q, ".")
}

// inSubqueryConjunct reads text as col IN (SELECT ...) and returns the
// column's text and the subquery.
func inSubqueryConjunct(text string) (string, string, bool) {
	c, err := expr.NewCursor(text)
	if err != nil {
		return "", "", false
	}
	parts, err := c.Path("a column")
	if err != nil || !c.Keywords("IN") || !c.Peek().IsOp("(") || !(c.Peek2().Is("SELECT") || c.Peek2().Is("WITH")) {
		return "", "", false
	}
	p := &stmtParser{c: c}
	sub, err := p.parenthesized()
	if err != nil || !c.AtEnd() {
		return "", "", false
	}
	quoted := make([]string, len(parts))
	for i, s := range parts {
		quoted[i] = (&expr.ColumnNode{Path: []string{s}}).String()
	}
	return strings.Join(quoted, "."), sub, true
}
