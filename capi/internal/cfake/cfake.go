//go:build linux

// Package cfake builds Arrow C streams, schemas and arrays in C memory,
// malformed or not, for tests of the library's import (capi/cstream). Only
// tests import it (a test file cannot use cgo itself).
//
// Every buffer, and every array of buffer or child pointers, sits against a
// page that may not be accessed (after it, or before it when asked), so a
// read past what the structure declares faults instead of passing by luck.
// When a released structure's release callback runs, the pages of its
// buffers are made inaccessible too, so a read after release faults. The
// callbacks count how often each structure handed to the consumer was
// released: Check reports a structure released twice, or not at all.
package cfake

/*
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct ArrowSchema {
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  void (*release)(struct ArrowSchema *);
  void *private_data;
};
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  void (*release)(struct ArrowArray *);
  void *private_data;
};
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  const char *(*get_last_error)(struct ArrowArrayStream *);
  void (*release)(struct ArrowArrayStream *);
  void *private_data;
};

struct fake_region { void *base; size_t len; };

// What a structure's release callback knows: how often it ran, whether it
// leaves release set (a misbehaving producer), the structures below it to
// release along, and the pages to protect.
struct fake_rec {
  int releases;
  int sticky;
  int handed;          // moved to the consumer (top-level structures)
  int nregions;
  struct fake_region *regions;
};

static void fake_protect(struct fake_rec *r) {
  for (int i = 0; i < r->nregions; i++) mprotect(r->regions[i].base, r->regions[i].len, PROT_NONE);
}

static void fake_schema_release(struct ArrowSchema *s) {
  struct fake_rec *r = (struct fake_rec *)s->private_data;
  r->releases++;
  if (r->releases == 1) {
    for (int64_t i = 0; i < s->n_children && s->children != NULL && i < 64; i++) {
      struct ArrowSchema *c = s->children[i];
      if (c != NULL && c->release != NULL && c != s) c->release(c);
    }
    if (s->dictionary != NULL && s->dictionary->release != NULL && s->dictionary != s) s->dictionary->release(s->dictionary);
    fake_protect(r);
  }
  if (!r->sticky) s->release = NULL;
}

static void fake_array_release(struct ArrowArray *a) {
  struct fake_rec *r = (struct fake_rec *)a->private_data;
  r->releases++;
  if (r->releases == 1) fake_protect(r);
  if (!r->sticky) a->release = NULL;
}

struct fake_stream {
  struct fake_rec rec;
  struct ArrowSchema *schema;
  int schema_rc;
  int schema_given;
  struct ArrowArray **batches;
  int nbatches;
  int next;
  int fail_at;
  const char *last_error;
};

static int fake_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  struct fake_stream *f = (struct fake_stream *)s->private_data;
  if (f->schema_rc != 0) return f->schema_rc;
  if (f->schema_given) return EINVAL;
  f->schema_given = 1;
  memcpy(out, f->schema, sizeof *out);
  if (out->release != NULL) ((struct fake_rec *)out->private_data)->handed = 1;
  f->schema->release = NULL;
  return 0;
}

static int fake_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  struct fake_stream *f = (struct fake_stream *)s->private_data;
  if (f->next == f->fail_at) { f->next++; return EIO; }
  if (f->next >= f->nbatches) { memset(out, 0, sizeof *out); return 0; }
  struct ArrowArray *b = f->batches[f->next++];
  memcpy(out, b, sizeof *out);
  if (out->release != NULL) ((struct fake_rec *)out->private_data)->handed = 1;
  b->release = NULL;
  return 0;
}

static const char *fake_last_error(struct ArrowArrayStream *s) {
  return ((struct fake_stream *)s->private_data)->last_error;
}

static void fake_stream_release(struct ArrowArrayStream *s) {
  struct fake_stream *f = (struct fake_stream *)s->private_data;
  f->rec.releases++;
  if (!f->rec.sticky) s->release = NULL;
}

static void fake_set_schema_release(struct ArrowSchema *s, int on) { s->release = on ? fake_schema_release : NULL; }
static void fake_set_array_release(struct ArrowArray *a, int on) { a->release = on ? fake_array_release : NULL; }
static void fake_set_stream(struct ArrowArrayStream *s, struct fake_stream *f, int get_schema, int get_next,
                            int last_error, int release) {
  s->get_schema = get_schema ? fake_get_schema : NULL;
  s->get_next = get_next ? fake_get_next : NULL;
  s->get_last_error = last_error ? fake_last_error : NULL;
  s->release = release ? fake_stream_release : NULL;
  s->private_data = f;
}

// fake_guarded maps len bytes against an inaccessible page: after them, or
// before them when front is set. align rounds the start down (after mode).
static void *fake_guarded(size_t len, int front, size_t align, struct fake_region *out) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t total = ((len + align + page - 1) / page + 1) * page;
  char *m = (char *)mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  out->base = m;
  out->len = total;
  if (front) {
    mprotect(m, page, PROT_NONE);
    return m + page;
  }
  mprotect(m + total - page, page, PROT_NONE);
  size_t start = total - page - len;
  start -= start % align;
  return m + start;
}

static void fake_unmap(struct fake_region *r) { munmap(r->base, r->len); }
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Release is how a structure's release callback behaves.
type Release int

const (
	ReleaseOK     Release = iota // counts, releases what is below, marks the structure released
	ReleaseNull                  // the structure comes released (release is NULL)
	ReleaseSticky                // counts but leaves release set, as a buggy producer might
)

// Buf is one buffer: NULL, or the bytes of Data against an inaccessible
// page (before them with Front). Align is the start's alignment (default 1).
type Buf struct {
	Null  bool
	Data  []byte
	Front bool
	Align int
}

// Schema is an ArrowSchema node.
type Schema struct {
	Format    *string // nil: NULL
	Name      *string // nil: NULL
	Metadata  []byte  // nil: NULL; else the encoded bytes as given
	Flags     int64
	NChildren int64     // declared
	Children  []*Schema // the pointers there are (nil: a NULL pointer); fewer than declared are NULL
	NoKids    bool      // the children pointer itself is NULL
	Dict      *Schema
	Release   Release
	// Loop makes child Loop-1 point back at this node (a cycle) when >0.
	Loop int
}

// Array is an ArrowArray node.
type Array struct {
	Length, NullCount, Offset int64
	NBuffers                  int64 // declared
	Buffers                   []Buf
	NoBufs                    bool // the buffers pointer itself is NULL
	NChildren                 int64
	Children                  []*Array
	NoKids                    bool
	Dict                      *Array
	Release                   Release
}

// Stream is an ArrowArrayStream.
type Stream struct {
	Schema      *Schema
	SchemaRC    int // get_schema's return value
	Batches     []*Array
	FailAt      int // get_next returns EIO on this call (0-based; -1: never)
	LastError   *string
	NoGetSchema bool
	NoGetNext   bool
	NoLastError bool
	Release     Release
}

// Fake is a built stream and everything it owns.
type Fake struct {
	stream  *C.struct_ArrowArrayStream
	state   *C.struct_fake_stream
	allocs  []unsafe.Pointer
	regions []*C.struct_fake_region
	tops    []*C.struct_fake_rec // structures that may be handed to the consumer
	names   []string             // what each of tops is
}

// maxSlots bounds the pointer arrays built: a larger declared count gets
// this many slots against a guard page.
const maxSlots = 64

// Build makes s in C memory. Free unmaps it.
func Build(s *Stream) *Fake {
	f := &Fake{}
	f.state = (*C.struct_fake_stream)(f.calloc(1, C.sizeof_struct_fake_stream))
	f.state.fail_at = C.int(s.FailAt)
	f.state.schema_rc = C.int(s.SchemaRC)
	f.state.rec.sticky = boolInt(s.Release == ReleaseSticky)
	if s.LastError != nil {
		f.state.last_error = (*C.char)(f.cstring(*s.LastError, nil))
	}
	if s.Schema != nil {
		var regs []*C.struct_fake_region
		f.state.schema = f.schema(s.Schema, &regs)
		f.top(f.state.schema.private_data, regs, "the schema")
	} else {
		f.state.schema = (*C.struct_ArrowSchema)(f.calloc(1, C.sizeof_struct_ArrowSchema))
	}
	if n := len(s.Batches); n > 0 {
		f.state.batches = (**C.struct_ArrowArray)(f.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(uintptr(0)))))
		out := unsafe.Slice(f.state.batches, n)
		for i, b := range s.Batches {
			var regs []*C.struct_fake_region
			out[i] = f.array(b, &regs)
			f.top(out[i].private_data, regs, fmt.Sprintf("batch %d", i))
		}
		f.state.nbatches = C.int(n)
	}
	f.stream = (*C.struct_ArrowArrayStream)(f.calloc(1, C.sizeof_struct_ArrowArrayStream))
	C.fake_set_stream(f.stream, f.state, boolInt(!s.NoGetSchema), boolInt(!s.NoGetNext), boolInt(!s.NoLastError),
		boolInt(s.Release != ReleaseNull))
	return f
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Stream is the struct ArrowArrayStream to hand to the consumer.
func (f *Fake) Stream() unsafe.Pointer { return unsafe.Pointer(f.stream) }

func (f *Fake) calloc(n, size C.size_t) unsafe.Pointer {
	p := C.calloc(n, size)
	if p == nil {
		panic("cfake: out of memory")
	}
	f.allocs = append(f.allocs, p)
	return p
}

// guarded copies b into a guarded mapping, recorded in regs.
func (f *Fake) guarded(b []byte, front bool, align int, regs *[]*C.struct_fake_region) unsafe.Pointer {
	r := (*C.struct_fake_region)(f.calloc(1, C.sizeof_struct_fake_region))
	if align < 1 {
		align = 1
	}
	p := C.fake_guarded(C.size_t(len(b)), boolInt(front), C.size_t(align), r)
	if p == nil {
		panic("cfake: mmap failed")
	}
	f.regions = append(f.regions, r)
	if regs != nil {
		*regs = append(*regs, r)
	}
	if len(b) > 0 {
		copy(unsafe.Slice((*byte)(p), len(b)), b)
	}
	return p
}

func (f *Fake) cstring(s string, regs *[]*C.struct_fake_region) unsafe.Pointer {
	return f.guarded(append([]byte(s), 0), false, 1, regs)
}

func (f *Fake) rec(sticky bool) *C.struct_fake_rec {
	r := (*C.struct_fake_rec)(f.calloc(1, C.sizeof_struct_fake_rec))
	r.sticky = boolInt(sticky)
	return r
}

// top records the structure whose private data is p as one that may be
// handed out, protecting regs when it is released.
func (f *Fake) top(p unsafe.Pointer, regs []*C.struct_fake_region, name string) {
	if p == nil {
		return
	}
	r := (*C.struct_fake_rec)(p)
	if len(regs) > 0 {
		arr := (*C.struct_fake_region)(f.calloc(C.size_t(len(regs)), C.sizeof_struct_fake_region))
		out := unsafe.Slice(arr, len(regs))
		for i, g := range regs {
			out[i] = *g
		}
		r.regions, r.nregions = arr, C.int(len(regs))
	}
	f.tops = append(f.tops, r)
	f.names = append(f.names, name)
}

// slots makes an array of n pointers (at most maxSlots) against a guard page.
func (f *Fake) slots(n int64, regs *[]*C.struct_fake_region) []unsafe.Pointer {
	n = min(max(n, 0), maxSlots)
	p := f.guarded(make([]byte, n*8), false, 8, regs)
	return unsafe.Slice((*unsafe.Pointer)(p), n)
}

func (f *Fake) schema(s *Schema, regs *[]*C.struct_fake_region) *C.struct_ArrowSchema {
	cs := (*C.struct_ArrowSchema)(f.calloc(1, C.sizeof_struct_ArrowSchema))
	if s.Format != nil {
		cs.format = (*C.char)(f.cstring(*s.Format, regs))
	}
	if s.Name != nil {
		cs.name = (*C.char)(f.cstring(*s.Name, regs))
	}
	if s.Metadata != nil {
		cs.metadata = (*C.char)(f.guarded(s.Metadata, false, 4, regs))
	}
	cs.flags = C.int64_t(s.Flags)
	cs.n_children = C.int64_t(s.NChildren)
	if !s.NoKids && (s.NChildren != 0 || len(s.Children) > 0) {
		sl := f.slots(max(s.NChildren, int64(len(s.Children))), regs)
		cs.children = (**C.struct_ArrowSchema)(unsafe.Pointer(unsafe.SliceData(sl)))
		for i, c := range s.Children {
			if i < len(sl) && c != nil {
				sl[i] = unsafe.Pointer(f.schema(c, regs))
			}
		}
		if s.Loop > 0 && s.Loop-1 < len(sl) {
			sl[s.Loop-1] = unsafe.Pointer(cs)
		}
	}
	if s.Dict != nil {
		cs.dictionary = f.schema(s.Dict, regs)
	}
	cs.private_data = unsafe.Pointer(f.rec(s.Release == ReleaseSticky))
	C.fake_set_schema_release(cs, boolInt(s.Release != ReleaseNull))
	return cs
}

func (f *Fake) array(a *Array, regs *[]*C.struct_fake_region) *C.struct_ArrowArray {
	ca := (*C.struct_ArrowArray)(f.calloc(1, C.sizeof_struct_ArrowArray))
	ca.length = C.int64_t(a.Length)
	ca.null_count = C.int64_t(a.NullCount)
	ca.offset = C.int64_t(a.Offset)
	ca.n_buffers = C.int64_t(a.NBuffers)
	ca.n_children = C.int64_t(a.NChildren)
	if !a.NoBufs && (a.NBuffers != 0 || len(a.Buffers) > 0) {
		sl := f.slots(max(a.NBuffers, int64(len(a.Buffers))), regs)
		ca.buffers = (*unsafe.Pointer)(unsafe.Pointer(unsafe.SliceData(sl)))
		for i, b := range a.Buffers {
			if i < len(sl) && !b.Null {
				sl[i] = f.guarded(b.Data, b.Front, b.Align, regs)
			}
		}
	}
	if !a.NoKids && (a.NChildren != 0 || len(a.Children) > 0) {
		sl := f.slots(max(a.NChildren, int64(len(a.Children))), regs)
		ca.children = (**C.struct_ArrowArray)(unsafe.Pointer(unsafe.SliceData(sl)))
		for i, c := range a.Children {
			if i < len(sl) && c != nil {
				sl[i] = unsafe.Pointer(f.array(c, regs))
			}
		}
	}
	if a.Dict != nil {
		ca.dictionary = f.array(a.Dict, regs)
	}
	ca.private_data = unsafe.Pointer(f.rec(a.Release == ReleaseSticky))
	C.fake_set_array_release(ca, boolInt(a.Release != ReleaseNull))
	return ca
}

// Check reports a structure handed to the consumer that it released other
// than once (the stream, the schema from get_schema, each batch from
// get_next), and a structure it was never given that it released.
func (f *Fake) Check() error {
	if n := f.state.rec.releases; n != 1 {
		return fmt.Errorf("the stream was released %d times", n)
	}
	for i, r := range f.tops {
		what := f.names[i]
		switch {
		case r.handed == 1 && r.releases != 1:
			return fmt.Errorf("%s was released %d times", what, r.releases)
		case r.handed == 0 && r.releases != 0:
			return fmt.Errorf("%s was released %d times but never handed out", what, r.releases)
		}
	}
	return nil
}

// Handed reports how many batches get_next handed out.
func (f *Fake) Handed() int { return int(f.state.next) }

// Free unmaps and frees everything Build made.
func (f *Fake) Free() {
	for _, r := range f.regions {
		C.fake_unmap(r)
	}
	for _, p := range f.allocs {
		C.free(p)
	}
	*f = Fake{}
}
