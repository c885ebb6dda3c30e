// Package write is the append, create and replace write path: planning a
// write against the table (Plan: schema, spec, options, layout; a schema
// change committed with the data), distributing the input to partition
// writers and writing data files (distribute.go), streaming batches
// through a rewrite (stream.go), and committing the files: append with a
// rebase of the staged snapshot on retries (rebase.go), create and replace
// in one catalog commit. Writer carries one operation; core/rowlevel
// reuses it to write the files of its changes.
//
// It does not hold row-level changes (core/rowlevel), refs and WAP
// (core/refs), nor the commit staging shared by every path (core/stage).
package write

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/layout"
	"github.com/pyiceberg-go/pyiceberg-go/core/parquet"
	"github.com/pyiceberg-go/pyiceberg-go/core/paths"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/schema"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
	"github.com/pyiceberg-go/pyiceberg-go/core/stream"
)

// Writer runs one write operation.
type Writer struct {
	// Committer is the table and branch the write commits to.
	stage.Committer
	Sess  *session.Session
	Req   *request.Request
	Input array.RecordReader
	Prog  *report.Progress
	Start time.Time
	// staged is an append's snapshot kept across commit attempts
	// (rebase.go); nil until an attempt staged one that can be rebased.
	staged *stagedAppend

	// A distributed write (twophase.go): WriteID names it (a commit
	// fails on a table where it is committed); Naming names a task's
	// files; Prewritten are the files the coordinator commits.
	WriteID    string
	Naming     *FileNaming
	Prewritten *Prewritten
}

// Plan is the table shape the data is written against.
type Plan struct {
	Schema   *iceberg.Schema // as the table will hold it (final ids)
	Spec     iceberg.PartitionSpec
	Location string
	Props    map[string]string
	Eff      Effective
	// shape is the table a create or replace asks for; nil for append.
	shape *shape
	// layout is how rows are distributed over files; sorter (nil for an
	// unsorted table) orders each file by the table's sort order.
	layout layout.Settings
	sorter *layout.Sorter
	// foreignOrder: sorter's order is not one of the table's (a
	// compaction's own), so files record sort order 0.
	foreignOrder bool
	// order is the table's sort order the write is planned with.
	order table.SortOrder

	// evolution is a schema change committed with the data (merge's
	// withSchemaEvolution); schema is then the evolved schema.
	Evolution *Evolution

	// The dictionary decision is made once per operation (from its first
	// partitioned batch) and shared by every file it writes: rewrites
	// write many files and the decision costs a pass over a sample.
	// So is the choice of columns stored uncompressed (incompressible).
	dictMu   sync.Mutex
	dictDone bool
	noDict   []string
	raw      []string
	dictErr  error
}

// Evolution is a schema change committed in the same commit as the data.
type Evolution struct {
	From   int             // the schema id it applies to
	Schema *iceberg.Schema // the new schema, with its final field ids
}

// evolve returns base with p's schema change applied, the updates that do
// it and the requirement that the change still applies; base unchanged and
// nothing when p changes no schema.
func (p *Plan) evolve(base table.Metadata) (table.Metadata, []table.Update, []table.Requirement, error) {
	if p.Evolution == nil {
		return base, nil, nil, nil
	}
	ups := []table.Update{table.NewAddSchemaUpdate(p.Evolution.Schema), table.NewSetCurrentSchemaUpdate(-1)}
	nb, err := table.UpdateTableMetadata(base, ups, "")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: evolving the schema: %v", errs.ErrValidation, err)
	}
	// As Java's UpdateRequirements for an added schema: the last column id
	// it was numbered from still holds.
	reqs := []table.Requirement{table.AssertCurrentSchemaID(p.Evolution.From), table.AssertLastAssignedFieldID(base.LastColumnID())}
	return nb, ups, reqs, nil
}

// decideDictionary returns the columns written without a dictionary and
// those stored uncompressed, deciding on the operation's first sample;
// both nil when the sample is too small to judge.
func (p *Plan) decideDictionary(o parquet.Options, sample arrow.RecordBatch) (noDict, raw []string, err error) {
	p.dictMu.Lock()
	defer p.dictMu.Unlock()
	if p.dictDone {
		return p.noDict, p.raw, p.dictErr
	}
	if sample.NumRows() < dictSampleRows {
		// Too few rows to judge cardinality: undecided (nil), so a later,
		// larger batch decides rather than this one latching "dictionary
		// everywhere".
		return nil, nil, nil
	}
	d, err := o.DecideDictionary(sample)
	p.noDict, p.raw, p.dictErr, p.dictDone = d.NoDictionary, d.Incompressible, err, true
	return p.noDict, p.raw, p.dictErr
}

