package rowlevel

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// replacement builds the "replace" snapshot of a data-file rewrite: the
// removed data files (and the delete files that applied only to them) leave
// the table, the rewritten files join it. It is Java's RewriteFiles commit
// as iceberg-go's overwrite producer lays it out (one manifest of the added
// files per spec; one manifest of DELETED entries per spec and content; a
// parent manifest that loses some of its files rewritten with the rest as
// EXISTING; every other parent manifest kept as it is), but it reads each
// parent manifest once, all in parallel. iceberg-go's producer first walks
// every manifest serially to check the removed files, then reads them all
// again: with the thousand one-file manifests of a thousand small appends,
// that walk was most of a compaction's commit (docs/decisions/compaction.md).
type replacement struct {
	base   table.Metadata
	parent *table.Snapshot // the head the snapshot goes on (nil: none)
	fs     icebergio.WriteFileIO
	locs   table.LocationProvider
	props  iceberg.Properties // the snapshot's own summary properties

	// read holds parent manifests read ahead (nil: none).
	read *manifestsAhead

	removeData    []iceberg.DataFile
	removeDeletes []iceberg.DataFile
	add           []iceberg.DataFile
	dataSeq       *int64 // the added files' data sequence number (nil: the snapshot's)

	id      int64
	commit  uuid.UUID
	mu      sync.Mutex
	count   int      // manifests named so far
	written []string // manifests written so far (removed on failure)
}

// fileKey names a file in a manifest: its path, and for a deletion vector
// (several share one Puffin file) its blob's offset.
type fileKey struct {
	path   string
	offset int64
}

func keyOf(df iceberg.DataFile) fileKey {
	k := fileKey{path: df.FilePath(), offset: -1}
	if table.IsDeletionVector(df) && df.ContentOffset() != nil {
		k.offset = *df.ContentOffset()
	}
	return k
}

// stage writes the snapshot's manifests and manifest list and returns the
// snapshot. On failure it removes what it wrote.
func (r *replacement) stage(ctx context.Context) (_ *table.Snapshot, err error) {
	r.commit = uuid.New()
	r.id = r.newSnapshotID()
	defer func() {
		if err != nil {
			for _, p := range r.written {
				_ = r.fs.Remove(p)
			}
		}
	}()
	var parentManifests []iceberg.ManifestFile
	if r.parent != nil {
		if parentManifests, err = r.parent.Manifests(r.fs); err != nil {
			return nil, fmt.Errorf("reading the manifest list of snapshot %d: %w", r.parent.SnapshotID, err)
		}
	}
	kept, tombstones, err := r.filter(ctx, parentManifests)
	if err != nil {
		return nil, err
	}
	added, err := r.writeAdded()
	if err != nil {
		return nil, err
	}
	deleted, err := r.writeTombstones(tombstones)
	if err != nil {
		return nil, err
	}
	return r.writeList(slices.Concat(added, deleted, kept))
}

// newSnapshotID is a random positive id no snapshot of the table has.
func (r *replacement) newSnapshotID() int64 {
	for {
		u := uuid.New()
		id := int64((binary.BigEndian.Uint64(u[:8]) ^ binary.BigEndian.Uint64(u[8:])) & math.MaxInt64)
		if id != 0 && r.base.SnapshotByID(id) == nil {
			return id
		}
	}
}

