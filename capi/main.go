// Command capi is the C ABI of pyiceberg-go, built with -buildmode=c-shared.
// It holds no business logic: every export recovers panics, checks the
// poison flag and its arguments, decodes, calls the core and encodes the
// result. The contract is include/pyiceberg_go.h.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include <stdlib.h>
#include <string.h>
#include "pyiceberg_go.h"

typedef const char pig_cchar;

static void pig_error_release_impl(struct PigError *e) {
	if (e == NULL) return;
	free(e->message);
	e->message = NULL;
	e->release = NULL;
}

static void pig_error_set(struct PigError *e, PigStatus st, char *msg) {
	if (e == NULL) { free(msg); return; }
	if (e->release != NULL) e->release(e);
	e->status = st;
	e->message = msg;
	e->release = pig_error_release_impl;
}

static void pig_stream_release(struct ArrowArrayStream *s) {
	if (s != NULL && s->release != NULL) s->release(s);
}
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/apache/arrow-go/v18/arrow/memory/mallocator"

	"github.com/pyiceberg-go/pyiceberg-go/capi/cstream"
	"github.com/pyiceberg-go/pyiceberg-go/capi/pin"
	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/changelog"
	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/host"
	"github.com/pyiceberg-go/pyiceberg-go/core/inspect"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/scan"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/version"
)

func main() {}

// poisoned is set after a recovered panic: the library's state is then
// unknown and every later call is refused.
var poisoned atomic.Bool

// handles maps the opaque handles given to C to Go objects. A map (not
// cgo.Handle) makes releasing twice, or releasing 0, harmless.
var handles = struct {
	sync.Mutex
	next uintptr
	m    map[uintptr]any
}{m: map[uintptr]any{}}

func newHandle(v any) uintptr {
	handles.Lock()
	defer handles.Unlock()
	handles.next++
	handles.m[handles.next] = v
	return handles.next
}

func lookup[T any](h C.uintptr_t) (T, bool) {
	handles.Lock()
	defer handles.Unlock()
	v, ok := handles.m[uintptr(h)].(T)
	return v, ok
}

func releaseHandle(h C.uintptr_t) any {
	handles.Lock()
	defer handles.Unlock()
	v := handles.m[uintptr(h)]
	delete(handles.m, uintptr(h))
	return v
}

// operation is a running (or finished) call's cancel switch and progress.
type operation struct {
	ctx    context.Context
	cancel context.CancelFunc
	prog   ops.Progress
}

func setError(e *C.struct_PigError, st errs.Status, msg string) C.PigStatus {
	// The last guard against a secret reaching a caller's logs.
	C.pig_error_set(e, C.PigStatus(st), C.CString(catalog.Redact(msg)))
	return C.PigStatus(st)
}

func fail(e *C.struct_PigError, err error) C.PigStatus {
	return setError(e, errs.StatusOf(err), err.Error())
}

// guard is the prologue of every export: it turns a panic into
// PIG_STATUS_INTERNAL and poisons the library.
func guard(e *C.struct_PigError, st *C.PigStatus) {
	if r := recover(); r != nil {
		poisoned.Store(true)
		*st = setError(e, errs.StatusInternal, fmt.Sprintf("internal error (the library now refuses further calls): %v\n%s", r, debug.Stack()))
	}
}

func refused(e *C.struct_PigError) (C.PigStatus, bool) {
	if poisoned.Load() {
		return setError(e, errs.StatusPoisoned, "the library hit an internal error earlier and refuses further calls; restart the process"), true
	}
	return 0, false
}

//export pig_abi_version
func pig_abi_version() C.int32_t { return C.PIG_ABI_VERSION }

//export pig_version
func pig_version() *C.pig_cchar { return versionC }

// versionC is allocated once and never freed: pig_version's string is static.
var versionC = (*C.pig_cchar)(C.CString(version.Version))

//export pig_free
func pig_free(p unsafe.Pointer) { C.free(p) }

//export pig_runtime_configure
func pig_runtime_configure(doc *C.pig_cchar, e *C.struct_PigError) (st C.PigStatus) {
	defer guard(e, &st)
	if st, ok := refused(e); ok {
		return st
	}
	var rs host.Settings
	if err := decodeStrict(doc, &rs); err != nil {
		return fail(e, err)
	}
	if err := host.Apply(rs); err != nil {
		return fail(e, err)
	}
	return C.PIG_STATUS_OK
}