// dictionaryDecided reports whether the operation's dictionary decision
// is made.
func (p *Plan) dictionaryDecided() bool {
	p.dictMu.Lock()
	defer p.dictMu.Unlock()
	return p.dictDone
}

// dictSampleRows is the smallest batch the dictionary decision is made on.
const dictSampleRows = 8192

// shape is the schema, spec, properties and location of a new or replaced
// table, before the metadata builder gives them ids.
type shape struct {
	schema   *iceberg.Schema
	spec     iceberg.PartitionSpec
	order    table.SortOrder
	props    map[string]string
	location string
}

// Written is the output of the data path.
type Written struct {
	Files []WrittenFile
	Paths []string
	Rows  int64
	Bytes int64
}

// WrittenFile is a data file and its partition tuple.
type WrittenFile struct {
	File   parquet.File
	Values map[int]any
	// sortOrderID is the sort order the file's rows are in (0: unsorted).
	SortOrderID int
}

// dataFiles describes the files for a commit on base. v3 tables need each
// file's first row id, which depends on the base a (re)try commits on.
func (wr Written) dataFiles(spec iceberg.PartitionSpec, base table.Metadata) ([]iceberg.DataFile, error) {
	out := make([]iceberg.DataFile, 0, len(wr.Files))
	next := base.NextRowID()
	for _, wf := range wr.Files {
		var first *int64
		if base.Version() >= 3 {
			id := next
			first = &id
			next += wf.File.Rows
		}
		df, err := dataFile(spec, wf, first)
		if err != nil {
			return nil, err
		}
		out = append(out, df)
	}
	return out, nil
}

// New returns the writer of one operation req on table id of catalog cat,
// reading input (nil for an operation without data).
func New(s *session.Session, cat *catalog.Catalog, id request.Identifier, req *request.Request, input array.RecordReader, prog *report.Progress) *Writer {
	return &Writer{Committer: stage.Committer{Cat: cat, ID: id, Ident: catalog.TableIdent(id)}, Sess: s, Req: req, Input: input, Prog: prog, Start: time.Now()}
}

// Prepare loads the table (nil when a create finds none) and plans the
// write against it; op is the request's operation with createOrReplace
// resolved to create or replace.
func (w *Writer) Prepare(ctx context.Context) (op string, existing *table.Table, p *Plan, err error) {
	op = w.Req.Op
	t, err := w.Cat.LoadTable(ctx, w.Ident)
	switch {
	case err == nil:
		existing = t
	case errors.Is(err, icecat.ErrNoSuchTable):
	default:
		return "", nil, nil, catalog.MapErr(err, w.ID)
	}
	switch {
	case op == request.OpCreate && existing != nil:
		return "", nil, nil, fmt.Errorf("%w: table %s already exists", errs.ErrTableAlreadyExists, w.ID)
	case op != request.OpCreate && op != request.OpCreateOrReplace && existing == nil:
		return "", nil, nil, fmt.Errorf("%w: table %s does not exist", errs.ErrNoSuchTable, w.ID)
	case op == request.OpCreateOrReplace:
		op = request.OpCreate
		if existing != nil {
			op = request.OpReplace
		}
	}
	switch op {
	case request.OpCreate, request.OpReplace:
		p, err = w.planNew(ctx, existing)
	default:
		p, err = w.planAppend(existing)
	}
	if err != nil {
		return "", nil, nil, err
	}
	return op, existing, p, nil
}

// Write writes the input and commits it by op: append, create or replace.
func (w *Writer) Write(ctx context.Context, op string, p *Plan) (*report.Result, error) {
	wr, err := w.WriteData(ctx, p, w.Input)
	if err != nil {
		return nil, err
	}
	retry, err := w.RetryPolicy(p.Props)
	if err != nil {
		w.DeleteFiles(ctx, p, wr.Paths)
		return nil, err
	}
	var committed *table.Table
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		var err error
		switch op {
		case request.OpAppend:
			committed, err = w.commitAppend(ctx, p, wr)
		case request.OpCreate:
			committed, err = w.commitCreate(ctx, p, wr)
		case request.OpReplace:
			committed, err = w.commitReplace(ctx, p, wr)
		}
		return err
	})
	if err != nil {
		return nil, w.Failed(ctx, op, p, wr, err)
	}
	return w.Result(committed, wr, len(wr.Files) > 0), nil
}

