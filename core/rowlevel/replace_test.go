package rowlevel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// memCatalog keeps a table's metadata in memory: every commit applies.
type memCatalog struct {
	meta table.Metadata
	loc  string
}

func (c *memCatalog) LoadTable(context.Context, table.Identifier) (*table.Table, error) {
	return nil, errors.New("not loadable")
}

func (c *memCatalog) CommitTable(_ context.Context, _ table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	for _, r := range reqs {
		if err := r.Validate(c.meta); err != nil {
			return nil, "", err
		}
	}
	m, err := table.UpdateTableMetadata(c.meta, updates, c.loc)
	if err != nil {
		return nil, "", err
	}
	c.meta = m
	return m, c.loc, nil
}

var replaceSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: false},
	iceberg.NestedField{ID: 2, Name: "cat", Type: iceberg.PrimitiveTypes.String, Required: false},
)

// history is a generated table: appends of one to three data files each,
// then (v2 and later) row deltas adding position delete files (v2) or
// deletion vectors (v3, several in one Puffin file).
type history struct {
	tbl     *table.Table
	data    []iceberg.DataFile
	deletes []iceberg.DataFile
	spec    iceberg.PartitionSpec
	n       int
}

func (h *history) file(t *testing.T, rng *rand.Rand, content iceberg.ManifestEntryContent, format iceberg.FileFormat, part string) *iceberg.DataFileBuilder {
	return h.fileAt(t, rng, content, format, part, "")
}

// dataFile describes a new data file; on v3, its rows take ids from
// *next on.
func (h *history) dataFile(t *testing.T, rng *rand.Rand, part string, next *int64) iceberg.DataFile {
	t.Helper()
	b := h.file(t, rng, iceberg.EntryContentData, iceberg.ParquetFile, part)
	if h.tbl.Metadata().Version() < 3 {
		return b.Build()
	}
	df := b.FirstRowID(*next).Build()
	*next += df.Count()
	return df
}

// fileAt describes a file at path ("": a new one).
func (h *history) fileAt(t *testing.T, rng *rand.Rand, content iceberg.ManifestEntryContent, format iceberg.FileFormat, part, path string) *iceberg.DataFileBuilder {
	t.Helper()
	h.n++
	values := map[int]any{}
	if h.spec.NumFields() > 0 {
		values[1000] = part
	}
	ext := "parquet"
	if format == iceberg.PuffinFile {
		ext = "puffin"
	}
	if path == "" {
		path = fmt.Sprintf("file:///data/%s/f%d.%s", part, h.n, ext)
	}
	rows := 1 + rng.Int64N(1000)
	if content == iceberg.EntryContentData && rng.IntN(10) == 0 {
		rows = 0 // an empty file
	}
	b, err := iceberg.NewDataFileBuilder(h.spec, content, path, format, values, nil, nil, rows, 100+rng.Int64N(100000))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newHistory(t *testing.T, rng *rand.Rand, version int, partitioned bool, props iceberg.Properties) *history {
	t.Helper()
	h := &history{spec: *iceberg.UnpartitionedSpec}
	if partitioned {
		h.spec = iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "cat", Transform: iceberg.IdentityTransform{}})
	}
	dir := t.TempDir()
	loc := "file://" + dir
	all := iceberg.Properties{"format-version": strconv.Itoa(version)}
	maps.Copy(all, props)
	meta, err := table.NewMetadata(replaceSchema, &h.spec, table.UnsortedSortOrder, loc, all)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	cat := &memCatalog{meta: meta, loc: loc + "/metadata/v.json"}
	fsF := func(context.Context) (icebergio.IO, error) { return icebergio.LocalFS{}, nil }
	h.tbl = table.New(table.Identifier{"db", "t"}, meta, cat.loc, fsF, cat)
	parts := []string{"a", "b/c", "d%e"}
	commit := func(tx *table.Transaction) {
		t.Helper()
		if h.tbl, err = tx.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 + rng.IntN(8) {
		tx := h.tbl.NewTransaction()
		var files []iceberg.DataFile
		next := h.tbl.Metadata().NextRowID()
		for range 1 + rng.IntN(3) {
			files = append(files, h.dataFile(t, rng, parts[rng.IntN(len(parts))], &next))
		}
		if err := tx.AddDataFiles(context.Background(), files, nil); err != nil {
			t.Fatal(err)
		}
		commit(tx)
		h.data = append(h.data, files...)
	}
	if version < 2 {
		return h
	}
	for range rng.IntN(3) {
		tx := h.tbl.NewTransaction()
		rd := tx.NewRowDelta(nil)
		puffin := fmt.Sprintf("file:///data/dv%d.puffin", rng.Int())
		offset := int64(4)
		added := 0
		for _, target := range h.data {
			if rng.IntN(3) != 0 || slices.ContainsFunc(h.deletes, func(d iceberg.DataFile) bool {
				return version >= 3 && d.ReferencedDataFile() != nil && *d.ReferencedDataFile() == target.FilePath()
			}) {
				continue
			}
			part, _ := target.Partition()[1000].(string)
			var d iceberg.DataFile
			if version >= 3 {
				d = h.fileAt(t, rng, iceberg.EntryContentPosDeletes, iceberg.PuffinFile, part, puffin).
					ReferencedDataFile(target.FilePath()).ContentOffset(offset).ContentSizeInBytes(40).Build()
				offset += 40
			} else {
				d = h.file(t, rng, iceberg.EntryContentPosDeletes, iceberg.ParquetFile, part).Build()
			}
			rd.AddDeletes(d)
			h.deletes = append(h.deletes, d)
			added++
		}
		if added == 0 {
			continue
		}
		if err := rd.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		commit(tx)
	}
	return h
}

