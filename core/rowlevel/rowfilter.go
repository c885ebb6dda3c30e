package rowlevel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// Row-level modes (write.delete.mode, write.update.mode).
const (
	modeCopyOnWrite = "copy-on-write"
	modeMergeOnRead = "merge-on-read"
)

// assignment is one column an update sets.
type assignment struct {
	index int // position of the column in the table's top-level fields
	value *expr.Expr
}

// filtered is the state of one overwrite(filter), delete or update.
type filtered struct {
	w      *writer
	p      *write.Plan
	op     string
	filter *expr.Expr
	sets   []assignment

	mu sync.Mutex
	// rewrites caches the rewrite of each data file by path, so a retry
	// that plans again does not read a file twice.
	rewrites map[string]rewrite
	// planned caches the scan tasks planned for each snapshot: the commit
	// plans again the snapshot it started from (delete, update), or the
	// head, which is that snapshot unless another writer committed; each
	// planning decodes the snapshot's manifests (about 8 ms for 84
	// lineitem files, on the commit's serial path).
	planned map[int64][]table.FileScanTask
}

// rewrite is what became of one data file the filter may match.
type rewrite struct {
	matched int64         // rows the filter matched
	out     write.Written // the rows written back (nil when matched == 0)
}

// runFiltered runs overwrite(filter), delete and update. Files the filter
// matches entirely are dropped from metadata (delete and overwrite); files
// it matches in part are rewritten (copy-on-write).
func (w *writer) runFiltered(ctx context.Context, p *write.Plan, t *table.Table) (*report.Result, error) {
	op := w.Req.Op
	text := w.Req.Filter
	if op == request.OpUpdate && strings.TrimSpace(text) == "" {
		text = "true"
	}
	f, err := expr.Compile(text, p.Schema, expr.InZone(p.Eff.Zone))
	if err != nil {
		return nil, err
	}
	if !f.IsPredicate() {
		return nil, fmt.Errorf("%w: filter %q is not a boolean expression (it is %s)", errs.ErrValidation, text, f.Type())
	}
	fl := &filtered{w: w, p: p, op: op, filter: f, rewrites: map[string]rewrite{}}
	if op == request.OpUpdate {
		if fl.sets, err = compileSets(w.Req.Set, p.Schema, p.Eff.Zone); err != nil {
			return nil, err
		}
	}
	level := p.Eff.Isolation
	mode := modeCopyOnWrite
	if op != request.OpOverwrite {
		if level, err = tableIsolation(p.Eff.Props, "write."+op+".isolation-level"); err != nil {
			return nil, err
		}
		switch m := strings.ToLower(p.Eff.Props["write."+op+".mode"]); m {
		case "", modeCopyOnWrite:
		case modeMergeOnRead:
			mode = modeMergeOnRead
		default:
			return nil, fmt.Errorf("%w: table property write.%s.mode=%q is not copy-on-write or merge-on-read", errs.ErrInvalidArgument, op, m)
		}
	}
	start, err := w.StartSnapshot(t, p)
	if err != nil {
		return nil, err
	}
	if mode == modeMergeOnRead {
		return fl.mergeOnRead(ctx, t, start, level)
	}
	// overwrite's new rows are written first: the input is read once.
	var input write.Written
	if op == request.OpOverwrite {
		if input, err = w.WriteData(ctx, p, w.Input); err != nil {
			return nil, err
		}
	}
	return fl.copyOnWrite(ctx, t, start, level, input)
}

