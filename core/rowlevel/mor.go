package rowlevel

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pqfile "github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/parquet"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
	"github.com/pyiceberg-go/pyiceberg-go/core/version"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// Reserved field ids of position delete files and deletion vectors (spec).
const (
	posDeletePosID = 2147483545
	rowPositionID  = 2147483645
)

// morTarget is one data file a merge-on-read operation deletes rows from.
type morTarget struct {
	file iceberg.DataFile
	spec iceberg.PartitionSpec
	// deleted holds the positions deleted before this operation; matched
	// the positions it deletes now (disjoint from deleted).
	deleted, matched *dv.RoaringPositionBitmap
	// oldDVs are the deletion vectors the new one replaces (v3).
	oldDVs []iceberg.DataFile
	// updated are the new rows of an update, written as data files.
	updated write.Written
}

// mergeOnRead runs delete or update by writing delete files (position
// deletes on v2, deletion vectors on v3) instead of rewriting data files.
func (fl *filtered) mergeOnRead(ctx context.Context, t *table.Table, start *table.Snapshot, level string) (*report.Result, error) {
	w, p := fl.w, fl.p
	if t.Metadata().Version() < 2 {
		return nil, fmt.Errorf("%w: merge-on-read needs format-version 2 or later (table %s is v%d)", errs.ErrNotSupported, w.ID, t.Metadata().Version())
	}
	first := w.Head(t.Metadata())
	if first == nil {
		return w.Result(t, write.Written{}, false), nil
	}
	sc := t.Scan(table.WithSnapshotID(first.SnapshotID), table.WithRowFilter(planFilter(ctx, fl.filter.Iceberg(), t, first)))
	tasks, err := sc.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: planning the files of %s: %v", errs.ErrIO, w.ID, err)
	}
	var candidates []table.FileScanTask
	allWhole := fl.op == request.OpDelete
	seen := map[string]bool{}
	for _, task := range tasks {
		df := task.File
		spec := t.Metadata().PartitionSpecByID(int(df.SpecID()))
		if seen[df.FilePath()] || spec == nil || !fl.filter.MightMatch(df, *spec) {
			continue
		}
		seen[df.FilePath()] = true
		if len(task.EqualityDeleteFiles) > 0 {
			return nil, fmt.Errorf("%w: data file %s has equality deletes; merge-on-read %s cannot count its live rows (use copy-on-write)", errs.ErrNotSupported, df.FilePath(), fl.op)
		}
		allWhole = allWhole && fl.filter.MatchesAll(df, *spec)
		task.Start, task.Length, task.Residual = 0, df.FileSizeBytes(), nil
		candidates = append(candidates, task)
	}
	if allWhole {
		// Whole files only: a metadata-only delete, as Spark does.
		return fl.copyOnWrite(ctx, t, start, level, write.Written{})
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: opening the table's files: %v", errs.ErrIO, err)
	}
	targets := make([]*morTarget, len(candidates))
	err = forEach(ctx, len(candidates), func(ctx context.Context, i int) error {
		tg, err := fl.matchPositions(ctx, fs, t, first, candidates[i])
		targets[i] = tg
		return err
	})
	var hit []*morTarget
	for _, tg := range targets {
		if tg != nil && !tg.matched.IsEmpty() {
			hit = append(hit, tg)
		}
	}
	var newRows write.Written
	for _, tg := range targets {
		if tg == nil {
			continue
		}
		newRows.Files = append(newRows.Files, tg.updated.Files...)
		newRows.Paths = append(newRows.Paths, tg.updated.Paths...)
		newRows.Rows += tg.updated.Rows
		newRows.Bytes += tg.updated.Bytes
	}
	if err != nil || len(hit) == 0 {
		w.DeleteFiles(context.WithoutCancel(ctx), p, newRows.Paths)
		if err != nil {
			return nil, err
		}
		return w.Result(t, write.Written{}, false), nil
	}
	deletes, delPaths, err := w.writeDeletes(ctx, p, t.Metadata().Version(), hit)
	cleanup := func() {
		w.DeleteFiles(context.WithoutCancel(ctx), p, append(append([]string{}, newRows.Paths...), delPaths...))
	}
	if err != nil {
		cleanup()
		return nil, err
	}
	touched := map[string]bool{}
	var oldDVs []iceberg.DataFile
	for _, tg := range hit {
		touched[tg.file.FilePath()] = true
		oldDVs = append(oldDVs, tg.oldDVs...)
	}
	committed, err := w.commitDelta(ctx, p, start, level, func(head *table.Table) scope {
		return scope{name: "rows matching " + fl.filter.String(), newData: fl.mightMatch(head), deletesIn: fl.mightMatch(head), rewritten: touched}
	}, func(ctx context.Context, head *table.Table) ([]table.Requirement, []table.Update, error) {
		return w.stageRowDelta(ctx, p, head.Metadata(), head.MetadataLocation(), newRows, deletes, oldDVs)
	}, append(append([]string{}, newRows.Paths...), delPaths...))
	if err != nil {
		return nil, err
	}
	return w.Result(committed, newRows, true), nil
}

