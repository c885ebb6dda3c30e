// Package evolve changes a table's metadata without rewriting a data
// file: schema evolution (add, rename, widen, make optional, delete and
// move columns, identifier fields, union by name), partition spec
// evolution, the sort order and table properties — PyIceberg's
// update_schema / update_spec / update_sort_order / set_properties and
// Spark's ALTER TABLE. The rules and field ids are iceberg-go's
// UpdateSchema and UpdateSpec (ports of Java's), with the checks they lack
// added here; the commit is core/commit's loop, re-planned on a fresh
// base after a conflict.
//
// It holds no write path: files written after a change use the new
// schema, spec and order because the writes read them from the table.
package evolve

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/layout"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
	"github.com/pyiceberg-go/pyiceberg-go/core/testhooks"
)

// Result describes the table after an update_table.
type Result struct {
	Table            string `json:"table"`
	MetadataLocation string `json:"metadata_location"`
	// Changed is false when the changes left the metadata as it was.
	Changed bool `json:"changed"`
	Description
}

// Description is a table's current schema, spec, sort order and
// properties, in the Iceberg spec's JSON forms.
type Description struct {
	FormatVersion   int               `json:"format_version"`
	Schema          *iceberg.Schema   `json:"schema"`
	Spec            json.RawMessage   `json:"partition_spec"`
	SortOrder       json.RawMessage   `json:"sort_order"`
	Properties      map[string]string `json:"properties"`
	LastColumnID    int               `json:"last_column_id"`
	LastPartitionID *int              `json:"last_partition_id"`
}

// Describe returns m's current schema, spec, sort order and properties.
func Describe(m table.Metadata) (Description, error) {
	spec := m.PartitionSpec()
	sj, err := json.Marshal(&spec)
	if err != nil {
		return Description{}, err
	}
	oj, err := json.Marshal(m.SortOrder())
	if err != nil {
		return Description{}, err
	}
	props := map[string]string{}
	for k, v := range m.Properties() {
		props[k] = v
	}
	return Description{
		FormatVersion: m.Version(), Schema: m.CurrentSchema(), Spec: sj, SortOrder: oj, Properties: props,
		LastColumnID: m.LastColumnID(), LastPartitionID: m.LastPartitionSpecID(),
	}, nil
}

// Run applies req's changes (schema first, then the partition spec, the
// sort order and the properties) to table id in one commit. input is the
// Arrow schema union_by_name unions with (nil: none); conf is the
// session's configuration (the test hooks' commit pause).
func Run(ctx context.Context, cat *catalog.Catalog, id request.Identifier, req *request.Request, input *arrow.Schema, conf map[string]string) (*Result, error) {
	ident := catalog.TableIdent(id)
	t, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, catalog.MapErr(err, id)
	}
	c := &stage.Committer{Cat: cat, ID: id, Ident: ident}
	retry, err := c.RetryPolicy(t.Metadata().Properties())
	if err != nil {
		return nil, err
	}
	var out *Result
	// Tests commit a concurrent change here, after the first attempt's base
	// was read and outside the commit lock (builds with the hooks only).
	testhooks.CommitDelay(conf)
	base := t
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		t := base
		if t == nil {
			var err error
			if t, err = cat.LoadTable(ctx, ident); err != nil {
				return err
			}
		}
		base = nil // a retry re-plans on the table as it is then
		m := t.Metadata()
		reqs, updates, err := plan(ctx, c, t, req, input)
		if err != nil {
			return commit.Final(err)
		}
		res := &Result{Table: id.String(), MetadataLocation: t.MetadataLocation(), Changed: len(updates) > 0}
		if len(updates) > 0 {
			if t, err = c.Publish(ctx, m.Properties(), m.Location(), reqs, updates, nil); err != nil {
				return err
			}
			res.MetadataLocation = t.MetadataLocation()
		}
		if res.Description, err = Describe(t.Metadata()); err != nil {
			return commit.Final(err)
		}
		out = res
		return nil
	})
	if err != nil {
		return nil, catalog.MapErr(err, id)
	}
	return out, nil
}

// plan stages req's changes on t and returns what to commit: the updates
// and the requirements Java's UpdateRequirements gives them (current
// schema, last column id, default spec, last partition id, default sort
// order), not main's head, so a concurrent append does not conflict.
func plan(ctx context.Context, c *stage.Committer, t *table.Table, req *request.Request, input *arrow.Schema) ([]table.Requirement, []table.Update, error) {
	m := t.Metadata()
	st, err := c.Open(m, t.MetadataLocation(), nil, nil)
	if err != nil {
		return nil, nil, err
	}
	tx := st.Tx
	var schemaChanges, specChanges, other []request.Change
	for _, ch := range req.Changes {
		switch {
		case request.IsSchemaChange(ch.Action):
			schemaChanges = append(schemaChanges, ch)
		case request.IsSpecChange(ch.Action):
			specChanges = append(specChanges, ch)
		default:
			other = append(other, ch)
		}
	}
	if len(schemaChanges) > 0 {
		su := newSchemaUpdate(tx, m, req.AllowIncompatibleChanges)
		for _, ch := range schemaChanges {
			if err := su.add(ch, input); err != nil {
				return nil, nil, err
			}
		}
		if err := su.finish(); err != nil {
			return nil, nil, err
		}
	}
	if len(specChanges) > 0 {
		if err := updateSpec(tx, specChanges); err != nil {
			return nil, nil, err
		}
	}
	for _, ch := range other {
		if err := applyOther(tx, ch); err != nil {
			return nil, nil, err
		}
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errs.ErrInvalidArgument, err)
	}
	if err := checkSchema(staged.Metadata().CurrentSchema()); err != nil {
		return nil, nil, err
	}
	_, updates, err := st.Finish(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errs.ErrInvalidArgument, err)
	}
	return requirements(m, updates), updates, nil
}

