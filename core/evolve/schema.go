package evolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/schema"
)

// schemaUpdate stages a request's schema changes on iceberg-go's
// UpdateSchema (Java's SchemaUpdate rules: every change names columns of
// the schema the update starts from, or columns it adds) and checks, with
// Java's messages, what UpdateSchema lets through.
type schemaUpdate struct {
	base  *iceberg.Schema
	meta  table.Metadata
	allow bool
	u     *table.UpdateSchema
	// deleted are the ids delete_column removed, by their names.
	deleted map[int]string
	// identifiers is base's identifier fields, until set_identifier_fields
	// replaces them.
	identifiers []int
	// pendingIDs are identifier fields deleted while still identifiers.
	pendingIDs map[int]string
}

func newSchemaUpdate(tx *table.Transaction, meta table.Metadata, allow bool) *schemaUpdate {
	var opts []table.UpdateSchemaOption
	if nm := meta.NameMapping(); nm != nil {
		opts = append(opts, table.WithNameMapping(nm))
	}
	base := meta.CurrentSchema()
	return &schemaUpdate{
		base: base, meta: meta, allow: allow,
		u:           tx.UpdateSchema(true, allow, opts...),
		deleted:     map[int]string{},
		identifiers: slices.Clone(base.IdentifierFieldIDs),
		pendingIDs:  map[int]string{},
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errs.ErrInvalidArgument}, args...)...)
}

func (s *schemaUpdate) find(path []string) (iceberg.NestedField, bool) {
	return s.base.FindFieldByName(strings.Join(path, "."))
}

