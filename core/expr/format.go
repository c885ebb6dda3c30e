package expr

import (
	"slices"
	"strings"
)

// String renders a bound node as canonical SQL text.
func (n *bnode) String() string {
	k := n.kids
	switch n.op {
	case opLit:
		return sqlLiteral(n.val, n.typ)
	case opCol:
		var parts []string
		for _, p := range append(slices.Clone(n.col.qual), n.col.path...) {
			parts = append(parts, quoteIdent(p))
		}
		return strings.Join(parts, ".")
	case opNot:
		return "(NOT " + k[0].String() + ")"
	case opAnd:
		return "(" + k[0].String() + " AND " + k[1].String() + ")"
	case opOr:
		return "(" + k[0].String() + " OR " + k[1].String() + ")"
	case opCmp, opArith:
		return "(" + k[0].String() + " " + n.sub + " " + k[1].String() + ")"
	case opNeg:
		if k[0].op == opLit {
			return "negative(" + k[0].String() + ")" // "-" before a literal would make a literal
		}
		return "(- " + k[0].String() + ")"
	case opIs:
		return "(" + k[0].String() + " IS " + n.sub + ")"
	case opIn:
		return "(" + k[0].String() + notKw(n.not) + " IN (" + joinB(k[1:]) + "))"
	case opLike:
		return "(" + k[0].String() + notKw(n.not) + " LIKE " + k[1].String() + ")"
	case opCast:
		return "CAST(" + k[0].String() + " AS " + sqlType(n.typ) + ")"
	case opCase:
		var b strings.Builder
		b.WriteString("CASE")
		i := 0
		for ; i+1 < len(k); i += 2 {
			b.WriteString(" WHEN " + k[i].String() + " THEN " + k[i+1].String())
		}
		if n.hasElse {
			b.WriteString(" ELSE " + k[i].String())
		}
		return b.String() + " END"
	case opCoalesce:
		return "coalesce(" + joinB(k) + ")"
	case opFunc:
		if n.sub == "date_trunc" {
			return "date_trunc(" + quoteString(k[0].val.s) + ", " + k[1].String() + ")"
		}
		return n.sub + "(" + joinB(k) + ")"
	}
	return "?"
}

func joinB(ns []*bnode) string {
	parts := make([]string, len(ns))
	for i, x := range ns {
		parts[i] = x.String()
	}
	return strings.Join(parts, ", ")
}
