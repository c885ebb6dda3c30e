package rowlevel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/layout"
	"github.com/pyiceberg-go/pyiceberg-go/core/parquet"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// RewriteResult is what rewrite_data_files did: Spark's result columns,
// and the snapshots it committed (none when nothing needed rewriting).
type RewriteResult struct {
	Table                   string  `json:"table"`
	RewrittenDataFilesCount int     `json:"rewritten_data_files_count"`
	AddedDataFilesCount     int     `json:"added_data_files_count"`
	RewrittenBytesCount     int64   `json:"rewritten_bytes_count"`
	FailedDataFilesCount    int     `json:"failed_data_files_count"`
	RemovedDeleteFilesCount int     `json:"removed_delete_files_count"`
	SnapshotIDs             []int64 `json:"snapshot_ids"`
}

// compaction is the state of one rewrite_data_files.
type compaction struct {
	w     *writer
	p     *write.Plan // the plan the new files are written with
	opts  rewriteOptions
	where *expr.Expr
	start *table.Snapshot
	// ahead is start's manifests, read while the files are rewritten.
	ahead *manifestsAhead
}

// fileGroup is data files of one partition rewritten together, and what
// they became.
type fileGroup struct {
	tasks []table.FileScanTask
	bytes int64
	out   write.Written
	err   error
}

// RewriteDataFiles compacts the data files of t as Spark's
// rewrite_data_files procedure: files are planned by Iceberg Java's
// bin-packing planner (per partition of the current spec; files of older
// specs together), read with their delete files applied, written again
// (sorted by the sort strategy's order) and committed as one "replace"
// snapshot, or one per batch of groups with partial progress. p is the
// append plan of the table.
func RewriteDataFiles(ctx context.Context, ww *write.Writer, p *write.Plan, t *table.Table) (*RewriteResult, error) {
	w := &writer{Writer: ww}
	rw := w.Req.Rewrite
	res := &RewriteResult{Table: w.ID.String(), SnapshotIDs: []int64{}}
	opts, err := parseRewriteOptions(rw.Options, p.Props, rw.Strategy)
	if err != nil {
		return nil, err
	}
	outSpec, err := outputSpec(t.Metadata(), p, opts.outputSpecID)
	if err != nil {
		return nil, err
	}
	c := &compaction{w: w, opts: opts}
	if strings.TrimSpace(rw.Where) != "" {
		f, err := expr.Compile(rw.Where, p.Schema, expr.InZone(p.Eff.Zone))
		if err != nil {
			return nil, fmt.Errorf("rewrite_data_files where %q: %w", rw.Where, err)
		}
		if !f.IsPredicate() {
			return nil, fmt.Errorf("%w: rewrite_data_files where %q is not a boolean expression (it is %s)", errs.ErrValidation, rw.Where, f.Type())
		}
		c.where = f
	}
	sorter, tableOrder, err := rewriteSorter(rw, w.ID.String(), t, p.Schema)
	if err != nil {
		return nil, err
	}
	if c.p, err = w.RewritePlan(p, outSpec, map[string]string{parquet.PropTargetFileSize: strconv.FormatInt(opts.writeMaxFileSize(), 10)}, sorter, tableOrder); err != nil {
		return nil, err
	}
	if c.start, err = w.StartSnapshot(t, p); err != nil {
		return nil, err
	}
	if c.start == nil { // an empty table
		return res, nil
	}
	if fs, err := t.FS(ctx); err == nil {
		actx, stop := context.WithCancel(ctx)
		defer stop()
		c.ahead = readManifestsAhead(actx, fs, c.start)
	}
	groups, err := c.plan(ctx, t)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return res, nil
	}
	if err := c.rewrite(ctx, t, groups); err != nil || ctx.Err() != nil {
		c.cleanup(ctx, groups)
		if err == nil {
			err = fmt.Errorf("%w: %v", errs.ErrCancelled, ctx.Err())
		}
		return nil, err
	}
	if !opts.partialProgress {
		if err := c.commitBatch(ctx, groups, res); err != nil {
			return nil, err
		}
		return c.finish(ctx, res)
	}
	// Partial progress: groups committed in up to max-commits batches;
	// the files of a group that failed, or of a batch whose commit
	// failed, are counted as failed (RewriteDataFilesSparkAction).
	var done []*fileGroup
	for _, g := range groups {
		if g.err != nil {
			res.FailedDataFilesCount += len(g.tasks)
			continue
		}
		done = append(done, g)
	}
	size := (len(done) + opts.maxCommits - 1) / max(1, opts.maxCommits)
	failedCommits := 0
	var lastErr error
	for start := 0; start < len(done); start += size {
		batch := done[start:min(start+size, len(done))]
		if err := c.commitBatch(ctx, batch, res); err != nil {
			if errors.Is(err, errs.ErrCommitStateUnknown) {
				return nil, err
			}
			failedCommits++
			lastErr = err
			for _, g := range batch {
				res.FailedDataFilesCount += len(g.tasks)
			}
		}
	}
	if failedCommits > opts.maxFailedCommits {
		return nil, fmt.Errorf("%d rewrite commits failed, more than %s=%d; the last error: %w", failedCommits, optPartialFailed, opts.maxFailedCommits, lastErr)
	}
	return c.finish(ctx, res)
}

