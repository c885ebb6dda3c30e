package rowlevel

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/schema"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// cardinalityError is Spark's message for a target row matched by several
// source rows.
const cardinalityError = "MERGE statement matched a single row from the target table with multiple rows of the source table"

// Summary keys of a merge, as Spark 4.1 writes them.
const (
	mergeCopied           = "spark.merge-into.num-target-rows-copied"
	mergeDeleted          = "spark.merge-into.num-target-rows-deleted"
	mergeUpdated          = "spark.merge-into.num-target-rows-updated"
	mergeInserted         = "spark.merge-into.num-target-rows-inserted"
	mergeMatchedUpdated   = "spark.merge-into.num-target-rows-matched-updated"
	mergeMatchedDeleted   = "spark.merge-into.num-target-rows-matched-deleted"
	mergeBySourceUpdated  = "spark.merge-into.num-target-rows-not-matched-by-source-updated"
	mergeBySourceDeleted  = "spark.merge-into.num-target-rows-not-matched-by-source-deleted"
	scopeTarget           = 0
	scopeSource           = 1
	maxMergeSourceRowsIdx = math.MaxInt32
)

var mergeCountKeys = []string{mergeCopied, mergeDeleted, mergeUpdated, mergeInserted, mergeMatchedUpdated, mergeMatchedDeleted, mergeBySourceUpdated, mergeBySourceDeleted}

// mergeCounts are a merge's row counts by summary key.
type mergeCounts map[string]int64

func (c mergeCounts) add(o mergeCounts) {
	for k, v := range o {
		c[k] += v
	}
}

// mergeClause is a bound WHEN clause.
type mergeClause struct {
	when   string
	cond   *expr.Expr         // nil: always
	action string             // delete, update, insert
	set    map[int]*expr.Expr // target column index -> value
	// copy maps target column index -> source column index for nested
	// columns updateAll/insertAll copy whole (expressions take primitives).
	copy map[int]int
}

// merger runs one MERGE INTO (copy-on-write).
type merger struct {
	w      *writer
	p      *write.Plan
	on     *expr.Expr
	keys   []expr.Key
	resid  *expr.Expr
	target *arrow.Schema // the table's Arrow schema (as scans return it), evolved
	// tableCols is the number of columns the table's files have before
	// schema evolution adds the source's new ones.
	tableCols int

	matched, notMatched, bySource []mergeClause
	checkCardinality              bool

	source     *sourceRows
	index      *keyIndex
	srcMatched []atomic.Bool

	mu    sync.Mutex
	files map[string]mergedFile
}

// mergedFile is what became of one target data file.
type mergedFile struct {
	changed bool
	out     write.Written
	counts  mergeCounts
}

// runMerge runs MERGE INTO the table USING the input.
func (w *writer) runMerge(ctx context.Context, p *write.Plan, t *table.Table) (*report.Result, error) {
	spec := w.Req.Merge
	mode := strings.ToLower(p.Eff.Props["write.merge.mode"])
	switch mode {
	case "", modeCopyOnWrite, modeMergeOnRead:
		if mode == modeMergeOnRead && t.Metadata().Version() < 2 {
			return nil, fmt.Errorf("%w: merge-on-read needs format-version 2 or later (table %s is v%d)", errs.ErrNotSupported, w.ID, t.Metadata().Version())
		}
	default:
		return nil, fmt.Errorf("%w: table property write.merge.mode=%q is not copy-on-write or merge-on-read", errs.ErrInvalidArgument, mode)
	}
	level, err := tableIsolation(p.Eff.Props, "write.merge.isolation-level")
	if err != nil {
		return nil, err
	}
	m, err := w.newMerger(ctx, p, spec, t.Metadata())
	if err != nil {
		return nil, err
	}
	defer m.source.Release()
	start := w.Head(t.Metadata())
	if mode == modeMergeOnRead {
		return m.mergeOnRead(ctx, t, start, level)
	}

	c, counts, err := m.plan(ctx, t, start)
	if err != nil {
		m.cleanup(ctx)
		return nil, err
	}
	retry, err := w.RetryPolicy(p.Props)
	if err != nil {
		m.cleanup(ctx)
		return nil, err
	}
	c.props = m.summaryProps(counts)
	rewritten := map[string]bool{}
	for _, df := range c.remove {
		rewritten[df.FilePath()] = true
	}
	w.testDelay()
	var (
		committed *table.Table
		did       bool
	)
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		var err error
		committed, did, err = w.commitChange(ctx, p, func(head *table.Table) (change, error) {
			sc := scope{name: "rows the merge condition may match", rewritten: rewritten, newData: func(df iceberg.DataFile) bool {
				spec := head.Metadata().PartitionSpecByID(int(df.SpecID()))
				return spec == nil || m.on.MightMatch(df, *spec)
			}}
			if err := w.validateIsolation(ctx, head, start, level, sc); err != nil {
				return change{}, err
			}
			return c, nil
		})
		return err
	})
	if err != nil {
		if !errors.Is(err, errs.ErrCommitStateUnknown) {
			m.cleanup(ctx)
		}
		return nil, catalog.MapErr(err, w.ID)
	}
	return m.result(committed, c.add, did, counts), nil
}

