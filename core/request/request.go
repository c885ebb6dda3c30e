// Package request defines the one document that describes an operation.
// Python and C callers build it as JSON; Decode validates it once.
package request

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/testhooks"
)

// Operations.
const (
	OpCreate          = "create"
	OpReplace         = "replace"
	OpCreateOrReplace = "createOrReplace"
	OpAppend          = "append"
	// OpOverwritePartitions is the dynamic INSERT OVERWRITE.
	OpOverwritePartitions = "overwritePartitions"
	// OpOverwrite replaces the rows matching Filter with the input.
	OpOverwrite = "overwrite"
	// OpDelete deletes the rows matching Filter.
	OpDelete = "delete"
	// OpUpdate sets Set's columns on the rows matching Filter.
	OpUpdate = "update"
	// OpMerge is MERGE INTO the table USING the input, as Merge describes.
	OpMerge      = "merge"
	OpSnapshots  = "snapshots"
	OpDropTable  = "drop_table"
	OpListTables = "list_tables"
	OpTableInfo  = "table_info"
	OpScan       = "scan"
	// OpPanic panics on purpose; it exists only in builds with the test
	// hooks (core/testhooks) and runs only when the session has
	// test.hooks=true. Other builds reject it as an unknown operation.
	OpPanic = "__panic"

	// Ref operations (branches, tags, write-audit-publish); Ref names the
	// branch or tag, To the ref fast_forward moves it to.
	OpCreateBranch = "create_branch"
	OpCreateTag    = "create_tag"
	OpFastForward  = "fast_forward"
	OpRemoveBranch = "remove_branch"
	OpRemoveTag    = "remove_tag"
	// OpCherrypick applies snapshot SnapshotID onto main.
	OpCherrypick = "cherrypick"
	// OpPublish cherry-picks the staged snapshot whose wap.id is WapID.
	OpPublish = "publish"
	// OpRefs lists the table's branches and tags.
	OpRefs = "refs"
	// Spark's rollback procedures: main's current snapshot is set to
	// SnapshotID (an ancestor of main's head), to main's latest ancestor
	// older than AsOfTimestampMs, or to SnapshotID or Ref's snapshot
	// (set_current_snapshot, no ancestry required).
	OpRollbackToSnapshot  = "rollback_to_snapshot"
	OpRollbackToTimestamp = "rollback_to_timestamp"
	OpSetCurrentSnapshot  = "set_current_snapshot"

	// OpInspect reads metadata table MetadataTable (core/inspect); only
	// through pig_scan / pig_read, as OpScan.
	OpInspect = "inspect"

	// Table maintenance (core/maintenance), as Spark's procedures of the
	// same names.
	OpExpireSnapshots   = "expire_snapshots"
	OpRemoveOrphanFiles = "remove_orphan_files"
	OpRewriteManifests  = "rewrite_manifests"
	// OpRewriteDataFiles compacts data files as Rewrite describes
	// (core/rowlevel, compact.go).
	OpRewriteDataFiles = "rewrite_data_files"
	// OpRewritePositionDeleteFiles compacts position delete files (Spark's
	// rewrite_position_delete_files); Rewrite carries its where and
	// options (core/rowlevel, posdeletes.go).
	OpRewritePositionDeleteFiles = "rewrite_position_delete_files"

	// OpLastCommittedBatch reads the last batch Stream.QueryID committed
	// on the identifier's branch (main by default): core/stream.
	OpLastCommittedBatch = "last_committed_batch"

	// OpUpdateTable changes the table's metadata only (core/evolve):
	// schema, partition spec, sort order and properties, as Changes list
	// them, in one commit.
	OpUpdateTable = "update_table"
)