// add stages one change.
func (s *schemaUpdate) add(c request.Change, input *arrow.Schema) error {
	name := strings.Join(c.Path, ".")
	switch c.Action {
	case request.ActionAddColumn:
		t, err := ParseType(c.Type)
		if err != nil {
			return fmt.Errorf("add_column %s: %w", name, err)
		}
		required := c.Required != nil && *c.Required
		if required && !s.allow {
			return invalid("Incompatible change: cannot add required column: %s", name)
		}
		if f, ok := s.find(c.Path); ok {
			if _, gone := s.deleted[f.ID]; !gone {
				return invalid("Cannot add column, name already exists: %s", name)
			}
		}
		if len(c.Path) > 1 {
			if _, ok := s.find(c.Path[:len(c.Path)-1]); !ok {
				return invalid("Cannot add column %s: parent column %s does not exist", name, strings.Join(c.Path[:len(c.Path)-1], "."))
			}
		}
		s.u.AddColumn(c.Path, t, deref(c.Doc), required, nil)
	case request.ActionRenameColumn:
		if _, ok := s.find(c.Path); !ok {
			return invalid("Cannot rename missing column: %s", name)
		}
		if strings.Contains(c.NewName, ".") {
			return invalid("Cannot rename column %s to %q: a name cannot contain '.'", name, c.NewName)
		}
		s.u.RenameColumn(c.Path, c.NewName)
	case request.ActionUpdateColumn:
		f, ok := s.find(c.Path)
		if !ok {
			return invalid("Cannot update missing column: %s", name)
		}
		var upd table.ColumnUpdate
		if c.Type != "" {
			t, err := ParseType(c.Type)
			if err != nil {
				return fmt.Errorf("update_column %s: %w", name, err)
			}
			if _, prim := f.Type.(iceberg.PrimitiveType); !prim {
				return invalid("Cannot change column type: %s is not a primitive (%s)", name, f.Type)
			}
			if !t.Equals(f.Type) && !schema.Promotable(f.Type, t) {
				return invalid("Cannot change column type: %s: %s -> %s", name, f.Type, t)
			}
			upd.FieldType = iceberg.Optional[iceberg.Type]{Valid: true, Val: t}
		}
		if c.Required != nil {
			if *c.Required && !f.Required && !s.allow {
				return invalid("Cannot change column nullability: %s: optional -> required", name)
			}
			upd.Required = iceberg.Optional[bool]{Valid: true, Val: *c.Required}
		}
		if c.Doc != nil {
			upd.Doc = iceberg.Optional[string]{Valid: true, Val: *c.Doc}
		}
		s.u.UpdateColumn(c.Path, upd)
	case request.ActionDeleteColumn:
		f, ok := s.find(c.Path)
		if !ok {
			return invalid("Cannot delete missing column: %s", name)
		}
		if err := s.checkDelete(f, name); err != nil {
			return err
		}
		s.deleted[f.ID] = name
		s.u.DeleteColumn(c.Path)
	case request.ActionMoveFirst, request.ActionMoveBefore, request.ActionMoveAfter:
		op := map[string]table.MoveOp{request.ActionMoveFirst: table.MoveOpFirst, request.ActionMoveBefore: table.MoveOpBefore, request.ActionMoveAfter: table.MoveOpAfter}[c.Action]
		s.u.MoveColumn(op, c.Path, c.Other)
	case request.ActionDropIdentifierFields:
		// Iceberg's DropIdentifierFieldsExec: the identifier fields but these.
		names := make([]string, 0, len(s.identifiers))
		for _, id := range s.identifiers {
			if n, ok := s.base.FindColumnName(id); ok {
				names = append(names, n)
			}
		}
		for _, p := range c.Columns {
			n := strings.Join(p, ".")
			i := slices.Index(names, n)
			if i < 0 {
				return invalid("Cannot complete drop identifier fields operation: field %s not found", n)
			}
			names = slices.Delete(names, i, i+1)
		}
		cols := make([][]string, 0, len(names))
		for _, n := range names {
			f, _ := s.base.FindFieldByName(n)
			cols = append(cols, s.pathOf(f.ID))
		}
		return s.add(request.Change{Action: request.ActionSetIdentifierFields, Columns: cols}, input)
	case request.ActionSetIdentifierFields:
		ids := make([]int, 0, len(c.Columns))
		for _, p := range c.Columns {
			if f, ok := s.find(p); ok {
				ids = append(ids, f.ID)
			}
		}
		for id := range s.pendingIDs {
			if !slices.Contains(ids, id) {
				delete(s.pendingIDs, id)
			}
		}
		s.identifiers = ids
		s.u.SetIdentifierField(c.Columns)
	case request.ActionUnionByName:
		if input == nil {
			return invalid("union_by_name needs the Arrow schema to union with as the input stream")
		}
		other, err := schema.FromArrow(input, false)
		if err != nil {
			return fmt.Errorf("union_by_name: %w", err)
		}
		s.u.UnionByNameWith(other)
	}
	return nil
}

// checkDelete rejects deleting a column the current partition spec or
// sort order is computed from, or an identifier field (unless a later
// set_identifier_fields drops it).
func (s *schemaUpdate) checkDelete(f iceberg.NestedField, name string) error {
	ids := append([]int{f.ID}, nestedIDs(f.Type)...)
	spec := s.meta.PartitionSpec()
	for _, pf := range spec.Fields() {
		if _, void := pf.Transform.(iceberg.VoidTransform); !void && slices.Contains(ids, pf.SourceID()) {
			return invalid("Cannot delete column %s: it is the source of partition field %s (partition spec %d); remove the partition field first", name, pf.Name, spec.ID())
		}
	}
	so := s.meta.SortOrder()
	for _, sf := range so.Fields() {
		if slices.Contains(ids, sf.SourceID()) {
			return invalid("Cannot delete column %s: the table's sort order (%d) sorts by it; replace the sort order first", name, so.OrderID())
		}
	}
	for _, id := range ids {
		if slices.Contains(s.identifiers, id) {
			s.pendingIDs[id] = name
		}
	}
	return nil
}

// finish commits the staged changes to the transaction and checks the
// schema they make.
func (s *schemaUpdate) finish() error {
	for _, name := range s.pendingIDs {
		return invalid("Cannot delete identifier field %s. To force deletion, also call set_identifier_fields to update identifier fields.", name)
	}
	if err := s.u.Commit(); err != nil {
		return fmt.Errorf("%w: %v", errs.ErrInvalidArgument, err)
	}
	return nil
}

