//go:build linux

package cstream

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/pyiceberg-go/pyiceberg-go/capi/internal/cfake"
	"github.com/pyiceberg-go/pyiceberg-go/capi/pin"
	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/parquet"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// seeds are the inputs of FuzzImportStream's corpus under testdata.
func seeds(t testing.TB) map[string][]byte {
	t.Helper()
	dir := "testdata/fuzz/FuzzImportStream"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(b), "\n", 3)
		if len(lines) < 2 {
			continue
		}
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out[e.Name()] = []byte(s)
	}
	return out
}

func openSession(t testing.TB) *session.Session {
	t.Helper()
	dir := t.TempDir()
	s, err := session.Open(config.Session{
		Catalogs: map[string]map[string]string{"local": {
			"type": "sql", "uri": "sqlite:///" + filepath.Join(dir, "catalog.db"), "warehouse": "file://" + filepath.Join(dir, "wh"),
		}},
		Env: map[string]string{}, Home: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// execute writes the stream gen makes of data as pig_execute would
// (import, pin, ops.Execute with op into table).
func execute(t *testing.T, s *session.Session, data []byte, op, table string) {
	t.Helper()
	st := gen(data)
	fk := cfake.Build(st)
	func() {
		r, err := Import(fk.Stream())
		if err != nil {
			if !typed(err) {
				t.Fatalf("import: %v", err)
			}
			return
		}
		req := &request.Request{Op: op, Table: table}
		_, err = ops.Execute(context.Background(), s, req, pin.NewReader(r), nil)
		if err != nil && !typed(err) && !strings.Contains(err.Error(), "no such table") {
			t.Fatalf("%s: untyped error %v\n%s", op, err, describe(st))
		}
	}()
	if err := fk.Check(); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	fk.Free()
}

// discardFS takes files and keeps nothing.
type discardFS struct{}

type discardFile struct{}

func (discardFS) Open(string) (icebergio.File, error)         { return nil, os.ErrNotExist }
func (discardFS) Remove(string) error                         { return nil }
func (discardFS) WriteFile(string, []byte) error              { return nil }
func (discardFS) Create(string) (icebergio.FileWriter, error) { return discardFile{}, nil }
func (discardFile) Write(p []byte) (int, error)               { return len(p), nil }
func (discardFile) ReadFrom(r io.Reader) (int64, error)       { return io.Copy(io.Discard, r) }
func (discardFile) Close() error                              { return nil }

// FuzzWriteStream is FuzzImportStream through the Parquet writer: each
// batch that imports and conforms is encoded (values, bounds, metrics) as
// a write of a table created from the input would encode it. A whole
// ops.Execute costs a commit per input, a hundred times as long;
// TestStreamsThroughExecute runs the corpus through it.
func FuzzWriteStream(f *testing.F) {
	for _, seed := range seeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st := gen(data)
		fk := cfake.Build(st)
		defer fk.Free()
		func() {
			r, err := Import(fk.Stream())
			if err != nil {
				return // FuzzImportStream checks these
			}
			in := pin.NewReader(r)
			defer in.Release()
			conf := tableFor(in.Schema(), len(data)%2 == 1)
			if conf == nil {
				return
			}
			w := parquet.NewWriter(context.Background(), discardFS{}, conf.Schema(), parquet.Options{Codec: "zstd"},
				func() string { return "mem://f.parquet" })
			for in.Next() {
				out, err := conf.Conform(in.RecordBatch())
				if err != nil {
					continue
				}
				err = w.Write(out)
				out.Release()
				if err != nil {
					if !typed(err) {
						t.Fatalf("write: untyped error %v\n%s", err, describe(st))
					}
					w.Abort()
					return
				}
			}
			files, err := w.Close()
			if err != nil && !typed(err) {
				t.Fatalf("close: untyped error %v\n%s", err, describe(st))
			}
			for _, f := range files {
				if f.Rows < 0 {
					t.Fatalf("file of %d rows", f.Rows)
				}
			}
		}()
		if err := fk.Check(); err != nil {
			t.Fatalf("%v\n%s", err, describe(st))
		}
	})
}

// TestStreamsThroughExecute writes the fuzz corpus and generated valid
// streams as pig_execute would (import, pin, ops.Execute: a create and an
// append): Parquet encoding, metrics and the commit see whatever values
// passed the import. Errors must be typed, and every stream released once.
func TestStreamsThroughExecute(t *testing.T) {
	s := openSession(t)
	inputs := seeds(t)
	for i := range 150 {
		b := make([]byte, 64+i%97)
		for k := range b {
			b[k] = byte((i*97 + k*31 + k*k*i) % 253)
		}
		inputs[fmt.Sprint("generated-", i)] = b
	}
	n := 0
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			table := fmt.Sprint("db.t", n)
			n++
			execute(t, s, data, request.OpCreate, table)
			execute(t, s, data, request.OpAppend, table)
		})
	}
}