func (m *merger) result(t *table.Table, wr write.Written, committed bool, counts mergeCounts) *report.Result {
	res := m.w.Result(t, wr, committed)
	res.Merge = map[string]int64{}
	for _, k := range mergeCountKeys {
		res.Merge[strings.TrimPrefix(k, "spark.merge-into.")] = counts[k]
	}
	return res
}

// summaryProps are the spark.merge-into.* summary keys; an insert-only
// merge is an append in Spark and writes none.
func (m *merger) summaryProps(c mergeCounts) map[string]string {
	if len(m.matched) == 0 && len(m.bySource) == 0 {
		return nil
	}
	return c.summary()
}

func (c mergeCounts) summary() map[string]string {
	out := map[string]string{}
	for _, k := range mergeCountKeys {
		out[k] = fmt.Sprint(c[k])
	}
	return out
}

// mergeOnRead commits the merge as delete files for the target rows it
// deletes or updates (position deletes on v2, deletion vectors on v3) plus
// data files for updated and inserted rows; no target file is rewritten.
func (m *merger) mergeOnRead(ctx context.Context, t *table.Table, start *table.Snapshot, level string) (*report.Result, error) {
	w, p := m.w, m.p
	counts := mergeCounts{}
	var targets []*morTarget
	if start != nil {
		todo, err := m.candidates(ctx, t, start)
		if err != nil {
			return nil, err
		}
		fs, err := t.FS(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: opening the table's files: %v", errs.ErrIO, err)
		}
		targets = make([]*morTarget, len(todo))
		var cmu sync.Mutex
		err = forEach(ctx, len(todo), func(ctx context.Context, i int) error {
			fc := mergeCounts{}
			tg, err := m.markFile(ctx, fs, t, start, todo[i], fc)
			targets[i] = tg
			cmu.Lock()
			counts.add(fc)
			cmu.Unlock()
			return err
		})
		if err != nil {
			m.cleanupTargets(ctx, targets, nil)
			return nil, err
		}
	}
	ins, n, err := m.inserts(ctx)
	if err != nil {
		m.cleanupTargets(ctx, targets, nil)
		return nil, err
	}
	counts[mergeInserted] = n
	counts[mergeUpdated] = counts[mergeMatchedUpdated] + counts[mergeBySourceUpdated]
	counts[mergeDeleted] = counts[mergeMatchedDeleted] + counts[mergeBySourceDeleted]
	rows := ins
	var hit []*morTarget
	touched := map[string]bool{}
	var oldDVs []iceberg.DataFile
	for _, tg := range targets {
		if tg == nil {
			continue
		}
		rows.Files = append(rows.Files, tg.updated.Files...)
		rows.Paths = append(rows.Paths, tg.updated.Paths...)
		rows.Rows += tg.updated.Rows
		rows.Bytes += tg.updated.Bytes
		if !tg.matched.IsEmpty() {
			hit = append(hit, tg)
			touched[tg.file.FilePath()] = true
			oldDVs = append(oldDVs, tg.oldDVs...)
		}
	}
	if len(hit) == 0 && len(rows.Files) == 0 {
		return m.result(t, write.Written{}, false, counts), nil
	}
	var deletes []iceberg.DataFile
	var delPaths []string
	if len(hit) > 0 {
		if deletes, delPaths, err = w.writeDeletes(ctx, p, t.Metadata().Version(), hit); err != nil {
			w.DeleteFiles(context.WithoutCancel(ctx), p, append(rows.Paths, delPaths...))
			return nil, err
		}
	}
	committed, err := w.commitDelta(ctx, p, start, level, func(head *table.Table) scope {
		return scope{name: "rows the merge condition may match", rewritten: touched, newData: func(df iceberg.DataFile) bool {
			spec := head.Metadata().PartitionSpecByID(int(df.SpecID()))
			return spec == nil || m.on.MightMatch(df, *spec)
		}}
	}, func(ctx context.Context, head *table.Table) ([]table.Requirement, []table.Update, error) {
		if len(deletes) == 0 {
			reqs, updates, err := w.StageAppend(ctx, p, head.Metadata(), head.MetadataLocation(), rows)
			return reqs, retitle(updates, table.OpAppend, m.summaryProps(counts)), err
		}
		reqs, updates, err := w.stageRowDelta(ctx, p, head.Metadata(), head.MetadataLocation(), rows, deletes, oldDVs)
		op := table.OpDelete
		if len(rows.Files) > 0 {
			op = table.OpOverwrite
		}
		return reqs, retitle(updates, op, m.summaryProps(counts)), err
	}, append(append([]string{}, rows.Paths...), delPaths...))
	if err != nil {
		return nil, err
	}
	return m.result(committed, rows, true, counts), nil
}

