// Package cimport checks what a producer hands over through the Arrow C data
// interface before arrow-go imports it.
//
// The interface carries no buffer sizes: a consumer derives them from the
// declared lengths, offsets and the values in offset buffers, and arrow-go's
// import trusts most of what it reads. A malformed ArrowSchema or
// ArrowArray then panics inside the import (a struct child shorter than
// its parent, negative metadata lengths), aborts the process (a release
// callback that does not mark its structure released), or hands the rest
// of the library arrays whose offsets point outside their buffers, which a
// later read follows out of bounds. CheckSchema and CheckArray reject such
// input with errors that wrap errs.ErrInvalidArgument and name the column,
// before anything else reads it.
//
// What cannot be checked is whether the memory behind a pointer is as large
// as the declarations say; the checks make sure that nothing is read beyond
// what the declarations imply (a values buffer ends at the last offset, a
// child at its length). CheckArray reads every offset, view header and
// dictionary index once, and each validity bitmap once (its null count
// must match null_count); values themselves are not read (strings are not
// checked for UTF-8).
//
// core imports no C: the structures are mirrored here (the layout is part
// of the Arrow C data interface, an ABI) and read through unsafe pointers.
package cimport

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Limits on what a producer may declare.
const (
	// MaxDepth bounds the nesting of a schema (and so of its arrays); it
	// also ends the walk of a schema whose children point back at a parent.
	MaxDepth = 64
	// MaxNodes bounds the schema nodes (fields, nested ones included) and
	// so the walk of a schema whose nodes share children.
	MaxNodes = 1 << 20
	// MaxLength bounds every array's offset plus length: rows of a batch,
	// elements of a list. A null-typed column (or a struct of them) needs
	// no buffers, so nothing else bounds what such a declared length makes
	// the library allocate.
	MaxLength = math.MaxInt32
	// maxString bounds the C strings read (format, name).
	maxString = 1 << 16
	// maxMetadata bounds a field's encoded metadata.
	maxMetadata = 1 << 30
)

// cSchema is struct ArrowSchema.
type cSchema struct {
	format      *byte
	name        *byte
	metadata    *byte
	flags       int64
	nChildren   int64
	children    **cSchema
	dictionary  *cSchema
	release     unsafe.Pointer
	privateData unsafe.Pointer
}

// cArray is struct ArrowArray.
type cArray struct {
	length      int64
	nullCount   int64
	offset      int64
	nBuffers    int64
	nChildren   int64
	buffers     *unsafe.Pointer
	children    **cArray
	dictionary  *cArray
	release     unsafe.Pointer
	privateData unsafe.Pointer
}

// Sizes and offsets of the mirrored structures, for a cgo test to compare
// with C's.
const (
	SchemaSize            = unsafe.Sizeof(cSchema{})
	SchemaReleaseOffset   = unsafe.Offsetof(cSchema{}.release)
	ArraySize             = unsafe.Sizeof(cArray{})
	ArrayDictionaryOffset = unsafe.Offsetof(cArray{}.dictionary)
	ArrayReleaseOffset    = unsafe.Offsetof(cArray{}.release)
)

// Error is a malformed structure, at a column path ("" for the batch).
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "malformed Arrow C data: " + e.Msg
	}
	return fmt.Sprintf("malformed Arrow C data: column '%s': %s", e.Path, e.Msg)
}

// Unwrap makes every Error an invalid argument.
func (e *Error) Unwrap() error { return errs.ErrInvalidArgument }

func fail(path, format string, a ...any) error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, a...)}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// cString reads a NUL-terminated string of at most maxString bytes.
func cString(p *byte) (string, bool) {
	if p == nil {
		return "", true
	}
	base := unsafe.Pointer(p)
	for n := 0; n <= maxString; n++ {
		if *(*byte)(unsafe.Add(base, n)) == 0 {
			return string(unsafe.Slice(p, n)), true
		}
	}
	return "", false
}

// CheckSchema checks the ArrowSchema at p (a record batch's, as a stream's
// get_schema returns it) and every node below it: none released, formats
// present, children and dictionaries present where declared, names UTF-8,
// metadata well formed, nesting at most MaxDepth deep and at most MaxNodes
// nodes. The format strings themselves are left to the import.
func CheckSchema(p unsafe.Pointer) error {
	nodes := 0
	return checkSchema((*cSchema)(p), "", 0, &nodes)
}

