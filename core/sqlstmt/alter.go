package sqlstmt

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// DistributionMode is the table property Spark's WRITE ... clauses set.
const DistributionMode = "write.distribution-mode"

// alterTable reads the rest of ALTER TABLE t ....
func (p *stmtParser) alterTable() (*Statement, error) {
	c := p.c
	name, _, err := p.tableName()
	if err != nil {
		return nil, err
	}
	update := func(kind string, changes ...request.Change) (*Statement, error) {
		return &Statement{Kind: "ALTER TABLE ... " + kind, Request: &request.Request{Op: request.OpUpdateTable, Table: name, Changes: changes}}, nil
	}
	t := c.Peek()
	switch {
	case c.Keywords("RENAME", "TO"):
		to, _, err := p.tableName()
		if err != nil {
			return nil, err
		}
		r := &request.Request{Op: request.OpRenameTable, Table: name}
		r.NewTable = to
		return &Statement{Kind: "ALTER TABLE ... RENAME TO", Request: r}, nil

	case c.Keywords("ADD", "PARTITION", "FIELD"):
		ch, err := p.addPartitionField()
		if err != nil {
			return nil, err
		}
		return update("ADD PARTITION FIELD", ch)
	case c.Keywords("DROP", "PARTITION", "FIELD"):
		ch, err := p.partitionFieldRef()
		if err != nil {
			return nil, err
		}
		return update("DROP PARTITION FIELD", ch)
	case c.Keywords("REPLACE", "PARTITION", "FIELD"):
		drop, err := p.partitionFieldRef()
		if err != nil {
			return nil, err
		}
		if err := c.Expect("WITH"); err != nil {
			return nil, err
		}
		add, err := p.addPartitionField()
		if err != nil {
			return nil, err
		}
		return update("REPLACE PARTITION FIELD", drop, add)

	case c.Keywords("ADD", "COLUMNS"), c.Keywords("ADD", "COLUMN"):
		changes, err := p.addColumns()
		if err != nil {
			return nil, err
		}
		return update("ADD COLUMNS", changes...)
	case c.Keywords("RENAME", "COLUMN"):
		path, err := c.Path("a column")
		if err != nil {
			return nil, err
		}
		if err := c.Expect("TO"); err != nil {
			return nil, err
		}
		to, err := c.Name("the new column name")
		if err != nil {
			return nil, err
		}
		return update("RENAME COLUMN", request.Change{Action: request.ActionRenameColumn, Path: path, NewName: to})
	case c.Keywords("ALTER", "COLUMN"), c.Keywords("CHANGE", "COLUMN"), c.Keywords("ALTER"), c.Keywords("CHANGE"):
		changes, err := p.alterColumn()
		if err != nil {
			return nil, err
		}
		return update("ALTER COLUMN", changes...)
	case c.Keywords("DROP", "COLUMNS"), c.Keywords("DROP", "COLUMN"):
		paths, err := p.columnList(true)
		if err != nil {
			return nil, err
		}
		var changes []request.Change
		for _, path := range paths {
			changes = append(changes, request.Change{Action: request.ActionDeleteColumn, Path: path})
		}
		return update("DROP COLUMNS", changes...)

	case c.Keywords("SET", "TBLPROPERTIES"):
		props, err := p.properties()
		if err != nil {
			return nil, err
		}
		return update("SET TBLPROPERTIES", request.Change{Action: request.ActionSetProperties, Properties: props})
	case c.Keywords("UNSET", "TBLPROPERTIES"):
		p.ifExists()
		keys, err := p.propertyKeys()
		if err != nil {
			return nil, err
		}
		return update("UNSET TBLPROPERTIES", request.Change{Action: request.ActionRemoveProperties, Keys: keys})

	case c.Keywords("SET", "IDENTIFIER", "FIELDS"):
		paths, err := p.columnList(false)
		if err != nil {
			return nil, err
		}
		return update("SET IDENTIFIER FIELDS", request.Change{Action: request.ActionSetIdentifierFields, Columns: paths})
	case c.Keywords("DROP", "IDENTIFIER", "FIELDS"):
		paths, err := p.columnList(false)
		if err != nil {
			return nil, err
		}
		return update("DROP IDENTIFIER FIELDS", request.Change{Action: request.ActionDropIdentifierFields, Columns: paths})

	case c.Keywords("WRITE"):
		changes, err := p.writeSpec(t.Pos)
		if err != nil {
			return nil, err
		}
		return update("WRITE", changes...)

	case c.Keywords("CREATE", "OR", "REPLACE", "BRANCH"):
		return p.ref(name, request.OpCreateBranch, request.ModeCreateOrReplace)
	case c.Keywords("CREATE", "BRANCH"):
		return p.ref(name, request.OpCreateBranch, request.ModeCreate)
	case c.Keywords("REPLACE", "BRANCH"):
		return p.ref(name, request.OpCreateBranch, request.ModeReplace)
	case c.Keywords("CREATE", "OR", "REPLACE", "TAG"):
		return p.ref(name, request.OpCreateTag, request.ModeCreateOrReplace)
	case c.Keywords("CREATE", "TAG"):
		return p.ref(name, request.OpCreateTag, request.ModeCreate)
	case c.Keywords("REPLACE", "TAG"):
		return p.ref(name, request.OpCreateTag, request.ModeReplace)
	case c.Keywords("DROP", "BRANCH"):
		return p.dropRef(name, request.OpRemoveBranch)
	case c.Keywords("DROP", "TAG"):
		return p.dropRef(name, request.OpRemoveTag)
	}
	return nil, p.unsupported(t.Pos, "ALTER TABLE ... %s", t.Describe())
}

