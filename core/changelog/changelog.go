// Package changelog reads the row changes a range of snapshots made, with
// the columns and rules of Spark's create_changelog_view procedure:
// _change_type (INSERT, DELETE, UPDATE_BEFORE, UPDATE_AFTER),
// _change_ordinal (the snapshot's place in the range, from 0) and
// _commit_snapshot_id.
//
// Each snapshot of main's history in the range, except replace snapshots
// (compactions change no rows), is compared with its parent: the data
// files only the parent had are DELETEd rows, those only the snapshot has
// are INSERTed rows, and a file whose delete files changed (merge-on-read)
// is both, its rows before and after. Rows a snapshot deleted and inserted
// unchanged (copy-on-write rewrites, the unchanged rows of a merge-on-read
// file) then cancel out, as Spark removes carry-over rows; so a
// merge-on-read table's changelog is the one its copy-on-write twin has
// (Spark's own changelog refuses tables with delete files). NetChanges
// collapses each row's changes across the range; ComputeUpdates pairs a
// DELETE and an INSERT of one identifier in one snapshot into
// UPDATE_BEFORE and UPDATE_AFTER.
//
// The changes are held in memory: a range is read whole before the first
// row is handed out.
package changelog

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/refs"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// Change types, as Spark's ChangelogOperation names them.
const (
	Insert       = "INSERT"
	Delete       = "DELETE"
	UpdateBefore = "UPDATE_BEFORE"
	UpdateAfter  = "UPDATE_AFTER"
)

// The metadata columns the changelog adds.
const (
	ChangeTypeColumn    = "_change_type"
	ChangeOrdinalColumn = "_change_ordinal"
	CommitSnapshotCol   = "_commit_snapshot_id"
)

// Read returns the changelog req.Changelog describes as one stream.
func Read(ctx context.Context, s *session.Session, req *request.Request, mem memory.Allocator, counts *report.Progress) (array.RecordReader, error) {
	if counts == nil {
		counts = &report.Progress{}
	}
	t, refSnap, err := refs.LoadRef(ctx, s, req.Table)
	if err != nil {
		return nil, err
	}
	if refSnap != nil {
		return nil, fmt.Errorf("%w: %s: a changelog reads main's history; it takes no branch_/tag_ identifier", errs.ErrInvalidArgument, req.Table)
	}
	cl := req.Changelog
	schema := t.Schema()
	ids, err := identifierColumns(schema, cl)
	if err != nil {
		return nil, err
	}
	// Spark computes update images by default when identifier columns are given.
	updates := len(cl.IdentifierColumns) > 0
	if cl.ComputeUpdates != nil {
		updates = *cl.ComputeUpdates
	}
	switch {
	case updates && cl.NetChanges:
		return nil, fmt.Errorf("%w: Not support net changes with update images", errs.ErrInvalidArgument)
	case updates && len(ids) == 0:
		return nil, fmt.Errorf("%w: Cannot compute the update images because identifier columns are not set", errs.ErrInvalidArgument)
	}
	snaps, err := snapshotsOf(t.Metadata(), cl)
	if err != nil {
		return nil, err
	}
	out, err := arrowSchema(schema)
	if err != nil {
		return nil, err
	}
	ch := &changes{ctx: ctx, t: t, mem: mem}
	for ordinal, sn := range snaps {
		if err := ch.snapshot(sn, ordinal); err != nil {
			return nil, err
		}
	}
	counts.Files.Add(int64(ch.files))
	rows := ch.keys(ids)
	switch {
	case cl.NetChanges:
		rows = netChanges(rows)
	case updates:
		if rows, err = computeUpdates(removeCarryovers(rows), ids); err != nil {
			return nil, err
		}
	default:
		rows = removeCarryovers(rows)
	}
	rec, err := ch.build(out, rows)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	counts.Rows.Add(rec.NumRows())
	return array.NewRecordReader(out, []arrow.RecordBatch{rec})
}

