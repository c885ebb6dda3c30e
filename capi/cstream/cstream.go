// Package cstream imports a host's ArrowArrayStream for pig_execute.
//
// It calls the stream's callbacks itself rather than through arrow-go's
// stream reader, so that what the producer returns is checked
// (core/cimport) before arrow-go's import reads it, and so that a
// misbehaving producer cannot take the process down: a NULL callback is an
// error rather than a jump to address 0, and arrow-go, which aborts the
// process when a release callback does not mark its structure released,
// only ever releases structures of ours. The schema is imported from a
// copy of the producer's tree whose release callbacks only mark it
// released; each batch through a wrapper whose release calls the
// producer's once. The producer's own schema and stream are released here,
// once each, whatever their callbacks do.
package cstream

/*
#cgo CFLAGS: -I${SRCDIR}/../../include
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include "pyiceberg_go.h"

static int pig_cs_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) { return s->get_schema(s, out); }
static int pig_cs_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) { return s->get_next(s, out); }
static const char *pig_cs_last_error(struct ArrowArrayStream *s) {
	return s->get_last_error == NULL ? NULL : s->get_last_error(s);
}

// Releases call the producer's callback once and mark the structure
// released whatever the callback did.
static void pig_cs_release_stream(struct ArrowArrayStream *s) {
	void (*r)(struct ArrowArrayStream *) = s->release;
	if (r != NULL) { r(s); s->release = NULL; }
}
static void pig_cs_release_schema(struct ArrowSchema *s) {
	void (*r)(struct ArrowSchema *) = s->release;
	if (r != NULL) { r(s); s->release = NULL; }
}
static void pig_cs_release_array(struct ArrowArray *a) {
	void (*r)(struct ArrowArray *) = a->release;
	if (r != NULL) { r(a); a->release = NULL; }
}

// A node of the schema copy arrow-go imports: releasing it only marks it.
static void pig_cs_shadow_release(struct ArrowSchema *s) { s->release = NULL; }
static void pig_cs_shadow_set(struct ArrowSchema *dst, const struct ArrowSchema *src,
                              struct ArrowSchema **children, struct ArrowSchema *dict) {
	dst->format = src->format;
	dst->name = src->name;
	dst->metadata = src->metadata;
	dst->flags = src->flags;
	dst->n_children = src->n_children;
	dst->children = children;
	dst->dictionary = dict;
	dst->release = pig_cs_shadow_release;
	dst->private_data = NULL;
}

// A batch handed to arrow-go: the producer's array, moved into held, is
// released (once) when arrow-go releases the wrapper.
struct pig_cs_held { struct ArrowArray orig; };
static void pig_cs_wrapped_release(struct ArrowArray *a) {
	struct pig_cs_held *h = (struct pig_cs_held *)a->private_data;
	if (h != NULL) {
		pig_cs_release_array(&h->orig);
		free(h);
	}
	a->private_data = NULL;
	a->release = NULL;
}
static int pig_cs_wrap(struct ArrowArray *src, struct ArrowArray *dst) {
	struct pig_cs_held *h = (struct pig_cs_held *)malloc(sizeof *h);
	if (h == NULL) return ENOMEM;
	memcpy(&h->orig, src, sizeof *src);
	memcpy(dst, src, sizeof *src);
	dst->private_data = h;
	dst->release = pig_cs_wrapped_release;
	src->release = NULL;
	return 0;
}

static size_t pig_cs_schema_size(void) { return sizeof(struct ArrowSchema); }
static size_t pig_cs_array_size(void) { return sizeof(struct ArrowArray); }
static size_t pig_cs_schema_release_offset(void) { return offsetof(struct ArrowSchema, release); }
static size_t pig_cs_array_release_offset(void) { return offsetof(struct ArrowArray, release); }
static size_t pig_cs_array_dictionary_offset(void) { return offsetof(struct ArrowArray, dictionary); }
*/
import "C"