// copyOnWrite commits the filtered operation by dropping whole files and
// rewriting partly matched ones, with input's new files (overwrite).
func (fl *filtered) copyOnWrite(ctx context.Context, t *table.Table, start *table.Snapshot, level string, input write.Written) (*report.Result, error) {
	w, p, op, f := fl.w, fl.p, fl.op, fl.filter
	// delete and update change the rows of the snapshot they start from.
	first := w.Head(t.Metadata())
	retry, err := w.RetryPolicy(p.Props)
	if err == nil {
		// Read and rewrite before committing; attempts reuse the rewrites.
		_, err = fl.plan(ctx, t, first)
	}
	if err != nil {
		fl.cleanup(ctx, input)
		return nil, err
	}
	w.testDelay()
	var (
		committed *table.Table
		did       bool
		final     change
	)
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		var err error
		committed, did, err = w.commitChange(ctx, p, func(head *table.Table) (change, error) {
			// overwrite(filter) removes what matches at commit time, as
			// Spark's overwriteByRowFilter does; delete and update change
			// the rows they read.
			at := first
			if op == request.OpOverwrite {
				at = w.Head(head.Metadata())
			}
			c, err := fl.plan(ctx, head, at)
			if err != nil {
				return change{}, err
			}
			if len(c.remove) > 0 || len(c.add.Files) > 0 || len(input.Files) > 0 {
				c.remove = append(c.remove, c.dead...)
			}
			c.dead = nil
			sc := scope{name: "rows matching " + f.String(), newData: fl.mightMatch(head), deletesIn: fl.mightMatch(head)}
			if op != request.OpOverwrite {
				sc.rewritten = map[string]bool{}
				for _, df := range c.remove {
					sc.rewritten[df.FilePath()] = true
				}
			}
			if err := w.validateIsolation(ctx, head, start, level, sc); err != nil {
				return change{}, err
			}
			c.add.Files = append(append([]write.WrittenFile{}, input.Files...), c.add.Files...)
			c.add.Rows += input.Rows
			c.add.Bytes += input.Bytes
			final = c
			return c, nil
		})
		return err
	})
	if err != nil {
		if !errors.Is(err, errs.ErrCommitStateUnknown) {
			fl.cleanup(ctx, input)
		}
		return nil, catalog.MapErr(err, w.ID)
	}
	fl.cleanupUnused(ctx, final)
	res := w.Result(committed, final.add, did)
	return res, nil
}

// tableIsolation reads an isolation level table property (default serializable).
func tableIsolation(props map[string]string, key string) (string, error) {
	v, ok := props[key]
	if !ok {
		return write.IsolationSerializable, nil
	}
	return write.ParseIsolation("table property "+key, v)
}

// compileSets binds update's assignments to top-level columns of sc.
func compileSets(set map[string]string, sc *iceberg.Schema, zone *tz.Zone) ([]assignment, error) {
	var out []assignment
	seen := map[int]string{}
	for col, text := range set {
		idx := -1
		for i, f := range sc.Fields() {
			if strings.EqualFold(f.Name, col) {
				idx = i
			}
		}
		if idx < 0 {
			if _, ok := sc.FindFieldByNameCaseInsensitive(col); ok {
				return nil, fmt.Errorf("%w: update of nested field %q: set its top-level struct column instead", errs.ErrNotSupported, col)
			}
			return nil, fmt.Errorf("%w: update sets column %q, which is not in the table", errs.ErrValidation, col)
		}
		if prev, ok := seen[idx]; ok {
			return nil, fmt.Errorf("%w: update sets column %q twice (%q and %q)", errs.ErrInvalidArgument, sc.Field(idx).Name, prev, col)
		}
		seen[idx] = col
		field := sc.Field(idx)
		e, err := expr.Compile(text, sc, expr.InZone(zone))
		if err != nil {
			return nil, err
		}
		if e, err = e.AssignTo(field.Name, field.Type); err != nil {
			return nil, err
		}
		out = append(out, assignment{index: idx, value: e})
	}
	return out, nil
}

// mightMatch judges a file of t by its metadata.
func (fl *filtered) mightMatch(t *table.Table) func(iceberg.DataFile) bool {
	return func(df iceberg.DataFile) bool {
		spec := t.Metadata().PartitionSpecByID(int(df.SpecID()))
		if spec == nil {
			return true
		}
		return fl.filter.MightMatch(df, *spec)
	}
}

