package expr

import "strings"

func (n *ColumnNode) String() string {
	parts := make([]string, len(n.Path))
	for i, p := range n.Path {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}

func (n *LiteralNode) String() string {
	if n.Kind == litTimestamp {
		// Without a zone its instant depends on the session time zone:
		// keep it a wall-clock time.
		if wall, ok := wallOfText(n.Text); ok {
			return "TIMESTAMP '" + formatTS(wall, false) + "'"
		}
	}
	tv, err := literalValue(n, nil)
	if err != nil {
		return n.Text
	}
	return sqlLiteral(tv.v, tv.t)
}

func (n *UnaryNode) String() string {
	if n.Op == "NOT" {
		return "(NOT " + n.X.String() + ")"
	}
	return "(- " + n.X.String() + ")"
}

func (n *BinaryNode) String() string {
	return "(" + n.L.String() + " " + n.Op + " " + n.R.String() + ")"
}

func (n *IsNode) String() string {
	s := "(" + n.X.String() + " IS "
	if n.Not {
		s += "NOT "
	}
	return s + n.What + ")"
}

func notKw(not bool) string {
	if not {
		return " NOT"
	}
	return ""
}

func joinNodes(ns []Node) string {
	parts := make([]string, len(ns))
	for i, x := range ns {
		parts[i] = x.String()
	}
	return strings.Join(parts, ", ")
}

func (n *InNode) String() string {
	return "(" + n.X.String() + notKw(n.Not) + " IN (" + joinNodes(n.List) + "))"
}

func (n *BetweenNode) String() string {
	return "(" + n.X.String() + notKw(n.Not) + " BETWEEN " + n.Lo.String() + " AND " + n.Hi.String() + ")"
}

func (n *LikeNode) String() string {
	return "(" + n.X.String() + notKw(n.Not) + " LIKE " + n.Pattern.String() + ")"
}

func (n *CallNode) String() string { return n.Name + "(" + joinNodes(n.Args) + ")" }

func (n *CastNode) String() string { return "CAST(" + n.X.String() + " AS " + sqlType(n.To) + ")" }

func (n *CaseNode) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if n.Operand != nil {
		b.WriteString(" " + n.Operand.String())
	}
	for i := range n.Whens {
		b.WriteString(" WHEN " + n.Whens[i].String() + " THEN " + n.Thens[i].String())
	}
	if n.Else != nil {
		b.WriteString(" ELSE " + n.Else.String())
	}
	return b.String() + " END"
}
