package rowlevel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/parquet"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// RewritePositionDeletesResult is what rewrite_position_delete_files did:
// Spark's four result columns, and the snapshots it committed (none when
// nothing needed rewriting).
type RewritePositionDeletesResult struct {
	Table                     string  `json:"table"`
	RewrittenDeleteFilesCount int     `json:"rewritten_delete_files_count"`
	AddedDeleteFilesCount     int     `json:"added_delete_files_count"`
	RewrittenBytesCount       int64   `json:"rewritten_bytes_count"`
	AddedBytesCount           int64   `json:"added_bytes_count"`
	SnapshotIDs               []int64 `json:"snapshot_ids"`
}

// posDeleteFile is one live position delete file of the starting snapshot
// and its data sequence number.
type posDeleteFile struct {
	df  iceberg.DataFile
	seq int64
}

// size is the file's size as Java's planner and result count it: a
// deletion vector's is that of its blob, not of the Puffin file holding it.
func (f posDeleteFile) size() int64 { return deleteFileSize(f.df) }

// deleteFileSize is the bytes of delete file d, a deletion vector's being
// its blob's (Java's ScanTaskUtil.contentSizeInBytes).
func deleteFileSize(d iceberg.DataFile) int64 {
	if table.IsDeletionVector(d) {
		if n := d.ContentSizeInBytes(); n != nil {
			return *n
		}
	}
	return d.FileSizeBytes()
}

// posDeleteGroup is position delete files of one partition rewritten
// together, and what they became.
type posDeleteGroup struct {
	files     []posDeleteFile
	spec      iceberg.PartitionSpec
	partition map[int]any
	bytes     int64
	maxSeq    int64
	// out are the new delete files, paths every file written.
	out   []iceberg.DataFile
	paths []string
	// dropped are the data files the group's deletes named that were not
	// live at the start: their deletes are left out (dangling).
	dropped map[string]bool
	err     error
}

// posDeleteRewrite is the state of one rewrite_position_delete_files.
type posDeleteRewrite struct {
	w     *writer
	p     *write.Plan
	opts  posDeleteOptions
	where *expr.Expr
	start *table.Snapshot
	// live are the data files of the starting snapshot.
	live map[string]bool
	// fileScoped: write.delete.granularity is file (a delete file per
	// data file, Java's default), not partition.
	fileScoped bool
	// dvs: the table is format-version 3, whose position deletes are
	// rewritten into deletion vectors.
	dvs bool
	// prune judges delete files by where projected onto their partitions.
	prune *partitionPruner
}

