// Package rowlevel holds the operations that change rows already in a
// table: delete, update and overwrite by a filter (copy-on-write or
// merge-on-read), MERGE INTO, the dynamic overwrite of partitions, and
// compaction (rewrite_data_files, compact.go: a rewrite that keeps every
// row; RewriteDataFiles is its entry). It
// plans which data files a change touches (pruning by metadata, reading
// the files with their deletes applied), rewrites them or writes position
// deletes and deletion vectors, checks concurrent commits against the
// isolation level, and stages the change as one snapshot (Run is the entry).
//
// It writes new data files through core/write and commits through
// core/stage; it does not plan appends, creates or replaces (core/write)
// nor handle refs and WAP (core/refs).
package rowlevel

import (
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
	"github.com/pyiceberg-go/pyiceberg-go/core/testhooks"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// writer runs one row-level operation: the write path's Writer with the
// manifests decoded for its commit.
type writer struct {
	*write.Writer
	// manifests caches decoded manifests for the commit (manifests.go);
	// nil when nothing was prefetched.
	manifests *manifestCache
}

// Run runs the row-level operation op (delete, update, overwrite by
// filter, merge, or overwritePartitions) of w on table t, planned as p.
func Run(ctx context.Context, w *write.Writer, op string, p *write.Plan, t *table.Table) (*report.Result, error) {
	rw := &writer{Writer: w}
	switch op {
	case request.OpDelete, request.OpUpdate, request.OpOverwrite:
		return rw.runFiltered(ctx, p, t)
	case request.OpMerge:
		return rw.runMerge(ctx, p, t)
	case request.OpOverwritePartitions:
		return rw.replacePartitions(ctx, p, t)
	}
	return nil, fmt.Errorf("%w: %s is not a row-level operation", errs.ErrInvalidArgument, op)
}

// replacePartitions writes the input and commits it replacing the
// partitions it covers (overwritePartitions).
func (w *writer) replacePartitions(ctx context.Context, p *write.Plan, t *table.Table) (*report.Result, error) {
	// The commit reads the head's data files to find those replaced:
	// decode them while the data is written.
	if fs, err := w.FileIO(ctx, p); err == nil {
		w.manifests = prefetchManifests(ctx, fs, w.Head(t.Metadata()))
	}
	wr, err := w.WriteData(ctx, p, w.Input)
	if err != nil {
		return nil, err
	}
	if _, err := w.RetryPolicy(p.Props); err != nil {
		w.DeleteFiles(ctx, p, wr.Paths)
		return nil, err
	}
	var committed *table.Table
	start, err := w.StartSnapshot(t, p)
	if err == nil {
		committed, err = w.overwritePartitions(ctx, p, wr, start)
	}
	if err != nil {
		return nil, w.Failed(ctx, request.OpOverwritePartitions, p, wr, err)
	}
	return w.Result(committed, wr, len(wr.Files) > 0), nil
}

// change is what a row-level operation commits on top of the table's head:
// data files it drops and data files it adds, in one snapshot.
type change struct {
	remove []iceberg.DataFile
	// dead are files a filter matches whole whose rows were all deleted
	// before: removed only when the operation changes something else.
	dead []iceberg.DataFile
	add  write.Written
	// extra summary keys (replace-partitions).
	props map[string]string
	// force is the operation name when Spark's rule does not apply (a
	// dynamic overwrite is always "overwrite").
	force table.Operation
}

// operation names a snapshot by Spark's rule: only deletes -> delete, only
// adds -> append, both -> overwrite.
func (c change) operation() table.Operation {
	switch {
	case c.force != "":
		return c.force
	case len(c.remove) == 0:
		return table.OpAppend
	case len(c.add.Files) == 0:
		return table.OpDelete
	}
	return table.OpOverwrite
}

func (c change) empty() bool { return len(c.remove) == 0 && len(c.add.Files) == 0 }

// stageChange produces the updates that commit c as one snapshot on base.
func (w *writer) stageChange(ctx context.Context, p *write.Plan, base table.Metadata, baseLoc string, c change) ([]table.Requirement, []table.Update, error) {
	if len(c.remove) == 0 {
		reqs, updates, err := w.StageAppend(ctx, p, base, baseLoc, c.add)
		if err != nil {
			return nil, nil, err
		}
		return reqs, retitle(updates, c.operation(), c.props), nil
	}
	st, err := w.Stage(p, base, baseLoc, c.add)
	if err != nil {
		return nil, nil, err
	}
	// Delete files scoped to a removed data file (deletion vectors, and
	// position delete files with a referenced data file) go with it, as in
	// Java; they would otherwise stay live, pointing at nothing.
	dangling, err := deletesOnlyFor(ctx, st.Table, w.Head(base), c.remove, w.manifests)
	if err != nil {
		return nil, nil, err
	}
	if len(dangling) > 0 {
		err = st.Tx.ReplaceFiles(ctx, c.remove, st.Files, dangling, w.SnapshotProps(p), table.WithoutAutoNameMapping())
	} else {
		err = st.Tx.ReplaceDataFilesWithDataFiles(ctx, c.remove, st.Files, w.SnapshotProps(p), table.WithoutAutoNameMapping())
	}
	if err != nil {
		return nil, nil, stage.StagingErr(err)
	}
	return st.Finish(ctx, func(u []table.Update) []table.Update {
		return dvSummary(retitle(u, c.operation(), c.props), nil, dangling)
	})
}

// deletesOnlyFor returns the live delete files of t's snapshot head scoped
// to one of files (a referenced data file: deletion vectors and file-scoped
// position deletes).
func deletesOnlyFor(ctx context.Context, t *table.Table, head *table.Snapshot, files []iceberg.DataFile, cache *manifestCache) ([]iceberg.DataFile, error) {
	if t.Metadata().Version() < 2 || len(files) == 0 {
		return nil, nil
	}
	paths := map[string]bool{}
	for _, f := range files {
		paths[f.FilePath()] = true
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: opening the table's files: %v", errs.ErrIO, err)
	}
	var out []iceberg.DataFile
	err = liveFiles(fs, head, iceberg.ManifestContentDeletes, cache, func(df iceberg.DataFile) error {
		if df.ContentType() != iceberg.EntryContentPosDeletes {
			return nil
		}
		if ref := df.ReferencedDataFile(); ref != nil && *ref != "" {
			if paths[*ref] {
				out = append(out, df)
			}
			return nil
		}
		// v2 manifests carry no referenced_data_file: a file whose
		// file_path bounds are one path is scoped to that data file.
		lo, hi := df.LowerBoundValues()[posDeleteFilePathID], df.UpperBoundValues()[posDeleteFilePathID]
		if lo != nil && string(lo) == string(hi) && paths[string(lo)] {
			out = append(out, df)
		}
		return nil
	})
	return out, err
}

// retitle sets the operation (unless op is empty) and extra summary keys
// of the snapshot in updates. The operation lives only in the table
// metadata (not in the manifest list), so naming it after staging is safe.
func retitle(updates []table.Update, op table.Operation, props map[string]string) []table.Update {
	return stage.EditSummary(updates, func(sum *table.Summary) {
		if op != "" {
			sum.Operation = op
		}
		maps.Copy(sum.Properties, props)
	})
}

// dvSummary edits a snapshot's summary for the deletion vectors among the
// delete files it adds and removes, as Java's summaries count them: apart
// from other position delete files (added-dvs / removed-dvs), and by the
// bytes of their blobs (deleteFileSize), not of the whole Puffin file
// iceberg-go counts once per vector, in added-, removed- and
// total-files-size.
func dvSummary(updates []table.Update, added, removed []iceberg.DataFile) []table.Update {
	var nAdded, nRemoved int
	var dAdded, dRemoved int64
	for _, d := range added {
		if table.IsDeletionVector(d) {
			nAdded++
			dAdded += deleteFileSize(d) - d.FileSizeBytes()
		}
	}
	for _, d := range removed {
		if table.IsDeletionVector(d) {
			nRemoved++
			dRemoved += deleteFileSize(d) - d.FileSizeBytes()
		}
	}
	if nAdded == 0 && nRemoved == 0 {
		return updates
	}
	return stage.EditSummary(updates, func(sum *table.Summary) {
		for _, k := range []struct {
			key, dvKey string
			n          int
		}{{"added-position-delete-files", "added-dvs", nAdded}, {"removed-position-delete-files", "removed-dvs", nRemoved}} {
			if k.n == 0 {
				continue
			}
			sum.Properties[k.dvKey] = strconv.Itoa(k.n)
			if v, err := strconv.Atoi(sum.Properties[k.key]); err == nil {
				if v -= k.n; v > 0 {
					sum.Properties[k.key] = strconv.Itoa(v)
				} else {
					delete(sum.Properties, k.key)
				}
			}
		}
		for key, d := range map[string]int64{"added-files-size": dAdded, "removed-files-size": dRemoved, "total-files-size": dAdded - dRemoved} {
			if v, err := strconv.ParseInt(sum.Properties[key], 10, 64); err == nil && d != 0 {
				sum.Properties[key] = strconv.FormatInt(v+d, 10)
			}
		}
	})
}

// commitChange commits c on the current head in one attempt; plan computes
// the change from the freshly loaded table (and validates it).
func (w *writer) commitChange(ctx context.Context, p *write.Plan, planFn func(t *table.Table) (change, error)) (*table.Table, bool, error) {
	t, err := w.Cat.LoadTable(ctx, w.Ident)
	if err != nil {
		return nil, false, err
	}
	if err := write.CheckSchemaUnchanged(t.Metadata(), p); err != nil {
		return nil, false, err
	}
	if err := w.CheckStream(t.Metadata()); err != nil {
		return nil, false, err
	}
	c, err := planFn(t)
	if err != nil {
		return nil, false, err
	}
	if c.empty() {
		return t, false, nil
	}
	reqs, updates, err := w.stageChange(ctx, p, t.Metadata(), t.MetadataLocation(), c)
	if err != nil {
		return nil, false, err
	}
	committed, err := w.Publish(ctx, p, reqs, updates)
	return committed, err == nil, err
}

// partitionKey is a canonical text of a file's spec and partition tuple, so
// tuples decoded from manifests and tuples computed by the writer compare
// equal whatever Go types carry them.
func partitionKey(spec iceberg.PartitionSpec, values map[int]any) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(spec.ID()))
	for _, f := range spec.Fields() {
		b.WriteByte('/')
		b.WriteString(canonicalValue(values[f.FieldID]))
	}
	return b.String()
}

func canonicalValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []byte:
		return "x" + hex.EncodeToString(x)
	case string:
		return strconv.Quote(x)
	case iceberg.Decimal:
		return "d" + x.String()
	case iceberg.DecimalLiteral: // a decimal as manifests decode it
		return "d" + x.String()
	case fmt.Stringer:
		return "s" + x.String()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "i" + strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "i" + strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return "f" + strconv.FormatFloat(rv.Float(), 'g', -1, 64)
	case reflect.Bool:
		return "b" + strconv.FormatBool(rv.Bool())
	case reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			buf := make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(buf), rv)
			return "x" + hex.EncodeToString(buf)
		}
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// testDelay pauses before a row-level operation's first commit attempt,
// in builds with the test hooks (testhooks.CommitDelay), so tests can
// commit a concurrent change in between. Other builds compile it to nothing.
func (w *writer) testDelay() {
	if testhooks.Enabled {
		testhooks.CommitDelay(w.Sess.Conf())
	}
}

// overwritePartitions replaces the partitions the new data covers
// (dynamic INSERT OVERWRITE); an unpartitioned table is replaced whole.
func (w *writer) overwritePartitions(ctx context.Context, p *write.Plan, wr write.Written, start *table.Snapshot) (*table.Table, error) {
	if len(wr.Files) == 0 {
		return w.Cat.LoadTable(ctx, w.Ident)
	}
	keys := map[string]bool{}
	for _, f := range wr.Files {
		keys[partitionKey(p.Spec, f.Values)] = true
	}
	specs := map[int]iceberg.PartitionSpec{}
	inScope := func(df iceberg.DataFile) bool {
		if p.Spec.IsUnpartitioned() {
			return true
		}
		spec, ok := specs[int(df.SpecID())]
		if !ok {
			return false
		}
		return int(df.SpecID()) == p.Spec.ID() && keys[partitionKey(spec, df.Partition())]
	}
	retry, err := w.RetryPolicy(p.Props)
	if err != nil {
		return nil, err
	}
	w.testDelay()
	var committed *table.Table
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		var err error
		committed, _, err = w.commitChange(ctx, p, func(t *table.Table) (change, error) {
			for _, s := range t.Metadata().PartitionSpecs() {
				specs[s.ID()] = s
			}
			fs, err := w.FileIO(ctx, p)
			if err != nil {
				return change{}, err
			}
			if err := w.validateIsolation(ctx, t, start, p.Eff.Isolation, scope{
				name: "the replaced partitions", newData: inScope, deletesIn: inScope,
			}); err != nil {
				return change{}, err
			}
			c := change{add: wr, force: table.OpOverwrite, props: map[string]string{"replace-partitions": "true"}}
			err = liveFiles(fs, w.Head(t.Metadata()), iceberg.ManifestContentData, w.manifests, func(df iceberg.DataFile) error {
				if df.ContentType() == iceberg.EntryContentData && inScope(df) {
					c.remove = append(c.remove, df)
				}
				return nil
			})
			return c, err
		})
		return err
	})
	return committed, err
}