// addPartitionField reads term [AS name].
func (p *stmtParser) addPartitionField() (request.Change, error) {
	col, tr, err := p.transform()
	if err != nil {
		return request.Change{}, err
	}
	ch := request.Change{Action: request.ActionAddPartitionField, Source: col, Transform: tr}
	if p.c.Keywords("AS") {
		if ch.Name, err = p.c.Name("a partition field name"); err != nil {
			return ch, err
		}
	}
	return ch, nil
}

// partitionFieldRef reads the partition field DROP/REPLACE PARTITION FIELD
// names: a transform term, or a field's name (a bare name that is no
// column of the table, as Iceberg's DropPartitionFieldExec).
func (p *stmtParser) partitionFieldRef() (request.Change, error) {
	col, tr, err := p.transform()
	if err != nil {
		return request.Change{}, err
	}
	// core/evolve reads a bare name that is no column as a field's name.
	return request.Change{Action: request.ActionRemovePartitionField, Source: col, Transform: tr}, nil
}

// addColumns reads ADD COLUMN(S)'s definitions: one or several, with or
// without parentheses, each path type [NOT NULL] [COMMENT 'doc'] [FIRST |
// AFTER col].
func (p *stmtParser) addColumns() ([]request.Change, error) {
	c := p.c
	paren := c.OpIf("(")
	var changes []request.Change
	for {
		pos := c.Peek().Pos
		path, err := c.Path("a column")
		if err != nil {
			return nil, err
		}
		typ, err := c.Type()
		if err != nil {
			return nil, err
		}
		text, err := typeText(typ)
		if err != nil {
			return nil, c.Errorf(pos, "column %s: %v", dotted(path), err)
		}
		ch := request.Change{Action: request.ActionAddColumn, Path: path, Type: text}
		var move *request.Change
		for {
			if c.Keywords("NOT", "NULL") {
				req := true
				ch.Required = &req
				continue
			}
			if c.Keywords("COMMENT") {
				doc, err := c.StringLit("a comment")
				if err != nil {
					return nil, err
				}
				ch.Doc = &doc
				continue
			}
			if m, ok, err := p.position(path); err != nil {
				return nil, err
			} else if ok {
				move = m
				continue
			}
			break
		}
		changes = append(changes, ch)
		if move != nil {
			changes = append(changes, *move)
		}
		if !c.OpIf(",") {
			break
		}
	}
	if paren {
		if err := c.ExpectOp(")"); err != nil {
			return nil, err
		}
	}
	return changes, nil
}