// commitDelta commits, with retries, the snapshot stage builds on the
// current head, once the isolation check from start with the scope
// scopeOf(head) passes. If it fails, the files at paths are deleted (unless
// the commit's outcome is unknown).
func (w *writer) commitDelta(ctx context.Context, p *write.Plan, start *table.Snapshot, level string,
	scopeOf func(head *table.Table) scope,
	stage func(ctx context.Context, head *table.Table) ([]table.Requirement, []table.Update, error),
	paths []string,
) (*table.Table, error) {
	retry, err := w.RetryPolicy(p.Props)
	if err != nil {
		w.DeleteFiles(context.WithoutCancel(ctx), p, paths)
		return nil, err
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
		if err := w.CheckStream(head.Metadata()); err != nil {
			return err
		}
		if err := w.validateIsolation(ctx, head, start, level, scopeOf(head)); err != nil {
			return err
		}
		reqs, updates, err := stage(ctx, head)
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
		return nil, catalog.MapErr(err, w.ID)
	}
	return committed, nil
}

// forEach runs fn(i) for i in [0, n) on up to GOMAXPROCS goroutines and
// returns the first error; a panic in fn becomes an error.
func forEach(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	for range min(n, write.Workers()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					fail(fmt.Errorf("%w: internal error: %v", errs.ErrIO, r))
					for range work {
					}
				}
			}()
			for i := range work {
				if ctx.Err() != nil {
					continue
				}
				if err := fn(ctx, i); err != nil {
					fail(err)
				}
			}
		}()
	}
	for i := range n {
		select {
		case work <- i:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil && context.Cause(ctx) != context.Canceled {
		firstErr = fmt.Errorf("%w: %v", errs.ErrCancelled, ctx.Err())
	}
	return firstErr
}

// matchPositions reads a data file as it is on disk (row positions intact),
// with the positions its delete files already remove, and records which
// live rows the filter matches; for update it writes their new values.
func (fl *filtered) matchPositions(ctx context.Context, fs icebergio.IO, t *table.Table, at *table.Snapshot, task table.FileScanTask) (*morTarget, error) {
	df := task.File
	tg, batches, err := openTarget(ctx, fs, t, at, task)
	if err != nil {
		return nil, err
	}
	mem := memory.DefaultAllocator
	f := fl.residual(t, df)
	var (
		pos     uint64
		updated []arrow.RecordBatch
		schema  *arrow.Schema
	)
	defer func() { write.ReleaseAll(updated) }()
	for rec, err := range batches {
		if err != nil {
			return nil, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, df.FilePath(), err)
		}
		n, err := fl.markBatch(ctx, f, rec, pos, tg, mem, &updated)
		schema = rec.Schema()
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("%s (in %s): %w", fl.op, df.FilePath(), err)
		}
		pos += uint64(n)
	}
	if len(updated) > 0 {
		rdr, err := array.NewRecordReader(schema, updated)
		if err != nil {
			return nil, fmt.Errorf("%w: writing updated rows of %s: %v", errs.ErrValidation, df.FilePath(), err)
		}
		defer rdr.Release()
		if tg.updated, err = fl.w.WriteData(ctx, fl.p, rdr); err != nil {
			return nil, err
		}
	}
	return tg, nil
}

