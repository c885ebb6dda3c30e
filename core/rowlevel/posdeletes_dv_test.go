package rowlevel

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func testDV(t *testing.T, puffin, ref string, blob, fileSize int64) iceberg.DataFile {
	t.Helper()
	b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentPosDeletes, puffin, iceberg.PuffinFile, nil, nil, nil, 3, fileSize)
	if err != nil {
		t.Fatal(err)
	}
	return b.ReferencedDataFile(ref).ContentOffset(4).ContentSizeInBytes(blob).Build()
}

func testParquetDeletes(t *testing.T, path string, size int64) iceberg.DataFile {
	t.Helper()
	b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentPosDeletes, path, iceberg.ParquetFile, nil, nil, nil, 3, size)
	if err != nil {
		t.Fatal(err)
	}
	return b.Build()
}

// A deletion vector's size is its blob's, as Java counts it; a Parquet
// delete file's its file's.
func TestDeleteFileSize(t *testing.T) {
	if got := deleteFileSize(testDV(t, "a.puffin", "d1.parquet", 40, 2000)); got != 40 {
		t.Fatalf("DV: %d", got)
	}
	if got := deleteFileSize(testParquetDeletes(t, "x-deletes.parquet", 900)); got != 900 {
		t.Fatalf("Parquet: %d", got)
	}
}

// Two groups writing a deletion vector for one data file fail: with Java's
// message when their sequence numbers differ (reported before a match).
func TestOneDVPerDataFile(t *testing.T) {
	g := func(seq int64, refs ...string) *posDeleteGroup {
		out := &posDeleteGroup{maxSeq: seq}
		for _, r := range refs {
			out.out = append(out.out, testDV(t, "p.puffin", r, 10, 100))
		}
		return out
	}
	if err := oneDVPerDataFile([]*posDeleteGroup{g(3, "a", "b"), g(4, "c")}); err != nil {
		t.Fatalf("distinct data files: %v", err)
	}
	err := oneDVPerDataFile([]*posDeleteGroup{g(3, "a", "b"), g(3, "b"), g(5, "a")})
	if !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "Cannot merge DVs, mismatched sequence numbers (3, 5) for a") {
		t.Fatalf("mismatched: %v", err)
	}
	if err := oneDVPerDataFile([]*posDeleteGroup{g(3, "a"), g(3, "a")}); !errors.Is(err, errs.ErrNotSupported) {
		t.Fatalf("same sequence number: %v", err)
	}
}

// dvSummary moves DVs to their own counters and counts their blob bytes.
func TestDVSummary(t *testing.T) {
	added := []iceberg.DataFile{testDV(t, "n.puffin", "a", 40, 1000), testDV(t, "n.puffin", "b", 50, 1000)}
	removed := []iceberg.DataFile{testDV(t, "o.puffin", "a", 30, 700)}
	sn := &table.Snapshot{SnapshotID: 1, Summary: &table.Summary{Operation: table.OpReplace, Properties: iceberg.Properties{
		"added-position-delete-files": "2", "removed-position-delete-files": "4", "added-delete-files": "2", "removed-delete-files": "4",
		"added-files-size": "2000", "removed-files-size": "3700", "total-files-size": "10000",
	}}}
	got, ok := catalog.AddedSnapshot(dvSummary([]table.Update{table.NewAddSnapshotUpdate(sn)}, added, removed)[0])
	if !ok {
		t.Fatal("no snapshot")
	}
	want := map[string]string{
		"added-dvs": "2", "removed-dvs": "1", "removed-position-delete-files": "3", "added-delete-files": "2", "removed-delete-files": "4",
		"added-files-size": "90", "removed-files-size": "3030", "total-files-size": "8760",
	}
	for k, v := range want {
		if got.Summary.Properties[k] != v {
			t.Errorf("%s = %q, want %q (%v)", k, got.Summary.Properties[k], v, got.Summary.Properties)
		}
	}
	if _, ok := got.Summary.Properties["added-position-delete-files"]; ok {
		t.Errorf("added-position-delete-files kept: %v", got.Summary.Properties)
	}
}
