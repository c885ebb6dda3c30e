package catalog

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
)

// Every way a local location reaches a FileIO opens the literal path: a
// "%C3%A9" in a location is those six characters in the file's name.
func TestLocalLocationsAreNotURLDecoded(t *testing.T) {
	dir := t.TempDir()
	names := []string{"s=y%C3%A9", "s=a+b", "s=x%2F..%2F..%2Fout", "s=%zz", "s=q?x#y", "s=%2e%2e"}
	opened := map[string]func() (icebergio.IO, error){
		"OpenFS":            func() (icebergio.IO, error) { return OpenFS(context.Background(), nil, "file://"+dir) },
		"iceberg-go LoadFS": func() (icebergio.IO, error) { return icebergio.LoadFS(context.Background(), nil, "file://"+dir) },
		"LoadFS of a path":  func() (icebergio.IO, error) { return icebergio.LoadFS(context.Background(), nil, dir) },
	}
	for how, open := range opened {
		fsys, err := open()
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		wfs := fsys.(icebergio.WriteFileIO)
		for _, name := range names {
			for _, loc := range []string{"file://" + dir + "/" + name + "/f", "file:" + dir + "/" + name + "/g", dir + "/" + name + "/h"} {
				w, err := wfs.Create(loc)
				if err != nil {
					t.Fatalf("%s: Create(%s): %v", how, loc, err)
				}
				_, _ = io.WriteString(w, "data")
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				want := filepath.Join(dir, name, filepath.Base(loc))
				if b, err := os.ReadFile(want); err != nil || string(b) != "data" {
					t.Fatalf("%s: %s was not written at %s: %v", how, loc, want, err)
				}
				if st, err := fsys.(icebergio.StatIO).Stat(loc); err != nil || st.Size() != 4 {
					t.Fatalf("%s: Stat(%s): %v", how, loc, err)
				}
				f, err := fsys.Open(loc)
				if err != nil {
					t.Fatalf("%s: Open(%s): %v", how, loc, err)
				}
				f.Close()
				if b, err := fsys.(icebergio.ReadFileIO).ReadFile(loc); err != nil || string(b) != "data" {
					t.Fatalf("%s: ReadFile(%s): %v", how, loc, err)
				}
				if err := fsys.Remove(loc); err != nil {
					t.Fatalf("%s: Remove(%s): %v", how, loc, err)
				}
				if _, err := os.Stat(want); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s: %s still there after Remove: %v", how, want, err)
				}
			}
		}
	}
	// Nothing was created anywhere but under the literal names.
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(names) {
		t.Errorf("folders created: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "out")); err == nil {
		t.Error("a %2F..%2F in a name reached the parent folder")
	}
}

func TestLocalFSRefusesOtherHostsAndSchemes(t *testing.T) {
	for _, loc := range []string{"file://otherhost/tmp/x", "s3://bucket/x"} {
		if _, err := (localFS{}).Create(loc); err == nil {
			t.Errorf("Create(%s) must fail", loc)
		}
	}
}