// filter reads every parent manifest once, in parallel, and returns the
// manifests the snapshot keeps (as they are, or rewritten without the
// removed files) and the removed files' entries. It fails when a file to
// remove is not live in the parent: another commit removed it.
func (r *replacement) filter(ctx context.Context, manifests []iceberg.ManifestFile) ([]iceberg.ManifestFile, []iceberg.ManifestEntry, error) {
	remove := make(map[fileKey]bool, len(r.removeData)+len(r.removeDeletes))
	for _, df := range r.removeData {
		remove[fileKey{path: df.FilePath(), offset: -1}] = true
	}
	for _, df := range r.removeDeletes {
		remove[keyOf(df)] = false
	}
	kept := make([]iceberg.ManifestFile, len(manifests))
	gone := make([][]iceberg.ManifestEntry, len(manifests))
	err := eachManifest(ctx, manifests, func(i int, m iceberg.ManifestFile) error {
		entries, ok := r.read.get(m.FilePath())
		var err error
		if !ok {
			if entries, err = liveEntries(r.fs, m); err != nil {
				return fmt.Errorf("reading manifest %s: %w", m.FilePath(), err)
			}
		}
		var survivors []iceberg.ManifestEntry
		for _, e := range entries {
			df := e.DataFile()
			isData, ok := remove[keyOf(df)]
			if ok && isData == (df.ContentType() == iceberg.EntryContentData) {
				seq := e.SequenceNum()
				gone[i] = append(gone[i], iceberg.NewManifestEntry(iceberg.EntryStatusDELETED, &r.id, &seq, e.FileSequenceNum(), df))
				continue
			}
			survivors = append(survivors, e)
		}
		switch {
		case len(gone[i]) == 0:
			kept[i] = m
		case len(survivors) > 0:
			kept[i], err = r.writeManifest(int(m.PartitionSpecID()), m.ManifestContent(), func(w *iceberg.ManifestWriter) error {
				for _, e := range survivors {
					if err := w.Existing(e); err != nil {
						return err
					}
				}
				return nil
			})
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var tombstones []iceberg.ManifestEntry
	for _, es := range gone {
		tombstones = append(tombstones, es...)
	}
	if len(tombstones) != len(remove) {
		found := make(map[fileKey]bool, len(tombstones))
		for _, e := range tombstones {
			found[keyOf(e.DataFile())] = true
		}
		for _, df := range slices.Concat(r.removeData, r.removeDeletes) {
			if !found[keyOf(df)] {
				return nil, nil, fmt.Errorf("%w: file %s is no longer in the table: another commit removed it", errs.ErrCommitConflict, df.FilePath())
			}
		}
		return nil, nil, fmt.Errorf("%w: a file to remove is listed more than once in the table", errs.ErrValidation)
	}
	return slices.DeleteFunc(kept, func(m iceberg.ManifestFile) bool { return m == nil }), tombstones, nil
}

// manifestGroup is the entries one new manifest holds: of a spec and a
// content.
type manifestGroup struct {
	spec    int
	content iceberg.ManifestContent
}

func groupOf(df iceberg.DataFile) manifestGroup {
	g := manifestGroup{spec: int(df.SpecID()), content: iceberg.ManifestContentData}
	if df.ContentType() != iceberg.EntryContentData {
		g.content = iceberg.ManifestContentDeletes
	}
	return g
}

// writeAdded writes the added files' ADDED entries, one manifest per spec.
func (r *replacement) writeAdded() ([]iceberg.ManifestFile, error) {
	groups := map[manifestGroup][]iceberg.ManifestEntry{}
	for _, df := range r.add {
		g := groupOf(df)
		groups[g] = append(groups[g], iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &r.id, r.dataSeq, nil, df))
	}
	return r.writeGroups(groups, (*iceberg.ManifestWriter).Add)
}

// writeTombstones writes the removed files' DELETED entries, one manifest
// per spec and content.
func (r *replacement) writeTombstones(entries []iceberg.ManifestEntry) ([]iceberg.ManifestFile, error) {
	groups := map[manifestGroup][]iceberg.ManifestEntry{}
	for _, e := range entries {
		g := groupOf(e.DataFile())
		groups[g] = append(groups[g], e)
	}
	return r.writeGroups(groups, (*iceberg.ManifestWriter).Delete)
}

// writeGroups writes a manifest per group, in spec then content order,
// each entry put by put.
func (r *replacement) writeGroups(groups map[manifestGroup][]iceberg.ManifestEntry, put func(*iceberg.ManifestWriter, iceberg.ManifestEntry) error) ([]iceberg.ManifestFile, error) {
	keys := slices.SortedFunc(maps.Keys(groups), func(a, b manifestGroup) int {
		return cmp.Or(cmp.Compare(a.spec, b.spec), cmp.Compare(a.content, b.content))
	})
	var out []iceberg.ManifestFile
	for _, g := range keys {
		m, err := r.writeManifest(g.spec, g.content, func(w *iceberg.ManifestWriter) error {
			for _, e := range groups[g] {
				if err := put(w, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// writeManifest writes one manifest of the table's spec specID, its
// entries put by fill.
func (r *replacement) writeManifest(specID int, content iceberg.ManifestContent, fill func(*iceberg.ManifestWriter) error) (_ iceberg.ManifestFile, err error) {
	spec := r.base.PartitionSpecByID(specID)
	if spec == nil {
		return nil, fmt.Errorf("%w: the table has no partition spec %d", errs.ErrValidation, specID)
	}
	r.mu.Lock()
	r.count++
	path := r.locs.NewMetadataLocation(fmt.Sprintf("%s-m%d.avro", r.commit, r.count))
	r.written = append(r.written, path)
	r.mu.Unlock()
	out, err := r.fs.Create(path)
	if err != nil {
		return nil, err
	}
	cw := &countingFileWriter{w: out}
	w, err := iceberg.NewManifestWriter(r.base.Version(), cw, *spec, r.base.CurrentSchema(), r.id, iceberg.WithManifestWriterContent(content))
	if err == nil {
		err = fill(w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing manifest %s: %w", path, err)
	}
	return w.ToManifestFile(path, cw.n, iceberg.WithManifestFileContent(content))
}

// writeList writes the manifest list and returns the snapshot.
func (r *replacement) writeList(manifests []iceberg.ManifestFile) (*table.Snapshot, error) {
	version := r.base.Version()
	seq := int64(0)
	if version >= 2 {
		seq = r.base.LastSequenceNumber() + 1
	}
	var parentID *int64
	if r.parent != nil {
		id := r.parent.SnapshotID
		parentID = &id
	}
	path := r.locs.NewMetadataLocation(fmt.Sprintf("snap-%d-0-%s.avro", r.id, r.commit))
	r.written = append(r.written, path)
	out, err := r.fs.Create(path)
	if err != nil {
		return nil, err
	}
	var lw *iceberg.ManifestListWriter
	var firstRowID int64
	switch version {
	case 1:
		lw, err = iceberg.NewManifestListWriterV1(out, r.id, parentID)
	case 2:
		lw, err = iceberg.NewManifestListWriterV2(out, r.id, seq, parentID)
	case 3:
		firstRowID = r.base.NextRowID()
		lw, err = iceberg.NewManifestListWriterV3(out, r.id, seq, firstRowID, parentID)
	default:
		err = fmt.Errorf("%w: format-version %d", errs.ErrNotSupported, version)
	}
	if err == nil {
		err = lw.AddManifests(manifests)
		if cerr := lw.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing the manifest list %s: %w", path, err)
	}
	summary, err := r.summary()
	if err != nil {
		return nil, err
	}
	schemaID := r.base.CurrentSchema().ID
	sn := &table.Snapshot{
		SnapshotID:       r.id,
		ParentSnapshotID: parentID,
		SequenceNumber:   seq,
		TimestampMs:      max(time.Now().UnixMilli(), r.base.LastUpdatedMillis()),
		ManifestList:     path,
		Summary:          summary,
		SchemaID:         &schemaID,
	}
	if version == 3 {
		// Every row of the manifests that have no first row id yet (the
		// added and rewritten ones) takes ids, as Java's V3 list writer
		// counts them.
		added := int64(0)
		if next := lw.NextRowID(); next != nil {
			added = *next - firstRowID
		}
		sn.FirstRowID, sn.AddedRows = &firstRowID, &added
	}
	return sn, nil
}

// fileCounts are the summary's counts of files added or removed.
type fileCounts struct {
	size, dataFiles, records                 int64
	deleteFiles, posFiles, eqFiles, pos, eqs int64
}

func (c *fileCounts) count(df iceberg.DataFile) {
	c.size += df.FileSizeBytes()
	switch df.ContentType() {
	case iceberg.EntryContentData:
		c.dataFiles++
		c.records += df.Count()
	case iceberg.EntryContentPosDeletes:
		c.deleteFiles++
		c.posFiles++
		c.pos += df.Count()
	case iceberg.EntryContentEqDeletes:
		c.deleteFiles++
		c.eqFiles++
		c.eqs += df.Count()
	}
}

// put sets the counts that are not zero under the summary keys of added
// (true) or removed files.
func (c *fileCounts) put(props iceberg.Properties, added bool) {
	keys := []string{"removed-files-size", "deleted-data-files", "deleted-records", "removed-delete-files",
		"removed-position-delete-files", "removed-equality-delete-files", "removed-position-deletes", "removed-equality-deletes"}
	if added {
		keys = []string{"added-files-size", "added-data-files", "added-records", "added-delete-files",
			"added-position-delete-files", "added-equality-delete-files", "added-position-deletes", "added-equality-deletes"}
	}
	for i, v := range []int64{c.size, c.dataFiles, c.records, c.deleteFiles, c.posFiles, c.eqFiles, c.pos, c.eqs} {
		if v > 0 {
			props[keys[i]] = strconv.FormatInt(v, 10)
		}
	}
}

// summary is the snapshot's summary: what it adds and removes, the changed
// partitions (with each one's counts when there are no more of them than
// write.summary.partition-limit), the totals carried from the parent's, then
// the snapshot's own properties.
func (r *replacement) summary() (*table.Summary, error) {
	var added, removed fileCounts
	type change struct{ added, removed fileCounts }
	partitions := map[string]*change{}
	sc := r.base.CurrentSchema()
	track := func(df iceberg.DataFile, isAdd bool) error {
		if isAdd {
			added.count(df)
		} else {
			removed.count(df)
		}
		spec := r.base.PartitionSpecByID(int(df.SpecID()))
		if spec == nil {
			return fmt.Errorf("%w: file %s has partition spec %d, which the table does not have", errs.ErrValidation, df.FilePath(), df.SpecID())
		}
		if len(df.Partition()) == 0 {
			return nil
		}
		path := spec.PartitionToPath(table.GetPartitionRecord(df, spec.PartitionType(sc)), sc)
		c := partitions[path]
		if c == nil {
			c = &change{}
			partitions[path] = c
		}
		if isAdd {
			c.added.count(df)
		} else {
			c.removed.count(df)
		}
		return nil
	}
	for _, df := range r.add {
		if err := track(df, true); err != nil {
			return nil, err
		}
	}
	for _, df := range slices.Concat(r.removeData, r.removeDeletes) {
		if err := track(df, false); err != nil {
			return nil, err
		}
	}
	props := iceberg.Properties{}
	added.put(props, true)
	removed.put(props, false)
	if len(partitions) > 0 {
		props["changed-partition-count"] = strconv.Itoa(len(partitions))
	}
	limit, _ := strconv.Atoi(r.base.Properties()[table.WritePartitionSummaryLimitKey])
	if len(partitions) <= limit {
		for path, c := range partitions {
			one := iceberg.Properties{}
			c.added.put(one, true)
			c.removed.put(one, false)
			parts := make([]string, 0, len(one))
			for k, v := range one {
				parts = append(parts, k+"="+v)
			}
			slices.Sort(parts)
			props["partitions."+path] = strings.Join(parts, ",")
		}
	}
	maps.Copy(props, r.props)
	var previous iceberg.Properties
	if r.parent != nil && r.parent.Summary != nil {
		previous = r.parent.Summary.Properties
	}
	for _, t := range [][3]string{
		{"total-data-files", "added-data-files", "deleted-data-files"},
		{"total-delete-files", "added-delete-files", "removed-delete-files"},
		{"total-records", "added-records", "deleted-records"},
		{"total-files-size", "added-files-size", "removed-files-size"},
		{"total-position-deletes", "added-position-deletes", "removed-position-deletes"},
		{"total-equality-deletes", "added-equality-deletes", "removed-equality-deletes"},
	} {
		total := previous.GetInt64(t[0], 0) + props.GetInt64(t[1], 0) - props.GetInt64(t[2], 0)
		if total >= 0 {
			props[t[0]] = strconv.FormatInt(total, 10)
		}
	}
	maps.Copy(props, iceberg.EnvironmentContext())
	return &table.Summary{Operation: table.OpReplace, Properties: props}, nil
}
