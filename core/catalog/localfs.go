package catalog

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/pyiceberg-go/pyiceberg-go/core/paths"
)

// localFS is the local file system with locations read literally:
// "file:///a/b%C3%A9" is the file /a/b%C3%A9, as Iceberg Java (Hadoop's
// Path) and PyIceberg read it. iceberg-go's LocalFS URL-decodes a file://
// location instead, so a partition folder written by Spark as
// "s=y%C3%A9" would be looked for as "s=yé", and one written by that
// FileIO would not be where its location says.
type localFS struct{}

var (
	_ icebergio.WriteFileIO       = localFS{}
	_ icebergio.ReadFileIO        = localFS{}
	_ icebergio.StatIO            = localFS{}
	_ icebergio.ListableIO        = localFS{}
	_ icebergio.RenameIO          = localFS{}
	_ icebergio.RenameNoReplaceIO = localFS{}
	_ icebergio.RemoveAllIO       = localFS{}
	_ icebergio.MkdirAllIO        = localFS{}
)

// init makes every local FileIO iceberg-go opens (its catalogs' metadata
// files, scans of tables it loaded) read locations literally too.
func init() {
	factory := func(context.Context, *url.URL, map[string]string) (icebergio.IO, error) {
		return localFS{}, nil
	}
	for _, scheme := range []string{"file", ""} {
		icebergio.Unregister(scheme)
		icebergio.Register(scheme, factory)
	}
}

// osPath is the local path of location name, or a *fs.PathError for a
// location that is not local.
func osPath(op, name string) (string, error) {
	p, ok := paths.LocalPath(name)
	if !ok {
		return "", &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: not a local file location", fs.ErrInvalid)}
	}
	return p, nil
}

func (localFS) Open(name string) (icebergio.File, error) {
	p, err := osPath("open", name)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

func (localFS) ReadFile(name string) ([]byte, error) {
	p, err := osPath("read", name)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

func (localFS) Create(name string) (icebergio.FileWriter, error) {
	p, err := osPath("create", name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	return os.Create(p)
}

func (localFS) WriteFile(name string, content []byte) error {
	p, err := osPath("write", name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, content, 0o644)
}

func (localFS) Remove(name string) error {
	p, err := osPath("remove", name)
	if err != nil {
		return err
	}
	return os.Remove(p)
}

func (localFS) RemoveAll(name string) error {
	p, err := osPath("remove", name)
	if err != nil {
		return err
	}
	return os.RemoveAll(p)
}

// WalkDir walks the local folder root; fn gets local paths, as from
// iceberg-go's LocalFS.
func (localFS) WalkDir(root string, fn fs.WalkDirFunc) error {
	p, err := osPath("walk", root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(p, fn)
}

func (localFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := osPath("readdir", name)
	if err != nil {
		return nil, err
	}
	return os.ReadDir(p)
}

func (localFS) MkdirAll(name string) error {
	p, err := osPath("mkdir", name)
	if err != nil {
		return err
	}
	return os.MkdirAll(p, 0o755)
}

func (localFS) Stat(name string) (fs.FileInfo, error) {
	p, err := osPath("stat", name)
	if err != nil {
		return nil, err
	}
	return os.Stat(p)
}

func (localFS) Rename(oldpath, newpath string) error {
	src, err := osPath("rename", oldpath)
	if err != nil {
		return err
	}
	dst, err := osPath("rename", newpath)
	if err != nil {
		return err
	}
	return os.Rename(src, dst)
}

// RenameNoReplace moves oldpath to newpath unless newpath exists (a hard
// link, then the source removed), as iceberg-go's LocalFS does.
func (localFS) RenameNoReplace(oldpath, newpath string) error {
	src, err := osPath("rename", oldpath)
	if err != nil {
		return err
	}
	dst, err := osPath("rename", newpath)
	if err != nil {
		return err
	}
	if err := os.Link(src, dst); err != nil {
		return err
	}
	_ = os.Remove(src)
	return nil
}