// checkSchema checks what UpdateSchema does not: unique names in every
// struct, and identifier fields that Java accepts.
func checkSchema(sc *iceberg.Schema) error {
	if err := uniqueNames("", sc.AsStruct().FieldList); err != nil {
		return err
	}
	for _, id := range sc.IdentifierFieldIDs {
		f, ok := sc.FindFieldByID(id)
		name, _ := sc.FindColumnName(id)
		switch {
		case !ok:
			return invalid("identifier field %d is not in the schema", id)
		case !f.Required:
			return invalid("Cannot add field %s as an identifier field: not a required field", name)
		}
		if _, prim := f.Type.(iceberg.PrimitiveType); !prim {
			return invalid("Cannot add field %s as an identifier field: not a primitive type field", name)
		}
		if f.Type.Equals(iceberg.PrimitiveTypes.Float32) || f.Type.Equals(iceberg.PrimitiveTypes.Float64) {
			return invalid("Cannot add field %s as an identifier field: must not be float or double field", name)
		}
		if err := identifierParents(sc, id, name); err != nil {
			return err
		}
	}
	return nil
}

// identifierParents rejects an identifier field nested in a list, a map
// or an optional struct (Java's Schema.validateIdentifierField).
func identifierParents(sc *iceberg.Schema, id int, name string) error {
	parents, err := iceberg.IndexParents(sc)
	if err != nil {
		return err
	}
	for p, ok := parents[id]; ok; p, ok = parents[p] {
		f, _ := sc.FindFieldByID(p)
		switch f.Type.(type) {
		case *iceberg.ListType, *iceberg.MapType:
			return invalid("Cannot add field %s as an identifier field: must not be nested in %s", name, f.Type)
		}
		if !f.Required {
			return invalid("Cannot add field %s as an identifier field: must not be nested in an optional field %s", name, f.Name)
		}
	}
	return nil
}

func uniqueNames(prefix string, fields []iceberg.NestedField) error {
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Name] {
			return invalid("duplicate column name: %s%s", prefix, f.Name)
		}
		seen[f.Name] = true
		for _, child := range children(f.Type) {
			if err := uniqueNames(prefix+f.Name+".", child); err != nil {
				return err
			}
		}
	}
	return nil
}

// children are the struct field lists inside t.
func children(t iceberg.Type) [][]iceberg.NestedField {
	switch x := t.(type) {
	case *iceberg.StructType:
		return [][]iceberg.NestedField{x.FieldList}
	case *iceberg.ListType:
		return children(x.Element)
	case *iceberg.MapType:
		return append(children(x.KeyType), children(x.ValueType)...)
	}
	return nil
}

// nestedIDs lists the ids of every field inside t.
func nestedIDs(t iceberg.Type) []int {
	var out []int
	switch x := t.(type) {
	case *iceberg.StructType:
		for _, f := range x.FieldList {
			out = append(append(out, f.ID), nestedIDs(f.Type)...)
		}
	case *iceberg.ListType:
		out = append(append(out, x.ElementID), nestedIDs(x.Element)...)
	case *iceberg.MapType:
		out = append(append(out, x.KeyID, x.ValueID), append(nestedIDs(x.KeyType), nestedIDs(x.ValueType)...)...)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// pathOf is the name parts of field id in the base schema.
func (s *schemaUpdate) pathOf(id int) []string {
	var path []string
	var walk func(fs []iceberg.NestedField, prefix []string) bool
	walk = func(fs []iceberg.NestedField, prefix []string) bool {
		for _, f := range fs {
			p := append(slices.Clone(prefix), f.Name)
			if f.ID == id {
				path = p
				return true
			}
			if st, ok := f.Type.(*iceberg.StructType); ok && walk(st.FieldList, p) {
				return true
			}
		}
		return false
	}
	walk(s.base.Fields(), nil)
	return path
}