// outputSpec is the partition spec the rewritten files are written with:
// the table's current one, or output-spec-id's (any of the table's specs,
// as Java's planner checks; its source columns must still be in the
// schema). Files are still planned by the current spec, as in Java.
func outputSpec(m table.Metadata, p *write.Plan, id *int) (iceberg.PartitionSpec, error) {
	if id == nil || *id == p.Spec.ID() {
		return p.Spec, nil
	}
	spec := m.PartitionSpecByID(*id)
	if spec == nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("%w: Cannot use output spec id %d because the table does not contain a reference to this spec-id", errs.ErrInvalidArgument, *id)
	}
	for _, f := range spec.Fields() {
		if _, ok := p.Schema.FindFieldByID(f.SourceID()); !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: output spec id %d partitions by field %d (%s), which the current schema no longer has", errs.ErrInvalidArgument, *id, f.SourceID(), f.Name)
		}
	}
	return *spec, nil
}

// finish runs what follows the rewrite commits: with remove-dangling-deletes,
// the removal of the delete files nothing live needs any more, counted in
// removed_delete_files_count (RewriteDataFilesSparkAction runs it only
// when something was rewritten).
func (c *compaction) finish(ctx context.Context, res *RewriteResult) (*RewriteResult, error) {
	if !c.opts.removeDanglingDeletes || len(res.SnapshotIDs) == 0 {
		return res, nil
	}
	n, err := c.removeDanglingDeletes(ctx, res)
	if err != nil {
		return nil, err
	}
	res.RemovedDeleteFilesCount += n
	return res, nil
}

// zorderRe is Spark's zorder(c1, c2, ...) sort order.
var zorderRe = regexp.MustCompile(`(?is)^zorder\s*\((.*)\)$`)

// rewriteSorter sorts the rewritten files: by the table's order for
// binpack (which every write applies; nil when unsorted), by the given or
// the table's order, or by z-value (zorder(...)), for sort. tableOrder says
// whether the order is one of the table's sort orders.
func rewriteSorter(rw *request.Rewrite, name string, t *table.Table, sc *iceberg.Schema) (*layout.Sorter, bool, error) {
	m := t.Metadata()
	order := m.SortOrder()
	text := strings.TrimSpace(rw.SortOrder)
	switch {
	case rw.Strategy != request.StrategySort:
	case text == "":
		if m.SortOrder().IsUnsorted() {
			return nil, false, fmt.Errorf("%w: Cannot sort data without a valid sort order, table '%s' is unsorted and no sort order is provided", errs.ErrInvalidArgument, name)
		}
	case zorderRe.MatchString(text):
		s, err := layout.NewZOrderSorter(splitTerms(zorderRe.FindStringSubmatch(text)[1]), sc)
		return s, false, err
	default:
		parsed, err := layout.ParseOrder(splitTerms(text), sc)
		if err != nil {
			return nil, false, err
		}
		order = parsed
		want := strings.Join(layout.Describe(parsed, sc), ",")
		found := false
		for _, so := range m.SortOrders() {
			if !so.IsUnsorted() && strings.Join(layout.Describe(so, sc), ",") == want {
				order, found = so, true
			}
		}
		s, err := layout.NewSorter(order, sc)
		return s, found, err
	}
	s, err := layout.NewSorter(order, sc)
	return s, true, err
}

// splitTerms splits Spark's sort order text at the commas outside
// parentheses and backquotes.
func splitTerms(s string) []string {
	var out []string
	depth, quoted, from := 0, false, 0
	for i, r := range s {
		switch {
		case r == '`':
			quoted = !quoted
		case quoted:
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			out = append(out, s[from:i])
			from = i + 1
		}
	}
	return append(out, s[from:])
}

