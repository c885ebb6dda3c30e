package maintenance

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Kind is what a file reachable from table metadata is.
type Kind int

// The kinds of files, in the order an expiry deletes them.
const (
	DataFile Kind = iota
	PositionDeleteFile
	EqualityDeleteFile
	ManifestFile
	ManifestList
	StatisticsFile
	// MetadataFile is a metadata.json or version-hint.text (orphan
	// listing only: an expiry never deletes one).
	MetadataFile
)

// Files maps file locations (as the metadata spells them) to their kind.
type Files map[string]Kind

// readers bounds the manifests read at once.
const readers = 8

// Reachable returns every file the snapshots of m selected by want reach:
// their manifest lists, manifests, live data and delete files, and their
// statistics and partition statistics files. want nil selects every
// snapshot. A manifest shared by several snapshots is read once.
func Reachable(ctx context.Context, fs icebergio.IO, m table.Metadata, want func(id int64) bool) (Files, error) {
	out := Files{}
	seen := map[string]bool{}
	var manifests []iceberg.ManifestFile
	for _, sn := range m.Snapshots() {
		if want != nil && !want(sn.SnapshotID) {
			continue
		}
		if sn.ManifestList != "" {
			out[sn.ManifestList] = ManifestList
		}
		mfs, err := sn.Manifests(fs)
		if err != nil {
			return nil, fmt.Errorf("%w: reading the manifest list of snapshot %d: %v", errs.ErrIO, sn.SnapshotID, err)
		}
		for _, mf := range mfs {
			if !seen[mf.FilePath()] {
				seen[mf.FilePath()] = true
				manifests = append(manifests, mf)
				out[mf.FilePath()] = ManifestFile
			}
		}
	}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		first error
		sem   = make(chan struct{}, readers)
	)
	for _, mf := range manifests {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			local, err := readManifest(ctx, fs, mf)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				first = cmp.Or(first, err)
				return
			}
			maps.Copy(out, local)
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	for st := range m.Statistics() {
		if want == nil || want(st.SnapshotID) {
			out[st.StatisticsPath] = StatisticsFile
		}
	}
	for st := range m.PartitionStatistics() {
		if want == nil || want(st.SnapshotID) {
			out[st.StatisticsPath] = StatisticsFile
		}
	}
	return out, nil
}

// readManifest returns the live data and delete files of manifest mf.
func readManifest(ctx context.Context, fs icebergio.IO, mf iceberg.ManifestFile) (Files, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrCancelled, err)
	}
	out := Files{}
	for e, err := range mf.Entries(fs, true) {
		if err != nil {
			return nil, fmt.Errorf("%w: reading manifest %s: %v", errs.ErrIO, mf.FilePath(), err)
		}
		df := e.DataFile()
		switch df.ContentType() {
		case iceberg.EntryContentPosDeletes:
			out[df.FilePath()] = PositionDeleteFile
		case iceberg.EntryContentEqDeletes:
			out[df.FilePath()] = EqualityDeleteFile
		default:
			out[df.FilePath()] = DataFile
		}
	}
	return out, nil
}