var ops = map[string]bool{
	OpCreate: true, OpReplace: true, OpCreateOrReplace: true, OpAppend: true,
	OpOverwritePartitions: true, OpOverwrite: true, OpDelete: true, OpUpdate: true, OpMerge: true,
	OpSnapshots: true, OpDropTable: true, OpListTables: true, OpTableInfo: true, OpScan: true, OpPanic: testhooks.Enabled,
	OpCreateBranch: true, OpCreateTag: true, OpFastForward: true, OpRemoveBranch: true, OpRemoveTag: true,
	OpCherrypick: true, OpPublish: true, OpRefs: true,
	OpRollbackToSnapshot: true, OpRollbackToTimestamp: true, OpSetCurrentSnapshot: true, OpInspect: true,
	OpExpireSnapshots: true, OpRemoveOrphanFiles: true, OpRewriteManifests: true, OpRewriteDataFiles: true,
	OpRewritePositionDeleteFiles: true, OpLastCommittedBatch: true, OpUpdateTable: true,
	OpCreateTable: true, OpRenameTable: true, OpCreateNamespace: true, OpSQL: true, OpSQLPlan: true, OpUse: true,
	OpWriteFiles: true, OpCommitFiles: true, OpAbortFiles: true, OpStreamOffset: true, OpChangelog: true,
}

// IsWrite reports whether op takes input data.
func IsWrite(op string) bool {
	switch op {
	case OpCreate, OpReplace, OpCreateOrReplace, OpAppend, OpOverwritePartitions, OpOverwrite, OpMerge:
		return true
	}
	return false
}

// PartitionField is one partitionedBy entry.
type PartitionField struct {
	Transform string `json:"transform"`
	Column    string `json:"column"`
}

// Request describes one operation.
type Request struct {
	Op          string            `json:"op"`
	Table       string            `json:"table"`
	Namespace   string            `json:"namespace,omitempty"`
	PartitionBy []PartitionField  `json:"partition_by,omitempty"`
	Properties  map[string]string `json:"properties,omitempty"`
	Location    string            `json:"location,omitempty"`
	Options     map[string]string `json:"options,omitempty"`
	SnapshotID  *int64            `json:"snapshot_id,omitempty"`
	Columns     []string          `json:"columns,omitempty"`
	// Filter is a Spark SQL boolean expression (overwrite, delete, update,
	// and the rows a scan returns).
	Filter string `json:"filter,omitempty"`
	// Set maps columns to the Spark SQL expressions update assigns them.
	Set map[string]string `json:"set,omitempty"`
	// Merge describes a merge.
	Merge *Merge `json:"merge,omitempty"`
	// SortOrder is the sort order of a created or replaced table, as Spark's
	// WRITE ORDERED BY terms ("id", "days(ts) DESC NULLS LAST").
	SortOrder []string `json:"sort_order,omitempty"`
	// Ref is the branch or tag a ref operation names, or a scan reads.
	Ref string `json:"ref,omitempty"`
	// AsOfTimestampMs (epoch milliseconds) makes a scan read the snapshot
	// that was main's current one then (Spark's as-of-timestamp); it is
	// the time rollback_to_timestamp rolls back to.
	AsOfTimestampMs *int64 `json:"as_of_timestamp_ms,omitempty"`
	// MetadataTable names the metadata table an inspect reads
	// (MetadataTables).
	MetadataTable string `json:"metadata_table,omitempty"`
	// To is the ref fast_forward moves Ref to.
	To string `json:"to,omitempty"`
	// WapID is the wap.id publish looks for.
	WapID string `json:"wap_id,omitempty"`
	// InputInMemory says the caller keeps every batch of the input stream
	// alive and unchanged until the call returns (a table it holds in
	// memory, not a stream it produces batch by batch): writers may then
	// keep the batches themselves until their row groups are complete
	// instead of the encoded pages.
	InputInMemory bool `json:"input_in_memory,omitempty"`

	// OlderThanMs is the cutoff (epoch milliseconds) of expire_snapshots
	// and remove_orphan_files.
	OlderThanMs *int64 `json:"older_than_ms,omitempty"`
	// RetainLast is expire_snapshots' minimum number of ancestors of each
	// branch to keep (at least 1).
	RetainLast *int `json:"retain_last,omitempty"`
	// SnapshotIDs are snapshots expire_snapshots expires in addition.
	SnapshotIDs []int64 `json:"snapshot_ids,omitempty"`
	// CleanExpiredMetadata also removes the partition specs and schemas no
	// remaining snapshot uses (expire_snapshots).
	CleanExpiredMetadata bool `json:"clean_expired_metadata,omitempty"`
	// DryRun lists orphan files without deleting them (remove_orphan_files).
	DryRun bool `json:"dry_run,omitempty"`
	// SpecID is the partition spec whose manifests rewrite_manifests
	// rewrites (default: the table's current spec).
	SpecID *int `json:"spec_id,omitempty"`
	// Rewrite holds rewrite_data_files' and rewrite_position_delete_files'
	// arguments.
	Rewrite *Rewrite `json:"rewrite,omitempty"`

	// StartSnapshotID (exclusive) and EndSnapshotID (inclusive; default
	// main's head) make a scan an incremental read of the rows the append
	// snapshots between them added (Spark's start-snapshot-id and
	// end-snapshot-id); an overwrite or delete snapshot in the range fails
	// it unless SkipOverwriteSnapshots / SkipDeleteSnapshots.
	StartSnapshotID        *int64 `json:"start_snapshot_id,omitempty"`
	EndSnapshotID          *int64 `json:"end_snapshot_id,omitempty"`
	SkipOverwriteSnapshots bool   `json:"skip_overwrite_snapshots,omitempty"`
	SkipDeleteSnapshots    bool   `json:"skip_delete_snapshots,omitempty"`

	// Stream makes a write one batch of a streaming query, committed
	// exactly once (append, overwritePartitions, overwrite); it names the
	// query last_committed_batch looks up.
	Stream *Stream `json:"stream,omitempty"`
	// MicroBatch makes a scan read one micro-batch of a table read as a
	// stream, and holds stream_offset's offsets and limits (microbatch.go).
	MicroBatch *MicroBatch `json:"micro_batch,omitempty"`
	// Changelog holds a changelog read's range and options (changelog.go).
	Changelog *Changelog `json:"changelog,omitempty"`

	// Changes are update_table's changes (see Change).
	Changes []Change `json:"changes,omitempty"`
	// AllowIncompatibleChanges lets update_table's schema changes make an
	// optional column required and add required columns (PyIceberg's
	// update_schema(allow_incompatible_changes=True)).
	AllowIncompatibleChanges bool `json:"allow_incompatible_changes,omitempty"`

	// Split makes a scan read one share of the files it plans (a
	// distributed read's task): those whose index, in file path order,
	// is Index modulo Count.
	Split *Split `json:"split,omitempty"`

	// Distributed is the part of a distributed write that write_files,
	// commit_files and abort_files run (distributed.go).
	Distributed *Distributed `json:"distributed,omitempty"`

	// DDL holds the catalog and DDL operations' fields (ddl.go).
	DDL
}