// openTarget loads the positions task's delete files remove from its data
// file and opens the file's rows as they are on disk (positions intact).
func openTarget(ctx context.Context, fs icebergio.IO, t *table.Table, at *table.Snapshot, task table.FileScanTask) (*morTarget, iter.Seq2[arrow.RecordBatch, error], error) {
	df := task.File
	tg := &morTarget{file: df, spec: *t.Metadata().PartitionSpecByID(int(df.SpecID())), deleted: dv.NewRoaringPositionBitmap(), matched: dv.NewRoaringPositionBitmap()}
	for _, d := range task.DeletionVectorFiles {
		bm, err := dv.ReadDV(fs, d)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: reading deletion vector %s: %v", errs.ErrIO, d.FilePath(), err)
		}
		tg.deleted.Or(bm)
		tg.oldDVs = append(tg.oldDVs, d)
	}
	for _, d := range task.DeleteFiles {
		if err := readPositionDeletes(ctx, fs, d, df.FilePath(), tg.deleted); err != nil {
			return nil, nil, err
		}
	}
	raw := task
	raw.DeleteFiles, raw.DeletionVectorFiles = nil, nil
	_, batches, err := t.Scan(table.WithSnapshotID(at.SnapshotID)).ReadTasks(ctx, []table.FileScanTask{raw})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, df.FilePath(), err)
	}
	return tg, batches, nil
}

// markBatch adds the positions of rec's live rows that filter f (the
// operation's filter or its residual for the file) matches to tg.matched
// (rec starts at position first); for update it appends their updated
// values to updated. Returns rec's row count.
func (fl *filtered) markBatch(ctx context.Context, f *expr.Expr, rec arrow.RecordBatch, first uint64, tg *morTarget, mem memory.Allocator, updated *[]arrow.RecordBatch) (int64, error) {
	bm, err := mask(ctx, f, rec, mem)
	if err != nil {
		return 0, err
	}
	defer bm.Release()
	n := rec.NumRows()
	hits := make([]bool, n)
	any := false
	for i := range int(n) {
		p := first + uint64(i)
		if bm.IsValid(i) && bm.Value(i) && !tg.deleted.Contains(p) {
			tg.matched.Set(p)
			hits[i] = true
			any = true
		}
	}
	if fl.op != request.OpUpdate || !any {
		return n, nil
	}
	b := array.NewBooleanBuilder(mem)
	b.AppendValues(hits, nil)
	sel := b.NewBooleanArray()
	b.Release()
	defer sel.Release()
	hit, err := compute.FilterRecordBatch(ctx, rec, sel, compute.DefaultFilterOptions())
	if err != nil {
		return 0, fmt.Errorf("%w: filtering rows: %v", errs.ErrValidation, err)
	}
	defer hit.Release()
	out, err := fl.assign(ctx, hit, mem)
	if err != nil {
		return 0, err
	}
	*updated = append(*updated, out)
	return n, nil
}

// readPositionDeletes adds the positions a position delete file removes
// from data file path to into.
func readPositionDeletes(ctx context.Context, fs icebergio.IO, d iceberg.DataFile, path string, into *dv.RoaringPositionBitmap) error {
	return scanPositionDeletes(ctx, fs, d, func(p string, pos int64) {
		if p == path {
			into.Set(uint64(pos))
		}
	})
}

// readPositionDeleteRows reads the Parquet position delete file d and
// calls fn with each chunk of its file_path and pos columns.
func readPositionDeleteRows(ctx context.Context, fs icebergio.IO, d iceberg.DataFile, fn func(paths, poss arrow.Array) error) error {
	f, err := fs.Open(d.FilePath())
	if err != nil {
		return fmt.Errorf("%w: opening position deletes %s: %v", errs.ErrIO, d.FilePath(), err)
	}
	defer f.Close()
	rdr, err := pqfile.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("%w: reading position deletes %s: %v", errs.ErrIO, d.FilePath(), err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%w: reading position deletes %s: %v", errs.ErrIO, d.FilePath(), err)
	}
	tbl, err := fr.ReadTable(ctx)
	if err != nil {
		return fmt.Errorf("%w: reading position deletes %s: %v", errs.ErrIO, d.FilePath(), err)
	}
	defer tbl.Release()
	paths, poss := tbl.Schema().FieldIndices("file_path"), tbl.Schema().FieldIndices("pos")
	if len(paths) != 1 || len(poss) != 1 {
		return fmt.Errorf("%w: position delete file %s lacks file_path/pos", errs.ErrValidation, d.FilePath())
	}
	pc, oc := tbl.Column(paths[0]).Data().Chunks(), tbl.Column(poss[0]).Data().Chunks()
	for i := range pc {
		if err := fn(pc[i], oc[i]); err != nil {
			return err
		}
	}
	return nil
}