// Failed cleans up after the failed commit of op's files wr and returns
// the error to report.
func (w *Writer) Failed(ctx context.Context, op string, p *Plan, wr Written, err error) error {
	// A commit whose outcome is unknown may have landed: keep its files.
	if !errors.Is(err, errs.ErrCommitStateUnknown) {
		w.DeleteFiles(ctx, p, wr.Paths)
		w.dropStaged(ctx, p)
	}
	if errors.Is(err, icecat.ErrTableAlreadyExists) {
		return fmt.Errorf("%w: table %s already exists", errs.ErrTableAlreadyExists, w.ID)
	}
	// A create that lost a race can fail with the catalog's own error
	// (a unique-key violation on SQL): name what happened.
	if op == request.OpCreate && !errors.Is(err, errs.ErrCommitStateUnknown) {
		if ok, cerr := w.Cat.CheckTableExists(context.WithoutCancel(ctx), w.Ident); cerr == nil && ok {
			return fmt.Errorf("%w: table %s was created concurrently", errs.ErrTableAlreadyExists, w.ID)
		}
	}
	return catalog.MapErr(err, w.ID)
}

// StartSnapshot is the snapshot isolation checks start from: the write
// option validate-from-snapshot-id, else the target branch's head when the
// operation began.
func (w *Writer) StartSnapshot(t *table.Table, p *Plan) (*table.Snapshot, error) {
	if id := p.Eff.ValidateFrom; id != nil {
		sn := t.Metadata().SnapshotByID(*id)
		if sn == nil {
			return nil, fmt.Errorf("%w: validate-from-snapshot-id %d is not a snapshot of %s", errs.ErrInvalidArgument, *id, w.ID)
		}
		return sn, nil
	}
	return w.Head(t.Metadata()), nil
}

// Result describes a finished write; committed says whether it made a
// snapshot.
func (w *Writer) Result(t *table.Table, wr Written, committed bool) *report.Result {
	res := &report.Result{Table: w.ID.String(), Metrics: report.Metrics{Rows: wr.Rows, Files: int64(len(wr.Files)), Bytes: wr.Bytes, Seconds: time.Since(w.Start).Seconds()}}
	if sn := w.Committed(t); sn != nil && committed {
		id := sn.SnapshotID
		res.SnapshotID = &id
		res.Operation, res.Summary = report.SnapshotSummary(sn)
	}
	return res
}

// tableProps builds the properties of a new or replaced table: defaults,
// catalog table-default.*, the request's, then catalog table-override.*.
func (w *Writer) tableProps(existing map[string]string) map[string]string {
	props := map[string]string{"write.parquet.compression-codec": "zstd"}
	for k, v := range w.Cat.Props {
		if d, ok := strings.CutPrefix(k, "table-default."); ok {
			props[d] = v
		}
	}
	if existing != nil {
		// REPLACE merges properties: none removed, new ones win.
		props = maps.Clone(existing)
	}
	maps.Copy(props, w.Req.Properties)
	for k, v := range w.Cat.Props {
		if o, ok := strings.CutPrefix(k, "table-override."); ok {
			props[o] = v
		}
	}
	return props
}

func (w *Writer) planNew(ctx context.Context, existing *table.Table) (*Plan, error) {
	sc, err := w.newSchema()
	if err != nil {
		return nil, err
	}
	var oldProps map[string]string
	if existing != nil {
		if sc, err = schema.ReuseIDsAbove(sc, existing.Metadata().CurrentSchema(), existing.Metadata().LastColumnID()); err != nil {
			return nil, err
		}
		oldProps = existing.Metadata().Properties()
	}
	spec, err := buildSpec(sc, w.Req.PartitionBy, existing)
	if err != nil {
		return nil, err
	}
	order, err := layout.ParseOrder(w.Req.SortOrder, sc)
	if err != nil {
		return nil, err
	}
	props := w.tableProps(oldProps)
	fv, err := FormatVersion(props)
	if err != nil {
		return nil, err
	}
	if fv == 1 && existing == nil && w.Input != nil && !w.Cat.IsREST() {
		// A create by commit starts from iceberg-go's v2 placeholder
		// metadata, which cannot be downgraded; create_table (no data)
		// creates through the catalog instead.
		return nil, fmt.Errorf("%w: creating a format-version 1 table with data on the %s catalog: create it empty first (ig.sql(\"CREATE TABLE ... TBLPROPERTIES ('format-version' = '1')\")), then append",
			errs.ErrNotSupported, w.ID.Catalog)
	}
	loc := w.Req.Location
	if loc == "" && existing != nil {
		loc = existing.Metadata().Location()
	}
	if loc == "" {
		if loc, err = w.defaultLocation(ctx); err != nil {
			return nil, err
		}
	}
	loc = strings.TrimSuffix(loc, "/")
	sh := &shape{schema: sc, spec: spec, order: order, props: props, location: loc}
	var old table.Metadata
	oldLoc := ""
	if existing != nil {
		old, oldLoc = existing.Metadata(), existing.MetadataLocation()
	}
	base, _, err := sh.stage(old, oldLoc)
	if err != nil {
		return nil, err
	}
	return w.withOptions(&Plan{Schema: base.CurrentSchema(), Spec: base.PartitionSpec(), Location: loc, Props: props, shape: sh}, base.SortOrder())
}