// Stream identifies a streaming query and, for writes, its batch.
type Stream struct {
	QueryID string `json:"query_id"`
	BatchID *int64 `json:"batch_id,omitempty"`
}

// validateStream checks Stream against the operation.
func (r *Request) validateStream() error {
	switch {
	case r.Op == OpLastCommittedBatch && r.Stream == nil:
		return fmt.Errorf("%w: last_committed_batch needs stream.query_id", errs.ErrInvalidArgument)
	case r.Stream == nil:
		return nil
	case r.Op != OpLastCommittedBatch && r.Op != OpAppend && r.Op != OpOverwritePartitions && r.Op != OpOverwrite:
		return fmt.Errorf("%w: operation %s takes no stream (append, overwritePartitions, overwrite, last_committed_batch)", errs.ErrInvalidArgument, r.Op)
	case strings.TrimSpace(r.Stream.QueryID) == "":
		return fmt.Errorf("%w: stream.query_id is empty", errs.ErrInvalidArgument)
	case r.Op == OpLastCommittedBatch && r.Stream.BatchID != nil:
		return fmt.Errorf("%w: last_committed_batch takes no stream.batch_id", errs.ErrInvalidArgument)
	case r.Op != OpLastCommittedBatch && r.Stream.BatchID == nil:
		return fmt.Errorf("%w: a streaming %s needs stream.batch_id", errs.ErrInvalidArgument, r.Op)
	case r.Stream.BatchID != nil && *r.Stream.BatchID < 0:
		return fmt.Errorf("%w: stream.batch_id %d is negative", errs.ErrInvalidArgument, *r.Stream.BatchID)
	}
	return nil
}

