package expr

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
)

// Scope is one input of a multi-input expression: its schema and the
// names that qualify its columns (e.g. "target" and "t").
type Scope struct {
	Names  []string // qualifiers, matched case-insensitively; may be empty; "db.tbl" matches two name parts
	Schema *iceberg.Schema
}

// CompileScopes parses src and binds it against scopes (see BindScopes).
func CompileScopes(src string, scopes []Scope, opts ...Option) (*Expr, error) {
	n, err := Parse(src)
	if err != nil {
		return nil, err
	}
	return BindScopes(n, scopes, opts...)
}

// BindScopes binds n against several inputs, scope k being the k-th batch
// given to EvalScopes. A qualified reference q.col (or q.a.b) resolves in
// the scope named q; an unqualified one in the only scope that has it (a
// column in two scopes is an ambiguity error naming both). When q is both
// a scope name and a top-level struct column, the scope wins, as in Spark;
// the struct column is used only when the scope has no such column. Two
// scopes may not share a name.
func BindScopes(n Node, scopes []Scope, opts ...Option) (e *Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, bindErr(n.src(), 0, "internal error: %v", r)
		}
	}()
	if len(scopes) == 0 {
		return nil, bindErr(n.src(), 0, "no inputs to bind to")
	}
	res := &scopeResolver{scopes: scopes}
	seen := map[string]int{}
	for k, s := range scopes {
		if s.Schema == nil {
			return nil, bindErr(n.src(), 0, "input %d has no schema", k+1)
		}
		var quals [][]string
		for _, name := range s.Names {
			if name == "" {
				return nil, bindErr(n.src(), 0, "input %d has an empty name", k+1)
			}
			key := strings.ToLower(name)
			if other, dup := seen[key]; dup && other != k {
				return nil, bindErr(n.src(), 0, "inputs %d and %d are both named %q", other+1, k+1, name)
			}
			seen[key] = k
			quals = append(quals, strings.Split(name, "."))
		}
		res.quals = append(res.quals, quals)
	}
	b := &binder{src: n.src(), res: res}
	for _, o := range opts {
		o(b)
	}
	root, err := b.bind(n)
	if err != nil {
		return nil, err
	}
	return &Expr{src: n.src(), root: root, sc: scopes[0].Schema, scopes: slices.Clone(scopes), zone: b.zone}, nil
}

// scopeResolver resolves names against several schemas (BindScopes).
type scopeResolver struct {
	scopes []Scope
	quals  [][][]string // per scope, per name, its dot-separated parts
}

// describeScope names scope k in messages: its first name, or its position.
func describeScope(scopes []Scope, k int) string {
	if k < len(scopes) && len(scopes[k].Names) > 0 {
		return quoteQualifier(scopes[k].Names[0])
	}
	return fmt.Sprintf("input %d", k+1)
}

func quoteQualifier(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}

// scopeName names scope k of e in messages.
func (e *Expr) scopeName(k int) string {
	if e.scopes == nil {
		return fmt.Sprintf("input %d", k+1)
	}
	return describeScope(e.scopes, k)
}

func (r *scopeResolver) columns() string {
	var names []string
	for _, s := range r.scopes {
		prefix := ""
		if len(s.Names) > 0 {
			prefix = quoteQualifier(s.Names[0]) + "."
		}
		for _, f := range s.Schema.Fields() {
			names = append(names, prefix+quoteIdent(f.Name))
		}
	}
	return "columns: " + strings.Join(names, ", ")
}

// qualifier returns the scope whose name is the longest prefix of path
// (leaving at least one part) and that name's length; -1 when none. Names
// are unique across scopes, so the longest match is one scope.
func (r *scopeResolver) qualifier(path []string) (scope, length int) {
	scope = -1
	for k, quals := range r.quals {
		for _, q := range quals {
			if len(q) >= len(path) || len(q) <= length {
				continue
			}
			match := true
			for i, p := range q {
				match = match && strings.EqualFold(p, path[i])
			}
			if match {
				scope, length = k, len(q)
			}
		}
	}
	return scope, length
}

func (r *scopeResolver) resolve(path []string) (*colRef, string) {
	var qualMsg string
	if k, l := r.qualifier(path); k >= 0 {
		c, msg, _ := schemaResolver{sc: r.scopes[k].Schema, scope: k}.lookup(path[l:])
		if c != nil {
			c.qual = r.display(k)
			return c, ""
		}
		qualMsg = msg + " in " + describeScope(r.scopes, k)
	}
	// unqualified: the only scope that has it (also the fallback for a
	// qualifier that is a struct column name, as in Spark)
	var found []*colRef
	var failure string
	for k, s := range r.scopes {
		c, msg, rooted := schemaResolver{sc: s.Schema, scope: k}.lookup(path)
		switch {
		case c != nil:
			c.qual = r.display(k)
			found = append(found, c)
		case rooted && failure == "":
			failure = msg + " in " + describeScope(r.scopes, k)
		}
	}
	switch {
	case qualMsg != "" && len(found) != 1:
		return nil, qualMsg
	case len(found) == 1:
		return found[0], ""
	case len(found) > 1:
		return nil, fmt.Sprintf("ambiguous column %q: %s.%s or %s.%s", strings.Join(path, "."),
			describeScope(r.scopes, found[0].scope), found[0].name, describeScope(r.scopes, found[1].scope), found[1].name)
	case failure != "":
		return nil, failure
	}
	return nil, fmt.Sprintf("unknown column %q", strings.Join(path, "."))
}