// stage returns the metadata that old (nil: nothing) becomes with the
// shape applied, and the updates that do it: what CREATE/REPLACE TABLE
// commits before the data's snapshot.
func (s *shape) stage(old table.Metadata, oldLoc string) (table.Metadata, []table.Update, error) {
	fv, err := FormatVersion(s.props)
	if err != nil {
		return nil, nil, err
	}
	props := maps.Clone(s.props)
	delete(props, "format-version")
	// The metadata builder stamps ids into what it is given: hand it copies.
	sc := iceberg.NewSchemaWithIdentifiers(0, s.schema.IdentifierFieldIDs, s.schema.Fields()...)
	spec := s.spec
	var updates []table.Update
	if old == nil {
		updates = append(updates, table.NewAssignUUIDUpdate(uuid.New()), table.NewUpgradeFormatVersionUpdate(fv))
	} else if fv > old.Version() {
		updates = append(updates, table.NewUpgradeFormatVersionUpdate(fv))
	}
	updates = append(updates, table.NewAddSchemaUpdate(sc), table.NewSetCurrentSchemaUpdate(-1))
	if old == nil {
		// A create-via-commit starts from a metadata holding an empty schema
		// 0; drop it so the table lists only its real schema.
		updates = append(updates, table.NewRemoveSchemasUpdate([]int{0}))
	}
	if id, ok := sameSpec(old, spec); ok {
		updates = append(updates, table.NewSetDefaultSpecUpdate(id))
	} else {
		updates = append(updates, table.NewAddPartitionSpecUpdate(&spec, old == nil), table.NewSetDefaultSpecUpdate(-1))
	}
	order := s.order
	if order.Len() == 0 {
		order = table.UnsortedSortOrder
	}
	updates = append(updates, table.NewAddSortOrderUpdate(&order), table.NewSetDefaultSortOrderUpdate(-1))
	if old == nil || s.location != old.Location() {
		updates = append(updates, table.NewSetLocationUpdate(s.location))
	}
	if len(props) > 0 {
		updates = append(updates, table.NewSetPropertiesUpdate(props))
	}
	if old != nil {
		if old.SnapshotByName(table.MainBranch) != nil {
			// REPLACE resets main: the new data's snapshot has no parent.
			updates = append(updates, table.NewRemoveSnapshotRefUpdate(table.MainBranch))
		}
	} else {
		empty, err := table.NewMetadata(iceberg.NewSchema(0), nil, table.UnsortedSortOrder, "", iceberg.Properties{"format-version": strconv.Itoa(fv)})
		if err != nil {
			return nil, nil, err
		}
		old = empty
	}
	base, err := table.UpdateTableMetadata(old, updates, oldLoc)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: building table metadata: %v", errs.ErrValidation, err)
	}
	return base, updates, nil
}

// sameSpec finds a spec of old with exactly spec's fields.
func sameSpec(old table.Metadata, spec iceberg.PartitionSpec) (int, bool) {
	if old == nil {
		return 0, false
	}
	for _, sp := range old.PartitionSpecs() {
		if sp.NumFields() != spec.NumFields() {
			continue
		}
		same := true
		for i := range sp.NumFields() {
			a, b := sp.Field(i), spec.Field(i)
			same = same && a.FieldID == b.FieldID && a.Name == b.Name && a.Transform.String() == b.Transform.String() &&
				slices.Equal(a.SourceIDs, b.SourceIDs)
		}
		if same {
			return sp.ID(), true
		}
	}
	return 0, false
}

// sameShape makes a retried create/replace fail cleanly if the ids its files
// were written with no longer hold on the refreshed table.
func sameShape(base table.Metadata, p *Plan) error {
	spec := base.PartitionSpec()
	if spec.ID() != p.Spec.ID() || base.CurrentSchema().ID != p.Schema.ID {
		return fmt.Errorf("%w: table schema or partition spec changed concurrently", errs.ErrValidation)
	}
	return nil
}