//export pig_session_new
func pig_session_new(doc *C.pig_cchar, out *C.uintptr_t, e *C.struct_PigError) (st C.PigStatus) {
	defer guard(e, &st)
	if st, ok := refused(e); ok {
		return st
	}
	if out == nil {
		return setError(e, errs.StatusInvalidArgument, "pig_session_new: out_session is NULL")
	}
	var cfg config.Session
	if doc != nil {
		if err := decodeStrict(doc, &cfg); err != nil {
			return fail(e, err)
		}
	}
	s, err := session.Open(cfg)
	if err != nil {
		return fail(e, err)
	}
	*out = C.uintptr_t(newHandle(s))
	return C.PIG_STATUS_OK
}

//export pig_session_release
func pig_session_release(h C.uintptr_t) (st C.PigStatus) {
	defer guard(nil, &st)
	if s, ok := releaseHandle(h).(*session.Session); ok {
		_ = s.Close()
	}
	return C.PIG_STATUS_OK
}

//export pig_operation_new
func pig_operation_new(out *C.uintptr_t) (st C.PigStatus) {
	defer guard(nil, &st)
	if out == nil {
		return C.PIG_STATUS_INVALID_ARGUMENT
	}
	ctx, cancel := context.WithCancel(context.Background())
	*out = C.uintptr_t(newHandle(&operation{ctx: ctx, cancel: cancel}))
	return C.PIG_STATUS_OK
}

//export pig_operation_cancel
func pig_operation_cancel(h C.uintptr_t) (st C.PigStatus) {
	defer guard(nil, &st)
	if op, ok := lookup[*operation](h); ok {
		op.cancel()
	}
	return C.PIG_STATUS_OK
}

//export pig_operation_progress
func pig_operation_progress(h C.uintptr_t, rows, bytes, files *C.int64_t) (st C.PigStatus) {
	defer guard(nil, &st)
	op, ok := lookup[*operation](h)
	if !ok {
		return C.PIG_STATUS_INVALID_ARGUMENT
	}
	for _, p := range []struct {
		dst *C.int64_t
		v   *atomic.Int64
	}{{rows, &op.prog.Rows}, {bytes, &op.prog.Bytes}, {files, &op.prog.Files}} {
		if p.dst != nil {
			*p.dst = C.int64_t(p.v.Load())
		}
	}
	return C.PIG_STATUS_OK
}

//export pig_operation_release
func pig_operation_release(h C.uintptr_t) (st C.PigStatus) {
	defer guard(nil, &st)
	// Only the handle goes: a stream pig_read returned reads on (and
	// counts into the operation) until it is released itself.
	releaseHandle(h)
	return C.PIG_STATUS_OK
}