var posDeleteSchema = arrow.NewSchema([]arrow.Field{
	{Name: "file_path", Type: arrow.BinaryTypes.String, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(posDeleteFilePathID)})},
	{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(posDeletePosID)})},
}, nil)

// writeDeletes writes the delete files for targets: one position delete
// file per data file on v2 (delete-granularity=file, Spark's default), one
// Puffin file of deletion vectors on v3 (each merging the file's earlier
// deletes). Returns the delete files and every path written.
func (w *writer) writeDeletes(ctx context.Context, p *write.Plan, version int, targets []*morTarget) ([]iceberg.DataFile, []string, error) {
	fs, err := w.DataFS(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	root := p.DataRoot()
	opID := uuid.New().String()
	if version >= 3 {
		path, err := root.File(opID + "-deletes.puffin")
		if err != nil {
			return nil, nil, err
		}
		dvs := make([]dvOut, len(targets))
		for i, tg := range targets {
			all := dv.NewRoaringPositionBitmap()
			all.Or(tg.deleted)
			all.Or(tg.matched)
			dvs[i] = dvOut{spec: tg.spec, partition: tg.file.Partition(), path: tg.file.FilePath(), positions: all}
		}
		files, err := writeDVs(fs, path, dvs)
		if err != nil {
			_ = fs.Remove(path)
			return nil, nil, err
		}
		return files, []string{path}, nil
	}
	pqOpts, err := parquet.OptionsFromProperties(p.Eff.Props)
	if err != nil {
		return nil, nil, err
	}
	var out []iceberg.DataFile
	var paths []string
	for i, tg := range targets {
		// Beside the data file's partition, as Spark puts it.
		dir, err := root.Dir(tg.spec, p.Schema, tg.file.Partition())
		if err != nil {
			return nil, paths, err
		}
		name := fmt.Sprintf("%s/%05d-%s-deletes.parquet", dir, i, opID)
		wr := parquet.NewWriter(ctx, fs, posDeleteSchema, pqOpts, func() string { return name })
		rec := positionsBatch(tg.file.FilePath(), tg.matched)
		err = wr.Write(rec)
		rec.Release()
		files, cerr := wr.Close()
		for _, f := range files {
			paths = append(paths, f.Path)
		}
		if err = errors.Join(err, cerr); err != nil {
			return nil, paths, err
		}
		for _, f := range files {
			b, err := iceberg.NewDataFileBuilder(tg.spec, iceberg.EntryContentPosDeletes, f.Path, iceberg.ParquetFile, tg.file.Partition(), nil, nil, f.Rows, f.Size)
			if err != nil {
				return nil, paths, fmt.Errorf("%w: describing %s: %v", errs.ErrValidation, f.Path, err)
			}
			// Every row names the same data file: its full path is the exact
			// bound (Java writes file_path bounds untruncated, and readers
			// use lower == upper to scope the file to one data file; v2
			// manifests have no referenced_data_file).
			lower, upper := maps.Clone(f.Lower), maps.Clone(f.Upper)
			if lower == nil {
				lower, upper = map[int][]byte{}, map[int][]byte{}
			}
			lower[posDeleteFilePathID] = []byte(tg.file.FilePath())
			upper[posDeleteFilePathID] = []byte(tg.file.FilePath())
			b.ColumnSizes(f.ColumnSizes).ValueCounts(f.ValueCounts).NullValueCounts(f.NullCounts).
				LowerBoundValues(lower).UpperBoundValues(upper).ReferencedDataFile(tg.file.FilePath())
			out = append(out, b.Build())
		}
	}
	return out, paths, nil
}

// positionsBatch is the (file_path, pos) rows of a position delete file.
func positionsBatch(path string, positions *dv.RoaringPositionBitmap) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	pb := array.NewStringBuilder(mem)
	ob := array.NewInt64Builder(mem)
	defer pb.Release()
	defer ob.Release()
	for p := range positions.Positions() {
		pb.Append(path)
		ob.Append(int64(p))
	}
	cols := []arrow.Array{pb.NewArray(), ob.NewArray()}
	defer cols[0].Release()
	defer cols[1].Release()
	return array.NewRecordBatch(posDeleteSchema, cols, int64(cols[0].Len()))
}