// Split is the share of a scan's files one task of a distributed read reads.
type Split struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Rewrite is the arguments of Spark's rewrite_data_files procedure:
// strategy (binpack, the default, or sort), sort_order in Spark's text
// ("a ASC NULLS FIRST, b DESC"; sort only), where (a filter selecting the
// files to consider) and the procedure's options, which the compaction
// itself checks (core/rowlevel).
type Rewrite struct {
	Strategy  string            `json:"strategy,omitempty"`
	SortOrder string            `json:"sort_order,omitempty"`
	Where     string            `json:"where,omitempty"`
	Options   map[string]string `json:"options,omitempty"`
}

// Rewrite strategies.
const (
	StrategyBinpack = "binpack"
	StrategySort    = "sort"
)

// Merge is MERGE INTO's ON condition and WHEN clauses.
type Merge struct {
	On string `json:"on"`
	// SourceAlias and TargetAlias qualify columns in addition to "source"
	// and "target" (and the table's name).
	SourceAlias string        `json:"source_alias,omitempty"`
	TargetAlias string        `json:"target_alias,omitempty"`
	Clauses     []MergeClause `json:"clauses"`
	// SchemaEvolution adds the source's new columns to the target.
	SchemaEvolution bool `json:"schema_evolution,omitempty"`
}

// Merge clause kinds and actions.
const (
	WhenMatched            = "matched"
	WhenNotMatched         = "not_matched"
	WhenNotMatchedBySource = "not_matched_by_source"

	ActionUpdate    = "update"
	ActionUpdateAll = "update_all"
	ActionDelete    = "delete"
	ActionInsert    = "insert"
	ActionInsertAll = "insert_all"
)

// MergeClause is one WHEN clause: its kind, optional condition and action;
// Set holds update assignments or insert values (column -> expression).
type MergeClause struct {
	When      string            `json:"when"`
	Condition string            `json:"condition,omitempty"`
	Action    string            `json:"action"`
	Set       map[string]string `json:"set,omitempty"`
}

var mergeActions = map[string]map[string]bool{
	WhenMatched:            {ActionUpdate: true, ActionUpdateAll: true, ActionDelete: true},
	WhenNotMatched:         {ActionInsert: true, ActionInsertAll: true},
	WhenNotMatchedBySource: {ActionUpdate: true, ActionDelete: true},
}

func (m *Merge) validate() error {
	if strings.TrimSpace(m.On) == "" {
		return fmt.Errorf("%w: merge needs an ON condition", errs.ErrInvalidArgument)
	}
	if len(m.Clauses) == 0 {
		return fmt.Errorf("%w: merge needs at least one WHEN clause", errs.ErrInvalidArgument)
	}
	for i, c := range m.Clauses {
		acts, ok := mergeActions[c.When]
		if !ok {
			return fmt.Errorf("%w: merge clause %d: unknown kind %q (matched, not_matched, not_matched_by_source)", errs.ErrInvalidArgument, i, c.When)
		}
		if !acts[c.Action] {
			return fmt.Errorf("%w: merge clause %d: WHEN %s cannot %s", errs.ErrInvalidArgument, i, strings.ToUpper(strings.ReplaceAll(c.When, "_", " ")), c.Action)
		}
		needsSet := c.Action == ActionUpdate || c.Action == ActionInsert
		if needsSet != (len(c.Set) > 0) {
			if needsSet {
				return fmt.Errorf("%w: merge clause %d: %s needs at least one column", errs.ErrInvalidArgument, i, c.Action)
			}
			return fmt.Errorf("%w: merge clause %d: %s takes no columns", errs.ErrInvalidArgument, i, c.Action)
		}
	}
	return nil
}