// describe lists a snapshot's manifests (content, spec and counts, in
// order) and its entries (sorted), the new snapshot's id written "new".
func describe(t *testing.T, sn *table.Snapshot) (manifests, entries []string) {
	t.Helper()
	ms, err := sn.Manifests(icebergio.LocalFS{})
	if err != nil {
		t.Fatal(err)
	}
	id := func(v int64) string {
		if v == sn.SnapshotID {
			return "new"
		}
		return strconv.FormatInt(v, 10)
	}
	for _, m := range ms {
		manifests = append(manifests, fmt.Sprintf("content=%d spec=%d added=%d existing=%d deleted=%d rows=%d/%d/%d by=%s seq=%d",
			m.ManifestContent(), m.PartitionSpecID(), m.AddedDataFiles(), m.ExistingDataFiles(), m.DeletedDataFiles(),
			m.AddedRows(), m.ExistingRows(), m.DeletedRows(), id(m.SnapshotID()), m.SequenceNum()))
		for e, err := range m.Entries(icebergio.LocalFS{}, false) {
			if err != nil {
				t.Fatal(err)
			}
			df := e.DataFile()
			s := fmt.Sprintf("%d %s content=%d seq=%d fileseq=%v by=%s part=%v count=%d size=%d",
				e.Status(), df.FilePath(), df.ContentType(), e.SequenceNum(), deref(e.FileSequenceNum()), id(e.SnapshotID()),
				df.Partition(), df.Count(), df.FileSizeBytes())
			if df.ContentOffset() != nil {
				s += fmt.Sprintf(" offset=%d ref=%s", *df.ContentOffset(), *df.ReferencedDataFile())
			}
			if df.FirstRowID() != nil {
				s += fmt.Sprintf(" first-row-id=%d", *df.FirstRowID())
			}
			entries = append(entries, s)
		}
	}
	sort.Strings(entries)
	return manifests, entries
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestReplacementMatchesIcebergGo stages generated rewrites both with our
// replace producer and with iceberg-go's rewrite builder, on the same
// generated tables (format versions 1 to 3, partitioned or not, position
// delete files or deletion vectors, a partition summary limit or none, a
// data sequence number or none), and compares the snapshots: fields,
// summary, manifests in order and every entry.
func TestReplacementMatchesIcebergGo(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 7))
		version := 1 + int(seed%3)
		partitioned := rng.IntN(3) != 0
		props := iceberg.Properties{}
		if rng.IntN(2) == 0 {
			props[table.WritePartitionSummaryLimitKey] = strconv.Itoa(rng.IntN(4))
		}
		t.Run(fmt.Sprintf("seed%d-v%d-partitioned=%v", seed, version, partitioned), func(t *testing.T) {
			h := newHistory(t, rng, version, partitioned, props)
			var remove, dangling []iceberg.DataFile
			for _, df := range h.data {
				if rng.IntN(2) == 0 {
					remove = append(remove, df)
				}
			}
			if len(remove) == 0 {
				remove = h.data[:1]
			}
			for _, d := range h.deletes {
				if rng.IntN(2) == 0 {
					dangling = append(dangling, d)
				}
			}
			var add []iceberg.DataFile
			next := h.tbl.Metadata().NextRowID()
			for range 1 + rng.IntN(3) {
				add = append(add, h.dataFile(t, rng, "a", &next))
			}
			var seq *int64
			if version >= 2 && rng.IntN(2) == 0 {
				s := int64(1 + rng.IntN(int(h.tbl.Metadata().LastSequenceNumber())))
				seq = &s
			}
			snapProps := iceberg.Properties{"engine-name": "test"}

			tx := h.tbl.NewTransaction()
			rb := tx.NewRewrite(snapProps)
			for _, df := range slices.Concat(remove, dangling) {
				rb.DeleteFile(df)
			}
			for _, df := range add {
				rb.AddDataFile(df)
			}
			if seq != nil {
				rb.DataSequenceNumber(*seq)
			}
			if err := rb.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			staged, err := tx.StagedTable()
			if err != nil {
				t.Fatal(err)
			}
			theirs := staged.CurrentSnapshot()

			locs, err := h.tbl.LocationProvider()
			if err != nil {
				t.Fatal(err)
			}
			r := &replacement{base: h.tbl.Metadata(), parent: h.tbl.CurrentSnapshot(), fs: icebergio.LocalFS{}, locs: locs,
				props: snapProps, removeData: remove, removeDeletes: dangling, add: add, dataSeq: seq}
			ours, err := r.stage(context.Background())
			if err != nil {
				t.Fatal(err)
			}

			if ours.SequenceNumber != theirs.SequenceNumber || *ours.ParentSnapshotID != *theirs.ParentSnapshotID || *ours.SchemaID != *theirs.SchemaID {
				t.Errorf("snapshot: ours %+v, theirs %+v", ours, theirs)
			}
			if fmt.Sprint(deref(ours.FirstRowID), deref(ours.AddedRows)) != fmt.Sprint(deref(theirs.FirstRowID), deref(theirs.AddedRows)) {
				t.Errorf("row ids: ours %v+%v, theirs %v+%v", deref(ours.FirstRowID), deref(ours.AddedRows), deref(theirs.FirstRowID), deref(theirs.AddedRows))
			}
			if ours.Summary.Operation != theirs.Summary.Operation || !maps.Equal(ours.Summary.Properties, theirs.Summary.Properties) {
				t.Errorf("summary:\nours   %v\ntheirs %v", ours.Summary, theirs.Summary)
			}
			om, oe := describe(t, ours)
			tm, te := describe(t, theirs)
			if !slices.Equal(om, tm) {
				t.Errorf("manifests:\nours   %q\ntheirs %q", om, tm)
			}
			if !slices.Equal(oe, te) {
				t.Errorf("entries:\nours   %q\ntheirs %q", oe, te)
			}
		})
	}
}