func (w *Writer) planAppend(t *table.Table) (*Plan, error) {
	if len(w.Req.SortOrder) > 0 {
		return nil, fmt.Errorf("%w: a sort order is given only when creating or replacing a table (%s is %s)", errs.ErrInvalidArgument, w.ID, w.Req.Op)
	}
	m := t.Metadata()
	p, err := w.withOptions(&Plan{Schema: m.CurrentSchema(), Spec: m.PartitionSpec(), Location: m.Location(), Props: m.Properties()}, m.SortOrder())
	if err != nil || !p.Eff.MergeSchema || w.Input == nil || w.Req.Op == request.OpMerge {
		return p, err
	}
	// Spark's schema merge: new columns and allowed widenings are
	// committed with the data, in the same commit.
	if !strings.EqualFold(p.Props["write.spark.accept-any-schema"], "true") {
		return nil, fmt.Errorf("%w: mergeSchema needs the table property write.spark.accept-any-schema=true on %s", errs.ErrInvalidArgument, w.ID)
	}
	src, err := schema.FromArrow(w.Input.Schema(), false)
	if err != nil {
		return nil, err
	}
	if err := p.EvolveFor(src, m); err != nil {
		return nil, err
	}
	return p, nil
}

// withOptions resolves the write's options and its layout: distribution
// and the sort order its files are written in.
func (w *Writer) withOptions(p *Plan, order table.SortOrder) (*Plan, error) {
	eff, err := resolveOptions(p.Props, w.Sess.Conf(), w.Req.Options)
	if err != nil {
		return nil, err
	}
	if b := w.StreamBatch(); b != nil {
		maps.Copy(eff.SnapshotProps, b.Props())
	}
	if w.Prewritten != nil {
		eff.SnapshotProps[SummaryWriteID] = w.Prewritten.WriteID
	}
	p.Eff = eff
	p.order = order
	if p.sorter, err = layout.NewSorter(order, p.Schema); err != nil {
		return nil, err
	}
	if p.layout, err = layout.Resolve(eff.Props, p.sorter != nil, !p.Spec.IsUnpartitioned()); err != nil {
		return nil, err
	}
	return p, nil
}

// defaultLocation follows the catalogs' own layout: <warehouse>/<ns>.db/<t>
// for SQL catalogs (as PyIceberg and Java JDBC do), <warehouse>/<ns>/<t> for
// the directory catalog (which requires it).
func (w *Writer) defaultLocation(ctx context.Context) (string, error) {
	// A REST catalog without a warehouse path gives the location its server chooses.
	loc, ok, err := w.Cat.DefaultLocation(ctx, w.Ident)
	if err != nil {
		return "", catalog.MapErr(err, w.ID)
	}
	if ok {
		return loc, nil
	}
	wh := strings.TrimSuffix(w.Cat.Props["warehouse"], "/")
	if wh == "" {
		return "", fmt.Errorf("%w: catalog %q has no warehouse; give the table a location", errs.ErrInvalidArgument, w.Cat.Name)
	}
	if w.Cat.CatalogType() == icecat.Hadoop {
		return wh + "/" + strings.Join(w.ID.Namespace, "/") + "/" + w.ID.Name, nil
	}
	return wh + "/" + strings.Join(w.ID.Namespace, ".") + ".db/" + w.ID.Name, nil
}

var defaultFieldSuffix = map[string]string{"year": "_year", "month": "_month", "day": "_day", "hour": "_hour", "void": "_null"}

// buildSpec turns partitionedBy into a spec with Iceberg's default field
// names; field ids continue after the old table's when replacing.
func buildSpec(sc *iceberg.Schema, fields []request.PartitionField, existing *table.Table) (iceberg.PartitionSpec, error) {
	if len(fields) == 0 {
		return *iceberg.UnpartitionedSpec, nil
	}
	nextID := iceberg.PartitionDataIDStart
	if existing != nil {
		if last := existing.Metadata().LastPartitionSpecID(); last != nil && *last >= nextID {
			nextID = *last + 1
		}
	}
	var pfs []iceberg.PartitionField
	names := map[string]bool{}
	for _, f := range fields {
		src, ok := sc.FindFieldByName(f.Column)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partitionedBy: column %q is not in the data", errs.ErrValidation, f.Column)
		}
		tr, err := iceberg.ParseTransform(f.Transform)
		if err != nil {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partitionedBy: %v", errs.ErrInvalidArgument, err)
		}
		if !tr.CanTransform(src.Type) {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partitionedBy: transform %s cannot be applied to column %q of type %s", errs.ErrValidation, f.Transform, f.Column, src.Type)
		}
		if prev, ok := existingField(existing, src.ID, tr); ok {
			// REPLACE keeps the field id and name of a field it keeps, as
			// Java's buildReplacement does, so an unchanged layout keeps its spec.
			if names[prev.Name] {
				return iceberg.PartitionSpec{}, fmt.Errorf("%w: partitionedBy: partition field %q given twice", errs.ErrInvalidArgument, prev.Name)
			}
			names[prev.Name] = true
			pfs = append(pfs, prev)
			continue
		}
		name := f.Column
		switch {
		case strings.HasPrefix(f.Transform, "bucket"):
			name += "_bucket"
		case strings.HasPrefix(f.Transform, "truncate"):
			name += "_trunc"
		default:
			name += defaultFieldSuffix[f.Transform]
		}
		if names[name] {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partitionedBy: partition field %q given twice", errs.ErrInvalidArgument, name)
		}
		names[name] = true
		pfs = append(pfs, iceberg.PartitionField{SourceIDs: []int{src.ID}, FieldID: nextID, Name: name, Transform: tr})
		nextID++
	}
	// iceberg-go v0.7.0 names the Avro type of every decimal partition value
	// "fixed": a manifest with two of them cannot be written (conflicting
	// definitions, or an empty name for the second of one size), so such a
	// table could never be committed. Say so before any data is written.
	var decimals []string
	for _, pf := range pfs {
		if src, ok := sc.FindFieldByID(pf.SourceID()); ok {
			if _, dec := pf.Transform.ResultType(src.Type).(iceberg.DecimalType); dec {
				decimals = append(decimals, pf.Name)
			}
		}
	}
	if len(decimals) > 1 {
		return iceberg.PartitionSpec{}, fmt.Errorf("%w: partitionedBy: partition fields %s all hold decimals; at most one decimal partition field is supported (iceberg-go cannot write a manifest with two)", errs.ErrNotSupported, strings.Join(decimals, ", "))
	}
	return iceberg.NewPartitionSpec(pfs...), nil
}