// identifierColumns are the columns that identify a row: those given, else
// the table's identifier fields.
func identifierColumns(schema *iceberg.Schema, cl *request.Changelog) ([]string, error) {
	if len(cl.IdentifierColumns) > 0 {
		for _, c := range cl.IdentifierColumns {
			if _, ok := schema.FindFieldByName(c); !ok || strings.Contains(c, ".") {
				return nil, fmt.Errorf("%w: identifier column %q is not a top-level column of the table", errs.ErrValidation, c)
			}
		}
		return cl.IdentifierColumns, nil
	}
	var out []string
	for _, id := range schema.IdentifierFieldIDs {
		if name, ok := schema.FindColumnName(id); ok {
			out = append(out, name)
		}
	}
	return out, nil
}

// snapshotsOf lists the range's snapshots of main's history, oldest first,
// without replace snapshots; the range is Spark's changelog options.
func snapshotsOf(m table.Metadata, cl *request.Changelog) ([]*table.Snapshot, error) {
	head := m.CurrentSnapshot()
	start, end := cl.StartSnapshotID, cl.EndSnapshotID
	switch {
	case start != nil && cl.StartTimestampMs != nil:
		return nil, fmt.Errorf("%w: Cannot set both start-snapshot-id and start-timestamp for changelogs", errs.ErrInvalidArgument)
	case end != nil && cl.EndTimestampMs != nil:
		return nil, fmt.Errorf("%w: Cannot set both end-snapshot-id and end-timestamp for changelogs", errs.ErrInvalidArgument)
	case cl.StartTimestampMs != nil && cl.EndTimestampMs != nil && *cl.StartTimestampMs >= *cl.EndTimestampMs:
		return nil, fmt.Errorf("%w: Cannot set start-timestamp to be greater than end-timestamp for changelogs", errs.ErrInvalidArgument)
	}
	ancestors := func(from *table.Snapshot) []*table.Snapshot { return refs.Ancestors(m, from) }
	if ts := cl.StartTimestampMs; ts != nil {
		if head == nil || *ts > head.TimestampMs {
			return nil, nil
		}
		// The parent of the oldest ancestor at or after the time (the
		// snapshot itself when it is exactly at the time): Spark's rule.
		var oldest *table.Snapshot
		for _, sn := range ancestors(head) {
			if sn.TimestampMs < *ts {
				break
			}
			oldest = sn
			if sn.TimestampMs == *ts {
				break
			}
		}
		switch {
		case oldest == nil:
		case oldest.TimestampMs == *ts:
			start = &oldest.SnapshotID
		default:
			start = oldest.ParentSnapshotID
		}
	}
	if ts := cl.EndTimestampMs; ts != nil {
		end = nil
		for _, sn := range ancestors(head) {
			if sn.TimestampMs <= *ts {
				end = &sn.SnapshotID
				break
			}
		}
		if (start == nil && end == nil) || (start != nil && end != nil && *start == *end) {
			return nil, nil
		}
	}
	to := head
	if end != nil {
		if to = m.SnapshotByID(*end); to == nil {
			return nil, fmt.Errorf("%w: Cannot find end snapshot: %d", errs.ErrInvalidArgument, *end)
		}
	}
	if to == nil {
		return nil, nil
	}
	var out []*table.Snapshot
	found := start == nil
	for _, sn := range ancestors(to) {
		if start != nil && sn.SnapshotID == *start {
			found = true
			break
		}
		out = append(out, sn)
	}
	if !found {
		return nil, fmt.Errorf("%w: Starting snapshot (exclusive) %d is not an ancestor of end snapshot %d", errs.ErrInvalidArgument, *start, to.SnapshotID)
	}
	slices.Reverse(out)
	kept := out[:0]
	for _, sn := range out {
		if sn.Summary == nil || sn.Summary.Operation != table.OpReplace {
			kept = append(kept, sn)
		}
	}
	return kept, nil
}