func checkSchema(s *cSchema, path string, depth int, nodes *int) error {
	if s == nil {
		return fail(path, "schema node is NULL")
	}
	if depth > MaxDepth {
		return fail(path, "schema nested deeper than %d levels (or its children point back at a parent)", MaxDepth)
	}
	if *nodes++; *nodes > MaxNodes {
		return fail(path, "schema has more than %d nodes", MaxNodes)
	}
	if s.release == nil {
		return fail(path, "schema node is released (release callback is NULL)")
	}
	if s.format == nil {
		return fail(path, "format is NULL")
	}
	if _, ok := cString(s.format); !ok {
		return fail(path, "format is longer than %d bytes", maxString)
	}
	name, ok := cString(s.name)
	if !ok {
		return fail(path, "name is longer than %d bytes", maxString)
	}
	if !utf8.ValidString(name) {
		return fail(path, "name %q is not UTF-8", name)
	}
	if depth > 0 {
		path = join(path, name)
	}
	if err := checkMetadata(s.metadata, path); err != nil {
		return err
	}
	if s.nChildren < 0 || s.nChildren > MaxNodes {
		return fail(path, "n_children %d out of range", s.nChildren)
	}
	if s.nChildren > 0 {
		if s.children == nil {
			return fail(path, "children is NULL with n_children %d", s.nChildren)
		}
		for i, c := range unsafe.Slice(s.children, s.nChildren) {
			if c == nil {
				return fail(path, "child %d is NULL", i)
			}
			if err := checkSchema(c, path, depth+1, nodes); err != nil {
				return err
			}
		}
	}
	if s.dictionary != nil {
		if err := checkSchema(s.dictionary, path, depth+1, nodes); err != nil {
			return err
		}
	}
	return nil
}

// checkMetadata walks the encoding of a field's metadata: an int32 count of
// pairs, then each key and value as an int32 length and its bytes.
func checkMetadata(md *byte, path string) error {
	if md == nil {
		return nil
	}
	base := unsafe.Pointer(md)
	pos := int64(0)
	read := func() (int32, error) {
		if pos+4 > maxMetadata {
			return 0, fail(path, "metadata longer than %d bytes", maxMetadata)
		}
		v := *(*int32)(unsafe.Add(base, pos))
		pos += 4
		if v < 0 {
			return 0, fail(path, "metadata holds a negative count or length (%d)", v)
		}
		return v, nil
	}
	n, err := read()
	if err != nil {
		return err
	}
	for range 2 * int64(n) {
		l, err := read()
		if err != nil {
			return err
		}
		if pos += int64(l); pos > maxMetadata {
			return fail(path, "metadata longer than %d bytes", maxMetadata)
		}
	}
	return nil
}

// CheckArray checks the ArrowArray at p against dt, the type its schema
// was imported as (for a record batch, the struct of its columns): the
// header of every node (lengths, offsets, null counts, buffer and child
// counts), the buffers a node of its type needs, validity bitmaps against
// null counts, offsets (in order, inside the values or child they index),
// list views, binary views, dictionary indices and child lengths.
// Union, run-end encoded and extension arrays are rejected: no Iceberg
// type takes them.
func CheckArray(p unsafe.Pointer, dt arrow.DataType) error {
	c := checker{}
	return c.array((*cArray)(p), dt, "", 0)
}

type checker struct {
	nodes int
}

// node is one array being checked.
type node struct {
	a        *cArray
	path     string
	off, end int64 // the slots of the array: [off, end)
	buffers  []unsafe.Pointer
	validity []byte // nil: every slot is valid
	anyNulls bool
}