// markFile merges one target file without rewriting it: the positions of
// the rows it deletes or updates go to a delete file, updated rows to new
// data files.
func (m *merger) markFile(ctx context.Context, fs icebergio.IO, t *table.Table, at *table.Snapshot, task table.FileScanTask, counts mergeCounts) (*morTarget, error) {
	tg, batches, err := openTarget(ctx, fs, t, at, task)
	if err != nil {
		return nil, err
	}
	var (
		pos     uint64
		updated []arrow.RecordBatch
	)
	defer func() { write.ReleaseAll(updated) }()
	for rec, err := range batches {
		if err != nil {
			return nil, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, task.File.FilePath(), err)
		}
		n := rec.NumRows()
		var live []int32
		for i := range int32(n) {
			if !tg.deleted.Contains(pos + uint64(i)) {
				live = append(live, i)
			}
		}
		lr := rec
		if len(live) < int(n) {
			lr, err = takeRecord(ctx, rec, live)
		} else {
			lr.Retain()
		}
		rec.Release()
		if err != nil {
			return nil, err
		}
		out, state, _, err := m.mergeBatch(ctx, lr, counts, false)
		lr.Release()
		if err != nil {
			return nil, err
		}
		for j, st := range state {
			if st != 0 {
				tg.matched.Set(pos + uint64(live[j]))
			}
		}
		updated = append(updated, out...)
		pos += uint64(n)
	}
	if len(updated) > 0 {
		rdr, err := array.NewRecordReader(m.target, updated)
		if err != nil {
			return nil, fmt.Errorf("%w: writing updated rows of %s: %v", errs.ErrValidation, task.File.FilePath(), err)
		}
		defer rdr.Release()
		if tg.updated, err = m.w.WriteData(ctx, m.p, rdr); err != nil {
			return nil, err
		}
	}
	return tg, nil
}

// cleanupTargets deletes the data files a failed merge-on-read wrote.
func (m *merger) cleanupTargets(ctx context.Context, targets []*morTarget, more []string) {
	paths := append([]string{}, more...)
	for _, tg := range targets {
		if tg != nil {
			paths = append(paths, tg.updated.Paths...)
		}
	}
	m.mu.Lock()
	for _, mf := range m.files {
		paths = append(paths, mf.out.Paths...)
	}
	m.mu.Unlock()
	m.w.DeleteFiles(context.WithoutCancel(ctx), m.p, paths)
}