import (
	"fmt"
	"io"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/pyiceberg-go/pyiceberg-go/core/cimport"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Reader is an array.RecordReader over an imported stream. Next and Release
// call the producer; pig_execute calls them from one thread (capi/pin).
type Reader struct {
	stream *C.struct_ArrowArrayStream // ours: the producer's, moved
	out    *C.struct_ArrowArray       // get_next's destination
	schema *arrow.Schema
	batch  arrow.DataType // the struct of the schema's fields
	cur    arrow.RecordBatch
	err    error
	done   bool
	refs   atomic.Int64
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errs.ErrInvalidArgument, fmt.Sprintf(format, a...))
}

// Import takes over the stream at p (a struct ArrowArrayStream whose release
// callback is set): it is moved, and released by the reader's last Release,
// or before Import returns an error. It reads and imports the schema.
func Import(p unsafe.Pointer) (*Reader, error) {
	src := (*C.struct_ArrowArrayStream)(p)
	if src == nil || src.release == nil {
		return nil, invalid("the input stream is NULL or released")
	}
	r := &Reader{
		stream: (*C.struct_ArrowArrayStream)(C.calloc(1, C.sizeof_struct_ArrowArrayStream)),
		out:    (*C.struct_ArrowArray)(C.calloc(1, C.sizeof_struct_ArrowArray)),
	}
	*r.stream = *src
	src.release = nil
	r.refs.Store(1)
	if r.stream.get_schema == nil || r.stream.get_next == nil {
		r.free()
		return nil, invalid("the input stream has no get_schema or get_next callback")
	}
	sc, err := r.importSchema()
	if err != nil {
		r.free()
		return nil, err
	}
	r.schema = sc
	r.batch = arrow.StructOf(sc.Fields()...)
	return r, nil
}

// callError describes a callback's non-zero return with the producer's
// get_last_error message.
func (r *Reader) callError(call string, rc C.int) error {
	msg := ""
	if m := C.pig_cs_last_error(r.stream); m != nil {
		msg = ": " + C.GoString(m)
	}
	return invalid("the input stream's %s failed (%v)%s", call, syscall.Errno(rc), msg)
}

func (r *Reader) importSchema() (*arrow.Schema, error) {
	cs := (*C.struct_ArrowSchema)(C.calloc(1, C.sizeof_struct_ArrowSchema))
	defer C.free(unsafe.Pointer(cs))
	if rc := C.pig_cs_get_schema(r.stream, cs); rc != 0 {
		return nil, r.callError("get_schema", rc)
	}
	if cs.release == nil {
		return nil, invalid("the input stream's get_schema returned a released schema")
	}
	defer C.pig_cs_release_schema(cs)
	if err := cimport.CheckSchema(unsafe.Pointer(cs)); err != nil {
		return nil, err
	}
	var pool []unsafe.Pointer
	defer func() {
		for _, q := range pool {
			C.free(q)
		}
	}()
	shadow := copySchema(cs, &pool)
	sc, err := cdata.ImportCArrowSchema((*cdata.CArrowSchema)(unsafe.Pointer(shadow)))
	if err != nil {
		return nil, invalid("the input stream's schema: %v", err)
	}
	return sc, nil
}

// copySchema copies the tree at s (checked: at most cimport.MaxNodes nodes
// visited) into C memory recorded in pool.
func copySchema(s *C.struct_ArrowSchema, pool *[]unsafe.Pointer) *C.struct_ArrowSchema {
	alloc := func(n, size C.size_t) unsafe.Pointer {
		q := C.calloc(n, size)
		*pool = append(*pool, q)
		return q
	}
	dst := (*C.struct_ArrowSchema)(alloc(1, C.sizeof_struct_ArrowSchema))
	var children **C.struct_ArrowSchema
	if s.n_children > 0 {
		children = (**C.struct_ArrowSchema)(alloc(C.size_t(s.n_children), C.size_t(unsafe.Sizeof(uintptr(0)))))
		out := unsafe.Slice(children, s.n_children)
		for i, c := range unsafe.Slice(s.children, s.n_children) {
			out[i] = copySchema(c, pool)
		}
	}
	var dict *C.struct_ArrowSchema
	if s.dictionary != nil {
		dict = copySchema(s.dictionary, pool)
	}
	C.pig_cs_shadow_set(dst, s, children, dict)
	return dst
}