// position reads FIRST or AFTER col, the move of path it asks for.
func (p *stmtParser) position(path []string) (*request.Change, bool, error) {
	c := p.c
	switch {
	case c.Keywords("FIRST"):
		return &request.Change{Action: request.ActionMoveFirst, Path: path}, true, nil
	case c.Keywords("AFTER"):
		other, err := c.Path("a column")
		if err != nil {
			return nil, false, err
		}
		if len(path) > 1 && len(other) == 1 {
			// Spark names the sibling by its own name within the struct.
			other = append(append([]string{}, path[:len(path)-1]...), other[0])
		}
		return &request.Change{Action: request.ActionMoveAfter, Path: path, Other: other}, true, nil
	}
	return nil, false, nil
}

// alterColumn reads ALTER COLUMN path followed by TYPE t, COMMENT 'doc',
// DROP NOT NULL, SET NOT NULL, FIRST or AFTER col (several may follow one
// another, as Spark 4 allows).
func (p *stmtParser) alterColumn() ([]request.Change, error) {
	c := p.c
	path, err := c.Path("a column")
	if err != nil {
		return nil, err
	}
	upd := request.Change{Action: request.ActionUpdateColumn, Path: path}
	var changes []request.Change
	seen := false
	for {
		pos := c.Peek().Pos
		switch {
		case c.Keywords("TYPE"):
			typ, err := c.Type()
			if err != nil {
				return nil, err
			}
			if _, ok := typ.(iceberg.PrimitiveType); !ok {
				return nil, p.unsupported(pos, "ALTER COLUMN ... TYPE %s: only primitive types can be widened", typ)
			}
			upd.Type = typ.String()
		case c.Keywords("COMMENT"):
			doc, err := c.StringLit("a comment")
			if err != nil {
				return nil, err
			}
			upd.Doc = &doc
		case c.Keywords("DROP", "NOT", "NULL"):
			f := false
			upd.Required = &f
		case c.Keywords("SET", "NOT", "NULL"):
			t := true
			upd.Required = &t
		default:
			m, ok, err := p.position(path)
			if err != nil {
				return nil, err
			}
			if !ok {
				if !seen {
					t := c.Peek()
					return nil, c.Errorf(t.Pos, "expected TYPE, COMMENT, DROP NOT NULL, SET NOT NULL, FIRST or AFTER, found %s", t.Describe())
				}
				if upd.Type != "" || upd.Doc != nil || upd.Required != nil {
					changes = append([]request.Change{upd}, changes...)
				}
				return changes, nil
			}
			changes = append(changes, *m)
		}
		seen = true
	}
}

// columnList reads col, ... (parenthesised when paren allows it).
func (p *stmtParser) columnList(paren bool) ([][]string, error) {
	c := p.c
	open := paren && c.OpIf("(")
	var out [][]string
	for {
		path, err := c.Path("a column")
		if err != nil {
			return nil, err
		}
		out = append(out, path)
		if !c.OpIf(",") {
			break
		}
	}
	if open {
		return out, c.ExpectOp(")")
	}
	return out, nil
}