// dvOut is a deletion vector to write: every position deleted from data
// file path (of spec and partition).
type dvOut struct {
	spec      iceberg.PartitionSpec
	partition map[int]any
	path      string
	positions *dv.RoaringPositionBitmap
}

// writeDVs writes one Puffin file holding the deletion vectors dvs, in
// order, and describes each as a delete file.
func writeDVs(fs icebergio.WriteFileIO, path string, dvs []dvOut) ([]iceberg.DataFile, error) {
	out, err := fs.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%w: creating %s: %v", errs.ErrIO, path, err)
	}
	cw := &countingFileWriter{w: out}
	pw, err := puffin.NewWriter(cw)
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("%w: %v", errs.ErrIO, err)
	}
	if err := pw.SetCreatedBy(version.EngineName + " " + version.Version); err != nil {
		out.Close()
		return nil, fmt.Errorf("%w: %v", errs.ErrIO, err)
	}
	metas := make([]puffin.BlobMetadata, len(dvs))
	for i, d := range dvs {
		payload, err := dv.SerializeDV(d.positions)
		if err != nil {
			out.Close()
			return nil, fmt.Errorf("%w: encoding the deletion vector of %s: %v", errs.ErrIO, d.path, err)
		}
		metas[i], err = pw.AddBlob(puffin.BlobMetadataInput{
			Type: puffin.BlobTypeDeletionVector, SnapshotID: -1, SequenceNumber: -1, Fields: []int32{},
			Properties: map[string]string{"referenced-data-file": d.path, "cardinality": strconv.FormatInt(d.positions.Cardinality(), 10)},
		}, payload)
		if err != nil {
			out.Close()
			return nil, fmt.Errorf("%w: writing %s: %v", errs.ErrIO, path, err)
		}
	}
	if err := pw.Finish(); err != nil {
		out.Close()
		return nil, fmt.Errorf("%w: writing %s: %v", errs.ErrIO, path, err)
	}
	if err := out.Close(); err != nil {
		return nil, fmt.Errorf("%w: closing %s: %v", errs.ErrIO, path, err)
	}
	files := make([]iceberg.DataFile, 0, len(dvs))
	for i, d := range dvs {
		db, err := iceberg.NewDataFileBuilder(d.spec, iceberg.EntryContentPosDeletes, path, iceberg.PuffinFile, maps.Clone(d.partition), nil, nil, d.positions.Cardinality(), cw.n)
		if err != nil {
			return nil, fmt.Errorf("%w: describing %s: %v", errs.ErrValidation, path, err)
		}
		db.ReferencedDataFile(d.path).ContentOffset(metas[i].Offset).ContentSizeInBytes(metas[i].Length)
		files = append(files, db.Build())
	}
	return files, nil
}

type countingFileWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (c *countingFileWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// stageRowDelta produces the updates of one merge-on-read snapshot: new
// rows, new delete files, and the deletion vectors they replace.
func (w *writer) stageRowDelta(ctx context.Context, p *write.Plan, base table.Metadata, baseLoc string, rows write.Written, deletes, replaced []iceberg.DataFile) ([]table.Requirement, []table.Update, error) {
	st, err := w.Stage(p, base, baseLoc, rows)
	if err != nil {
		return nil, nil, err
	}
	rd := st.Tx.NewRowDelta(w.SnapshotProps(p)).AddRows(st.Files...).AddDeletes(deletes...)
	if len(replaced) > 0 {
		rd.RemoveDeletes(replaced...)
	}
	if err := rd.Commit(ctx); err != nil {
		return nil, nil, stage.StagingErr(err)
	}
	return st.Finish(ctx, func(u []table.Update) []table.Update { return dvSummary(u, deletes, replaced) })
}