// TestReplacementRefusesAFileNoLongerThere: a rewrite whose data file
// another commit removed fails as a commit conflict and leaves none of
// the files it wrote.
func TestReplacementRefusesAFileNoLongerThere(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := newHistory(t, rng, 2, true, nil)
	gone := h.file(t, rng, iceberg.EntryContentData, iceberg.ParquetFile, "a").Build()
	locs, err := h.tbl.LocationProvider()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.tbl.Location()[len("file://"):], "metadata")
	before, _ := os.ReadDir(dir)
	r := &replacement{base: h.tbl.Metadata(), parent: h.tbl.CurrentSnapshot(), fs: icebergio.LocalFS{}, locs: locs,
		removeData: []iceberg.DataFile{h.data[0], gone}, add: []iceberg.DataFile{h.file(t, rng, iceberg.EntryContentData, iceberg.ParquetFile, "a").Build()}}
	_, err = r.stage(context.Background())
	if !errors.Is(err, errs.ErrCommitConflict) {
		t.Fatalf("got %v, want a commit conflict", err)
	}
	after, _ := os.ReadDir(dir)
	if len(after) != len(before) {
		t.Fatalf("the failed rewrite left files: %d before, %d after", len(before), len(after))
	}
}

// TestAheadTasksMatchPlanFiles: on generated tables (some empty files;
// delete files on some), the tasks planned from the manifests read ahead
// are iceberg-go's unfiltered scan's, in its order, when the snapshot has
// no delete manifests; otherwise there are none.
func TestAheadTasksMatchPlanFiles(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 11))
		version := 1 + int(seed%3)
		t.Run(fmt.Sprintf("seed%d-v%d", seed, version), func(t *testing.T) {
			h := newHistory(t, rng, version, rng.IntN(2) == 0, nil)
			sn := h.tbl.CurrentSnapshot()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got, ok := readManifestsAhead(ctx, icebergio.LocalFS{}, sn).dataTasks()
			if len(h.deletes) > 0 {
				if ok {
					t.Fatal("tasks planned from the manifests of a snapshot with delete files")
				}
				return
			}
			if !ok {
				t.Fatal("no tasks planned for a snapshot without delete files")
			}
			want, err := h.tbl.Scan(table.WithSnapshotID(sn.SnapshotID)).PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			show := func(ts []table.FileScanTask) []string {
				var out []string
				for _, task := range ts {
					out = append(out, fmt.Sprintf("%s %d+%d row-id=%v seq=%v deletes=%d/%d/%d", task.File.FilePath(), task.Start, task.Length,
						deref(task.FirstRowID), deref(task.DataSequenceNumber), len(task.DeleteFiles), len(task.EqualityDeleteFiles), len(task.DeletionVectorFiles)))
				}
				return out
			}
			if g, w := show(got), show(want); !slices.Equal(g, w) {
				t.Fatalf("tasks:\nahead %q\nscan  %q", g, w)
			}
		})
	}
}