// newMerger reads the source and binds the ON condition and clauses.
func (w *writer) newMerger(ctx context.Context, p *write.Plan, spec *request.Merge, meta table.Metadata) (*merger, error) {
	srcSchema, err := schema.FromArrow(w.Input.Schema(), false)
	if err != nil {
		return nil, err
	}
	tableCols := len(p.Schema.Fields())
	if spec.SchemaEvolution {
		if err := p.EvolveFor(srcSchema, meta); err != nil {
			return nil, err
		}
	}
	target, err := table.SchemaToArrowSchema(p.Schema, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("%w: the table's schema: %v", errs.ErrValidation, err)
	}
	m := &merger{w: w, p: p, target: target, tableCols: tableCols, files: map[string]mergedFile{}}
	// The source is kept in the Arrow form of its own Iceberg schema, as
	// the conformer writes data: views in the offset layout, dictionaries
	// decoded, small and unsigned integers widened. The gathers and filters
	// a merge runs on it are arrow-go's compute kernels, which cannot take
	// views (a list of views in several data buffers made them panic on a
	// goroutine of their own, which ended the process).
	conf, err := schema.NewConformer(srcSchema, w.Input.Schema(), schema.Options{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	if m.source, err = readSource(ctx, w.Input, conf); err != nil {
		return nil, err
	}
	if m.source.NumRows() > maxMergeSourceRowsIdx {
		m.source.Release()
		return nil, fmt.Errorf("%w: merge source has %d rows (at most %d)", errs.ErrNotSupported, m.source.NumRows(), maxMergeSourceRowsIdx)
	}
	fail := func(err error) (*merger, error) {
		m.source.Release()
		return nil, err
	}
	targetNames := []string{"target", w.ID.Name}
	if spec.TargetAlias != "" {
		targetNames = append(targetNames, spec.TargetAlias)
	}
	sourceNames := []string{"source"}
	if spec.SourceAlias != "" {
		sourceNames = append(sourceNames, spec.SourceAlias)
	}
	tScope := expr.Scope{Names: targetNames, Schema: p.Schema}
	sScope := expr.Scope{Names: sourceNames, Schema: srcSchema}
	both := []expr.Scope{tScope, sScope}
	inZone := expr.InZone(p.Eff.Zone)
	if m.on, err = expr.CompileScopes(spec.On, both, inZone); err != nil {
		return fail(err)
	}
	if !m.on.IsPredicate() {
		return fail(fmt.Errorf("%w: merge ON condition %q is not a boolean expression", errs.ErrValidation, spec.On))
	}
	m.keys, m.resid = m.on.EquiJoin()
	srcName := sourceNames[len(sourceNames)-1]
	for i, c := range spec.Clauses {
		scopes := both
		switch c.When {
		case request.WhenNotMatched:
			scopes = []expr.Scope{sScope}
		case request.WhenNotMatchedBySource:
			scopes = []expr.Scope{tScope}
		}
		mc := mergeClause{when: c.When, action: c.Action, set: map[int]*expr.Expr{}, copy: map[int]int{}}
		if strings.TrimSpace(c.Condition) != "" {
			if mc.cond, err = expr.CompileScopes(c.Condition, scopes, inZone); err != nil {
				return fail(err)
			}
			if !mc.cond.IsPredicate() {
				return fail(fmt.Errorf("%w: merge clause %d condition %q is not a boolean expression", errs.ErrValidation, i, c.Condition))
			}
		}
		set := c.Set
		switch c.Action {
		case request.ActionUpdateAll, request.ActionInsertAll:
			if set, err = allColumns(p.Schema, srcSchema, srcName, targetNames[0], c.Action, spec.SchemaEvolution); err != nil {
				return fail(fmt.Errorf("merge clause %d (%s): %w", i, c.Action, err))
			}
			mc.action = request.ActionUpdate
			if c.Action == request.ActionInsertAll {
				mc.action = request.ActionInsert
			}
		}
		for col, text := range set {
			idx := schema.TopLevelIndex(p.Schema, col)
			if c.Action == request.ActionUpdateAll || c.Action == request.ActionInsertAll {
				// Nested columns are copied whole from the source column of
				// the same name.
				if si := schema.TopLevelIndex(srcSchema, col); si >= 0 && idx >= 0 {
					if _, nested := p.Schema.Field(idx).Type.(iceberg.NestedType); nested {
						mc.copy[idx] = si
						continue
					}
				}
			}
			if idx < 0 {
				return fail(fmt.Errorf("%w: merge clause %d sets column %q, which is not in the table", errs.ErrValidation, i, col))
			}
			if _, dup := mc.set[idx]; dup {
				return fail(fmt.Errorf("%w: merge clause %d sets column %q twice", errs.ErrInvalidArgument, i, col))
			}
			v, err := expr.CompileScopes(text, scopes, inZone)
			if err == nil {
				f := p.Schema.Field(idx)
				v, err = v.AssignTo(f.Name, f.Type)
			}
			if err != nil {
				return fail(err)
			}
			mc.set[idx] = v
		}
		if mc.action == request.ActionInsert {
			for i, f := range p.Schema.Fields() {
				_, copied := mc.copy[i]
				if _, ok := mc.set[i]; !ok && !copied && f.Required {
					return fail(fmt.Errorf("%w: merge insert gives no value for required column %q", errs.ErrValidation, f.Name))
				}
			}
		}
		switch c.When {
		case request.WhenMatched:
			m.matched = append(m.matched, mc)
		case request.WhenNotMatched:
			m.notMatched = append(m.notMatched, mc)
		default:
			m.bySource = append(m.bySource, mc)
		}
	}
	// Spark checks cardinality unless the only matched clause is an
	// unconditional DELETE; insert-only merges have nothing to check.
	m.checkCardinality = len(m.matched) > 0 && !(len(m.matched) == 1 && m.matched[0].action == request.ActionDelete && m.matched[0].cond == nil)
	if err := m.buildIndex(ctx); err != nil {
		return fail(err)
	}
	m.srcMatched = make([]atomic.Bool, m.source.NumRows())
	return m, nil
}

// allColumns expands updateAll/insertAll: every table column from the
// source column of the same name. With schema evolution a column the
// source lacks keeps its value on update and is null on insert.
func allColumns(target, source *iceberg.Schema, srcName, tgtName, action string, evolve bool) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range target.Fields() {
		idx := schema.TopLevelIndex(source, f.Name)
		switch {
		case idx >= 0:
			out[f.Name] = quoteIdent(srcName) + "." + quoteIdent(source.Field(idx).Name)
		case !evolve:
			return nil, fmt.Errorf("%w: the source has no column %q (use withSchemaEvolution or name the columns)", errs.ErrValidation, f.Name)
		case action == request.ActionUpdateAll:
			out[f.Name] = quoteIdent(tgtName) + "." + quoteIdent(f.Name)
		}
	}
	return out, nil
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// buildIndex hashes the source rows by their join keys.
func (m *merger) buildIndex(ctx context.Context) error {
	n := int(m.source.NumRows())
	if len(m.keys) == 0 {
		// No equality keys: every source row is a candidate for every target
		// row (all share the empty key).
		m.index = buildKeyIndex(n, func(_ int, buf []byte) ([]byte, bool) { return buf, true })
		return nil
	}
	vals, err := m.source.evalKeys(ctx, m.keys)
	if err != nil {
		return err
	}
	defer write.ReleaseArrays(vals)
	m.index = buildKeyIndex(n, func(i int, buf []byte) ([]byte, bool) { return m.key(buf, vals, i) })
	return nil
}

func evalKeys(ctx context.Context, keys []expr.Key, rec arrow.RecordBatch, target bool) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(keys))
	for _, k := range keys {
		e := k.Source
		if target {
			e = k.Target
		}
		a, err := e.Eval(ctx, rec, memory.DefaultAllocator)
		if err != nil {
			write.ReleaseArrays(out)
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// key appends row i's join key to buf; false when a null makes the row
// match nothing (a null key that is not null-safe).
func (m *merger) key(buf []byte, vals []arrow.Array, i int) ([]byte, bool) {
	if len(m.keys) == 0 {
		return buf, true
	}
	for k, a := range vals {
		if a.IsNull(i) {
			if !m.keys[k].NullSafe {
				return buf, false
			}
			buf = append(buf, 0)
			continue
		}
		buf = append(buf, 1)
		buf = appendKeyValue(buf, a, i)
	}
	return buf, true
}

// appendKeyValue appends an unambiguous encoding of a[i] (both sides of a
// key have the same type). -0.0 and 0.0, and all NaNs, are one key each, as
// Spark normalises them in joins.
func appendKeyValue(buf []byte, a arrow.Array, i int) []byte {
	switch x := a.(type) {
	case *array.Int8:
		return binary.AppendVarint(buf, int64(x.Value(i)))
	case *array.Int16:
		return binary.AppendVarint(buf, int64(x.Value(i)))
	case *array.Int32:
		return binary.AppendVarint(buf, int64(x.Value(i)))
	case *array.Int64:
		return binary.AppendVarint(buf, x.Value(i))
	case *array.Date32:
		return binary.AppendVarint(buf, int64(x.Value(i)))
	case *array.Time64:
		return binary.AppendVarint(buf, int64(x.Value(i)))
	case *array.Timestamp:
		return binary.AppendVarint(buf, int64(x.Value(i)))
	case *array.Boolean:
		if x.Value(i) {
			return append(buf, 1)
		}
		return append(buf, 0)
	case *array.Float32:
		return appendFloat(buf, float64(x.Value(i)))
	case *array.Float64:
		return appendFloat(buf, x.Value(i))
	case *array.Decimal128:
		v := x.Value(i)
		buf = binary.BigEndian.AppendUint64(buf, uint64(v.HighBits()))
		return binary.BigEndian.AppendUint64(buf, v.LowBits())
	case *array.String:
		return appendBytes(buf, []byte(x.Value(i)))
	case *array.LargeString:
		return appendBytes(buf, []byte(x.Value(i)))
	case *array.Binary:
		return appendBytes(buf, x.Value(i))
	case *array.LargeBinary:
		return appendBytes(buf, x.Value(i))
	case *array.FixedSizeBinary:
		return appendBytes(buf, x.Value(i))
	}
	return appendBytes(buf, []byte(a.ValueStr(i)))
}

func appendFloat(buf []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		f = math.NaN()
	case f == 0:
		f = 0
	}
	return binary.BigEndian.AppendUint64(buf, math.Float64bits(f))
}

func appendBytes(buf, b []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(b)))
	return append(buf, b...)
}