// RewritePositionDeleteFiles compacts the position delete files of t as
// Spark's rewrite_position_delete_files procedure (Iceberg Java 1.12's
// RewritePositionDeleteFilesSparkAction): the live position delete files
// (those whose partition `where` may match) are grouped by partition, the
// groups Java's bin-pack planner picks are read, their deletes of data
// files that are no longer live dropped, and written again, one file per
// data file (or per group with write.delete.granularity=partition), with
// the largest data sequence number of the files they replace; committed
// as one "replace" snapshot, or one per batch of groups with partial
// progress. On a v3 table (Java's v3 path): nothing is done unless some
// candidate is a Parquet position delete file (one written before the
// table was upgraded); then the same plan runs over all candidates,
// deletion vectors included, and each group is written as one Puffin file
// of deletion vectors, one per data file, holding the positions of all the
// group's files (an old deletion vector in the group is replaced by the
// new one). p is the append plan of the table.
func RewritePositionDeleteFiles(ctx context.Context, ww *write.Writer, p *write.Plan, t *table.Table) (*RewritePositionDeletesResult, error) {
	w := &writer{Writer: ww}
	rw := w.Req.Rewrite
	res := &RewritePositionDeletesResult{Table: w.ID.String(), SnapshotIDs: []int64{}}
	opts, err := parsePosDeleteOptions(rw.Options, p.Props)
	if err != nil {
		return nil, err
	}
	r := &posDeleteRewrite{w: w, p: p, opts: opts}
	switch g := strings.ToLower(strings.TrimSpace(p.Props[PropDeleteGranularity])); g {
	case "", "file":
		r.fileScoped = true
	case "partition":
	default:
		return nil, fmt.Errorf("%w: table property %s=%q: Unknown delete granularity: %s", errs.ErrInvalidArgument, PropDeleteGranularity, g, g)
	}
	if strings.TrimSpace(rw.Where) != "" {
		f, err := expr.Compile(rw.Where, p.Schema, expr.InZone(p.Eff.Zone))
		if err != nil {
			return nil, fmt.Errorf("rewrite_position_delete_files where %q: %w", rw.Where, err)
		}
		if !f.IsPredicate() {
			return nil, fmt.Errorf("%w: rewrite_position_delete_files where %q is not a boolean expression (it is %s)", errs.ErrValidation, rw.Where, f.Type())
		}
		r.where = f
		r.prune = newPartitionPruner(f.Iceberg(), t.Metadata())
	}
	if r.start, err = w.StartSnapshot(t, p); err != nil {
		return nil, err
	}
	if r.start == nil || t.Metadata().Version() < 2 { // nothing can have position deletes
		return res, nil
	}
	candidates, err := r.scan(ctx, t)
	if err != nil {
		return nil, err
	}
	if r.dvs = t.Metadata().Version() >= 3; r.dvs && !slices.ContainsFunc(candidates, func(c posDeleteFile) bool { return !table.IsDeletionVector(c.df) }) {
		return res, nil // every position delete is a deletion vector already
	}
	groups := r.plan(t, candidates)
	if len(groups) == 0 {
		return res, nil
	}
	if err := r.rewrite(ctx, groups); err != nil || ctx.Err() != nil {
		r.cleanup(ctx, groups)
		if err == nil {
			err = fmt.Errorf("%w: %v", errs.ErrCancelled, ctx.Err())
		}
		return nil, err
	}
	if r.dvs {
		if err := oneDVPerDataFile(groups); err != nil {
			r.cleanup(ctx, groups)
			return nil, err
		}
	}
	if !opts.partialProgress {
		if err := r.commitBatch(ctx, groups, res); err != nil {
			return nil, err
		}
		return res, nil
	}
	// Partial progress: the groups rewritten are committed in up to
	// max-commits batches; a group that failed, or a batch whose commit
	// failed, is left out of the result and its files deleted, as Java's
	// commit service does (it fails nothing).
	var done []*posDeleteGroup
	for _, g := range groups {
		if g.err == nil {
			done = append(done, g)
		} else {
			r.cleanup(ctx, []*posDeleteGroup{g})
		}
	}
	size := (len(groups) + opts.maxCommits - 1) / opts.maxCommits
	for from := 0; from < len(done); from += size {
		batch := done[from:min(from+size, len(done))]
		if err := r.commitBatch(ctx, batch, res); err != nil && errors.Is(err, errs.ErrCommitStateUnknown) {
			return nil, err
		}
	}
	return res, nil
}

// scan lists the live position delete files of the starting snapshot that
// where may match (by their partition values), and the live data files.
func (r *posDeleteRewrite) scan(ctx context.Context, t *table.Table) ([]posDeleteFile, error) {
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: opening the table's files: %v", errs.ErrIO, err)
	}
	manifests, err := r.start.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the manifest list of snapshot %d: %v", errs.ErrIO, r.start.SnapshotID, err)
	}
	meta := t.Metadata()
	r.live = map[string]bool{}
	var out []posDeleteFile
	for _, m := range manifests {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, fmt.Errorf("%w: reading manifest %s: %v", errs.ErrIO, m.FilePath(), err)
			}
			df := e.DataFile()
			switch df.ContentType() {
			case iceberg.EntryContentData:
				r.live[df.FilePath()] = true
			case iceberg.EntryContentPosDeletes:
				spec := meta.PartitionSpecByID(int(df.SpecID()))
				if spec == nil {
					return nil, fmt.Errorf("%w: delete file %s has unknown partition spec %d", errs.ErrValidation, df.FilePath(), df.SpecID())
				}
				if r.where != nil && (!r.where.MightMatch(df, *spec) || !r.prune.mightMatch(df, *spec)) {
					continue
				}
				out = append(out, posDeleteFile{df: df, seq: e.SequenceNum()})
			}
		}
	}
	return out, nil
}

