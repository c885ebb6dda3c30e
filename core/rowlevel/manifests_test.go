package rowlevel

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
)

// The prefetched cache gives the files a direct decode gives, decodes each
// manifest once however many callers ask, and keeps no failed decode: a
// later caller decodes again and sees its own outcome.
func TestManifestCacheDecodesOnce(t *testing.T) {
	ctx := context.Background()
	a := mixedBatch(3000, 3)
	defer a.Release()
	tbl := monthTable(t, ctx, a)
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	head := tbl.CurrentSnapshot()
	paths := func(c *manifestCache) []string {
		var out []string
		if err := liveFiles(fs, head, iceberg.ManifestContentData, c, func(df iceberg.DataFile) error {
			out = append(out, df.FilePath())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	want := paths(nil)
	if len(want) < 2 {
		t.Fatalf("want several data files, got %v", want)
	}
	c := prefetchManifests(ctx, fs, head)
	if c == nil {
		t.Fatal("no cache for a small table")
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := paths(c); !slices.Equal(got, want) {
				t.Errorf("cached files %v, want %v", got, want)
			}
		})
	}
	wg.Wait()
	manifests, err := head.Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	m := manifests[0]
	first, err := c.files(fs, m)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.files(fs, m)
	if len(first) == 0 || &first[0] != &again[0] {
		t.Error("a second call decoded the manifest again instead of using the cache")
	}

	// A manifest that cannot be read is an error, not cached.
	fresh := &manifestCache{byPath: map[string]*manifestSlot{}}
	data, err := os.ReadFile(trimFileScheme(m.FilePath()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(trimFileScheme(m.FilePath())); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.files(fs, m); err == nil {
		t.Fatal("decoding a missing manifest succeeded")
	}
	if len(fresh.byPath) != 0 {
		t.Error("a failed decode stayed in the cache")
	}
	if err := os.WriteFile(trimFileScheme(m.FilePath()), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := fresh.files(fs, m); err != nil || len(got) != len(first) {
		t.Errorf("after the file came back: %d files, %v; want %d", len(got), err, len(first))
	}

	// Past the bound nothing is prefetched: the commit decodes as it reads.
	if n := len(want); n > 0 {
		old := prefetchMaxFiles
		prefetchMaxFiles = int64(n - 1)
		defer func() { prefetchMaxFiles = old }()
		if prefetchManifests(ctx, fs, head) != nil {
			t.Errorf("prefetched %d files past a bound of %d", n, n-1)
		}
	}
}

func trimFileScheme(p string) string { return strings.TrimPrefix(p, "file://") }
