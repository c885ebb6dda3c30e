package sqlstmt

import (
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// DELETE and UPDATE whose WHERE holds one conjunct col IN (SELECT ...)
// become a MERGE with the subquery's distinct values as the source (a
// query the caller evaluates): DELETE FROM t WHERE c IN (SELECT x FROM v)
// AND rest is MERGE INTO t USING (SELECT DISTINCT x ...) ON t.c = k WHEN
// MATCHED AND rest THEN DELETE. A NULL key matches nothing, as c IN (...)
// holds for no NULL. NOT IN, EXISTS and subqueries under OR or NOT are not
// read.

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

// inSubquery reads the rest of the statement as a WHERE with one
// col IN (SELECT ...) conjunct and returns a merge of op's action.
func (p *stmtParser) inSubquery(name, alias string, set map[string]string, kind string) (*Statement, error) {
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
	var col, sub string
	var rest []string
	for _, r := range conj {
		text := c.Text(r[0], r[1])
		cc, sq, ok := inSubqueryConjunct(text)
		switch {
		case ok && sub != "":
			return nil, p.unsupported(r[0], "more than one IN (SELECT ...) in a condition")
		case ok:
			col, sub = cc, sq
		case subquery.MatchString(text):
			return nil, p.unsupported(r[0], "this subquery (ig.sql reads a WHERE with one conjunct col IN (SELECT ...); NOT IN, EXISTS and subqueries under OR are not read)")
		default:
			rest = append(rest, "("+text+")")
		}
	}
	clause := request.MergeClause{When: request.WhenMatched, Action: request.ActionDelete, Condition: strings.Join(rest, " AND ")}
	if set != nil {
		clause.Action, clause.Set = request.ActionUpdate, set
	}
	m := &request.Merge{
		On:          col + " = " + subqueryAlias + "." + subqueryKey,
		SourceAlias: subqueryAlias,
		TargetAlias: alias,
		Clauses:     []request.MergeClause{clause},
	}
	src := &Source{Kind: SourceQuery, Pos: start, Query: "SELECT DISTINCT " + subqueryKey + " FROM (" + sub + ") AS __subquery_in(" + subqueryKey + ")"}
	return &Statement{Kind: kind, Request: &request.Request{Op: request.OpMerge, Table: name, Merge: m}, DML: &DML{Source: src}}, nil
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