// plan groups the candidates by partition (spec and tuple) and returns the
// groups Java's BinPackRewritePositionDeletePlanner would rewrite, ordered
// by rewrite-job-order.
func (r *posDeleteRewrite) plan(t *table.Table, candidates []posDeleteFile) []*posDeleteGroup {
	meta := t.Metadata()
	byPartition := map[string][]posDeleteFile{}
	for _, c := range candidates {
		spec := meta.PartitionSpecByID(int(c.df.SpecID()))
		k := partitionKey(*spec, c.df.Partition())
		byPartition[k] = append(byPartition[k], c)
	}
	keys := slices.Sorted(maps.Keys(byPartition))
	var groups []*posDeleteGroup
	for _, k := range keys {
		files := byPartition[k]
		// Manifest order varies with the commit history; plan in path order.
		slices.SortFunc(files, func(a, b posDeleteFile) int { return strings.Compare(a.df.FilePath(), b.df.FilePath()) })
		for _, fs := range planSizedGroups(files, r.opts) {
			first := fs[0].df
			g := &posDeleteGroup{files: fs, spec: *meta.PartitionSpecByID(int(first.SpecID())), partition: first.Partition(), maxSeq: math.MinInt64}
			for _, f := range fs {
				g.bytes += f.size()
				g.maxSeq = max(g.maxSeq, f.seq)
			}
			groups = append(groups, g)
		}
	}
	switch r.opts.jobOrder {
	case "bytes-asc":
		slices.SortStableFunc(groups, func(a, b *posDeleteGroup) int { return cmpInt(a.bytes, b.bytes) })
	case "bytes-desc":
		slices.SortStableFunc(groups, func(a, b *posDeleteGroup) int { return cmpInt(b.bytes, a.bytes) })
	case "files-asc":
		slices.SortStableFunc(groups, func(a, b *posDeleteGroup) int { return len(a.files) - len(b.files) })
	case "files-desc":
		slices.SortStableFunc(groups, func(a, b *posDeleteGroup) int { return len(b.files) - len(a.files) })
	}
	return groups
}

// rewrite rewrites the groups, up to max-concurrent-file-group-rewrites at
// once. With partial progress each group's error is kept in it; otherwise
// the first error stops the others and is returned.
func (r *posDeleteRewrite) rewrite(ctx context.Context, groups []*posDeleteGroup) error {
	fs, err := r.w.DataFS(ctx, r.p)
	if err != nil {
		return err
	}
	limit := min(r.opts.maxConcurrent, write.Workers(), len(groups))
	sem := make(chan struct{}, limit)
	return forEach(ctx, len(groups), func(ctx context.Context, i int) error {
		sem <- struct{}{}
		defer func() { <-sem }()
		g := groups[i]
		g.err = r.rewriteGroup(ctx, fs, g)
		if g.err != nil && !r.opts.partialProgress {
			return g.err
		}
		return nil
	})
}