// plan returns the groups of files to rewrite, in the order Java's planner
// and rewrite-job-order give them.
func (c *compaction) plan(ctx context.Context, t *table.Table) ([]*fileGroup, error) {
	meta := t.Metadata()
	var filter iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	if c.where != nil {
		filter = planFilter(ctx, c.where.Iceberg(), t, c.start)
	}
	// Without a filter or delete files, the tasks are the live data files
	// read ahead for the commit; the manifests are read once.
	var tasks []table.FileScanTask
	ok := false
	if c.where == nil {
		tasks, ok = c.ahead.dataTasks()
	}
	if !ok {
		var err error
		tasks, err = t.Scan(table.WithSnapshotID(c.start.SnapshotID), table.WithRowFilter(filter)).PlanFiles(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: planning the files of %s: %v", errs.ErrIO, c.w.ID, err)
		}
	}
	cur := meta.PartitionSpec() // planned by the current spec, whatever output-spec-id says (as Java)
	byPartition := map[string][]table.FileScanTask{}
	seen := map[string]bool{}
	for _, task := range tasks {
		df := task.File
		if seen[df.FilePath()] {
			continue
		}
		seen[df.FilePath()] = true
		spec := meta.PartitionSpecByID(int(df.SpecID()))
		if spec == nil {
			return nil, fmt.Errorf("%w: data file %s has unknown partition spec %d", errs.ErrValidation, df.FilePath(), df.SpecID())
		}
		if c.where != nil && !c.where.MightMatch(df, *spec) {
			continue
		}
		task.Start, task.Length, task.Residual = 0, df.FileSizeBytes(), nil
		// Files of another spec may hold rows of several partitions of
		// the current one: they go together, under the empty partition
		// (BinPackRewriteFilePlanner.groupByPartition).
		key := partitionKey(cur, nil)
		if int(df.SpecID()) == cur.ID() {
			key = partitionKey(cur, df.Partition())
		}
		byPartition[key] = append(byPartition[key], task)
	}
	keys := make([]string, 0, len(byPartition))
	for k := range byPartition {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	o := c.opts
	var groups []*fileGroup
	files := 0
	for _, k := range keys {
		for _, g := range c.planPartition(byPartition[k]) {
			// max-files-to-rewrite cuts the groups, in plan order.
			if o.maxFilesToRewrite > 0 {
				if files >= o.maxFilesToRewrite {
					break
				}
				if n := o.maxFilesToRewrite - files; len(g.tasks) > n {
					g.tasks = g.tasks[:n]
				}
				files += len(g.tasks)
			}
			groups = append(groups, g)
		}
	}
	switch o.jobOrder {
	case "bytes-asc":
		slices.SortStableFunc(groups, func(a, b *fileGroup) int { return cmpInt(a.bytes, b.bytes) })
	case "bytes-desc":
		slices.SortStableFunc(groups, func(a, b *fileGroup) int { return cmpInt(b.bytes, a.bytes) })
	case "files-asc":
		slices.SortStableFunc(groups, func(a, b *fileGroup) int { return len(a.tasks) - len(b.tasks) })
	case "files-desc":
		slices.SortStableFunc(groups, func(a, b *fileGroup) int { return len(b.tasks) - len(a.tasks) })
	}
	var out []*fileGroup
	var total int64
	for _, g := range groups {
		if g.bytes+total <= o.maxBytesToRewrite {
			out = append(out, g)
			total += g.bytes
		}
	}
	return out, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// planPartition is SizeBasedFileRewritePlanner.planFileGroups for the
// files of one partition: the files worth rewriting (wrong size, too many
// deletes), bin-packed into groups of at most max-file-group-size-bytes,
// kept when a group is worth rewriting.
func (c *compaction) planPartition(tasks []table.FileScanTask) []*fileGroup {
	o := c.opts
	var pick []table.FileScanTask
	for _, t := range tasks {
		if o.rewriteAll || t.Length < o.minSize || t.Length > o.maxSize || c.tooManyDeletes(t) || c.tooHighDeleteRatio(t) {
			pick = append(pick, t)
		}
	}
	// BinPacking.ListPacker with lookback 1: one open bin; an item that
	// does not fit closes it.
	var groups []*fileGroup
	var open *fileGroup
	for _, t := range pick {
		if open != nil && open.bytes+t.Length > o.maxGroupSize {
			groups = append(groups, open)
			open = nil
		}
		if open == nil {
			open = &fileGroup{}
		}
		open.tasks = append(open.tasks, t)
		open.bytes += t.Length
	}
	if open != nil {
		groups = append(groups, open)
	}
	if o.rewriteAll {
		return groups
	}
	var out []*fileGroup
	for _, g := range groups {
		n := len(g.tasks)
		keep := n > 1 && n >= o.minInputFiles || n > 1 && g.bytes > o.target || g.bytes > o.maxSize
		for _, t := range g.tasks {
			keep = keep || c.tooManyDeletes(t) || c.tooHighDeleteRatio(t)
		}
		if keep {
			out = append(out, g)
		}
	}
	return out
}

func taskDeletes(t table.FileScanTask) []iceberg.DataFile {
	out := append([]iceberg.DataFile{}, t.DeleteFiles...)
	out = append(out, t.EqualityDeleteFiles...)
	return append(out, t.DeletionVectorFiles...)
}

func (c *compaction) tooManyDeletes(t table.FileScanTask) bool {
	return len(taskDeletes(t)) > 0 && len(taskDeletes(t)) >= c.opts.deleteFileThreshold
}

// tooHighDeleteRatio: the rows file-scoped delete files remove are at
// least delete-ratio-threshold of the file's.
func (c *compaction) tooHighDeleteRatio(t table.FileScanTask) bool {
	dels := taskDeletes(t)
	if len(dels) == 0 || t.File.Count() == 0 {
		return false
	}
	var known int64
	for _, d := range dels {
		if fileScoped(d) {
			known += d.Count()
		}
	}
	return float64(min(known, t.File.Count()))/float64(t.File.Count()) >= c.opts.deleteRatioThreshold
}

// fileScoped reports whether delete file d applies to one data file only
// (Java's ContentFileUtil.isFileScoped).
func fileScoped(d iceberg.DataFile) bool {
	if ref := d.ReferencedDataFile(); ref != nil && *ref != "" {
		return true
	}
	if d.ContentType() != iceberg.EntryContentPosDeletes {
		return false
	}
	lo, hi := d.LowerBoundValues()[posDeleteFilePathID], d.UpperBoundValues()[posDeleteFilePathID]
	return lo != nil && string(lo) == string(hi)
}

// rewrite rewrites the groups, up to max-concurrent-file-group-rewrites at
// once. With partial progress each group's error is kept in it; otherwise
// the first error stops the others and is returned.
func (c *compaction) rewrite(ctx context.Context, t *table.Table, groups []*fileGroup) error {
	limit := min(c.opts.maxConcurrent, write.Workers(), len(groups))
	sem := make(chan struct{}, limit)
	spread := write.RewriteSpread(limit)
	return forEach(ctx, len(groups), func(ctx context.Context, i int) error {
		sem <- struct{}{}
		defer func() { <-sem }()
		g := groups[i]
		g.out, g.err = c.rewriteGroup(ctx, t, g, spread)
		if g.err != nil && !c.opts.partialProgress {
			return g.err // stops the others
		}
		return nil
	})
}

// rewriteGroup reads the group's files one after another (the next ones
// decoded ahead on the other cores), their delete files applied, into one
// write of the current spec.
func (c *compaction) rewriteGroup(ctx context.Context, t *table.Table, g *fileGroup, spread int) (write.Written, error) {
	first := g.tasks[0]
	sch, batches, err := readTask(ctx, t, c.start, first, write.RewriteBatchRows)
	if err != nil {
		return write.Written{}, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, first.File.FilePath(), err)
	}
	all := readAhead(ctx, len(g.tasks), write.Workers(), func(i int) (iter.Seq2[arrow.RecordBatch, error], error) {
		if i == 0 {
			return batches, nil
		}
		task := g.tasks[i]
		_, b, err := readTask(ctx, t, c.start, task, write.RewriteBatchRows)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", task.File.FilePath(), err)
		}
		return b, nil
	})
	wr, _, err := write.RewriteStream(sch, all, "the files of a rewrite group",
		func(rec arrow.RecordBatch) ([]arrow.RecordBatch, bool, error) {
			rec.Retain()
			return []arrow.RecordBatch{rec}, true, nil
		},
		func(r array.RecordReader) (write.Written, error) { return c.w.WriteFiles(ctx, c.p, r, spread) })
	return wr, err
}