// display is the qualifier the canonical text writes for scope k.
func (r *scopeResolver) display(k int) []string {
	if len(r.quals[k]) == 0 {
		return nil
	}
	return r.quals[k][0]
}

// Scopes reports which scopes e reads, in increasing order (a condition
// only on the source, [1], can be evaluated before the join; a constant
// reads none).
func (e *Expr) Scopes() []int {
	return scopesOf(e.root)
}

func scopesOf(n *bnode) []int {
	var ks []int
	n.walk(func(n *bnode) {
		if n.op == opCol {
			ks = append(ks, n.col.scope)
		}
	})
	slices.Sort(ks)
	return slices.Compact(ks)
}

// Key is one equality of a join condition (see EquiJoin): rows match when
// Target, evaluated on the target row, equals Source, evaluated on the
// source row. Both have the same type. Equality is SQL's on the evaluated
// values: NULL matches nothing unless NullSafe (then NULL matches NULL);
// for float and double NaN equals NaN and -0.0 equals 0.0, so hash them
// normalised.
type Key struct {
	Target, Source *Expr // over scope 0 and scope 1 respectively, each bound as a one-scope expression
	NullSafe       bool  // the condition was <=>
}

// EquiJoin splits a boolean ON condition into equality keys and a residual.
// Every top-level AND conjunct `l = r` or `l <=> r` where one side reads
// only scope 0 and the other only scope 1 becomes a Key; the other
// conjuncts, in their order, are ANDed into residual (nil when none; e
// itself when there is no key or e is not boolean). The key sides are
// converted to their common type, as the comparison does, and rebound as
// one-scope expressions over their own scope's schema, for Eval on that
// scope's batch alone. Evaluating a key side over all rows may raise an
// error (an invalid CAST, say) that the ANDed condition would have skipped;
// Spark's hash joins behave the same.
func (e *Expr) EquiJoin() (keys []Key, residual *Expr) {
	if !e.IsPredicate() || len(e.scopes) < 2 {
		return nil, e
	}
	var rest []*bnode
	for _, c := range conjuncts(e.root, nil) {
		if k, ok := e.key(c); ok {
			keys = append(keys, k)
			continue
		}
		rest = append(rest, c)
	}
	if len(keys) == 0 {
		return nil, e
	}
	if len(rest) == 0 {
		return keys, nil
	}
	root := rest[0]
	for _, c := range rest[1:] {
		root = &bnode{op: opAnd, typ: tBool, kids: []*bnode{root, c}, pos: c.pos}
	}
	out := *e
	out.root = root
	return keys, &out
}

// conjuncts appends the top-level AND operands of n to out.
func conjuncts(n *bnode, out []*bnode) []*bnode {
	if n.op == opAnd {
		return conjuncts(n.kids[1], conjuncts(n.kids[0], out))
	}
	return append(out, n)
}

func (e *Expr) key(c *bnode) (Key, bool) {
	if c.op != opCmp || c.sub != "=" && c.sub != "<=>" {
		return Key{}, false
	}
	l, r := c.kids[0], c.kids[1]
	ls, rs := scopesOf(l), scopesOf(r)
	if len(ls) != 1 || len(rs) != 1 {
		return Key{}, false
	}
	switch {
	case ls[0] == 1 && rs[0] == 0:
		l, r = r, l
	case ls[0] != 0 || rs[0] != 1:
		return Key{}, false
	}
	ns := c.sub == "<=>"
	return Key{
		Target:   &Expr{src: e.src, root: rescope(l), sc: e.scopes[0].Schema, nullSafe: ns, zone: e.zone},
		Source:   &Expr{src: e.src, root: rescope(r), sc: e.scopes[1].Schema, nullSafe: ns, zone: e.zone},
		NullSafe: ns,
	}, true
}

// rescope copies n with its columns moved to scope 0 and unqualified, for
// a one-scope expression over their schema.
func rescope(n *bnode) *bnode {
	c := *n
	if n.op == opCol {
		col := *n.col
		col.scope, col.qual = 0, nil
		c.col = &col
	}
	if n.kids != nil {
		c.kids = make([]*bnode, len(n.kids))
		for i, k := range n.kids {
			c.kids[i] = rescope(k)
		}
	}
	return &c
}