// plan reads the target files the merge may touch, applies the clauses and
// returns the change to commit with its counts.
func (m *merger) plan(ctx context.Context, t *table.Table, at *table.Snapshot) (change, mergeCounts, error) {
	counts := mergeCounts{}
	var c change
	if at != nil {
		todo, err := m.candidates(ctx, t, at)
		if err != nil {
			return c, nil, err
		}
		err = forEach(ctx, len(todo), func(ctx context.Context, i int) error {
			mf, err := m.mergeFile(ctx, t, at, todo[i], write.RewriteSpread(len(todo)))
			if err != nil {
				return err
			}
			m.mu.Lock()
			m.files[todo[i].File.FilePath()] = mf
			m.mu.Unlock()
			return nil
		})
		if err != nil {
			return c, nil, err
		}
		for _, task := range todo {
			mf := m.files[task.File.FilePath()]
			if !mf.changed {
				continue
			}
			c.remove = append(c.remove, task.File)
			c.add.Files = append(c.add.Files, mf.out.Files...)
			c.add.Paths = append(c.add.Paths, mf.out.Paths...)
			c.add.Rows += mf.out.Rows
			c.add.Bytes += mf.out.Bytes
			counts.add(mf.counts)
		}
	}
	ins, n, err := m.inserts(ctx)
	if err != nil {
		return c, nil, err
	}
	counts[mergeInserted] = n
	c.add.Files = append(c.add.Files, ins.Files...)
	c.add.Paths = append(c.add.Paths, ins.Paths...)
	c.add.Rows += ins.Rows
	c.add.Bytes += ins.Bytes
	m.mu.Lock()
	m.files[""] = mergedFile{out: ins}
	m.mu.Unlock()
	counts[mergeUpdated] = counts[mergeMatchedUpdated] + counts[mergeBySourceUpdated]
	counts[mergeDeleted] = counts[mergeMatchedDeleted] + counts[mergeBySourceDeleted]
	return c, counts, nil
}

// candidates are the target files of snapshot at that may hold rows the
// clauses change (every file when NOT MATCHED BY SOURCE clauses exist).
func (m *merger) candidates(ctx context.Context, t *table.Table, at *table.Snapshot) ([]table.FileScanTask, error) {
	filter := iceberg.BooleanExpression(iceberg.AlwaysTrue{})
	if len(m.bySource) == 0 {
		var err error
		if filter, err = m.pruneFilter(ctx); err != nil {
			return nil, err
		}
	}
	tasks, err := t.Scan(table.WithSnapshotID(at.SnapshotID), table.WithRowFilter(planFilter(ctx, filter, t, at))).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: planning the files of %s: %v", errs.ErrIO, m.w.ID, err)
	}
	var todo []table.FileScanTask
	seen := map[string]bool{}
	for _, task := range tasks {
		df := task.File
		spec := t.Metadata().PartitionSpecByID(int(df.SpecID()))
		if seen[df.FilePath()] || (len(m.bySource) == 0 && spec != nil && !m.on.MightMatch(df, *spec)) {
			continue
		}
		seen[df.FilePath()] = true
		task.Start, task.Length, task.Residual = 0, df.FileSizeBytes(), nil
		todo = append(todo, task)
	}
	return todo, nil
}

// pruneFilter is implied by "a target row matches some source row": the ON
// condition's target-only parts and the range of each key's source values.
func (m *merger) pruneFilter(ctx context.Context) (iceberg.BooleanExpression, error) {
	filter := m.on.Iceberg()
	vals, err := m.source.evalKeys(ctx, m.keys)
	if err != nil {
		return nil, err
	}
	defer write.ReleaseArrays(vals)
	for i, k := range m.keys {
		filter = iceberg.NewAnd(filter, expr.KeyRange(k.Target, vals[i]))
	}
	return filter, nil
}