//export pig_execute
func pig_execute(sh C.uintptr_t, doc *C.pig_cchar, input *C.struct_ArrowArrayStream, oh C.uintptr_t, out **C.char, e *C.struct_PigError) (st C.PigStatus) {
	defer guard(e, &st)
	// The stream is ours whatever happens: release it on every early return.
	var rdr array.RecordReader
	defer func() {
		if rdr != nil {
			rdr.Release()
		} else if input != nil && input.release != nil {
			C.pig_stream_release(input)
		}
	}()
	if st, ok := refused(e); ok {
		return st
	}
	s, ok := lookup[*session.Session](sh)
	if !ok {
		return setError(e, errs.StatusInvalidArgument, "pig_execute: invalid or released session handle")
	}
	if out == nil {
		return setError(e, errs.StatusInvalidArgument, "pig_execute: out_result is NULL")
	}
	req, err := request.Decode([]byte(C.GoString((*C.char)(doc))))
	if err != nil {
		return fail(e, err)
	}
	ctx, prog := context.Background(), (*ops.Progress)(nil)
	if oh != 0 {
		op, ok := lookup[*operation](oh)
		if !ok {
			return setError(e, errs.StatusInvalidArgument, "pig_execute: invalid or released operation handle")
		}
		ctx, prog = op.ctx, &op.prog
	}
	if input != nil && input.release != nil {
		// The stream is checked before arrow-go imports it, and whatever
		// its callbacks do it is released once (capi/cstream).
		r, err := cstream.Import(unsafe.Pointer(input))
		if err != nil {
			return fail(e, fmt.Errorf("importing the input stream: %w", err))
		}
		// The producer is called from one OS thread (capi/pin).
		rdr = pin.NewReader(r)
	}
	in := rdr
	if in != nil {
		in.Retain() // Execute releases its input; the deferred release above drops ours.
	}
	res, err := onGoThread(func() (any, error) { return ops.Execute(ctx, s, req, in, prog) })
	if err != nil {
		return fail(e, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return fail(e, err)
	}
	*out = C.CString(string(b))
	return C.PIG_STATUS_OK
}

//export pig_scan
func pig_scan(sh C.uintptr_t, doc *C.pig_cchar, out *C.struct_ArrowArrayStream, e *C.struct_PigError) (st C.PigStatus) {
	defer guard(e, &st)
	if st, ok := refused(e); ok {
		return st
	}
	return read("pig_scan", sh, doc, 0, out, e)
}

//export pig_read
func pig_read(sh C.uintptr_t, doc *C.pig_cchar, oh C.uintptr_t, out *C.struct_ArrowArrayStream, e *C.struct_PigError) (st C.PigStatus) {
	defer guard(e, &st)
	if st, ok := refused(e); ok {
		return st
	}
	return read("pig_read", sh, doc, oh, out, e)
}

// read plans a scan (or an inspect) on a goroutine of its own (as pig_execute runs its
// operation) and exports its stream, whose batches are read on a goroutine
// of the core's while the host pulls them; a panic while reading becomes
// the stream's error.
func read(name string, sh C.uintptr_t, doc *C.pig_cchar, oh C.uintptr_t, out *C.struct_ArrowArrayStream, e *C.struct_PigError) C.PigStatus {
	s, ok := lookup[*session.Session](sh)
	if !ok {
		return setError(e, errs.StatusInvalidArgument, name+": invalid or released session handle")
	}
	if out == nil {
		return setError(e, errs.StatusInvalidArgument, name+": out stream is NULL")
	}
	if doc == nil {
		return setError(e, errs.StatusInvalidArgument, name+": request document is NULL")
	}
	ctx, prog := context.Background(), (*ops.Progress)(nil)
	if oh != 0 {
		op, ok := lookup[*operation](oh)
		if !ok {
			return setError(e, errs.StatusInvalidArgument, name+": invalid or released operation handle")
		}
		ctx, prog = op.ctx, &op.prog
	}
	req, err := request.DecodeScan([]byte(C.GoString((*C.char)(doc))))
	if err != nil {
		return fail(e, err)
	}
	rdr, err := onGoThread(func() (array.RecordReader, error) {
		switch req.Op {
		case request.OpInspect:
			return inspect.Read(ctx, s, req, mallocator.NewMallocator(), prog)
		case request.OpChangelog:
			return changelog.Read(ctx, s, req, mallocator.NewMallocator(), prog)
		}
		return scan.Read(ctx, s, req, mallocator.NewMallocator(), prog)
	})
	if err != nil {
		return fail(e, err)
	}
	exported := &guardedReader{RecordReader: rdr}
	defer exported.Release()
	cdata.ExportRecordReader(exported, (*cdata.CArrowArrayStream)(unsafe.Pointer(out)))
	return C.PIG_STATUS_OK
}

// guardedReader is an exported stream's reader: the host calls it through
// Arrow's callbacks, outside any export's guard, so a panic while reading
// ends the stream with an error (and poisons the library) instead of
// taking the host process down.
type guardedReader struct {
	array.RecordReader
	err error
}

func (r *guardedReader) Next() (ok bool) {
	if r.err != nil {
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			poisoned.Store(true)
			r.err = fmt.Errorf("internal error while reading (the library now refuses further calls): %v", p)
			ok = false
		}
	}()
	return r.RecordReader.Next()
}

func (r *guardedReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.RecordReader.Err()
}

func (r *guardedReader) Release() {
	defer func() {
		if p := recover(); p != nil {
			poisoned.Store(true)
		}
	}()
	r.RecordReader.Release()
}

func decodeStrict(doc *C.pig_cchar, v any) error {
	if doc == nil {
		return fmt.Errorf("%w: document is NULL", errs.ErrInvalidArgument)
	}
	// As request documents: no key only equal ignoring case, none twice,
	// nothing after the document.
	return request.Strict([]byte(C.GoString((*C.char)(doc))), v)
}
