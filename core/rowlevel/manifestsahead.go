package rowlevel

import (
	"context"
	"runtime"
	"sync"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"
)

// manifestsAhead reads the live entries of a snapshot's manifests in the
// background, once, for a compaction to plan its groups from and to commit
// with (manifests never change, so the entries read for a path stay true
// whatever commits land meanwhile).
type manifestsAhead struct {
	done      chan struct{}
	manifests []iceberg.ManifestFile // sn's manifest list (nil: not read)
	entries   map[string][]iceberg.ManifestEntry
}

// readManifestsAhead reads sn's manifest list and starts reading its
// manifests; the reading stops when ctx ends.
func readManifestsAhead(ctx context.Context, fs icebergio.IO, sn *table.Snapshot) *manifestsAhead {
	a := &manifestsAhead{done: make(chan struct{}), entries: map[string][]iceberg.ManifestEntry{}}
	manifests, err := sn.Manifests(fs)
	if err != nil {
		close(a.done) // the readers read them themselves
		return a
	}
	a.manifests = manifests
	go func() {
		defer close(a.done)
		var mu sync.Mutex
		_ = eachManifest(ctx, manifests, func(_ int, m iceberg.ManifestFile) error {
			if es, err := liveEntries(fs, m); err == nil {
				mu.Lock()
				a.entries[m.FilePath()] = es
				mu.Unlock()
			}
			return nil
		})
	}()
	return a
}

// eachManifest runs fn for each of manifests, several at once (a read
// waits on storage as well as parsing), until ctx ends or fn fails; it
// returns the first error.
func eachManifest(ctx context.Context, manifests []iceberg.ManifestFile, fn func(i int, m iceberg.ManifestFile) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(4, 2*runtime.GOMAXPROCS(0)))
	for i, m := range manifests {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			return fn(i, m)
		})
	}
	return g.Wait()
}

// get returns the entries read for manifest path, once the reading is
// over.
func (a *manifestsAhead) get(path string) ([]iceberg.ManifestEntry, bool) {
	if a == nil {
		return nil, false
	}
	<-a.done
	es, ok := a.entries[path]
	return es, ok
}

// dataTasks returns the snapshot's scan tasks, one per live data file that
// has rows, in manifest list and manifest order, as iceberg-go's planning
// of an unfiltered scan returns them, when the snapshot has no delete
// manifests (no task has delete files to match). ok is false when it has,
// or when some manifest could not be read ahead.
func (a *manifestsAhead) dataTasks() (tasks []table.FileScanTask, ok bool) {
	if a == nil || a.manifests == nil {
		return nil, false
	}
	for _, m := range a.manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			return nil, false
		}
	}
	<-a.done
	for _, m := range a.manifests {
		entries, read := a.entries[m.FilePath()]
		if !read {
			return nil, false
		}
		for _, e := range entries {
			df := e.DataFile()
			if df.Count() == 0 { // as the inclusive metrics evaluator skips empty files
				continue
			}
			task := table.FileScanTask{File: df, Start: 0, Length: df.FileSizeBytes(), FirstRowID: df.FirstRowID()}
			if seq := e.SequenceNum(); seq >= 0 {
				task.DataSequenceNumber = &seq
			}
			tasks = append(tasks, task)
		}
	}
	return tasks, true
}

// liveEntries reads manifest m's entries that are not DELETED.
func liveEntries(fs icebergio.IO, m iceberg.ManifestFile) ([]iceberg.ManifestEntry, error) {
	var out []iceberg.ManifestEntry
	for e, err := range m.Entries(fs, true) {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