// free releases the producer's stream and our structures.
func (r *Reader) free() {
	C.pig_cs_release_stream(r.stream)
	C.free(unsafe.Pointer(r.stream))
	C.free(unsafe.Pointer(r.out))
	r.stream, r.out = nil, nil
}

func (r *Reader) Schema() *arrow.Schema            { return r.schema }
func (r *Reader) RecordBatch() arrow.RecordBatch   { return r.cur }
func (r *Reader) Record() arrow.RecordBatch        { return r.cur }
func (r *Reader) Err() error                       { return r.err }
func (r *Reader) Retain()                          { r.refs.Add(1) }
func (r *Reader) Read() (arrow.RecordBatch, error) { return r.read() }

func (r *Reader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.free()
}

func (r *Reader) Next() bool {
	_, err := r.read()
	return err == nil
}

func (r *Reader) read() (arrow.RecordBatch, error) {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.done {
		return nil, io.EOF
	}
	rec, err := r.next()
	switch {
	case err == io.EOF:
		r.done = true
	case err != nil:
		r.err = err
	}
	r.cur = rec
	return rec, err
}

func (r *Reader) next() (arrow.RecordBatch, error) {
	*r.out = C.struct_ArrowArray{}
	if rc := C.pig_cs_get_next(r.stream, r.out); rc != 0 {
		return nil, r.callError("get_next", rc)
	}
	if r.out.release == nil {
		return nil, io.EOF
	}
	if err := cimport.CheckArray(unsafe.Pointer(r.out), r.batch); err != nil {
		C.pig_cs_release_array(r.out)
		return nil, err
	}
	w := (*C.struct_ArrowArray)(C.calloc(1, C.sizeof_struct_ArrowArray))
	defer C.free(unsafe.Pointer(w))
	if rc := C.pig_cs_wrap(r.out, w); rc != 0 {
		C.pig_cs_release_array(r.out)
		return nil, fmt.Errorf("%w: importing a batch: %v", errs.ErrIO, syscall.Errno(rc))
	}
	rec, err := cdata.ImportCRecordBatchWithSchema((*cdata.CArrowArray)(unsafe.Pointer(w)), r.schema)
	// arrow-go moved w unless it failed before: then it is still ours.
	C.pig_cs_release_array(w)
	if err != nil {
		return nil, invalid("importing a batch: %v", err)
	}
	return rec, nil
}

// layoutMatches reports whether core/cimport mirrors the C structures.
func layoutMatches() error {
	for _, c := range []struct {
		what string
		got  uintptr
		want C.size_t
	}{
		{"sizeof(struct ArrowSchema)", cimport.SchemaSize, C.pig_cs_schema_size()},
		{"offsetof(struct ArrowSchema, release)", cimport.SchemaReleaseOffset, C.pig_cs_schema_release_offset()},
		{"sizeof(struct ArrowArray)", cimport.ArraySize, C.pig_cs_array_size()},
		{"offsetof(struct ArrowArray, dictionary)", cimport.ArrayDictionaryOffset, C.pig_cs_array_dictionary_offset()},
		{"offsetof(struct ArrowArray, release)", cimport.ArrayReleaseOffset, C.pig_cs_array_release_offset()},
	} {
		if C.size_t(c.got) != c.want {
			return fmt.Errorf("%s: %d in core/cimport, %d in C", c.what, c.got, c.want)
		}
	}
	return nil
}