func (c *checker) array(a *cArray, dt arrow.DataType, path string, depth int) error {
	if a == nil {
		return fail(path, "array is NULL")
	}
	if depth > MaxDepth {
		return fail(path, "array nested deeper than %d levels", MaxDepth)
	}
	if c.nodes++; c.nodes > MaxNodes {
		return fail(path, "array has more than %d nodes", MaxNodes)
	}
	switch {
	case a.length < 0:
		return fail(path, "length %d is negative", a.length)
	case a.offset < 0:
		return fail(path, "offset %d is negative", a.offset)
	case a.length > MaxLength || a.offset > MaxLength-a.length:
		return fail(path, "offset %d plus length %d exceeds %d; write smaller batches", a.offset, a.length, MaxLength)
	case a.nullCount < -1 || a.nullCount > a.length:
		return fail(path, "null_count %d is outside [-1, %d]", a.nullCount, a.length)
	case a.nBuffers < 0:
		return fail(path, "n_buffers %d is negative", a.nBuffers)
	case a.nChildren < 0:
		return fail(path, "n_children %d is negative", a.nChildren)
	}
	n := &node{a: a, path: path, off: a.offset, end: a.offset + a.length}
	want, wantChildren, err := layout(dt, a)
	if errors.Is(err, errUnsupported) {
		return fail(path, "Arrow type %s is not supported as input", dt)
	}
	if err != nil {
		return fail(path, "%v", err)
	}
	if a.nBuffers != want {
		return fail(path, "%s needs %d buffers, the array has %d", dt, want, a.nBuffers)
	}
	if a.nChildren != wantChildren {
		return fail(path, "%s needs %d children, the array has %d", dt, wantChildren, a.nChildren)
	}
	if a.nBuffers > 0 {
		if a.buffers == nil {
			return fail(path, "buffers is NULL with n_buffers %d", a.nBuffers)
		}
		n.buffers = unsafe.Slice(a.buffers, a.nBuffers)
	}
	var children []*cArray
	if a.nChildren > 0 {
		if a.children == nil {
			return fail(path, "children is NULL with n_children %d", a.nChildren)
		}
		children = unsafe.Slice(a.children, a.nChildren)
	}
	if _, ok := dt.(*arrow.NullType); !ok && a.nBuffers > 0 {
		if err := n.bitmap(); err != nil {
			return err
		}
	}
	switch dt := dt.(type) {
	case *arrow.NullType:
		return nil
	case *arrow.DictionaryType:
		if a.dictionary == nil {
			return fail(path, "dictionary array has no dictionary")
		}
		if err := c.array(a.dictionary, dt.ValueType, path, depth+1); err != nil {
			return err
		}
		return n.indices(dt.IndexType, a.dictionary.length)
	case *arrow.BooleanType:
		_, err := n.bits(1)
		return err
	case *arrow.FixedSizeBinaryType:
		_, err := n.fixed(1, int64(dt.ByteWidth))
		return err
	case arrow.FixedWidthDataType:
		_, err := n.fixed(1, int64(dt.BitWidth()/8))
		return err
	case *arrow.StringType, *arrow.BinaryType:
		return n.binaryOffsets(4)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return n.binaryOffsets(8)
	case *arrow.StringViewType, *arrow.BinaryViewType:
		return n.views()
	case *arrow.ListType:
		return c.list(n, children[0], dt.Elem(), 4, depth)
	case *arrow.MapType:
		return c.list(n, children[0], dt.Elem(), 4, depth)
	case *arrow.LargeListType:
		return c.list(n, children[0], dt.Elem(), 8, depth)
	case *arrow.ListViewType:
		return c.listView(n, children[0], dt.Elem(), 4, depth)
	case *arrow.LargeListViewType:
		return c.listView(n, children[0], dt.Elem(), 8, depth)
	case *arrow.FixedSizeListType:
		ch := children[0]
		if ch == nil {
			return fail(path, "child 0 is NULL")
		}
		if err := c.array(ch, dt.Elem(), path+".element", depth+1); err != nil {
			return err
		}
		if need := n.end * int64(dt.Len()); ch.length < need {
			return fail(path, "fixed-size lists of %d need %d elements, the child has %d", dt.Len(), need, ch.length)
		}
		return nil
	case *arrow.StructType:
		for i, ch := range children {
			f := dt.Field(i)
			if ch == nil {
				return fail(path, "child %d is NULL", i)
			}
			fp := join(path, f.Name)
			if err := c.array(ch, f.Type, fp, depth+1); err != nil {
				return err
			}
			if ch.length < n.end {
				return fail(fp, "length %d is shorter than its parent's %d rows", ch.length, n.end)
			}
		}
		return nil
	}
	return fail(path, "Arrow type %s is not supported as input", dt)
}