// mergeFile joins one target file with the source and applies the clauses.
func (m *merger) mergeFile(ctx context.Context, t *table.Table, at *table.Snapshot, task table.FileScanTask, spread int) (mergedFile, error) {
	path := task.File.FilePath()
	_, batches, err := readTask(ctx, t, at, task, write.RewriteBatchRows)
	if err != nil {
		return mergedFile{}, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, path, err)
	}
	mf := mergedFile{counts: mergeCounts{}}
	out, changed, err := write.RewriteStream(m.target, batches, path, func(rec arrow.RecordBatch) ([]arrow.RecordBatch, bool, error) {
		parts, _, changed, err := m.mergeBatch(ctx, rec, mf.counts, true)
		return parts, changed, err
	}, func(r array.RecordReader) (write.Written, error) { return m.w.WriteFiles(ctx, m.p, r, spread) })
	if err != nil || !changed {
		return mergedFile{}, err
	}
	mf.out, mf.changed = out, true
	return mf, nil
}

// mergeBatch applies the clauses to rec's rows. It returns the updated rows
// (and, with copyKept, the unchanged ones after them), each row's fate
// (0 unchanged, 1 deleted, 2 updated) and whether the batch's file must be
// rewritten (Spark's rule: a row changed, matched, or is a candidate of a
// WHEN NOT MATCHED BY SOURCE clause).
func (m *merger) mergeBatch(ctx context.Context, rec arrow.RecordBatch, counts mergeCounts, copyKept bool) ([]arrow.RecordBatch, []byte, bool, error) {
	mem := memory.DefaultAllocator
	n := int(rec.NumRows())
	rec, err := m.asTarget(rec)
	if err != nil {
		return nil, nil, false, err
	}
	defer rec.Release()
	// Candidate pairs by key.
	var ti, si []int32
	{
		vals, err := evalKeys(ctx, m.keys, rec, true)
		if err != nil {
			return nil, nil, false, err
		}
		var buf []byte
		for i := range n {
			var ok bool
			if buf, ok = m.key(buf[:0], vals, i); !ok {
				continue
			}
			for s := m.index.first(buf); s >= 0; s = m.index.nextOf(s, buf) {
				ti = append(ti, int32(i))
				si = append(si, s)
			}
		}
		write.ReleaseArrays(vals)
	}
	pairT, pairS, err := m.pairs(ctx, rec, ti, si)
	if err != nil {
		return nil, nil, false, err
	}
	defer pairT.Release()
	defer pairS.Release()
	if m.resid != nil && len(ti) > 0 {
		mask, err := m.resid.EvalScopes(ctx, []arrow.RecordBatch{pairT, pairS}, mem)
		if err != nil {
			return nil, nil, false, err
		}
		isTrue, _ := truthMask(mask.(*array.Boolean), mem)
		mask.Release()
		var kt, ks []int32
		for j := range ti {
			if isTrue.Value(j) {
				kt, ks = append(kt, ti[j]), append(ks, si[j])
			}
		}
		isTrue.Release()
		ti, si = kt, ks
		pairT.Release()
		pairS.Release()
		if pairT, pairS, err = m.pairs(ctx, rec, ti, si); err != nil {
			return nil, nil, false, err
		}
	}
	hits := make([]int32, n)
	for _, t := range ti {
		hits[t]++
		if hits[t] > 1 && m.checkCardinality {
			return nil, nil, false, fmt.Errorf("%w: %s", errs.ErrValidation, cardinalityError)
		}
	}
	for _, s := range si {
		m.srcMatched[s].Store(true)
	}
	state := make([]byte, n) // 0 copied, 1 deleted, 2 updated
	var out []arrow.RecordBatch
	fail := func(err error) ([]arrow.RecordBatch, []byte, bool, error) {
		write.ReleaseAll(out)
		return nil, nil, false, err
	}
	// WHEN MATCHED, first clause whose condition holds.
	if len(ti) > 0 && len(m.matched) > 0 {
		done := make([]bool, len(ti))
		for _, cl := range m.matched {
			sel, err := m.selectRows(ctx, cl.cond, []arrow.RecordBatch{pairT, pairS}, done)
			if err != nil {
				return fail(err)
			}
			if len(sel) == 0 {
				continue
			}
			if cl.action == request.ActionDelete {
				// Spark counts a deleted match per (target, source) pair:
				// more than one only under the unconditional-delete exemption.
				for _, j := range sel {
					state[ti[j]] = 1
					counts[mergeMatchedDeleted]++
				}
				continue
			}
			upd, err := m.updated(ctx, cl, pairT, pairS, sel)
			if err != nil {
				return fail(err)
			}
			out = append(out, upd)
			for _, j := range sel {
				state[ti[j]] = 2
			}
			counts[mergeMatchedUpdated] += int64(len(sel))
		}
	}
	// WHEN NOT MATCHED BY SOURCE, on the target rows nothing matched.
	if len(m.bySource) > 0 {
		var rest []int32
		for i := range n {
			if hits[i] == 0 {
				rest = append(rest, int32(i))
			}
		}
		if len(rest) > 0 {
			rt, err := takeRecord(ctx, rec, rest)
			if err != nil {
				return fail(err)
			}
			done := make([]bool, len(rest))
			for _, cl := range m.bySource {
				sel, err := m.selectRows(ctx, cl.cond, []arrow.RecordBatch{rt}, done)
				if err == nil && len(sel) > 0 && cl.action != request.ActionDelete {
					var upd arrow.RecordBatch
					if upd, err = m.updated(ctx, cl, rt, nil, sel); err == nil {
						out = append(out, upd)
					}
				}
				if err != nil {
					rt.Release()
					return fail(err)
				}
				for _, j := range sel {
					if cl.action == request.ActionDelete {
						state[rest[j]] = 1
						counts[mergeBySourceDeleted]++
					} else {
						state[rest[j]] = 2
						counts[mergeBySourceUpdated]++
					}
				}
			}
			rt.Release()
		}
	}
	var keep []int32
	for i := range n {
		if state[i] == 0 {
			keep = append(keep, int32(i))
		}
	}
	// Spark's copy-on-write rewrites every file holding a matched row (when
	// there are WHEN MATCHED clauses) or, with WHEN NOT MATCHED BY SOURCE
	// clauses, any row: such a file is touched even if no row changes.
	touched := len(keep) < n || (len(m.matched) > 0 && len(ti) > 0) || (len(m.bySource) > 0 && n > 0)
	if copyKept && len(keep) > 0 {
		// The unchanged rows are kept even when this batch changes nothing:
		// another batch of the file may, and then the whole file is written.
		var kept arrow.RecordBatch
		if len(keep) == n {
			rec.Retain()
			kept = rec
		} else if kept, err = takeRecord(ctx, rec, keep); err != nil {
			return fail(err)
		}
		out = append(out, kept)
		counts[mergeCopied] += int64(len(keep))
	} else if len(keep) == n {
		write.ReleaseAll(out)
		out = nil
	}
	return out, state, touched, nil
}