// rewriteGroup reads the deletes of the group's files, keeps those of data
// files live at the start, and writes them sorted by data file and
// position (as Spark's runner: a left semi join with the data files, then
// sortWithinPartitions(file_path, pos)).
func (r *posDeleteRewrite) rewriteGroup(ctx context.Context, fs icebergio.WriteFileIO, g *posDeleteGroup) error {
	byFile := map[string]*dv.RoaringPositionBitmap{}
	g.dropped = map[string]bool{}
	of := func(path string) *dv.RoaringPositionBitmap {
		if !r.live[path] {
			g.dropped[path] = true
			return nil
		}
		bm := byFile[path]
		if bm == nil {
			bm = dv.NewRoaringPositionBitmap()
			byFile[path] = bm
		}
		return bm
	}
	for _, f := range g.files {
		switch {
		case table.IsDeletionVector(f.df) && f.df.ReferencedDataFile() != nil:
			bm, err := dv.ReadDV(fs, f.df)
			if err != nil {
				return fmt.Errorf("%w: reading deletion vector %s: %v", errs.ErrIO, f.df.FilePath(), err)
			}
			if into := of(*f.df.ReferencedDataFile()); into != nil {
				into.Or(bm)
			}
		case f.df.FileFormat() == iceberg.ParquetFile:
			err := scanPositionDeletes(ctx, fs, f.df, func(path string, pos int64) {
				if into := of(path); into != nil {
					into.Set(uint64(pos))
				}
			})
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: position delete file %s is %s; only Parquet position delete files and deletion vectors are rewritten", errs.ErrNotSupported, f.df.FilePath(), f.df.FileFormat())
		}
	}
	if len(byFile) == 0 {
		return nil // every delete dangling: the files just go
	}
	paths := slices.Sorted(maps.Keys(byFile))
	if r.dvs {
		return r.writeGroupDVs(fs, g, paths, byFile)
	}
	props := maps.Clone(r.p.Eff.Props)
	props[parquet.PropTargetFileSize] = strconv.FormatInt(r.opts.writeMaxFileSize(), 10)
	pqOpts, err := parquet.OptionsFromProperties(props)
	if err != nil {
		return err
	}
	dir, err := r.p.DataRoot().Dir(g.spec, r.p.Schema, g.partition)
	if err != nil {
		return err
	}
	opID := uuid.New().String()
	n := 0
	name := func() string {
		n++
		return fmt.Sprintf("%s/%05d-%s-deletes.parquet", dir, n, opID)
	}
	// emit writes the deletes of the data files in into new files whose
	// file_path bounds are the first and last of in (written whole, as
	// Java does, so a file of one data file is recognisably file-scoped).
	emit := func(in []string) error {
		wr := parquet.NewWriter(ctx, fs, posDeleteSchema, pqOpts, name)
		var werr error
		for _, path := range in {
			rec := positionsBatch(path, byFile[path])
			werr = wr.Write(rec)
			rec.Release()
			if werr != nil {
				break
			}
		}
		files, cerr := wr.Close()
		for _, f := range files {
			g.paths = append(g.paths, f.Path)
		}
		if err := errors.Join(werr, cerr); err != nil {
			return err
		}
		ref := ""
		if len(in) == 1 {
			ref = in[0]
		}
		for _, f := range files {
			df, err := posDeleteDataFile(g.spec, g.partition, f, in[0], in[len(in)-1], ref)
			if err != nil {
				return err
			}
			g.out = append(g.out, df)
		}
		return nil
	}
	if !r.fileScoped {
		return emit(paths)
	}
	for _, path := range paths {
		if err := emit([]string{path}); err != nil {
			return err
		}
	}
	return nil
}

// writeGroupDVs writes the group's deletes as one Puffin file in the data
// directory, a deletion vector per data file in path order (as Java's
// DV writer for a task of the position-deletes rewrite).
func (r *posDeleteRewrite) writeGroupDVs(fs icebergio.WriteFileIO, g *posDeleteGroup, paths []string, byFile map[string]*dv.RoaringPositionBitmap) error {
	path, err := r.p.DataRoot().File(uuid.New().String() + "-deletes.puffin")
	if err != nil {
		return err
	}
	dvs := make([]dvOut, len(paths))
	for i, p := range paths {
		dvs[i] = dvOut{spec: g.spec, partition: g.partition, path: p, positions: byFile[p]}
	}
	g.paths = append(g.paths, path)
	files, err := writeDVs(fs, path, dvs)
	if err != nil {
		return err
	}
	g.out = files
	return nil
}

// oneDVPerDataFile fails when two groups wrote a deletion vector for the
// same data file (a partition split into several groups by
// max-file-group-input-files): a data file may have only one. Java merges
// two such vectors at commit when their data sequence numbers match and
// fails ("Cannot merge DVs, mismatched sequence numbers") otherwise; the
// merge is not done here, so both fail (a mismatch is reported first).
func oneDVPerDataFile(groups []*posDeleteGroup) error {
	seen := map[string]*posDeleteGroup{}
	var same error
	for _, g := range groups {
		for _, d := range g.out {
			ref := *d.ReferencedDataFile()
			o := seen[ref]
			switch {
			case o == nil:
				seen[ref] = g
			case o.maxSeq != g.maxSeq:
				return fmt.Errorf("%w: Cannot merge DVs, mismatched sequence numbers (%d, %d) for %s", errs.ErrValidation, min(o.maxSeq, g.maxSeq), max(o.maxSeq, g.maxSeq), ref)
			case same == nil:
				same = fmt.Errorf("%w: two file groups wrote a deletion vector for %s; merging them is not supported (rewrite without max-file-group-input-files)", errs.ErrNotSupported, ref)
			}
		}
	}
	return same
}