// layout returns how many buffers and children an array of type dt has.
func layout(dt arrow.DataType, a *cArray) (buffers, children int64, err error) {
	switch dt := dt.(type) {
	case *arrow.NullType:
		return 0, 0, nil
	case *arrow.DictionaryType:
		if !arrow.IsInteger(dt.IndexType.ID()) {
			return 0, 0, fmt.Errorf("dictionary index type %s is not an integer", dt.IndexType)
		}
		return 2, 0, nil
	case *arrow.BooleanType, arrow.FixedWidthDataType:
		return 2, 0, nil
	case *arrow.StringType, *arrow.BinaryType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		return 3, 0, nil
	case *arrow.StringViewType, *arrow.BinaryViewType:
		if a.nBuffers < 3 {
			return 3, 0, nil // reported as a count mismatch
		}
		return a.nBuffers, 0, nil
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		return 2, 1, nil
	case *arrow.ListViewType, *arrow.LargeListViewType:
		return 3, 1, nil
	case *arrow.FixedSizeListType:
		return 1, 1, nil
	case *arrow.StructType:
		return 1, int64(dt.NumFields()), nil
	}
	return 0, 0, errUnsupported
}

// errUnsupported says layout knows no layout for the type: an input
// type this project does not take.
var errUnsupported = errors.New("unsupported type")

// buffer returns buffer i as size bytes; a NULL buffer is an error unless
// size is 0.
func (n *node) buffer(i int, size int64) ([]byte, error) {
	p := n.buffers[i]
	if size == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, fail(n.path, "buffer %d is NULL but %d bytes are needed", i, size)
	}
	return unsafe.Slice((*byte)(p), size), nil
}

// bitmap checks the validity bitmap against null_count. As arrow-go's
// import, a NULL bitmap needs null_count 0.
func (n *node) bitmap() error {
	a := n.a
	if n.buffers[0] == nil {
		if a.nullCount != 0 && n.end > 0 {
			return fail(n.path, "null_count %d without a validity bitmap", a.nullCount)
		}
		return nil
	}
	b, err := n.bits(0)
	if err != nil || b == nil {
		return err
	}
	nulls := a.length - int64(bitutil.CountSetBits(b, int(n.off), int(a.length)))
	if a.nullCount >= 0 && nulls != a.nullCount {
		return fail(n.path, "null_count is %d, the validity bitmap has %d nulls", a.nullCount, nulls)
	}
	if nulls > 0 {
		n.validity, n.anyNulls = b, true
	}
	return nil
}

func (n *node) valid(i int64) bool {
	return !n.anyNulls || bitutil.BitIsSet(n.validity, int(i))
}

// bits returns buffer i as a bitmap covering [0, end).
func (n *node) bits(i int) ([]byte, error) {
	return n.buffer(i, (n.end+7)/8)
}

// fixed returns buffer i as end values of width bytes.
func (n *node) fixed(i int, width int64) ([]byte, error) {
	if width > 0 && n.end > math.MaxInt64/width {
		return nil, fail(n.path, "%d values of %d bytes overflow", n.end, width)
	}
	return n.buffer(i, n.end*width)
}

// offsets returns the offsets of slots [off, end] (end+1 entries from the
// start), checked to start at 0 or more and never decrease, and the last.
func (n *node) offsets(i int, width int64) (last int64, err error) {
	b, err := n.buffer(i, (n.end+1)*width)
	if err != nil {
		return 0, err
	}
	var bad int64
	if width == 4 {
		o := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), n.end+1)[n.off:]
		bad, last = monotone(o)
	} else {
		o := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), n.end+1)[n.off:]
		bad, last = monotone(o)
	}
	if bad == 0 {
		return 0, fail(n.path, "first offset %d is negative", last)
	}
	if bad > 0 {
		return 0, fail(n.path, "offsets decrease at slot %d", n.off+bad-1)
	}
	return last, nil
}

// monotone returns the first index whose offset is below the one before it
// (0: the first is negative; -1: none) and the last offset.
func monotone[T int32 | int64](o []T) (bad int64, last int64) {
	if o[0] < 0 {
		return 0, int64(o[0])
	}
	prev := o[0]
	for i, v := range o[1:] {
		if v < prev {
			return int64(i) + 1, 0
		}
		prev = v
	}
	return -1, int64(prev)
}

// binaryOffsets checks a string or binary array: its values buffer ends at
// the last offset.
func (n *node) binaryOffsets(width int64) error {
	last, err := n.offsets(1, width)
	if err != nil {
		return err
	}
	if width == 4 && last > math.MaxInt32 {
		return fail(n.path, "last offset %d overflows", last)
	}
	_, err = n.buffer(2, last)
	return err
}