// writeSpec reads Iceberg's WRITE clause: ORDERED BY terms, LOCALLY
// ORDERED BY terms, DISTRIBUTED BY PARTITION [[LOCALLY] ORDERED BY terms],
// UNORDERED. As Iceberg's SetWriteDistributionAndOrdering: the sort order
// is replaced (unsorted when none is given) and write.distribution-mode
// set to hash (DISTRIBUTED BY PARTITION), none (UNORDERED), range
// (ORDERED BY) or left alone (LOCALLY ORDERED BY).
func (p *stmtParser) writeSpec(pos int) ([]request.Change, error) {
	c := p.c
	mode, distributed, ordered := "", false, false
	terms := []string{}
	for !c.AtEnd() {
		t := c.Peek()
		switch {
		case !distributed && c.Keywords("DISTRIBUTED", "BY", "PARTITION"):
			distributed = true
		case !ordered && c.Keywords("UNORDERED"):
			ordered, mode = true, "none"
		case !ordered && c.Keywords("LOCALLY", "ORDERED", "BY"):
			ordered = true
			var err error
			if terms, err = p.sortTerms(); err != nil {
				return nil, err
			}
		case !ordered && c.Keywords("ORDERED", "BY"):
			ordered, mode = true, "range"
			var err error
			if terms, err = p.sortTerms(); err != nil {
				return nil, err
			}
		default:
			return nil, c.Errorf(t.Pos, "unexpected %s in WRITE (DISTRIBUTED BY PARTITION, [LOCALLY] ORDERED BY or UNORDERED)", t.Describe())
		}
	}
	if !distributed && !ordered {
		return nil, c.Errorf(pos, "ALTER TABLE has no changes: missing distribution and ordering clause")
	}
	if distributed {
		mode = "hash"
	}
	changes := []request.Change{{Action: request.ActionReplaceSortOrder, Terms: terms}}
	if mode != "" {
		changes = append(changes, request.Change{Action: request.ActionSetProperties, Properties: map[string]string{DistributionMode: mode}})
	}
	return changes, nil
}

// sortTerms reads term [ASC|DESC] [NULLS FIRST|LAST], ... and returns each
// as its text (core/layout reads sort terms).
func (p *stmtParser) sortTerms() ([]string, error) {
	c := p.c
	var out []string
	for {
		start := c.Peek().Pos
		if _, _, err := c.Expr(); err != nil {
			return nil, err
		}
		if !c.Keywords("ASC") {
			c.Keywords("DESC")
		}
		if !c.Keywords("NULLS", "FIRST") {
			c.Keywords("NULLS", "LAST")
		}
		out = append(out, c.Text(start, c.Peek().Pos))
		if !c.OpIf(",") {
			return out, nil
		}
	}
}

// ref reads the rest of CREATE [OR REPLACE] / REPLACE BRANCH|TAG:
// [IF NOT EXISTS] name [AS OF VERSION id] [RETAIN n DAYS|HOURS|MINUTES]
// [WITH SNAPSHOT RETENTION [n SNAPSHOTS] [n DAYS|HOURS|MINUTES]].
func (p *stmtParser) ref(table, op, mode string) (*Statement, error) {
	c := p.c
	r := &request.Request{Op: op, Table: table}
	r.Mode = mode
	kind := "BRANCH"
	if op == request.OpCreateTag {
		kind = "TAG"
	}
	if mode == request.ModeCreate && p.ifNotExists() {
		r.IfNotExists = true
	}
	name, err := c.Name("a " + strings.ToLower(kind) + " name")
	if err != nil {
		return nil, err
	}
	r.Ref = name
	if c.Keywords("AS", "OF", "VERSION") {
		id, err := c.Int("a snapshot id")
		if err != nil {
			return nil, err
		}
		r.SnapshotID = &id
	}
	rt := &request.Retention{}
	set := false
	if c.Keywords("RETAIN") {
		ms, err := p.duration()
		if err != nil {
			return nil, err
		}
		rt.MaxRefAgeMs, set = &ms, true
	}
	if t := c.Peek(); op == request.OpCreateBranch && c.Keywords("WITH", "SNAPSHOT", "RETENTION") {
		if n := c.Peek(); n.Kind == expr.Number && c.Peek2().Is("SNAPSHOTS") {
			v, err := c.Int("a number of snapshots")
			if err != nil {
				return nil, err
			}
			c.Next()
			k := int(v)
			rt.MinSnapshotsToKeep, set = &k, true
		}
		if c.Peek().Kind == expr.Number {
			ms, err := p.duration()
			if err != nil {
				return nil, err
			}
			rt.MaxSnapshotAgeMs, set = &ms, true
		}
		if rt.MinSnapshotsToKeep == nil && rt.MaxSnapshotAgeMs == nil {
			return nil, c.Errorf(t.Pos, "WITH SNAPSHOT RETENTION needs n SNAPSHOTS and/or n DAYS|HOURS|MINUTES")
		}
	}
	if set {
		r.Retention = rt
	}
	verb := map[string]string{request.ModeCreate: "CREATE", request.ModeReplace: "REPLACE", request.ModeCreateOrReplace: "CREATE OR REPLACE"}[mode]
	return &Statement{Kind: "ALTER TABLE ... " + verb + " " + kind, Request: r}, nil
}