// IsRowLevel reports whether op changes existing rows of a table.
func IsRowLevel(op string) bool {
	switch op {
	case OpOverwritePartitions, OpOverwrite, OpDelete, OpUpdate, OpMerge, OpRewriteDataFiles, OpRewritePositionDeleteFiles:
		return true
	}
	return false
}

var transformRe = regexp.MustCompile(`^(identity|year|month|day|hour|void|bucket\[(\d+)\]|truncate\[(\d+)\])$`)

// checkTransform checks a partition transform's text.
func checkTransform(tr string) error {
	m := transformRe.FindStringSubmatch(tr)
	if m == nil {
		return fmt.Errorf("%w: unknown transform %q (identity, year, month, day, hour, bucket[N], truncate[W], void)", errs.ErrInvalidArgument, tr)
	}
	for _, n := range m[2:] {
		if n != "" {
			if v, err := strconv.Atoi(n); err != nil || v <= 0 || v > math.MaxInt32 {
				return fmt.Errorf("%w: %s needs a width from 1 to %d", errs.ErrInvalidArgument, tr, math.MaxInt32)
			}
		}
	}
	return nil
}

// Decode parses and validates a request document.
func Decode(doc []byte) (*Request, error) { return decode(doc, "") }

// DecodeScan parses a read document (pig_scan, pig_read): a scan, whose
// op may be left out, or an inspect.
func DecodeScan(doc []byte) (*Request, error) {
	r, err := decode(doc, OpScan)
	if err == nil && r.Op != OpScan && r.Op != OpInspect && r.Op != OpChangelog {
		return nil, fmt.Errorf("%w: a scan document cannot carry op %q (scan, inspect or changelog)", errs.ErrInvalidArgument, r.Op)
	}
	return r, err
}

// MetadataTables lists the metadata tables an inspect reads, as Spark
// names them (db.t.snapshots, ...).
var MetadataTables = []string{
	"snapshots", "history", "refs", "metadata_log_entries", "manifests", "all_manifests",
	"files", "data_files", "delete_files", "all_files", "all_data_files", "all_delete_files",
	"entries", "all_entries", "partitions",
}

// validateRead checks the time-travel keys of a scan and the keys of an
// inspect.
func (r *Request) validateRead() error {
	n := 0
	for _, set := range []bool{r.SnapshotID != nil, r.AsOfTimestampMs != nil, r.Ref != ""} {
		if set {
			n++
		}
	}
	switch r.Op {
	case OpScan:
		if n > 1 {
			return fmt.Errorf("%w: a scan reads at most one of snapshot_id, as_of_timestamp_ms and ref", errs.ErrInvalidArgument)
		}
		if r.Ref != "" && strings.TrimSpace(r.Ref) == "" {
			return fmt.Errorf("%w: scan: empty ref", errs.ErrInvalidArgument)
		}
	case OpInspect:
		if !slices.Contains(MetadataTables, r.MetadataTable) {
			return fmt.Errorf("%w: unknown metadata table %q (%s)", errs.ErrInvalidArgument, r.MetadataTable, strings.Join(MetadataTables, ", "))
		}
		if r.AsOfTimestampMs != nil || r.Ref != "" || len(r.Columns) > 0 {
			return fmt.Errorf("%w: inspect takes metadata_table and snapshot_id only", errs.ErrInvalidArgument)
		}
	}
	incremental := r.StartSnapshotID != nil || r.EndSnapshotID != nil || r.SkipOverwriteSnapshots || r.SkipDeleteSnapshots
	switch {
	case incremental && r.Op != OpScan:
		return fmt.Errorf("%w: operation %s takes no start_snapshot_id, end_snapshot_id or skip_*_snapshots", errs.ErrInvalidArgument, r.Op)
	case !incremental:
	case n > 0:
		// Spark's SparkScanBuilder.
		return fmt.Errorf("%w: Cannot set start-snapshot-id and end-snapshot-id for incremental scans when either snapshot-id or as-of-timestamp is set", errs.ErrInvalidArgument)
	case r.StartSnapshotID == nil && r.EndSnapshotID != nil:
		//lint:ignore ST1005 Spark's message, word for word
		return fmt.Errorf("%w: Cannot set only `end-snapshot-id` for incremental scans. Please, set `start-snapshot-id` too.", errs.ErrInvalidArgument)
	case r.StartSnapshotID == nil:
		return fmt.Errorf("%w: skip_overwrite_snapshots and skip_delete_snapshots apply to incremental scans (start_snapshot_id)", errs.ErrInvalidArgument)
	}
	if r.Split != nil && (r.Op != OpScan || r.Split.Count < 1 || r.Split.Index < 0 || r.Split.Index >= r.Split.Count) {
		return fmt.Errorf("%w: split is a scan's {index, count} with count >= 1 and 0 <= index < count", errs.ErrInvalidArgument)
	}
	if r.MetadataTable != "" && r.Op != OpInspect {
		return fmt.Errorf("%w: operation %s takes no metadata_table", errs.ErrInvalidArgument, r.Op)
	}
	if r.AsOfTimestampMs != nil && r.Op != OpScan && r.Op != OpRollbackToTimestamp {
		return fmt.Errorf("%w: operation %s takes no as_of_timestamp_ms", errs.ErrInvalidArgument, r.Op)
	}
	return nil
}