// cleanup deletes the files the groups wrote.
func (c *compaction) cleanup(ctx context.Context, groups []*fileGroup) {
	for _, g := range groups {
		c.w.DeleteFiles(context.WithoutCancel(ctx), c.p, g.out.Paths)
	}
}

// commitBatch commits the rewrite of groups as one "replace" snapshot on
// the branch's head, checking what was committed since the start: a
// rewritten file removed, or rows of one deleted, is a final conflict; an
// append is kept (the commit is staged again on the new head).
func (c *compaction) commitBatch(ctx context.Context, groups []*fileGroup, res *RewriteResult) error {
	w, p := c.w, c.p
	var remove []iceberg.DataFile
	var add write.Written
	rewritten := map[string]bool{}
	var bytes int64
	for _, g := range groups {
		for _, t := range g.tasks {
			remove = append(remove, t.File)
			rewritten[t.File.FilePath()] = true
			bytes += t.File.FileSizeBytes()
		}
		add.Files = append(add.Files, g.out.Files...)
		add.Paths = append(add.Paths, g.out.Paths...)
		add.Rows += g.out.Rows
		add.Bytes += g.out.Bytes
	}
	var seq *int64
	if c.opts.useStartingSeq && c.start.SequenceNumber > 0 {
		seq = &c.start.SequenceNumber
	}
	retry, err := w.RetryPolicy(p.Props)
	if err != nil {
		w.DeleteFiles(ctx, p, add.Paths)
		return err
	}
	w.testDelay()
	var committed *table.Table
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		head, err := w.Cat.LoadTable(ctx, w.Ident)
		if err != nil {
			return err
		}
		if err := write.CheckSchemaUnchanged(head.Metadata(), p); err != nil {
			return err
		}
		sc := scope{name: "the rewritten files", rewritten: rewritten, eqDeletesApply: seq != nil}
		if err := w.validateIsolation(ctx, head, c.start, write.IsolationNone, sc); err != nil {
			return err
		}
		reqs, updates, err := w.stageRewrite(ctx, p, head.Metadata(), head.MetadataLocation(), remove, add, seq, c.ahead)
		if err != nil {
			return err
		}
		committed, err = w.Publish(ctx, p, reqs, updates)
		return err
	})
	if err != nil {
		if !errors.Is(err, errs.ErrCommitStateUnknown) {
			w.DeleteFiles(context.WithoutCancel(ctx), p, add.Paths)
		}
		return catalog.MapErr(err, w.ID)
	}
	res.RewrittenDataFilesCount += len(remove)
	res.AddedDataFilesCount += len(add.Files)
	res.RewrittenBytesCount += bytes
	if sn := w.Committed(committed); sn != nil {
		res.SnapshotIDs = append(res.SnapshotIDs, sn.SnapshotID)
	}
	return nil
}