// change is one changed row: a row of one of the batches read.
type change struct {
	batch, row int
	kind       string
	ordinal    int32
	snapshot   int64
	key, id    string
}

// changes collects the rows each snapshot changed.
type changes struct {
	ctx     context.Context
	t       *table.Table
	mem     memory.Allocator
	batches []arrow.RecordBatch
	rows    []change
	files   int
}

// plan lists the live data files of snapshot id (nil: none) by path.
func (c *changes) plan(id *int64) (map[string]table.FileScanTask, error) {
	out := map[string]table.FileScanTask{}
	if id == nil {
		return out, nil
	}
	tasks, err := c.t.Scan(table.WithSnapshotID(*id)).PlanFiles(c.ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: planning snapshot %d: %v", errs.ErrIO, *id, err)
	}
	for _, task := range tasks {
		out[task.File.FilePath()] = task
	}
	return out, nil
}

// snapshot records the rows sn changed against its parent.
func (c *changes) snapshot(sn *table.Snapshot, ordinal int) error {
	now, err := c.plan(&sn.SnapshotID)
	if err != nil {
		return err
	}
	parent := sn.ParentSnapshotID
	if parent != nil && c.t.Metadata().SnapshotByID(*parent) == nil {
		// An expired parent: the files the snapshot added are its
		// inserts, the others are taken as unchanged.
		return c.addedOnly(sn, ordinal, now)
	}
	before, err := c.plan(parent)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(now)+len(before))
	for p := range before {
		paths = append(paths, p)
	}
	for p := range now {
		if _, ok := before[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		old, had := before[p]
		cur, has := now[p]
		if had && has && sameDeletes(old, cur) {
			continue
		}
		if had {
			if err := c.read(old, Delete, ordinal, sn.SnapshotID); err != nil {
				return err
			}
		}
		if has {
			if err := c.read(cur, Insert, ordinal, sn.SnapshotID); err != nil {
				return err
			}
		}
	}
	return nil
}