// posDeleteDataFile describes a written position delete file of spec and
// partition whose file_path values lie in [lo, hi]; ref (when not empty) is
// the one data file it applies to.
func posDeleteDataFile(spec iceberg.PartitionSpec, partition map[int]any, f parquet.File, lo, hi, ref string) (iceberg.DataFile, error) {
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentPosDeletes, f.Path, iceberg.ParquetFile, maps.Clone(partition), nil, nil, f.Rows, f.Size)
	if err != nil {
		return nil, fmt.Errorf("%w: describing %s: %v", errs.ErrValidation, f.Path, err)
	}
	lower, upper := maps.Clone(f.Lower), maps.Clone(f.Upper)
	if lower == nil {
		lower = map[int][]byte{}
	}
	if upper == nil {
		upper = map[int][]byte{}
	}
	lower[posDeleteFilePathID], upper[posDeleteFilePathID] = []byte(lo), []byte(hi)
	b.ColumnSizes(f.ColumnSizes).ValueCounts(f.ValueCounts).NullValueCounts(f.NullCounts).
		LowerBoundValues(lower).UpperBoundValues(upper).SplitOffsets(f.SplitOffsets)
	if ref != "" {
		b.ReferencedDataFile(ref)
	}
	return b.Build(), nil
}

// cleanup deletes the files the groups wrote.
func (r *posDeleteRewrite) cleanup(ctx context.Context, groups []*posDeleteGroup) {
	for _, g := range groups {
		r.w.DeleteFiles(context.WithoutCancel(ctx), r.p, g.paths)
		g.paths = nil
	}
}

// commitBatch commits the rewrite of groups as one "replace" snapshot on
// the branch's head: their delete files out, the new ones in (each with
// its group's largest data sequence number, as Java's
// RewritePositionDeletesCommitManager). Every attempt first checks what
// was committed since the start: a rewritten delete file removed (another
// rewrite, or a compaction that applied it), or a data file whose deletes
// were dropped as dangling added back, or a deletion vector added for a
// data file this rewrite writes one for (v3: one per data file, as Java's
// check for concurrently added DVs), is a final ErrCommitConflict, as
// is a start that is no longer an ancestor of the head; anything else
// (appends, new deletes) is kept. The written files are deleted when the
// commit fails for certain.
func (r *posDeleteRewrite) commitBatch(ctx context.Context, groups []*posDeleteGroup, res *RewritePositionDeletesResult) error {
	w, p := r.w, r.p
	removed := map[string]bool{}
	dropped := map[string]bool{}
	var paths []string
	var bytes, addedBytes int64
	var rewritten, added int
	var addedDVs, removedDVs []iceberg.DataFile
	for _, g := range groups {
		for _, f := range g.files {
			removed[f.df.FilePath()] = true
			bytes += f.size()
		}
		for _, f := range g.files {
			if table.IsDeletionVector(f.df) {
				removedDVs = append(removedDVs, f.df)
			}
		}
		for _, d := range g.out {
			addedBytes += deleteFileSize(d)
			if table.IsDeletionVector(d) {
				addedDVs = append(addedDVs, d)
			}
		}
		maps.Copy(dropped, g.dropped)
		rewritten += len(g.files)
		added += len(g.out)
		paths = append(paths, g.paths...)
	}
	retry, err := w.RetryPolicy(p.Props)
	if err != nil {
		w.DeleteFiles(context.WithoutCancel(ctx), p, paths)
		return err
	}
	w.testDelay()
	var committed *table.Table
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		head, err := w.Cat.LoadTable(ctx, w.Ident)
		if err != nil {
			return err
		}
		if err := w.checkPosDeleteRewrite(ctx, head, r.start, removed, dropped, addedDVs); err != nil {
			return err
		}
		st, err := w.Open(head.Metadata(), head.MetadataLocation(), nil, nil)
		if err != nil {
			return err
		}
		rb := st.Tx.NewRewrite(w.SnapshotProps(p))
		for _, g := range groups {
			for _, f := range g.files {
				rb.DeleteFile(f.df)
			}
			for _, d := range g.out {
				rb.AddDeleteFileWithDataSequenceNumber(d, g.maxSeq)
			}
		}
		if err := rb.Commit(ctx); err != nil {
			return stage.StagingErr(err)
		}
		hadMapping := head.Metadata().NameMapping() != nil
		reqs, updates, err := st.Finish(ctx, func(u []table.Update) []table.Update {
			if !hadMapping {
				u = dropNameMapping(u)
			}
			return dvSummary(retitle(u, table.OpReplace, nil), addedDVs, removedDVs)
		})
		if err != nil {
			return err
		}
		committed, err = w.Publish(ctx, p, reqs, updates)
		return err
	})
	if err != nil {
		if !errors.Is(err, errs.ErrCommitStateUnknown) {
			w.DeleteFiles(context.WithoutCancel(ctx), p, paths)
		}
		return catalog.MapErr(err, w.ID)
	}
	res.RewrittenDeleteFilesCount += rewritten
	res.AddedDeleteFilesCount += added
	res.RewrittenBytesCount += bytes
	res.AddedBytesCount += addedBytes
	if sn := w.Committed(committed); sn != nil {
		res.SnapshotIDs = append(res.SnapshotIDs, sn.SnapshotID)
	}
	return nil
}