// asTarget relabels a scanned batch with the table's Arrow schema (same
// columns; the scan may differ in metadata).
func (m *merger) asTarget(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(rec.NumCols())
	if n != m.tableCols && n != m.target.NumFields() {
		return nil, fmt.Errorf("%w: scan returned %d columns, the table has %d", errs.ErrValidation, rec.NumCols(), m.target.NumFields())
	}
	cols := append([]arrow.Array{}, rec.Columns()...)
	var nulls []arrow.Array
	// Columns schema evolution widened are cast (int -> long, ...).
	for i, c := range cols {
		if want := m.target.Field(i).Type; !arrow.TypeEqual(c.DataType(), want) && i < m.tableCols {
			wide, err := schema.Widen(c, want, memory.DefaultAllocator)
			if err != nil {
				write.ReleaseArrays(nulls)
				return nil, fmt.Errorf("%w: widening column %q: %v", errs.ErrValidation, m.target.Field(i).Name, err)
			}
			nulls = append(nulls, wide)
			cols[i] = wide
		}
	}
	// Columns schema evolution adds are null in the existing rows.
	for i := n; i < m.target.NumFields(); i++ {
		a := array.MakeArrayOfNull(memory.DefaultAllocator, m.target.Field(i).Type, int(rec.NumRows()))
		nulls = append(nulls, a)
		cols = append(cols, a)
	}
	out := array.NewRecordBatch(m.target, cols, rec.NumRows())
	write.ReleaseArrays(nulls)
	return out, nil
}

// pairs takes the target rows ti and source rows si as two aligned batches.
func (m *merger) pairs(ctx context.Context, rec arrow.RecordBatch, ti, si []int32) (arrow.RecordBatch, arrow.RecordBatch, error) {
	t, err := takeRecord(ctx, rec, ti)
	if err != nil {
		return nil, nil, err
	}
	s, err := m.source.take(ctx, si)
	if err != nil {
		t.Release()
		return nil, nil, err
	}
	return t, s, nil
}

// takeRecord gathers rows idx of rec: by runs of consecutive rows when
// they are long (the rows a rewrite keeps) or the column's values are
// strings or wider than 8 bytes, otherwise with arrow's take.
func takeRecord(ctx context.Context, rec arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	runs, long := indexRuns(idx)
	var ia arrow.Array
	defer func() {
		if ia != nil {
			ia.Release()
		}
	}()
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		if long || !takesWell(c.DataType()) {
			if t, ok := copyRuns(c, runs, len(idx), memory.DefaultAllocator); ok {
				cols[i] = t
				continue
			}
		}
		if ia == nil {
			b := array.NewInt32Builder(memory.DefaultAllocator)
			b.AppendValues(idx, nil)
			ia = b.NewInt32Array()
			b.Release()
		}
		t, err := compute.TakeArray(ctx, c, ia)
		if err != nil {
			write.ReleaseArrays(cols[:i])
			return nil, fmt.Errorf("%w: gathering rows: %v", errs.ErrValidation, err)
		}
		cols[i] = t
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(idx)))
	write.ReleaseArrays(cols)
	return out, nil
}