func decode(doc []byte, defaultOp string) (*Request, error) {
	var r Request
	if err := Strict(doc, &r); err != nil {
		return nil, fmt.Errorf("request document: %w", err)
	}
	if r.Op == "" {
		r.Op = defaultOp
	}
	if !ops[r.Op] {
		return nil, fmt.Errorf("%w: unknown operation %q", errs.ErrInvalidArgument, r.Op)
	}
	inner, err := r.validateDistributed()
	if err != nil {
		return nil, err
	}
	if inner != nil {
		// A part of a distributed write carries the keys of its mode's
		// request, checked as that request's.
		if err := inner.validate(); err != nil {
			return nil, fmt.Errorf("%s (mode %s): %w", r.Op, inner.Op, err)
		}
		return &r, nil
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// validate checks the request's keys against its operation.
func (r *Request) validate() error {
	if (r.Op == OpCreateNamespace || r.Op == OpSQL || r.Op == OpSQLPlan || r.Op == OpUse) && r.Table != "" {
		return fmt.Errorf("%w: operation %s takes no table", errs.ErrInvalidArgument, r.Op)
	}
	if !NoTable(r.Op) && r.Table == "" {
		return fmt.Errorf("%w: operation %s needs a table identifier", errs.ErrInvalidArgument, r.Op)
	}
	for i, pf := range r.PartitionBy {
		if err := checkTransform(pf.Transform); err != nil {
			return fmt.Errorf("partition_by[%d]: %w", i, err)
		}
		if strings.TrimSpace(pf.Column) == "" {
			return fmt.Errorf("%w: partition_by[%d]: missing column", errs.ErrInvalidArgument, i)
		}
	}
	if len(r.PartitionBy) > 0 && (r.Op == OpAppend || IsRowLevel(r.Op)) {
		return fmt.Errorf("%w: partitionedBy applies to create/replace only; %s uses the table's spec", errs.ErrInvalidArgument, r.Op)
	}
	switch {
	case (r.Op == OpOverwrite || r.Op == OpDelete) && strings.TrimSpace(r.Filter) == "":
		return fmt.Errorf("%w: %s needs a filter (use \"true\" for every row)", errs.ErrInvalidArgument, r.Op)
	case r.Op == OpUpdate && len(r.Set) == 0:
		return fmt.Errorf("%w: update needs at least one column to set", errs.ErrInvalidArgument)
	case r.Filter != "" && r.Op != OpOverwrite && r.Op != OpDelete && r.Op != OpUpdate && r.Op != OpScan:
		return fmt.Errorf("%w: operation %s takes no filter", errs.ErrInvalidArgument, r.Op)
	case len(r.Set) > 0 && r.Op != OpUpdate:
		return fmt.Errorf("%w: operation %s takes no set", errs.ErrInvalidArgument, r.Op)
	case r.Op == OpMerge && r.Merge == nil:
		return fmt.Errorf("%w: merge needs its ON condition and clauses", errs.ErrInvalidArgument)
	case r.Op != OpMerge && r.Merge != nil:
		return fmt.Errorf("%w: operation %s takes no merge clauses", errs.ErrInvalidArgument, r.Op)
	}
	if r.Merge != nil {
		if err := r.Merge.validate(); err != nil {
			return err
		}
	}
	if err := r.validateRefOp(); err != nil {
		return err
	}
	if err := r.validateRead(); err != nil {
		return err
	}
	if err := r.validateMaintenance(); err != nil {
		return err
	}
	if err := r.validateChangelog(); err != nil {
		return err
	}
	if err := r.validateMicroBatch(); err != nil {
		return err
	}
	if err := r.validateStream(); err != nil {
		return err
	}
	if err := r.validateChanges(); err != nil {
		return err
	}
	if err := r.validateDDL(); err != nil {
		return err
	}
	return nil
}

// Identifier is a parsed [catalog.]namespace.table.
type Identifier struct {
	Catalog   string
	Namespace []string
	Name      string
}

func (id Identifier) String() string {
	return id.Catalog + "." + strings.Join(id.Namespace, ".") + "." + id.Name
}

// ParseIdentifier splits s; its first part is the catalog when it names one
// of catalogs, else the default catalog is used.
func ParseIdentifier(s string, catalogs map[string]bool, defaultCatalog string) (Identifier, error) {
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if strings.TrimSpace(p) == "" || p != strings.TrimSpace(p) {
			return Identifier{}, fmt.Errorf("%w: malformed table identifier %q: empty or padded part (expected [catalog.]namespace.table)", errs.ErrInvalidArgument, s)
		}
	}
	id := Identifier{Catalog: defaultCatalog}
	if len(parts) >= 3 && catalogs[strings.ToLower(parts[0])] {
		id.Catalog = strings.ToLower(parts[0])
		parts = parts[1:]
	}
	if len(parts) < 2 {
		return Identifier{}, fmt.Errorf("%w: malformed table identifier %q: expected [catalog.]namespace.table", errs.ErrInvalidArgument, s)
	}
	id.Namespace = parts[:len(parts)-1]
	id.Name = parts[len(parts)-1]
	return id, nil
}

// validateRefOp checks the fields of the ref operations.
func (r *Request) validateRefOp() error {
	need := map[string]bool{}
	switch r.Op {
	case OpCreateBranch, OpCreateTag, OpRemoveBranch, OpRemoveTag:
		need["ref"] = true
	case OpFastForward:
		need["ref"], need["to"] = true, true
	case OpCherrypick:
		if r.SnapshotID == nil {
			return fmt.Errorf("%w: cherrypick needs snapshot_id", errs.ErrInvalidArgument)
		}
	case OpPublish:
		need["wap_id"] = true
	case OpRollbackToSnapshot:
		if r.SnapshotID == nil {
			return fmt.Errorf("%w: rollback_to_snapshot needs snapshot_id", errs.ErrInvalidArgument)
		}
	case OpRollbackToTimestamp:
		if r.AsOfTimestampMs == nil {
			return fmt.Errorf("%w: rollback_to_timestamp needs as_of_timestamp_ms", errs.ErrInvalidArgument)
		}
	case OpSetCurrentSnapshot:
		// Spark's SetCurrentSnapshotProcedure.
		if (r.SnapshotID == nil) == (r.Ref == "") {
			return fmt.Errorf("%w: Either snapshot_id or ref must be provided, not both", errs.ErrInvalidArgument)
		}
	}
	mayRef := r.Op == OpScan || r.Op == OpSetCurrentSnapshot
	for _, f := range []struct{ name, v string }{{"ref", r.Ref}, {"to", r.To}, {"wap_id", r.WapID}} {
		switch {
		case need[f.name] && strings.TrimSpace(f.v) == "":
			return fmt.Errorf("%w: %s needs %s", errs.ErrInvalidArgument, r.Op, f.name)
		case !need[f.name] && f.v != "" && !(f.name == "ref" && mayRef):
			return fmt.Errorf("%w: operation %s takes no %s", errs.ErrInvalidArgument, r.Op, f.name)
		}
	}
	return nil
}

// validateMaintenance checks the fields of expire_snapshots,
// remove_orphan_files and rewrite_manifests and that no other operation
// carries them.
func (r *Request) validateMaintenance() error {
	expire, orphans, manifests := r.Op == OpExpireSnapshots, r.Op == OpRemoveOrphanFiles, r.Op == OpRewriteManifests
	for _, f := range []struct {
		name     string
		set, may bool
	}{
		{"older_than_ms", r.OlderThanMs != nil, expire || orphans},
		{"retain_last", r.RetainLast != nil, expire},
		{"snapshot_ids", r.SnapshotIDs != nil, expire},
		{"clean_expired_metadata", r.CleanExpiredMetadata, expire},
		{"dry_run", r.DryRun, orphans},
		{"spec_id", r.SpecID != nil, manifests},
	} {
		if f.set && !f.may {
			return fmt.Errorf("%w: operation %s takes no %s", errs.ErrInvalidArgument, r.Op, f.name)
		}
	}
	if (expire || orphans || manifests) && r.SnapshotID != nil {
		return fmt.Errorf("%w: operation %s takes no snapshot_id", errs.ErrInvalidArgument, r.Op)
	}
	if (expire || manifests) && r.Location != "" {
		return fmt.Errorf("%w: operation %s takes no location", errs.ErrInvalidArgument, r.Op)
	}
	if err := r.validateRewrite(); err != nil {
		return err
	}
	if r.RetainLast != nil && *r.RetainLast < 1 {
		// Java's RemoveSnapshots.retainLast.
		return fmt.Errorf("%w: Number of snapshots to retain must be at least 1, cannot be: %d", errs.ErrInvalidArgument, *r.RetainLast)
	}
	return nil
}

// validateRewrite checks the arguments of rewrite_data_files (the
// strategy, defaulting to sort when a sort order is given, else binpack,
// as Spark's procedure) and rewrite_position_delete_files (where and
// options only), and that only they carry them.
func (r *Request) validateRewrite() error {
	if r.Op != OpRewriteDataFiles && r.Op != OpRewritePositionDeleteFiles {
		if r.Rewrite != nil {
			return fmt.Errorf("%w: operation %s takes no rewrite", errs.ErrInvalidArgument, r.Op)
		}
		return nil
	}
	if r.SnapshotID != nil || r.Location != "" || len(r.Options) > 0 || len(r.SortOrder) > 0 {
		return fmt.Errorf("%w: %s takes its options, sort order and filter in rewrite", errs.ErrInvalidArgument, r.Op)
	}
	if r.Rewrite == nil {
		r.Rewrite = &Rewrite{}
	}
	rw := r.Rewrite
	if r.Op == OpRewritePositionDeleteFiles {
		// Spark's procedure takes table, where and options only.
		if rw.Strategy != "" || rw.SortOrder != "" {
			return fmt.Errorf("%w: rewrite_position_delete_files takes no strategy or sort_order (only where and options)", errs.ErrInvalidArgument)
		}
		return nil
	}
	switch s := strings.ToLower(strings.TrimSpace(rw.Strategy)); s {
	case "":
		rw.Strategy = StrategyBinpack
		if strings.TrimSpace(rw.SortOrder) != "" {
			rw.Strategy = StrategySort
		}
	case StrategyBinpack, StrategySort:
		rw.Strategy = s
	default:
		return fmt.Errorf("%w: unsupported strategy: %s. Only binpack or sort is supported", errs.ErrInvalidArgument, rw.Strategy)
	}
	if rw.Strategy == StrategyBinpack && strings.TrimSpace(rw.SortOrder) != "" {
		return fmt.Errorf("%w: rewrite_data_files: sort_order %q needs strategy sort, not binpack", errs.ErrInvalidArgument, rw.SortOrder)
	}
	return nil
}

// Ops lists the operations Decode accepts.
func Ops() []string {
	out := make([]string, 0, len(ops))
	for op := range ops {
		out = append(out, op)
	}
	return out
}
