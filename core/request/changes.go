package request

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Change is one change of an update_table document: Action names it, the
// other keys are its arguments (ChangeActions lists which it takes).
type Change struct {
	Action string `json:"action"`
	// Path names a column by its parts (["addr", "city"]).
	Path []string `json:"path,omitempty"`
	// Other is the column move_before and move_after place Path next to.
	Other []string `json:"other,omitempty"`
	// NewName is rename_column's and rename_partition_field's new name.
	NewName string `json:"new_name,omitempty"`
	// Type is an Iceberg type as text: "long", "decimal(12, 2)",
	// "struct<a: int, b: string>", "list<long>", "map<string, int>".
	Type     string  `json:"type,omitempty"`
	Doc      *string `json:"doc,omitempty"`
	Required *bool   `json:"required,omitempty"`
	// Columns are set_identifier_fields' columns, each by its parts.
	Columns [][]string `json:"columns,omitempty"`
	// Source is the column (dotted name) add_partition_field partitions by.
	Source string `json:"source,omitempty"`
	// Transform is a partition transform as in partition_by.
	Transform string `json:"transform,omitempty"`
	// Name is the partition field add_partition_field adds (optional),
	// remove_partition_field removes and rename_partition_field renames.
	Name string `json:"name,omitempty"`
	// Terms are replace_sort_order's terms, as sort_order's (none: unsorted).
	Terms      []string          `json:"terms,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	Keys       []string          `json:"keys,omitempty"`
}

// Change actions, by the part of the metadata they change.
const (
	ActionAddColumn           = "add_column"
	ActionRenameColumn        = "rename_column"
	ActionUpdateColumn        = "update_column"
	ActionDeleteColumn        = "delete_column"
	ActionMoveFirst           = "move_first"
	ActionMoveBefore          = "move_before"
	ActionMoveAfter           = "move_after"
	ActionSetIdentifierFields = "set_identifier_fields"
	// ActionDropIdentifierFields removes columns from the identifier fields.
	ActionDropIdentifierFields = "drop_identifier_fields"
	// ActionUnionByName adds what the input stream's Arrow schema has and
	// the table lacks (PyIceberg's union_by_name).
	ActionUnionByName = "union_by_name"

	ActionAddPartitionField    = "add_partition_field"
	ActionRemovePartitionField = "remove_partition_field"
	ActionRenamePartitionField = "rename_partition_field"

	ActionReplaceSortOrder = "replace_sort_order"

	ActionSetProperties    = "set_properties"
	ActionRemoveProperties = "remove_properties"
)

// ChangeActions maps each action to the keys it needs and the keys it may
// take besides them.
var ChangeActions = map[string]struct{ Needs, May []string }{
	ActionAddColumn:            {[]string{"path", "type"}, []string{"doc", "required"}},
	ActionRenameColumn:         {[]string{"path", "new_name"}, nil},
	ActionUpdateColumn:         {[]string{"path"}, []string{"type", "doc", "required"}},
	ActionDeleteColumn:         {[]string{"path"}, nil},
	ActionMoveFirst:            {[]string{"path"}, nil},
	ActionMoveBefore:           {[]string{"path", "other"}, nil},
	ActionMoveAfter:            {[]string{"path", "other"}, nil},
	ActionSetIdentifierFields:  {nil, []string{"columns"}},
	ActionDropIdentifierFields: {[]string{"columns"}, nil},
	ActionUnionByName:          {nil, nil},
	ActionAddPartitionField:    {[]string{"source", "transform"}, []string{"name"}},
	// remove_partition_field names the field, or its source and transform.
	ActionRemovePartitionField: {nil, []string{"name", "source", "transform"}},
	ActionRenamePartitionField: {[]string{"name", "new_name"}, nil},
	ActionReplaceSortOrder:     {nil, []string{"terms"}},
	ActionSetProperties:        {[]string{"properties"}, nil},
	ActionRemoveProperties:     {[]string{"keys"}, nil},
}

// IsSchemaChange reports whether action changes the schema.
func IsSchemaChange(action string) bool {
	switch action {
	case ActionAddColumn, ActionRenameColumn, ActionUpdateColumn, ActionDeleteColumn, ActionMoveFirst,
		ActionMoveBefore, ActionMoveAfter, ActionSetIdentifierFields, ActionDropIdentifierFields, ActionUnionByName:
		return true
	}
	return false
}

// IsSpecChange reports whether action changes the partition spec.
func IsSpecChange(action string) bool {
	switch action {
	case ActionAddPartitionField, ActionRemovePartitionField, ActionRenamePartitionField:
		return true
	}
	return false
}

// setKeys lists the JSON keys of c that are set.
func (c *Change) setKeys() []string {
	var out []string
	v, t := reflect.ValueOf(*c), reflect.TypeOf(*c)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "action" && !v.Field(i).IsZero() {
			out = append(out, name)
		}
	}
	return out
}

// validateChanges checks update_table's changes and that no other
// operation carries them.
func (r *Request) validateChanges() error {
	if r.Op != OpUpdateTable {
		if r.Changes != nil || r.AllowIncompatibleChanges {
			return fmt.Errorf("%w: operation %s takes no changes", errs.ErrInvalidArgument, r.Op)
		}
		return nil
	}
	if len(r.Changes) == 0 {
		return fmt.Errorf("%w: update_table needs at least one change", errs.ErrInvalidArgument)
	}
	other := r.PartitionBy != nil || r.Properties != nil || r.Location != "" || r.Options != nil || r.SnapshotID != nil ||
		r.Columns != nil || r.SortOrder != nil || r.Ref != ""
	if other {
		return fmt.Errorf("%w: update_table takes table, changes and allow_incompatible_changes only", errs.ErrInvalidArgument)
	}
	unions := 0
	for i := range r.Changes {
		c := &r.Changes[i]
		spec, ok := ChangeActions[c.Action]
		if !ok {
			names := make([]string, 0, len(ChangeActions))
			for a := range ChangeActions {
				names = append(names, a)
			}
			slices.Sort(names)
			return fmt.Errorf("%w: changes[%d]: unknown action %q (%s)", errs.ErrInvalidArgument, i, c.Action, strings.Join(names, ", "))
		}
		set := c.setKeys()
		for _, k := range spec.Needs {
			if !slices.Contains(set, k) {
				return fmt.Errorf("%w: changes[%d]: %s needs %s", errs.ErrInvalidArgument, i, c.Action, k)
			}
		}
		for _, k := range set {
			if !slices.Contains(spec.Needs, k) && !slices.Contains(spec.May, k) {
				return fmt.Errorf("%w: changes[%d]: %s takes no %s", errs.ErrInvalidArgument, i, c.Action, k)
			}
		}
		for _, p := range append([][]string{c.Path, c.Other}, c.Columns...) {
			if slices.Contains(p, "") {
				return fmt.Errorf("%w: changes[%d]: %s: empty column name in %q", errs.ErrInvalidArgument, i, c.Action, p)
			}
		}
		if c.Action == ActionRemovePartitionField && (c.Name == "") == (c.Source == "" || c.Transform == "") {
			return fmt.Errorf("%w: changes[%d]: remove_partition_field needs name, or source and transform", errs.ErrInvalidArgument, i)
		}
		if c.Action == ActionUpdateColumn && c.Type == "" && c.Doc == nil && c.Required == nil {
			return fmt.Errorf("%w: changes[%d]: update_column needs type, doc or required", errs.ErrInvalidArgument, i)
		}
		if c.Transform != "" {
			if err := checkTransform(c.Transform); err != nil {
				return fmt.Errorf("changes[%d]: %w", i, err)
			}
		}
		if c.Action == ActionUnionByName {
			unions++
		}
	}
	if unions > 1 {
		return fmt.Errorf("%w: update_table takes at most one union_by_name (its schema is the input stream's)", errs.ErrInvalidArgument)
	}
	return nil
}
