//go:build linux

package cstream

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/capi/internal/cfake"
	"github.com/pyiceberg-go/pyiceberg-go/capi/pin"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/parquet"
	"github.com/pyiceberg-go/pyiceberg-go/core/schema"
)

// typed reports whether err is one of the kinds bad input may produce.
func typed(err error) bool {
	return (errors.Is(err, errs.ErrInvalidArgument) || errors.Is(err, errs.ErrValidation)) &&
		!strings.Contains(err.Error(), "internal error")
}

// tableFor is the table an input schema would create, with null-typed
// columns (which cannot create one) as optional strings so that they are
// conformed too.
func tableFor(sc *arrow.Schema, keep bool) *schema.Conformer {
	var fix func(t arrow.DataType) arrow.DataType
	fix = func(t arrow.DataType) arrow.DataType {
		switch t := t.(type) {
		case *arrow.NullType:
			return arrow.BinaryTypes.String
		case *arrow.StructType:
			fs := t.Fields()
			for i := range fs {
				fs[i].Type = fix(fs[i].Type)
			}
			return arrow.StructOf(fs...)
		case *arrow.ListType:
			return arrow.ListOfField(arrow.Field{Name: t.ElemField().Name, Type: fix(t.Elem()), Nullable: t.ElemField().Nullable})
		}
		return t
	}
	fs := sc.Fields()
	for i := range fs {
		fs[i].Type = fix(fs[i].Type)
	}
	tbl, err := schema.FromArrow(arrow.NewSchema(fs, nil), keep)
	if err != nil {
		return nil
	}
	c, err := schema.NewConformer(tbl, sc, schema.Options{CheckNullability: true, CheckOrdering: true}, memory.DefaultAllocator)
	if err != nil {
		return nil
	}
	return c
}

// walk reads every value of every column.
func walk(rec arrow.RecordBatch) {
	for _, col := range rec.Columns() {
		for i := range col.Len() {
			_ = col.ValueStr(i)
		}
	}
}

// consume does with the stream at p what pig_execute does with its input
// (import, pin, conform to a table created from it), reading every value
// of every batch before and after conforming. Errors must be typed.
func consume(t *testing.T, p unsafe.Pointer, keep bool) {
	t.Helper()
	r, err := Import(p)
	if err != nil {
		if !typed(err) {
			t.Fatalf("import: untyped error: %v", err)
		}
		return
	}
	in := pin.NewReader(r)
	defer in.Release()
	conf := tableFor(in.Schema(), keep)
	for in.Next() {
		rec := in.RecordBatch()
		_ = parquet.RecordBytes(rec)
		walk(rec)
		if conf == nil {
			continue
		}
		out, err := conf.Conform(rec)
		if err != nil {
			if !typed(err) {
				t.Fatalf("conform: untyped error: %v", err)
			}
			continue
		}
		walk(out)
		out.Release()
	}
	if err := in.Err(); err != nil && !typed(err) {
		t.Fatalf("read: untyped error: %v", err)
	}
}

func run(t *testing.T, st *cfake.Stream, keep bool) {
	t.Helper()
	fk := cfake.Build(st)
	defer fk.Free()
	consume(t, fk.Stream(), keep)
	if err := fk.Check(); err != nil {
		t.Fatalf("%v\n%s", err, describe(st))
	}
}

// FuzzImportStream builds an ArrowArrayStream from the fuzzer's bytes
// (gen: valid batches of a generated schema, then mutated) and consumes it
// as pig_execute does. The library must return typed errors, never panic,
// never read past what the structures declare (guard pages) or after
// release, and release the stream, the schema and every batch it was
// handed exactly once.
func FuzzImportStream(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{3, 0, 1, 5, 2, 7, 9, 11, 4, 200, 3, 17, 40, 90},
		{2, 8, 3, 1, 2, 3, 2, 20, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
		{1, 15, 4, 9, 3, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		{0, 14, 2, 2, 5, 1, 2, 3, 4, 5, 6, 7, 8, 9},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st := gen(data)
		run(t, st, len(data)%2 == 1)
	})
}

// A stream that imports and conforms cleanly, to show the harness builds
// valid input: every batch is read and conformed.
func TestGeneratedStreamsAreValid(t *testing.T) {
	for seed := range 200 {
		b := make([]byte, 64)
		for i := range b {
			b[i] = byte((seed*131 + i*17) % 251)
		}
		s := &src{b: b}
		root := &gtype{format: "+s"}
		for i := range 1 + s.n(4) {
			root.kids = append(root.kids, &gfield{name: "c" + string(rune('a'+i)), nullable: true, t: genType(s, 0)})
		}
		st := &cfake.Stream{FailAt: -1, Schema: root.schema("", false)}
		for range 2 {
			st.Batches = append(st.Batches, genArray(s, root, s.n(40), false, true))
		}
		fk := cfake.Build(st)
		r, err := Import(fk.Stream())
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, describe(st))
		}
		n := 0
		for r.Next() {
			walk(r.RecordBatch())
			n++
		}
		err = r.Err()
		r.Release()
		if err != nil && !strings.Contains(err.Error(), "not supported") {
			t.Fatalf("seed %d: %v\n%s", seed, err, describe(st))
		}
		if err == nil && n != 2 {
			t.Fatalf("seed %d: %d batches", seed, n)
		}
		if err := fk.Check(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		fk.Free()
	}
}