// existingField finds a partition field of an earlier spec of t on the same
// source column and transform.
func existingField(t *table.Table, sourceID int, tr iceberg.Transform) (iceberg.PartitionField, bool) {
	if t == nil {
		return iceberg.PartitionField{}, false
	}
	for _, spec := range t.Metadata().PartitionSpecs() {
		for _, f := range spec.Fields() {
			if len(f.SourceIDs) == 1 && f.SourceIDs[0] == sourceID && f.Transform.String() == tr.String() {
				return f, true
			}
		}
	}
	return iceberg.PartitionField{}, false
}

// FileIO returns the table's write FileIO.
func (w *Writer) FileIO(ctx context.Context, p *Plan) (icebergio.WriteFileIO, error) {
	return w.Cat.WriteFS(ctx, p.Props, p.Location)
}

// DataRoot is the folder the plan's data and delete files go under:
// write.data.path, else <location>/data.
func (p *Plan) DataRoot() paths.Root {
	return paths.DataRoot(p.Location, p.Props)
}

// DataFS returns the FileIO data and delete files are written with: opened
// for the data root, and refusing to create any file outside it.
func (w *Writer) DataFS(ctx context.Context, p *Plan) (icebergio.WriteFileIO, error) {
	root := p.DataRoot()
	fs, err := w.Cat.WriteFS(ctx, p.Props, root.String())
	if err != nil {
		return nil, err
	}
	return paths.Confine(fs, root), nil
}

func dataFile(spec iceberg.PartitionSpec, wf WrittenFile, firstRowID *int64) (iceberg.DataFile, error) {
	f := wf.File
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, f.Path, iceberg.ParquetFile, wf.Values, nil, nil, f.Rows, f.Size)
	if err != nil {
		return nil, fmt.Errorf("%w: describing %s: %v", errs.ErrValidation, f.Path, err)
	}
	b.ColumnSizes(f.ColumnSizes).ValueCounts(f.ValueCounts).NullValueCounts(f.NullCounts).
		LowerBoundValues(f.Lower).UpperBoundValues(f.Upper).SplitOffsets(f.SplitOffsets).SortOrderID(wf.SortOrderID)
	if len(f.NaNCounts) > 0 {
		b.NaNValueCounts(f.NaNCounts)
	}
	if firstRowID != nil {
		b.FirstRowID(*firstRowID)
	}
	return b.Build(), nil
}

// DeleteFiles removes the data and delete files of a write that failed.
func (w *Writer) DeleteFiles(ctx context.Context, p *Plan, files []string) {
	if len(files) == 0 {
		return
	}
	fs, err := w.DataFS(ctx, p)
	if err != nil {
		return
	}
	for _, path := range files {
		_ = fs.Remove(path)
	}
}

// SnapshotProps are the summary properties every write adds.
func (w *Writer) SnapshotProps(p *Plan) iceberg.Properties {
	props := stage.SummaryProps()
	maps.Copy(props, p.Eff.SnapshotProps)
	return props
}