// addedOnly records the rows of the data files sn's own manifests added.
func (c *changes) addedOnly(sn *table.Snapshot, ordinal int, now map[string]table.FileScanTask) error {
	fs, err := c.t.FS(c.ctx)
	if err != nil {
		return fmt.Errorf("%w: %v", errs.ErrIO, err)
	}
	files, err := refs.AddedDataFiles(fs, sn)
	if err != nil {
		return err
	}
	for _, df := range files {
		if task, ok := now[df.FilePath()]; ok {
			if err := c.read(task, Insert, ordinal, sn.SnapshotID); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameDeletes(a, b table.FileScanTask) bool {
	paths := func(t table.FileScanTask) []string {
		var out []string
		for _, d := range t.DeleteFiles {
			out = append(out, d.FilePath())
		}
		for _, d := range t.EqualityDeleteFiles {
			out = append(out, d.FilePath())
		}
		for _, d := range t.DeletionVectorFiles {
			out = append(out, d.FilePath())
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(paths(a), paths(b))
}

// read adds the live rows of task (its deletes applied) as changes.
func (c *changes) read(task table.FileScanTask, kind string, ordinal int, snap int64) error {
	c.files++
	task.Residual = nil
	_, seq, err := c.t.Scan(table.WithMaxConcurrency(1)).ReadTasks(compute.WithAllocator(c.ctx, c.mem), []table.FileScanTask{task})
	if err != nil {
		return fmt.Errorf("%w: reading %s: %v", errs.ErrIO, task.File.FilePath(), err)
	}
	for rec, err := range seq {
		if err != nil {
			return fmt.Errorf("%w: reading %s: %v", errs.ErrIO, task.File.FilePath(), err)
		}
		b := len(c.batches)
		c.batches = append(c.batches, rec)
		for i := range int(rec.NumRows()) {
			c.rows = append(c.rows, change{batch: b, row: i, kind: kind, ordinal: int32(ordinal), snapshot: snap})
		}
	}
	return nil
}

// keys computes each row's key (every column) and identifier key.
func (c *changes) keys(ids []string) []change {
	for i := range c.rows {
		r := &c.rows[i]
		rec := c.batches[r.batch]
		var key, id strings.Builder
		for col := range int(rec.NumCols()) {
			v := valueKey(rec.Column(col), r.row)
			key.WriteString(v)
			if slices.Contains(ids, rec.ColumnName(col)) {
				id.WriteString(v)
			}
		}
		r.key, r.id = key.String(), id.String()
	}
	return c.rows
}

// valueKey encodes one value so that equal keys are equal values (Spark's
// Objects.equals: NaN equals NaN, -0.0 does not equal 0.0).
func valueKey(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "N;"
	}
	v := a.ValueStr(i)
	return fmt.Sprintf("V%d:%s;", len(v), v)
}

func typeOrder(kind string) int {
	// Spark sorts the change type column as text within a group.
	return strings.Index("DELETE INSERT UPDATE_AFTER UPDATE_BEFORE", kind)
}

// removeCarryovers cancels, within each snapshot, a DELETE against an
// INSERT of an identical row (Spark's RemoveCarryoverIterator).
func removeCarryovers(rows []change) []change {
	type group struct{ deletes, inserts []change }
	order := []string{}
	groups := map[string]*group{}
	for _, r := range rows {
		k := fmt.Sprintf("%d|%s", r.ordinal, r.key)
		g, ok := groups[k]
		if !ok {
			g = &group{}
			groups[k] = g
			order = append(order, k)
		}
		if r.kind == Delete {
			g.deletes = append(g.deletes, r)
		} else {
			g.inserts = append(g.inserts, r)
		}
	}
	var out []change
	for _, k := range order {
		g := groups[k]
		n := len(g.deletes) - len(g.inserts)
		switch {
		case n > 0:
			out = append(out, g.deletes[:n]...)
		case n < 0:
			out = append(out, g.inserts[:-n]...)
		}
	}
	return out
}

// netChanges collapses each row's changes over the range (Spark's
// RemoveNetCarryoverIterator): in snapshot order, a change opposite to the
// run's first cancels one of the run, and what is left of a run is
// repeated with its first row's snapshot.
func netChanges(rows []change) []change {
	byKey := map[string][]change{}
	var order []string
	for _, r := range rows {
		if _, ok := byKey[r.key]; !ok {
			order = append(order, r.key)
		}
		byKey[r.key] = append(byKey[r.key], r)
	}
	var out []change
	for _, k := range order {
		g := byKey[k]
		slices.SortStableFunc(g, func(a, b change) int {
			return cmp.Or(cmp.Compare(a.ordinal, b.ordinal), cmp.Compare(typeOrder(a.kind), typeOrder(b.kind)))
		})
		first, n := g[0], 1
		for _, r := range g[1:] {
			if n <= 0 {
				first, n = r, 1
				continue
			}
			if r.kind != first.kind {
				n--
			} else {
				n++
			}
		}
		for range max(n, 0) {
			out = append(out, first)
		}
	}
	return out
}

// computeUpdates turns a DELETE followed by an INSERT of the same
// identifier in one snapshot into UPDATE_BEFORE and UPDATE_AFTER (Spark's
// ComputeUpdateIterator); two DELETEs of one identifier are an error.
func computeUpdates(rows []change, ids []string) ([]change, error) {
	byID := map[string][]change{}
	var order []string
	for _, r := range rows {
		k := fmt.Sprintf("%d|%s", r.ordinal, r.id)
		if _, ok := byID[k]; !ok {
			order = append(order, k)
		}
		byID[k] = append(byID[k], r)
	}
	var out []change
	for _, k := range order {
		g := byID[k]
		slices.SortStableFunc(g, func(a, b change) int { return cmp.Compare(typeOrder(a.kind), typeOrder(b.kind)) })
		for i := 0; i < len(g); i++ {
			if g[i].kind == Delete && i+1 < len(g) {
				if g[i+1].kind != Insert {
					//lint:ignore ST1005 Spark's message, word for word
					return nil, fmt.Errorf("%w: Cannot compute updates because there are multiple rows with the same identifier fields([%s]). Please make sure the rows are unique.", errs.ErrValidation, strings.Join(ids, ","))
				}
				before, after := g[i], g[i+1]
				before.kind, after.kind = UpdateBefore, UpdateAfter
				out = append(out, before, after)
				i++
				continue
			}
			out = append(out, g[i])
		}
	}
	return out, nil
}

// arrowSchema is the changelog's schema: the table's columns and the
// three metadata columns.
func arrowSchema(schema *iceberg.Schema) (*arrow.Schema, error) {
	base, err := table.SchemaToArrowSchema(schema, nil, false, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrValidation, err)
	}
	fields := append(slices.Clone(base.Fields()),
		arrow.Field{Name: ChangeTypeColumn, Type: arrow.BinaryTypes.String},
		arrow.Field{Name: ChangeOrdinalColumn, Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: CommitSnapshotCol, Type: arrow.PrimitiveTypes.Int64},
	)
	return arrow.NewSchema(fields, nil), nil
}

// build makes one record of rows, in snapshot order, DELETE before INSERT.
func (c *changes) build(out *arrow.Schema, rows []change) (arrow.RecordBatch, error) {
	defer func() {
		for _, b := range c.batches {
			b.Release()
		}
		c.batches = nil
	}()
	slices.SortStableFunc(rows, func(a, b change) int {
		return cmp.Or(cmp.Compare(a.ordinal, b.ordinal), cmp.Compare(typeOrder(a.kind), typeOrder(b.kind)))
	})
	// Row i of batch b is row offsets[b]+i of the batches concatenated.
	offsets := make([]int64, len(c.batches))
	var n int64
	for b, rec := range c.batches {
		offsets[b] = n
		n += rec.NumRows()
	}
	take := array.NewInt64Builder(c.mem)
	for _, r := range rows {
		take.Append(offsets[r.batch] + int64(r.row))
	}
	indices := take.NewArray()
	take.Release()
	defer indices.Release()
	ncols := out.NumFields() - 3
	cols := make([]arrow.Array, 0, out.NumFields())
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	ctx := compute.WithAllocator(c.ctx, c.mem)
	for col := range ncols {
		want := out.Field(col).Type
		if len(c.batches) == 0 {
			empty := array.MakeArrayOfNull(c.mem, want, 0)
			cols = append(cols, empty)
			continue
		}
		parts := make([]arrow.Array, len(c.batches))
		for b, rec := range c.batches {
			if parts[b] = rec.Column(col); !arrow.TypeEqual(parts[b].DataType(), want) {
				return nil, fmt.Errorf("changelog: column %s was read as %s, not %s", out.Field(col).Name, parts[b].DataType(), want)
			}
		}
		all, err := array.Concatenate(parts, c.mem)
		if err != nil {
			return nil, fmt.Errorf("changelog: %w", err)
		}
		taken, err := compute.TakeArray(ctx, all, indices)
		all.Release()
		if err != nil {
			return nil, fmt.Errorf("changelog: %w", err)
		}
		cols = append(cols, taken)
	}
	kinds := array.NewStringBuilder(c.mem)
	ords := array.NewInt32Builder(c.mem)
	snaps := array.NewInt64Builder(c.mem)
	for _, r := range rows {
		kinds.Append(r.kind)
		ords.Append(r.ordinal)
		snaps.Append(r.snapshot)
	}
	cols = append(cols, kinds.NewArray(), ords.NewArray(), snaps.NewArray())
	kinds.Release()
	ords.Release()
	snaps.Release()
	return array.NewRecordBatch(out, cols, int64(len(rows))), nil
}