// checkPosDeleteRewrite checks the snapshots committed on the branch after
// start for changes a position-delete rewrite must not overwrite (see
// commitBatch); a conflict is final.
func (w *writer) checkPosDeleteRewrite(ctx context.Context, head *table.Table, start *table.Snapshot, removed, dropped map[string]bool, dvs []iceberg.DataFile) error {
	m := head.Metadata()
	dvOf := map[string]bool{}
	for _, d := range dvs {
		dvOf[*d.ReferencedDataFile()] = true
	}
	concurrent, err := w.committedSince(m, &start.SnapshotID, "the rewrite")
	if err != nil {
		return err
	}
	if len(concurrent) == 0 {
		return nil
	}
	fs, err := head.FS(ctx)
	if err != nil {
		return fmt.Errorf("%w: opening the table's files: %v", errs.ErrIO, err)
	}
	for i := len(concurrent) - 1; i >= 0; i-- {
		sn := concurrent[i]
		op := "unknown"
		if sn.Summary != nil {
			op = string(sn.Summary.Operation)
		}
		manifests, err := sn.Manifests(fs)
		if err != nil {
			return fmt.Errorf("%w: reading snapshot %d: %v", errs.ErrIO, sn.SnapshotID, err)
		}
		for _, mf := range manifests {
			if mf.SnapshotID() != sn.SnapshotID {
				continue
			}
			for e, err := range mf.Entries(fs, false) {
				if err != nil {
					return fmt.Errorf("%w: reading manifest %s: %v", errs.ErrIO, mf.FilePath(), err)
				}
				if e.SnapshotID() != sn.SnapshotID {
					continue
				}
				df := e.DataFile()
				switch {
				case e.Status() == iceberg.EntryStatusDELETED && df.ContentType() != iceberg.EntryContentData && removed[df.FilePath()]:
					return commit.Final(fmt.Errorf("%w: concurrent snapshot %d (%s) removed position delete file %s, which this rewrite replaces", errs.ErrCommitConflict, sn.SnapshotID, op, df.FilePath()))
				case e.Status() == iceberg.EntryStatusADDED && df.ContentType() == iceberg.EntryContentData && dropped[df.FilePath()]:
					return commit.Final(fmt.Errorf("%w: concurrent snapshot %d (%s) added data file %s, whose deletes this rewrite dropped as dangling", errs.ErrCommitConflict, sn.SnapshotID, op, df.FilePath()))
				case e.Status() == iceberg.EntryStatusADDED && table.IsDeletionVector(df) && df.ReferencedDataFile() != nil && dvOf[*df.ReferencedDataFile()]:
					return commit.Final(fmt.Errorf("%w: concurrent snapshot %d (%s) added a deletion vector for %s, which this rewrite also writes one for", errs.ErrCommitConflict, sn.SnapshotID, op, *df.ReferencedDataFile()))
				}
			}
		}
	}
	return nil
}

// scanPositionDeletes calls fn with each (file_path, pos) row of the
// Parquet position delete file d.
func scanPositionDeletes(ctx context.Context, fs icebergio.IO, d iceberg.DataFile, fn func(path string, pos int64)) error {
	return readPositionDeleteRows(ctx, fs, d, func(paths arrow.Array, poss arrow.Array) error {
		type strs interface{ Value(int) string }
		sv, ok := paths.(strs)
		ov, ok2 := poss.(interface {
			Value(int) int64
			IsValid(int) bool
		})
		if !ok || !ok2 || paths.Len() != poss.Len() {
			return fmt.Errorf("%w: position delete file %s has columns %s, %s", errs.ErrValidation, d.FilePath(), paths.DataType(), poss.DataType())
		}
		for j := range paths.Len() {
			if paths.IsValid(j) && ov.IsValid(j) {
				fn(sv.Value(j), ov.Value(j))
			}
		}
		return nil
	})
}
