package stage

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"sort"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
)

// The manifests iceberg-go v0.7.0 writes describe a decimal partition value
// with an Avro schema that leaves out "scale" when it is 0 (its Avro library
// omits zero values). The Avro spec makes 0 the default, and Iceberg Java
// always writes it; PyIceberg 0.12 fails on such a manifest (KeyError:
// 'scale') and DuckDB 1.5's iceberg extension dies of SIGFPE on it. So every
// Avro file a commit writes goes through scaleFS, which adds "scale":0 to
// each decimal of the header's avro.schema. The manifest list records each
// manifest's length as iceberg-go counted it, so the header must keep its
// length: the bytes added are taken from "doc" annotations of the schema
// (text for people, which no reader interprets), and any difference left is
// padding after the JSON value. A header that cannot be patched exactly so
// (not Avro, no doc to give, a schema that does not re-encode to the bytes
// it was) is written unchanged.

// withDecimalScales wraps a table's FileIO function for a commit.
func withDecimalScales(f func(context.Context) (icebergio.IO, error)) func(context.Context) (icebergio.IO, error) {
	return func(ctx context.Context) (icebergio.IO, error) {
		fsys, err := f(ctx)
		if err != nil {
			return nil, err
		}
		if w, ok := fsys.(icebergio.WriteFileIO); ok {
			return &scaleFS{WriteFileIO: w}, nil
		}
		return fsys, nil
	}
}

// scaleFS patches the Avro files it creates; everything else goes straight
// to the wrapped FileIO (with the optional interfaces iceberg-go looks for).
type scaleFS struct {
	icebergio.WriteFileIO
}

func (s *scaleFS) Create(name string) (icebergio.FileWriter, error) {
	w, err := s.WriteFileIO.Create(name)
	if err != nil || !strings.HasSuffix(name, ".avro") {
		return w, err
	}
	return &scaleWriter{FileWriter: w}, nil
}

func (s *scaleFS) ReadFile(name string) ([]byte, error) {
	if rf, ok := s.WriteFileIO.(icebergio.ReadFileIO); ok {
		return rf.ReadFile(name)
	}
	f, err := s.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (s *scaleFS) Stat(name string) (fs.FileInfo, error) {
	if st, ok := s.WriteFileIO.(icebergio.StatIO); ok {
		return st.Stat(name)
	}
	f, err := s.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// maxAvroHeader bounds what a scaleWriter holds back waiting for the end of
// the header (a manifest's is a few KB); a longer one is written unchanged.
const maxAvroHeader = 1 << 20

// scaleWriter holds back the start of an Avro file until its header is
// complete, patches it and passes everything after it through.
type scaleWriter struct {
	icebergio.FileWriter
	head   []byte
	passed bool // the header went out: write through
}

func (w *scaleWriter) Write(p []byte) (int, error) {
	if w.passed {
		return w.FileWriter.Write(p)
	}
	w.head = append(w.head, p...)
	n, complete := avroHeaderLen(w.head)
	if !complete && n >= 0 && len(w.head) < maxAvroHeader {
		return len(p), nil
	}
	if complete {
		patchDecimalScales(w.head[:n])
	}
	if err := w.flush(); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *scaleWriter) flush() error {
	w.passed = true
	head := w.head
	w.head = nil
	_, err := w.FileWriter.Write(head)
	return err
}

func (w *scaleWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(writerOnly{w}, r)
}

func (w *scaleWriter) Close() error {
	if !w.passed {
		if err := w.flush(); err != nil {
			return errors.Join(err, w.FileWriter.Close())
		}
	}
	return w.FileWriter.Close()
}

type writerOnly struct{ io.Writer }

// avroHeaderLen returns the length of the Avro object container header at
// the start of b and whether b holds all of it; n < 0 when b is not Avro.
func avroHeaderLen(b []byte) (n int, complete bool) {
	if len(b) < 4 {
		if !bytes.HasPrefix([]byte("Obj\x01"), b) {
			return -1, false
		}
		return 0, false
	}
	if string(b[:4]) != "Obj\x01" {
		return -1, false
	}
	off := 4
	next := func() (int64, bool) {
		v, k := binary.Varint(b[off:])
		if k <= 0 {
			return 0, false
		}
		off += k
		return v, true
	}
	skip := func() bool {
		l, ok := next()
		if !ok || l < 0 || int64(len(b)-off) < l {
			return false
		}
		off += int(l)
		return true
	}
	for {
		count, ok := next()
		if !ok {
			return 0, false
		}
		if count == 0 {
			break
		}
		if count < 0 {
			count = -count
			if _, ok := next(); !ok { // block size in bytes
				return 0, false
			}
		}
		for range count {
			// A key, then its value.
			if !skip() {
				return 0, false
			}
			if !skip() {
				return 0, false
			}
		}
	}
	if len(b)-off < 16 { // sync marker
		return 0, false
	}
	return off + 16, true
}

// patchDecimalScales rewrites, in place and at the same length, the
// avro.schema entry of a complete header.
func patchDecimalScales(head []byte) {
	off := 4
	next := func() int64 {
		v, k := binary.Varint(head[off:])
		off += k
		return v
	}
	for {
		count := next()
		if count == 0 {
			return
		}
		if count < 0 {
			count = -count
			next()
		}
		for range count {
			kl := int(next())
			key := string(head[off : off+kl])
			off += kl
			vl := int(next())
			if key == "avro.schema" {
				if patched, ok := schemaWithScales(head[off : off+vl]); ok {
					copy(head[off:off+vl], patched)
				}
				return
			}
			off += vl
		}
	}
}

// schemaWithScales returns the Avro schema js with "scale":0 on each decimal
// that has none, at exactly js's length, or ok=false.
func schemaWithScales(js []byte) ([]byte, bool) {
	if !bytes.Contains(js, []byte(`"decimal"`)) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, false
	}
	// Only a schema that encodes back to its own bytes is edited: then
	// the edit changes nothing but what it means to.
	if again, err := encodeJSON(tree); err != nil || !bytes.Equal(again, js) {
		return nil, false
	}
	added := 0
	var docs []map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["logicalType"] == "decimal" {
				if _, ok := x["scale"]; !ok {
					x["scale"] = json.Number("0")
					added++
				}
			}
			if _, ok := x["doc"].(string); ok {
				docs = append(docs, x)
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(tree)
	if added == 0 {
		return nil, false
	}
	out, err := encodeJSON(tree)
	for len(out) > len(js) && err == nil && len(docs) > 0 {
		delete(docs[len(docs)-1], "doc")
		docs = docs[:len(docs)-1]
		out, err = encodeJSON(tree)
	}
	if err != nil || len(out) > len(js) {
		return nil, false
	}
	return append(out, bytes.Repeat([]byte(" "), len(js)-len(out))...), true
}

// encodeJSON is compact JSON with sorted keys and no HTML escaping, the
// form iceberg-go's Avro library writes schemas in.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