// StageAppend produces the updates that add files as one append snapshot
// on top of base.
func (w *Writer) StageAppend(ctx context.Context, p *Plan, base table.Metadata, baseLoc string, wr Written) ([]table.Requirement, []table.Update, error) {
	if len(wr.Files) == 0 {
		return nil, nil, nil
	}
	st, err := w.Stage(p, base, baseLoc, wr)
	if err != nil {
		return nil, nil, err
	}
	// Our files carry field ids, so no name mapping is needed (and a stale one
	// would survive a replace).
	// Our files have fresh, unique names: iceberg-go's duplicate check would
	// read every manifest of the table on every append.
	if err := st.Tx.AddDataFiles(ctx, st.Files, w.SnapshotProps(p), table.WithoutAutoNameMapping(), table.WithoutDuplicateCheck()); err != nil {
		return nil, nil, stage.StagingErr(err)
	}
	return st.Finish(ctx, nil)
}

// Stage opens a transaction on base (with p's schema change applied) for
// adding wr's files.
func (w *Writer) Stage(p *Plan, base table.Metadata, baseLoc string, wr Written) (*stage.Staging, error) {
	base, pre, preReqs, err := p.evolve(base)
	if err != nil {
		return nil, err
	}
	files, err := wr.dataFiles(p.Spec, base)
	if err != nil {
		return nil, err
	}
	st, err := w.Open(base, baseLoc, pre, preReqs)
	if err != nil {
		return nil, err
	}
	st.Files = files
	return st, nil
}

// Publish commits reqs and updates (stage.Committer.Publish on p's files),
// keeping the manifests of an append staged for its next attempt.
func (w *Writer) Publish(ctx context.Context, p *Plan, reqs []table.Requirement, updates []table.Update) (*table.Table, error) {
	return w.Committer.Publish(ctx, p.Props, p.Location, reqs, updates, w.keptSnapshot)
}

// StreamBatch is the streaming batch the write commits (nil: none).
func (w *Writer) StreamBatch() *stream.Batch {
	if w.Req.Stream == nil || w.Req.Stream.BatchID == nil {
		return nil
	}
	return &stream.Batch{QueryID: w.Req.Stream.QueryID, ID: *w.Req.Stream.BatchID}
}

// CheckStream fails with a *stream.AlreadyCommitted when the write's
// streaming batch is already committed on its branch in m; every commit
// attempt calls it on the head it commits on.
func (w *Writer) CheckStream(m table.Metadata) error {
	if err := w.checkWriteID(m); err != nil {
		return err
	}
	b := w.StreamBatch()
	if b == nil {
		return nil
	}
	return stream.Check(m, w.Head(m), *b)
}

func (w *Writer) commitAppend(ctx context.Context, p *Plan, wr Written) (*table.Table, error) {
	t, err := w.Cat.LoadTable(ctx, w.Ident)
	if err != nil {
		return nil, err
	}
	if err := w.CheckStream(t.Metadata()); err != nil {
		return nil, err
	}
	if len(wr.Files) == 0 {
		return t, nil
	}
	if err := CheckSchemaUnchanged(t.Metadata(), p); err != nil {
		return nil, err
	}
	var reqs []table.Requirement
	var updates []table.Update
	if w.staged != nil {
		reqs, updates, err = w.rebaseAppend(ctx, p, t.Metadata())
	} else {
		reqs, updates, err = w.StageAppend(ctx, p, t.Metadata(), t.MetadataLocation(), wr)
		if err == nil && w.rebasable(p, t.Metadata()) {
			w.keepStaged(ctx, p, t.Metadata(), reqs, updates)
		}
	}
	if err != nil {
		return nil, err
	}
	return w.Publish(ctx, p, reqs, updates)
}

// CheckSchemaUnchanged makes a retried append fail cleanly when a concurrent
// change removed the schema or spec its files were written against.
func CheckSchemaUnchanged(m table.Metadata, p *Plan) error {
	if m.PartitionSpecByID(p.Spec.ID()) == nil {
		return fmt.Errorf("%w: partition spec %d was removed concurrently", errs.ErrValidation, p.Spec.ID())
	}
	want := p.Schema.ID
	if p.Evolution != nil {
		want = p.Evolution.From
	}
	if m.CurrentSchema().ID != want {
		return fmt.Errorf("%w: the table schema changed concurrently (schema %d, written against %d)", errs.ErrValidation, m.CurrentSchema().ID, want)
	}
	return nil
}

// dropStaged removes the manifests kept for retries of an append that
// finally failed.
func (w *Writer) dropStaged(ctx context.Context, p *Plan) {
	if w.staged == nil {
		return
	}
	fs, err := w.FileIO(context.WithoutCancel(ctx), p)
	if err != nil {
		return
	}
	for _, m := range w.staged.ours {
		_ = fs.Remove(m.FilePath())
	}
	w.staged = nil
}