// stageRewrite stages a "replace" snapshot on base removing the data files
// remove (and the delete files that applied to them and to no other live
// data file: their rows were applied; obsoleteDeletes) and adding add's, with data sequence number seq when not nil
// (Java's RewriteFiles.dataSequenceNumber). Like Spark's rewrite commit,
// it does not count the delete files it drops in removed_delete_files_count
// (the snapshot summary does).
func (w *writer) stageRewrite(ctx context.Context, p *write.Plan, base table.Metadata, baseLoc string, remove []iceberg.DataFile, add write.Written, seq *int64, ahead *manifestsAhead) ([]table.Requirement, []table.Update, error) {
	st, err := w.Stage(p, base, baseLoc, add)
	if err != nil {
		return nil, nil, err
	}
	newSeq := int64(math.MaxInt64) // a sequence number above every file's
	if seq != nil {
		newSeq = *seq
	}
	dangling, err := obsoleteDeletes(ctx, st.Table, w.Head(base), remove, newSeq)
	if err != nil {
		return nil, nil, err
	}
	fs, err := st.Table.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	wfs, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return nil, nil, fmt.Errorf("%w: the table's storage cannot be written", errs.ErrNotSupported)
	}
	locs, err := st.Table.LocationProvider()
	if err != nil {
		return nil, nil, err
	}
	r := &replacement{base: base, parent: w.Head(base), fs: wfs, locs: locs, props: w.SnapshotProps(p),
		read: ahead, removeData: remove, removeDeletes: dangling, add: st.Files, dataSeq: seq}
	sn, err := r.stage(ctx)
	if err != nil {
		return nil, nil, stage.StagingErr(err)
	}
	st.Own(sn)
	return st.Finish(ctx, func(u []table.Update) []table.Update {
		return dvSummary(u, nil, dangling)
	})
}