// selectRows returns the rows not yet done for which cond is TRUE (all
// when cond is nil), and marks them done.
func (m *merger) selectRows(ctx context.Context, cond *expr.Expr, recs []arrow.RecordBatch, done []bool) ([]int, error) {
	var sel []int
	if cond == nil {
		for j := range done {
			if !done[j] {
				sel = append(sel, j)
				done[j] = true
			}
		}
		return sel, nil
	}
	mask, err := cond.EvalScopes(ctx, recs, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	defer mask.Release()
	b := mask.(*array.Boolean)
	for j := range done {
		if !done[j] && b.IsValid(j) && b.Value(j) {
			sel = append(sel, j)
			done[j] = true
		}
	}
	return sel, nil
}

// updated returns the selected rows of t with the clause's assignments
// applied (s is the matching source rows, nil for NOT MATCHED BY SOURCE).
func (m *merger) updated(ctx context.Context, cl mergeClause, t, s arrow.RecordBatch, sel []int) (arrow.RecordBatch, error) {
	idx := make([]int32, len(sel))
	for i, j := range sel {
		idx[i] = int32(j)
	}
	rt, err := takeRecord(ctx, t, idx)
	if err != nil {
		return nil, err
	}
	defer rt.Release()
	recs := []arrow.RecordBatch{rt}
	if s != nil {
		rs, err := takeRecord(ctx, s, idx)
		if err != nil {
			return nil, err
		}
		defer rs.Release()
		recs = append(recs, rs)
	}
	cols := append([]arrow.Array{}, rt.Columns()...)
	var made []arrow.Array
	defer func() { write.ReleaseArrays(made) }()
	for col, v := range cl.set {
		a, err := v.EvalScopes(ctx, recs, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		made = append(made, a)
		cols[col] = a
	}
	for col, si := range cl.copy {
		cols[col] = recs[scopeSource].Column(si)
	}
	return m.shaped(cols, rt.NumRows())
}

// shaped builds a batch of the table's schema from columns of its types (or
// of the same layout, relabeled: a nested source column copied whole may
// hold a uuid as fixed_size_binary(16)).
func (m *merger) shaped(cols []arrow.Array, n int64) (arrow.RecordBatch, error) {
	out := cols
	var made []arrow.Array
	defer func() { write.ReleaseArrays(made) }()
	for i, c := range cols {
		want := m.target.Field(i).Type
		if arrow.TypeEqual(c.DataType(), want) {
			continue
		}
		r, ok := relabel(c, want)
		if !ok {
			return nil, fmt.Errorf("%w: merge value for column %q has type %s, the table has %s", errs.ErrValidation, m.target.Field(i).Name, c.DataType(), want)
		}
		if len(made) == 0 {
			out = append([]arrow.Array{}, cols...) // the caller releases its own
		}
		out[i] = r
		made = append(made, r)
	}
	return array.NewRecordBatch(m.target, out, n), nil
}

// inserts applies WHEN NOT MATCHED to the source rows no target row matched
// and writes them; returns the files and the row count.
func (m *merger) inserts(ctx context.Context) (write.Written, int64, error) {
	if len(m.notMatched) == 0 {
		return write.Written{}, 0, nil
	}
	var rest []int32
	for i := range m.srcMatched {
		if !m.srcMatched[i].Load() {
			rest = append(rest, int32(i))
		}
	}
	if len(rest) == 0 {
		return write.Written{}, 0, nil
	}
	rs, err := m.source.take(ctx, rest)
	if err != nil {
		return write.Written{}, 0, err
	}
	defer rs.Release()
	mem := memory.DefaultAllocator
	done := make([]bool, len(rest))
	var out []arrow.RecordBatch
	defer func() { write.ReleaseAll(out) }()
	var n int64
	for _, cl := range m.notMatched {
		sel, err := m.selectRows(ctx, cl.cond, []arrow.RecordBatch{rs}, done)
		if err != nil {
			return write.Written{}, 0, err
		}
		if len(sel) == 0 {
			continue
		}
		idx := make([]int32, len(sel))
		for i, j := range sel {
			idx[i] = int32(j)
		}
		rows, err := takeRecord(ctx, rs, idx)
		if err != nil {
			return write.Written{}, 0, err
		}
		cols := make([]arrow.Array, m.target.NumFields())
		for i := range cols {
			if v, ok := cl.set[i]; ok {
				cols[i], err = v.Eval(ctx, rows, mem)
			} else if si, ok := cl.copy[i]; ok {
				cols[i] = rows.Column(si)
				cols[i].Retain()
			} else {
				cols[i] = array.MakeArrayOfNull(mem, m.target.Field(i).Type, int(rows.NumRows()))
			}
			if err != nil {
				write.ReleaseArrays(cols[:i])
				rows.Release()
				return write.Written{}, 0, err
			}
		}
		rec, err := m.shaped(cols, rows.NumRows())
		write.ReleaseArrays(cols)
		rows.Release()
		if err != nil {
			return write.Written{}, 0, err
		}
		out = append(out, rec)
		n += int64(len(sel))
	}
	if n == 0 {
		return write.Written{}, 0, nil
	}
	rdr, err := array.NewRecordReader(m.target, out)
	if err != nil {
		return write.Written{}, 0, fmt.Errorf("%w: writing inserted rows: %v", errs.ErrValidation, err)
	}
	defer rdr.Release()
	wr, err := m.w.WriteData(ctx, m.p, rdr)
	return wr, n, err
}

// cleanup deletes every file the merge wrote.
func (m *merger) cleanup(ctx context.Context) {
	var paths []string
	m.mu.Lock()
	for _, mf := range m.files {
		paths = append(paths, mf.out.Paths...)
	}
	m.mu.Unlock()
	m.w.DeleteFiles(context.WithoutCancel(ctx), m.p, paths)
}
