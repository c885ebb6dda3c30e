package request

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The catalog operations of Spark's DDL that no write does: an empty
// CREATE / REPLACE TABLE with a given schema, ALTER TABLE ... RENAME TO,
// CREATE NAMESPACE, and the sql operation that runs one statement.
const (
	// OpCreateTable creates (or replaces, by Mode) a table with Schema and
	// no data: Spark's CREATE TABLE t (columns) USING iceberg.
	OpCreateTable = "create_table"
	// OpRenameTable renames Table to NewTable (same catalog).
	OpRenameTable = "rename_table"
	// OpCreateNamespace creates Namespace ([catalog.]a.b) with Properties.
	OpCreateNamespace = "create_namespace"
	// OpSQL runs the Spark SQL statement SQL (core/sqlstmt).
	OpSQL = "sql"
	// OpUse makes Namespace ([catalog.]a.b, or a catalog alone) the
	// session's current one, as Spark's USE: names without a catalog
	// resolve in its catalog, bare table names in its namespace.
	OpUse = "use"
)

// Modes of create_table, create_branch and create_tag (Spark's CREATE,
// REPLACE and CREATE OR REPLACE).
const (
	ModeCreate          = "create"
	ModeReplace         = "replace"
	ModeCreateOrReplace = "create_or_replace"
)

// Retention is a branch's or tag's retention (Spark's RETAIN and WITH
// SNAPSHOT RETENTION; Iceberg's max-ref-age-ms, max-snapshot-age-ms and
// min-snapshots-to-keep). Only branches keep snapshots.
type Retention struct {
	MaxRefAgeMs        *int64 `json:"max_ref_age_ms,omitempty"`
	MaxSnapshotAgeMs   *int64 `json:"max_snapshot_age_ms,omitempty"`
	MinSnapshotsToKeep *int   `json:"min_snapshots_to_keep,omitempty"`
}

// DDL holds the fields only catalog and DDL operations take.
type DDL struct {
	// Schema is create_table's schema, in Iceberg's JSON form (field ids
	// are reassigned).
	Schema *iceberg.Schema `json:"schema,omitempty"`
	// Mode is create_table's, create_branch's and create_tag's: create
	// (default), replace or create_or_replace.
	Mode string `json:"mode,omitempty"`
	// IfNotExists makes create_table, create_namespace, create_branch and
	// create_tag do nothing when the object exists; IfExists makes
	// drop_table, remove_branch and remove_tag do nothing when it does not.
	IfNotExists bool `json:"if_not_exists,omitempty"`
	IfExists    bool `json:"if_exists,omitempty"`
	// Purge makes drop_table delete the table's files too.
	Purge bool `json:"purge,omitempty"`
	// NewTable is rename_table's new identifier.
	NewTable string `json:"new_table,omitempty"`
	// Retention is create_branch's and create_tag's ref retention.
	Retention *Retention `json:"retention,omitempty"`
	// SQL is the statement the sql operation runs.
	SQL string `json:"sql,omitempty"`
}

// validateDDL checks that only the operations that take them carry the DDL
// fields, and what each needs.
func (r *Request) validateDDL() error {
	d := r.DDL
	refCreate := r.Op == OpCreateBranch || r.Op == OpCreateTag
	refDrop := r.Op == OpRemoveBranch || r.Op == OpRemoveTag
	for _, f := range []struct {
		name     string
		set, may bool
	}{
		{"schema", d.Schema != nil, r.Op == OpCreateTable},
		{"mode", d.Mode != "", r.Op == OpCreateTable || refCreate},
		{"if_not_exists", d.IfNotExists, r.Op == OpCreateTable || r.Op == OpCreateNamespace || refCreate},
		{"if_exists", d.IfExists, r.Op == OpDropTable || refDrop},
		{"purge", d.Purge, r.Op == OpDropTable},
		{"new_table", d.NewTable != "", r.Op == OpRenameTable},
		{"retention", d.Retention != nil, refCreate},
		{"sql", d.SQL != "", r.Op == OpSQL || r.Op == OpSQLPlan},
	} {
		if f.set && !f.may {
			return fmt.Errorf("%w: operation %s takes no %s", errs.ErrInvalidArgument, r.Op, f.name)
		}
	}
	switch d.Mode {
	case "", ModeCreate, ModeReplace, ModeCreateOrReplace:
	default:
		return fmt.Errorf("%w: %s: unknown mode %q (create, replace, create_or_replace)", errs.ErrInvalidArgument, r.Op, d.Mode)
	}
	if d.IfNotExists && d.Mode != "" && d.Mode != ModeCreate {
		return fmt.Errorf("%w: %s: if_not_exists applies to mode create only", errs.ErrInvalidArgument, r.Op)
	}
	switch r.Op {
	case OpCreateTable:
		if d.Schema == nil || len(d.Schema.Fields()) == 0 {
			return fmt.Errorf("%w: create_table needs a schema with at least one column", errs.ErrInvalidArgument)
		}
	case OpRenameTable:
		if strings.TrimSpace(d.NewTable) == "" {
			return fmt.Errorf("%w: rename_table needs new_table", errs.ErrInvalidArgument)
		}
	case OpCreateNamespace, OpUse:
		if strings.TrimSpace(r.Namespace) == "" {
			return fmt.Errorf("%w: %s needs namespace", errs.ErrInvalidArgument, r.Op)
		}
	case OpSQL, OpSQLPlan:
		if strings.TrimSpace(d.SQL) == "" {
			return fmt.Errorf("%w: sql needs a statement", errs.ErrInvalidArgument)
		}
	}
	if rt := d.Retention; rt != nil {
		switch {
		case rt.MaxRefAgeMs != nil && *rt.MaxRefAgeMs <= 0:
			return fmt.Errorf("%w: max_ref_age_ms must be greater than 0", errs.ErrInvalidArgument)
		case rt.MaxSnapshotAgeMs != nil && *rt.MaxSnapshotAgeMs <= 0:
			return fmt.Errorf("%w: max_snapshot_age_ms must be greater than 0", errs.ErrInvalidArgument)
		case rt.MinSnapshotsToKeep != nil && *rt.MinSnapshotsToKeep <= 0:
			return fmt.Errorf("%w: min_snapshots_to_keep must be greater than 0", errs.ErrInvalidArgument)
		case r.Op == OpCreateTag && (rt.MaxSnapshotAgeMs != nil || rt.MinSnapshotsToKeep != nil):
			return fmt.Errorf("%w: a tag keeps no snapshots: only max_ref_age_ms applies", errs.ErrInvalidArgument)
		}
	}
	return nil
}

// NoTable reports whether op names no table (its document has no table key).
func NoTable(op string) bool {
	return op == OpListTables || op == OpPanic || op == OpCreateNamespace || op == OpSQL || op == OpSQLPlan || op == OpUse
}