// plan decides, for the data files of snapshot at, which are dropped whole,
// which are rewritten, and which are kept; rewrites run in parallel.
func (fl *filtered) plan(ctx context.Context, t *table.Table, at *table.Snapshot) (change, error) {
	var c change
	if at == nil {
		return c, nil
	}
	tasks, ok := fl.planned[at.SnapshotID]
	if !ok {
		sc := t.Scan(table.WithSnapshotID(at.SnapshotID), table.WithRowFilter(planFilter(ctx, fl.filter.Iceberg(), t, at)))
		var err error
		if tasks, err = sc.PlanFiles(ctx); err != nil {
			return c, fmt.Errorf("%w: planning the files of %s: %v", errs.ErrIO, fl.w.ID, err)
		}
		if fl.planned == nil {
			fl.planned = map[int64][]table.FileScanTask{}
		}
		fl.planned[at.SnapshotID] = tasks
	}
	seen, whole := map[string]bool{}, map[string]bool{}
	var todo []table.FileScanTask
	for _, task := range tasks {
		df := task.File
		if seen[df.FilePath()] {
			continue
		}
		seen[df.FilePath()] = true
		spec := t.Metadata().PartitionSpecByID(int(df.SpecID()))
		if spec == nil {
			return c, fmt.Errorf("%w: data file %s has unknown partition spec %d", errs.ErrValidation, df.FilePath(), df.SpecID())
		}
		if !fl.filter.MightMatch(df, *spec) {
			continue
		}
		// A file the filter matches whole is dropped from metadata. When
		// delete files apply to it, it is read first: a file whose rows
		// were all deleted before changes no row, so it is dropped only
		// when the operation commits anyway (c.dead), as Spark drops it
		// then, and a delete that changes no row commits nothing.
		if fl.op != request.OpUpdate && fl.filter.MatchesAll(df, *spec) {
			if !hasDeletes(task) {
				c.remove = append(c.remove, df)
				continue
			}
			whole[df.FilePath()] = true
		}
		task.Start, task.Length, task.Residual = 0, df.FileSizeBytes(), nil
		todo = append(todo, task)
	}
	if err := fl.rewriteAll(ctx, t, at, todo); err != nil {
		return c, err
	}
	for _, task := range todo {
		rw := fl.rewrites[task.File.FilePath()]
		if rw.matched == 0 {
			if whole[task.File.FilePath()] {
				c.dead = append(c.dead, task.File)
			}
			continue
		}
		c.remove = append(c.remove, task.File)
		c.add.Files = append(c.add.Files, rw.out.Files...)
		c.add.Rows += rw.out.Rows
		c.add.Bytes += rw.out.Bytes
	}
	return c, nil
}

// hasDeletes reports whether delete files apply to task's data file.
func hasDeletes(task table.FileScanTask) bool {
	return len(task.DeleteFiles)+len(task.EqualityDeleteFiles)+len(task.DeletionVectorFiles) > 0
}

// rewriteAll rewrites the files of tasks not rewritten yet, several at once.
func (fl *filtered) rewriteAll(ctx context.Context, t *table.Table, at *table.Snapshot, tasks []table.FileScanTask) error {
	var pending []table.FileScanTask
	fl.mu.Lock()
	for _, task := range tasks {
		if _, ok := fl.rewrites[task.File.FilePath()]; !ok {
			pending = append(pending, task)
		}
	}
	fl.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	return forEach(ctx, len(pending), func(ctx context.Context, i int) error {
		rw, err := fl.rewriteFile(ctx, t, at, pending[i], write.RewriteSpread(len(pending)))
		if err != nil {
			return err
		}
		fl.mu.Lock()
		fl.rewrites[pending[i].File.FilePath()] = rw
		fl.mu.Unlock()
		return nil
	})
}