// commitCreate creates the table and its first snapshot in one catalog
// commit, so no reader sees a created-but-empty table.
func (w *Writer) commitCreate(ctx context.Context, p *Plan, wr Written) (*table.Table, error) {
	if err := w.ensureNamespace(ctx); err != nil {
		return nil, err
	}
	base, updates, err := p.shape.stage(nil, "")
	if err != nil {
		return nil, err
	}
	if err := sameShape(base, p); err != nil {
		return nil, err
	}
	if w.Input == nil {
		// CREATE TABLE without data: no snapshot.
		return w.Publish(ctx, p, []table.Requirement{table.AssertCreate()}, updates)
	}
	_, snapUpdates, err := w.StageAppend(ctx, p, base, "", wr)
	if err != nil {
		return nil, err
	}
	return w.Publish(ctx, p, []table.Requirement{table.AssertCreate()}, append(updates, snapUpdates...))
}

// commitReplace replaces schema, spec, properties and main's data in one
// commit, keeping the table's history (REPLACE TABLE AS SELECT).
func (w *Writer) commitReplace(ctx context.Context, p *Plan, wr Written) (*table.Table, error) {
	t, err := w.Cat.LoadTable(ctx, w.Ident)
	if err != nil {
		return nil, err
	}
	old := t.Metadata()
	if err := w.checkWriteID(old); err != nil {
		return nil, err
	}
	base, updates, err := p.shape.stage(old, t.MetadataLocation())
	if err != nil {
		return nil, err
	}
	if err := sameShape(base, p); err != nil {
		return nil, err
	}
	var snapUpdates []table.Update
	if w.Input != nil {
		// REPLACE TABLE without data leaves main without a snapshot.
		if _, snapUpdates, err = w.StageAppend(ctx, p, base, t.MetadataLocation(), wr); err != nil {
			return nil, err
		}
	}
	var mainID *int64
	if sn := old.SnapshotByName(table.MainBranch); sn != nil {
		mainID = &sn.SnapshotID
	}
	reqs := []table.Requirement{table.AssertTableUUID(old.TableUUID()), table.AssertRefSnapshotID(table.MainBranch, mainID)}
	return w.Publish(ctx, p, reqs, append(updates, snapUpdates...))
}

func (w *Writer) ensureNamespace(ctx context.Context) error {
	ns := table.Identifier(w.ID.Namespace)
	for _, part := range ns {
		if strings.Contains(part, ".") {
			return fmt.Errorf("%w: namespace part %q contains a dot", errs.ErrInvalidArgument, part)
		}
	}
	ok, err := w.Cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return catalog.MapErr(err, w.ID)
	}
	if ok {
		return nil
	}
	if err := w.Cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, icecat.ErrNamespaceAlreadyExists) {
		return catalog.MapErr(err, w.ID)
	}
	return nil
}

// FormatVersion reads format-version from properties (default 2).
func FormatVersion(props map[string]string) (int, error) {
	v, ok := props["format-version"]
	if !ok {
		return 2, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 3 {
		return 0, fmt.Errorf("%w: format-version %q is not 1, 2 or 3", errs.ErrInvalidArgument, v)
	}
	return n, nil
}

// EvolveFor adds the source's top-level columns the table lacks
// (optional, with new field ids) to p's schema, as a change committed with
// the merge's data (schema.Evolve).
func (p *Plan) EvolveFor(src *iceberg.Schema, meta table.Metadata) error {
	maxID := 0
	for _, sc := range meta.Schemas() {
		maxID = max(maxID, sc.ID)
	}
	evolved, ok := schema.Evolve(p.Schema, src, meta.LastColumnID(), maxID+1)
	if !ok {
		return nil
	}
	p.Evolution = &Evolution{From: p.Schema.ID, Schema: evolved}
	p.Schema = evolved
	return nil
}

// RewritePlan is p for rewriting rows already in the table (compaction):
// its files are partitioned by spec (one of the table's), props are laid
// over its effective properties (a target file size), and its files are
// sorted by sorter (nil: not sorted); tableOrder says whether sorter's
// order is one of the table's sort orders (else the files record sort
// order 0).
func (w *Writer) RewritePlan(p *Plan, spec iceberg.PartitionSpec, props map[string]string, sorter *layout.Sorter, tableOrder bool) (*Plan, error) {
	np := &Plan{Schema: p.Schema, Spec: spec, Location: p.Location, Props: p.Props, Eff: p.Eff, foreignOrder: !tableOrder, sorter: sorter}
	np.Eff.Props = maps.Clone(p.Eff.Props)
	maps.Copy(np.Eff.Props, props)
	var err error
	if np.layout, err = layout.Resolve(np.Eff.Props, np.sorter != nil, !np.Spec.IsUnpartitioned()); err != nil {
		return nil, err
	}
	return np, nil
}