// requirements are what updates assume of base (Java's
// UpdateRequirements.forUpdateTable).
func requirements(base table.Metadata, updates []table.Update) []table.Requirement {
	reqs := []table.Requirement{table.AssertTableUUID(base.TableUUID())}
	seen := map[string]bool{}
	add := func(key string, r table.Requirement) {
		if !seen[key] {
			seen[key] = true
			reqs = append(reqs, r)
		}
	}
	for _, u := range updates {
		switch u.Action() {
		case table.UpdateAddSchema:
			add("field", table.AssertLastAssignedFieldID(base.LastColumnID()))
		case table.UpdateSetCurrentSchema:
			add("schema", table.AssertCurrentSchemaID(base.CurrentSchema().ID))
		case table.UpdateAddSpec:
			last := iceberg.PartitionDataIDStart - 1
			if p := base.LastPartitionSpecID(); p != nil {
				last = *p
			}
			add("partition", table.AssertLastAssignedPartitionID(last))
		case table.UpdateSetDefaultSpec:
			add("spec", table.AssertDefaultSpecID(base.DefaultPartitionSpec()))
		case table.UpdateSetDefaultSortOrder:
			add("order", table.AssertDefaultSortOrderID(base.DefaultSortOrder()))
		}
	}
	return reqs
}

// updateSpec stages the partition spec changes on iceberg-go's UpdateSpec
// (Java's BaseUpdatePartitionSpec rules).
func updateSpec(tx *table.Transaction, changes []request.Change) error {
	us := tx.UpdateSpec(true)
	for _, ch := range changes {
		switch ch.Action {
		case request.ActionAddPartitionField:
			tr, err := iceberg.ParseTransform(ch.Transform)
			if err != nil {
				return invalid("add_partition_field %s: %v", ch.Source, err)
			}
			us.AddField(ch.Source, tr, ch.Name)
		case request.ActionRemovePartitionField:
			name := ch.Name
			if name == "" {
				var err error
				if name, err = partitionFieldNamed(tx, ch.Source, ch.Transform); err != nil {
					return err
				}
			}
			us.RemoveField(name)
		case request.ActionRenamePartitionField:
			us.RenameField(ch.Name, ch.NewName)
		}
	}
	if err := us.Commit(); err != nil {
		return invalid("update_spec: %v", err)
	}
	return nil
}

// applyOther stages a sort order or property change.
func applyOther(tx *table.Transaction, ch request.Change) error {
	switch ch.Action {
	case request.ActionReplaceSortOrder:
		staged, err := tx.StagedTable()
		if err != nil {
			return invalid("%v", err)
		}
		so, err := layout.ParseOrder(ch.Terms, staged.Metadata().CurrentSchema())
		if err != nil {
			return err
		}
		if err := tx.ReplaceSortOrder(so); err != nil {
			return invalid("replace_sort_order: %v", err)
		}
	case request.ActionSetProperties:
		props := ch.Properties
		if v, ok := props["format-version"]; ok {
			// Java's TableMetadata reads format-version as an upgrade, never
			// as a stored property (Spark's documented way to upgrade a table).
			props = maps.Clone(props)
			delete(props, "format-version")
			if err := upgradeFormat(tx, v); err != nil {
				return err
			}
		}
		if err := tx.SetProperties(props); err != nil {
			return invalid("set_properties: %v", err)
		}
	case request.ActionRemoveProperties:
		if err := tx.RemoveProperties(ch.Keys); err != nil {
			return invalid("remove_properties: %v", err)
		}
	}
	return nil
}

// partitionFieldNamed finds the current spec's field of transform tr of
// column source (Spark's DROP PARTITION FIELD bucket(16, id)); an identity
// "transform" of a name that is no column is the field of that name.
func partitionFieldNamed(tx *table.Transaction, source, tr string) (string, error) {
	staged, err := tx.StagedTable()
	if err != nil {
		return "", invalid("%v", err)
	}
	m := staged.Metadata()
	f, ok := m.CurrentSchema().FindFieldByName(source)
	if !ok && tr == "identity" && !strings.Contains(source, ".") {
		// A bare name that is no column names the partition field itself.
		return source, nil
	}
	if !ok {
		return "", invalid("Cannot find partition field to remove: %s(%s): no column %s", tr, source, source)
	}
	spec := m.PartitionSpec()
	for _, pf := range spec.Fields() {
		if pf.SourceID() == f.ID && pf.Transform.String() == tr {
			return pf.Name, nil
		}
	}
	return "", invalid("Cannot find partition field to remove: %s(%s)", tr, source)
}

// upgradeFormat upgrades the table to format version v (the same version:
// nothing), with Java's messages for a downgrade or an unknown version.
func upgradeFormat(tx *table.Transaction, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 3 {
		return invalid("format-version %q is not 1, 2 or 3", v)
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return invalid("%v", err)
	}
	cur := staged.Metadata().Version()
	switch {
	case n < cur:
		return invalid("Cannot downgrade v%d table to v%d", cur, n)
	case n == cur:
		return nil
	}
	if err := tx.UpgradeFormatVersion(n); err != nil {
		return invalid("upgrading to format version %d: %v", n, err)
	}
	return nil
}