// dropNameMapping removes the name mapping iceberg-go's rewrite builder
// sets on a table without one: our files carry field ids, and every other
// write of ours leaves the property alone.
func dropNameMapping(updates []table.Update) []table.Update {
	out := updates[:0:0]
	for _, u := range updates {
		if u.Action() == table.UpdateSetProperties {
			var doc struct {
				Updates map[string]string `json:"updates"`
			}
			if b, err := json.Marshal(u); err == nil && json.Unmarshal(b, &doc) == nil {
				if _, ok := doc.Updates[table.DefaultNameMappingKey]; ok && len(doc.Updates) == 1 {
					continue
				}
			}
		}
		out = append(out, u)
	}
	return out
}

// removeDanglingDeletes removes, in a snapshot of its own, the delete
// files of the head that can no longer apply to any live data file, as
// Java's RemoveDanglingDeleteFiles (remove-dangling-deletes): those of a
// partition (spec and tuple) without live data files, position deletes
// older than every data file of their partition, equality deletes not
// newer than all of them, and deletion vectors of a data file that is
// gone. It returns how many it removed.
func (c *compaction) removeDanglingDeletes(ctx context.Context, res *RewriteResult) (int, error) {
	w, p := c.w, c.p
	retry, err := w.RetryPolicy(p.Props)
	if err != nil {
		return 0, err
	}
	var (
		committed *table.Table
		removed   int
	)
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		head, err := w.Cat.LoadTable(ctx, w.Ident)
		if err != nil {
			return err
		}
		dangling, err := danglingDeletes(ctx, head, w.Head(head.Metadata()))
		if err != nil || len(dangling) == 0 {
			removed, committed = 0, nil
			return err
		}
		st, err := w.Open(head.Metadata(), head.MetadataLocation(), nil, nil)
		if err != nil {
			return err
		}
		rb := st.Tx.NewRewrite(w.SnapshotProps(p))
		for _, d := range dangling {
			rb.DeleteFile(d)
		}
		if err := rb.Commit(ctx); err != nil {
			return stage.StagingErr(err)
		}
		hadMapping := head.Metadata().NameMapping() != nil
		reqs, updates, err := st.Finish(ctx, func(u []table.Update) []table.Update {
			if !hadMapping {
				u = dropNameMapping(u)
			}
			return dvSummary(retitle(u, table.OpReplace, nil), nil, dangling)
		})
		if err != nil {
			return err
		}
		committed, err = w.Publish(ctx, p, reqs, updates)
		removed = len(dangling)
		return err
	})
	if err != nil {
		return 0, catalog.MapErr(err, w.ID)
	}
	if removed == 0 {
		return 0, nil
	}
	if sn := w.Committed(committed); sn != nil {
		res.SnapshotIDs = append(res.SnapshotIDs, sn.SnapshotID)
	}
	return removed, nil
}

// danglingDeletes lists the delete files of snapshot sn that apply to no
// live data file (removeDanglingDeletes).
func danglingDeletes(ctx context.Context, t *table.Table, sn *table.Snapshot) ([]iceberg.DataFile, error) {
	if sn == nil || t.Metadata().Version() < 2 {
		return nil, nil
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: opening the table's files: %v", errs.ErrIO, err)
	}
	manifests, err := sn.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the manifest list of snapshot %d: %v", errs.ErrIO, sn.SnapshotID, err)
	}
	meta := t.Metadata()
	key := func(df iceberg.DataFile) string {
		spec := meta.PartitionSpecByID(int(df.SpecID()))
		if spec == nil {
			return "?" + strconv.Itoa(int(df.SpecID()))
		}
		return partitionKey(*spec, df.Partition())
	}
	minSeq := map[string]int64{}
	live := map[string]bool{}
	type del struct {
		df  iceberg.DataFile
		seq int64
	}
	var deletes []del
	for _, m := range manifests {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, fmt.Errorf("%w: reading manifest %s: %v", errs.ErrIO, m.FilePath(), err)
			}
			df := e.DataFile()
			if df.ContentType() == iceberg.EntryContentData {
				k := key(df)
				if s, ok := minSeq[k]; !ok || e.SequenceNum() < s {
					minSeq[k] = e.SequenceNum()
				}
				live[df.FilePath()] = true
				continue
			}
			deletes = append(deletes, del{df, e.SequenceNum()})
		}
	}
	var out []iceberg.DataFile
	for _, d := range deletes {
		if table.IsDeletionVector(d.df) {
			if ref := d.df.ReferencedDataFile(); ref != nil && !live[*ref] {
				out = append(out, d.df)
			}
			continue
		}
		low, ok := minSeq[key(d.df)]
		switch {
		case !ok,
			d.df.ContentType() == iceberg.EntryContentPosDeletes && d.seq < low,
			d.df.ContentType() == iceberg.EntryContentEqDeletes && d.seq <= low:
			out = append(out, d.df)
		}
	}
	return out, nil
}