// duration reads n DAYS|HOURS|MINUTES as milliseconds.
func (p *stmtParser) duration() (int64, error) {
	c := p.c
	n, err := c.Int("a number")
	if err != nil {
		return 0, err
	}
	t := c.Next()
	unit := map[string]int64{"DAYS": 86_400_000, "HOURS": 3_600_000, "MINUTES": 60_000}[strings.ToUpper(t.Text)]
	if t.Kind != expr.Ident || unit == 0 {
		return 0, c.Errorf(t.Pos, "expected DAYS, HOURS or MINUTES, found %s", t.Describe())
	}
	if n <= 0 || n > (1<<62)/unit {
		return 0, c.Errorf(t.Pos, "retention %d %s is out of range", n, strings.ToUpper(t.Text))
	}
	return n * unit, nil
}

// dropRef reads the rest of DROP BRANCH|TAG [IF EXISTS] name.
func (p *stmtParser) dropRef(table, op string) (*Statement, error) {
	r := &request.Request{Op: op, Table: table}
	r.IfExists = p.ifExists()
	name, err := p.c.Name("a branch or tag name")
	if err != nil {
		return nil, err
	}
	r.Ref = name
	kind := "BRANCH"
	if op == request.OpRemoveTag {
		kind = "TAG"
	}
	return &Statement{Kind: "ALTER TABLE ... DROP " + kind, Request: r}, nil
}

// typeText writes t as update_table's changes spell types (core/evolve's
// ParseType): "long", "decimal(12, 2)", "struct<a: int>", "list<long>",
// "map<string, int>". Nested fields of an added column are optional and
// undocumented there, so NOT NULL and COMMENT inside one are refused.
func typeText(t iceberg.Type) (string, error) {
	switch t := t.(type) {
	case *iceberg.StructType:
		parts := make([]string, 0, len(t.FieldList))
		for _, f := range t.FieldList {
			if f.Required || f.Doc != "" {
				return "", fmt.Errorf("%w: NOT NULL and COMMENT on a nested field of an added column", errs.ErrNotSupported)
			}
			if f.Name == "" || strings.ContainsAny(f.Name, ":,<>()") || strings.TrimSpace(f.Name) != f.Name {
				return "", fmt.Errorf("%w: nested field name %q (no \":,<>()\" or surrounding spaces in an added column's nested names)", errs.ErrNotSupported, f.Name)
			}
			s, err := typeText(f.Type)
			if err != nil {
				return "", err
			}
			parts = append(parts, f.Name+": "+s)
		}
		return "struct<" + strings.Join(parts, ", ") + ">", nil
	case *iceberg.ListType:
		s, err := typeText(t.Element)
		return "list<" + s + ">", err
	case *iceberg.MapType:
		k, err := typeText(t.KeyType)
		if err != nil {
			return "", err
		}
		v, err := typeText(t.ValueType)
		return "map<" + k + ", " + v + ">", err
	}
	return t.String(), nil
}