// rewriteFile reads one data file with its delete files applied (rows
// deleted before stay deleted), drops (delete, overwrite) or changes
// (update) the rows the filter matches, and writes the result as new files.
// A file without a matching row is left alone.
func (fl *filtered) rewriteFile(ctx context.Context, t *table.Table, at *table.Snapshot, task table.FileScanTask, spread int) (rewrite, error) {
	mem := memory.DefaultAllocator
	path := task.File.FilePath()
	// The filter with what the file's partition values and bounds settle
	// taken out: fewer columns decoded and evaluated per row.
	f := fl.residual(t, task.File)
	// Deletes and overwrites drop the matching rows while the file is read
	// (when pqread reads it): only the kept rows are decoded, none copied
	// again by a filter. batchMatched is the rows the last batch dropped.
	var (
		rs           *rowSelect
		batchMatched int64
	)
	if fl.op != request.OpUpdate {
		rs = &rowSelect{pred: f.FieldIDs(), sel: func(pred arrow.RecordBatch) ([]int32, bool, error) {
			keep, matched, err := keepRows(ctx, f, pred, mem)
			if err != nil {
				return nil, false, write.StepError{Err: fmt.Errorf("%s (in %s): %w", fl.op, path, err)}
			}
			batchMatched = matched
			return keep, matched == 0, nil
		}}
	}
	schema, batches, selected, err := readTaskSelect(ctx, t, at, task, write.RewriteBatchRows, rs)
	if err != nil {
		return rewrite{}, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, path, err)
	}
	var matched int64
	wr, changed, err := write.RewriteStream(schema, batches, path, func(rec arrow.RecordBatch) ([]arrow.RecordBatch, bool, error) {
		if selected {
			matched += batchMatched
			if rec.NumRows() == 0 {
				return nil, batchMatched > 0, nil
			}
			rec.Retain()
			return []arrow.RecordBatch{rec}, batchMatched > 0, nil
		}
		parts, n, err := fl.apply(ctx, f, rec, mem)
		if err != nil {
			return nil, false, fmt.Errorf("%s (in %s): %w", fl.op, path, err)
		}
		matched += n
		return parts, n > 0, nil
	}, func(r array.RecordReader) (write.Written, error) { return fl.w.WriteFiles(ctx, fl.p, r, spread) })
	if err != nil || !changed {
		return rewrite{}, err
	}
	return rewrite{matched: matched, out: wr}, nil
}

// residual is the filter simplified for the rows of data file df of t.
func (fl *filtered) residual(t *table.Table, df iceberg.DataFile) *expr.Expr {
	spec := t.Metadata().PartitionSpecByID(int(df.SpecID()))
	if spec == nil {
		return fl.filter
	}
	r := fl.filter.Residual(df, *spec)
	if len(r.FieldIDs()) == 0 && len(fl.filter.FieldIDs()) > 0 {
		// a row selection decodes at least one column of each row
		return fl.filter
	}
	return r
}

// mask evaluates filter f on rec: true, false or NULL for each row.
func mask(ctx context.Context, f *expr.Expr, rec arrow.RecordBatch, mem memory.Allocator) (*array.Boolean, error) {
	mask, err := f.Eval(ctx, rec, mem)
	if err != nil {
		return nil, err
	}
	bm, ok := mask.(*array.Boolean)
	if !ok {
		mask.Release()
		return nil, fmt.Errorf("%w: filter gave %s, not boolean", errs.ErrValidation, mask.DataType())
	}
	return bm, nil
}

// keepRows evaluates filter f on rec (which needs only the columns f
// reads) and lists the rows it does not match (false or NULL), with how
// many it matched.
func keepRows(ctx context.Context, f *expr.Expr, rec arrow.RecordBatch, mem memory.Allocator) ([]int32, int64, error) {
	bm, err := mask(ctx, f, rec, mem)
	if err != nil {
		return nil, 0, err
	}
	defer bm.Release()
	n := bm.Len()
	keep := make([]int32, 0, n)
	for i := range n {
		if !bm.IsValid(i) || !bm.Value(i) {
			keep = append(keep, int32(i))
		}
	}
	return keep, int64(n - len(keep)), nil
}