func (c *checker) list(n *node, child *cArray, elem arrow.DataType, width int64, depth int) error {
	if child == nil {
		return fail(n.path, "child 0 is NULL")
	}
	if err := c.array(child, elem, n.path+".element", depth+1); err != nil {
		return err
	}
	last, err := n.offsets(1, width)
	if err != nil {
		return err
	}
	if last > child.length {
		return fail(n.path, "offsets reach element %d, the child has %d", last, child.length)
	}
	return nil
}

func (c *checker) listView(n *node, child *cArray, elem arrow.DataType, width int64, depth int) error {
	if child == nil {
		return fail(n.path, "child 0 is NULL")
	}
	if err := c.array(child, elem, n.path+".element", depth+1); err != nil {
		return err
	}
	ob, err := n.fixed(1, width)
	if err != nil {
		return err
	}
	sb, err := n.fixed(2, width)
	if err != nil {
		return err
	}
	at := func(b []byte, i int64) int64 {
		if width == 4 {
			return int64(*(*int32)(unsafe.Pointer(&b[i*4])))
		}
		return *(*int64)(unsafe.Pointer(&b[i*8]))
	}
	for i := n.off; i < n.end; i++ {
		if !n.valid(i) {
			continue
		}
		o, s := at(ob, i), at(sb, i)
		if o < 0 || s < 0 || o > child.length-s {
			return fail(n.path, "list view at slot %d (offset %d, size %d) is outside its %d elements", i, o, s, child.length)
		}
	}
	return nil
}

// views checks the view headers of valid slots against the data buffers,
// whose sizes the last buffer holds.
func (n *node) views() error {
	nData := int64(len(n.buffers)) - 3
	var sizes []int64
	if nData > 0 {
		sb, err := n.buffer(len(n.buffers)-1, nData*8)
		if err != nil {
			return err
		}
		sizes = unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(sb))), nData)
		for i, s := range sizes {
			if s < 0 {
				return fail(n.path, "data buffer %d has negative size %d", i, s)
			}
			if _, err := n.buffer(2+i, s); err != nil {
				return err
			}
		}
	}
	vb, err := n.fixed(1, 16)
	if err != nil {
		return err
	}
	for i := n.off; i < n.end; i++ {
		if !n.valid(i) {
			continue
		}
		h := vb[i*16 : i*16+16]
		ln := int64(*(*int32)(unsafe.Pointer(&h[0])))
		if ln < 0 {
			return fail(n.path, "view at slot %d has negative length %d", i, ln)
		}
		if ln <= 12 {
			continue
		}
		buf := int64(*(*int32)(unsafe.Pointer(&h[8])))
		off := int64(*(*int32)(unsafe.Pointer(&h[12])))
		if buf < 0 || buf >= nData || off < 0 || off+ln > sizes[buf] {
			return fail(n.path, "view at slot %d (buffer %d, offset %d, length %d) is outside its data buffers", i, buf, off, ln)
		}
	}
	return nil
}

// indices checks that the index of every valid slot is inside a dictionary
// of dictLen values.
func (n *node) indices(it arrow.DataType, dictLen int64) error {
	w := int64(it.(arrow.FixedWidthDataType).BitWidth() / 8)
	b, err := n.fixed(1, w)
	if err != nil {
		return err
	}
	signed := arrow.IsSignedInteger(it.ID())
	for i := n.off; i < n.end; i++ {
		if !n.valid(i) {
			continue
		}
		var v int64
		p := unsafe.Pointer(&b[i*w])
		switch {
		case w == 1 && signed:
			v = int64(*(*int8)(p))
		case w == 1:
			v = int64(*(*uint8)(p))
		case w == 2 && signed:
			v = int64(*(*int16)(p))
		case w == 2:
			v = int64(*(*uint16)(p))
		case w == 4 && signed:
			v = int64(*(*int32)(p))
		case w == 4:
			v = int64(*(*uint32)(p))
		case signed:
			v = *(*int64)(p)
		default:
			if u := *(*uint64)(p); u > math.MaxInt64 {
				v = -1
			} else {
				v = int64(u)
			}
		}
		if v < 0 || v >= dictLen {
			return fail(n.path, "dictionary index %d at slot %d is outside its %d values", v, i, dictLen)
		}
	}
	return nil
}