// obsoleteDeletes lists the live delete files of snapshot sn that apply to
// some of the data files removed and to no data file left: deletion vectors
// and file-scoped position deletes of a removed file; partition-scoped
// position deletes when every data file of their partition (spec and
// tuple) they may apply to (not newer) is removed; equality deletes of a
// partitioned spec when every data file of their partition older than
// them is removed and the new files, of data sequence number newSeq, are
// not older either. As Spark 4.1's rewrite
// commit, which removes them with the files they applied to.
func obsoleteDeletes(ctx context.Context, t *table.Table, sn *table.Snapshot, removed []iceberg.DataFile, newSeq int64) ([]iceberg.DataFile, error) {
	if sn == nil || t.Metadata().Version() < 2 || len(removed) == 0 {
		return nil, nil
	}
	gone := map[string]bool{}
	for _, f := range removed {
		gone[f.FilePath()] = true
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: opening the table's files: %v", errs.ErrIO, err)
	}
	manifests, err := sn.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the manifest list of snapshot %d: %v", errs.ErrIO, sn.SnapshotID, err)
	}
	if !slices.ContainsFunc(manifests, func(m iceberg.ManifestFile) bool { return m.ManifestContent() == iceberg.ManifestContentDeletes }) {
		return nil, nil // no delete file to drop: the data manifests need no reading
	}
	meta := t.Metadata()
	key := func(df iceberg.DataFile) (string, bool) {
		spec := meta.PartitionSpecByID(int(df.SpecID()))
		if spec == nil {
			return "", false
		}
		return partitionKey(*spec, df.Partition()), spec.IsUnpartitioned()
	}
	type seqs struct{ keptMin, goneMin int64 }
	byKey := map[string]*seqs{}
	type del struct {
		df  iceberg.DataFile
		seq int64
	}
	var deletes []del
	for _, m := range manifests {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, fmt.Errorf("%w: reading manifest %s: %v", errs.ErrIO, m.FilePath(), err)
			}
			df := e.DataFile()
			if df.ContentType() != iceberg.EntryContentData {
				deletes = append(deletes, del{df, e.SequenceNum()})
				continue
			}
			k, _ := key(df)
			s := byKey[k]
			if s == nil {
				s = &seqs{keptMin: math.MaxInt64, goneMin: math.MaxInt64}
				byKey[k] = s
			}
			if gone[df.FilePath()] {
				s.goneMin = min(s.goneMin, e.SequenceNum())
			} else {
				s.keptMin = min(s.keptMin, e.SequenceNum())
			}
		}
	}
	var out []iceberg.DataFile
	for _, d := range deletes {
		if ref := d.df.ReferencedDataFile(); ref != nil && *ref != "" {
			if gone[*ref] {
				out = append(out, d.df)
			}
			continue
		}
		if fileScoped(d.df) { // a v2 position delete file of one data file
			if gone[string(d.df.LowerBoundValues()[posDeleteFilePathID])] {
				out = append(out, d.df)
			}
			continue
		}
		k, unpartitioned := key(d.df)
		s := byKey[k]
		if s == nil || k == "" {
			continue
		}
		switch d.df.ContentType() {
		case iceberg.EntryContentPosDeletes:
			if s.goneMin <= d.seq && s.keptMin > d.seq {
				out = append(out, d.df)
			}
		case iceberg.EntryContentEqDeletes:
			if !unpartitioned && s.goneMin < d.seq && s.keptMin >= d.seq && newSeq >= d.seq {
				out = append(out, d.df)
			}
		}
	}
	return out, nil
}