// apply evaluates filter f (the operation's filter or its residual for
// rec's file) on rec and returns the rows to write back and how many rows
// matched.
func (fl *filtered) apply(ctx context.Context, f *expr.Expr, rec arrow.RecordBatch, mem memory.Allocator) ([]arrow.RecordBatch, int64, error) {
	bm, err := mask(ctx, f, rec, mem)
	if err != nil {
		return nil, 0, err
	}
	defer bm.Release()
	isTrue, matched := truthMask(bm, mem)
	defer isTrue.Release()
	if matched == 0 {
		rec.Retain()
		return []arrow.RecordBatch{rec}, 0, nil
	}
	notTrue := invert(isTrue, mem)
	defer notTrue.Release()
	var out []arrow.RecordBatch
	keep, err := compute.FilterRecordBatch(ctx, rec, notTrue, compute.DefaultFilterOptions())
	if err != nil {
		return nil, 0, fmt.Errorf("%w: filtering rows: %v", errs.ErrValidation, err)
	}
	if keep.NumRows() > 0 {
		out = append(out, keep)
	} else {
		keep.Release()
	}
	if fl.op != request.OpUpdate {
		return out, matched, nil
	}
	hit, err := compute.FilterRecordBatch(ctx, rec, isTrue, compute.DefaultFilterOptions())
	if err != nil {
		write.ReleaseAll(out)
		return nil, 0, fmt.Errorf("%w: filtering rows: %v", errs.ErrValidation, err)
	}
	defer hit.Release()
	updated, err := fl.assign(ctx, hit, mem)
	if err != nil {
		write.ReleaseAll(out)
		return nil, 0, err
	}
	return append(out, updated), matched, nil
}

// assign returns rec with update's columns replaced by their new values.
func (fl *filtered) assign(ctx context.Context, rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := append([]arrow.Array{}, rec.Columns()...)
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	fields := append([]arrow.Field{}, rec.Schema().Fields()...)
	for _, a := range fl.sets {
		v, err := a.value.Eval(ctx, rec, mem)
		if err != nil {
			return nil, err
		}
		made = append(made, v)
		cols[a.index] = v
		fields[a.index].Type = v.DataType()
		fields[a.index].Nullable = true
	}
	md := rec.Schema().Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows()), nil
}

// truthMask turns a three-valued mask into a two-valued one: true where the
// filter is TRUE (NULL counts as not matching, as in SQL).
func truthMask(m *array.Boolean, mem memory.Allocator) (*array.Boolean, int64) {
	n := m.Len()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	clear(bits)
	var count int64
	for i := range n {
		if m.IsValid(i) && m.Value(i) {
			bitutil.SetBit(bits, i)
			count++
		}
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	return array.NewBooleanData(data), count
}

func invert(m *array.Boolean, mem memory.Allocator) *array.Boolean {
	n := m.Len()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	clear(bits)
	for i := range n {
		if !m.Value(i) {
			bitutil.SetBit(bits, i)
		}
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	return array.NewBooleanData(data)
}

// cleanup deletes every file this operation wrote (it failed).
func (fl *filtered) cleanup(ctx context.Context, input write.Written) {
	paths := append([]string{}, input.Paths...)
	fl.mu.Lock()
	for _, rw := range fl.rewrites {
		paths = append(paths, rw.out.Paths...)
	}
	fl.mu.Unlock()
	fl.w.DeleteFiles(context.WithoutCancel(ctx), fl.p, paths)
}

// cleanupUnused deletes rewrites of earlier attempts that the committed
// change did not use (a retry found the file gone or unmatched).
func (fl *filtered) cleanupUnused(ctx context.Context, used change) {
	keep := map[string]bool{}
	for _, f := range used.add.Files {
		keep[f.File.Path] = true
	}
	var paths []string
	fl.mu.Lock()
	for _, rw := range fl.rewrites {
		for _, p := range rw.out.Paths {
			if !keep[p] {
				paths = append(paths, p)
			}
		}
	}
	fl.mu.Unlock()
	fl.w.DeleteFiles(context.WithoutCancel(ctx), fl.p, paths)
}
