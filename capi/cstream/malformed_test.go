//go:build linux

package cstream

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/capi/internal/cfake"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func fld(name, format string, kids ...*cfake.Schema) *cfake.Schema {
	return &cfake.Schema{Format: str(format), Name: str(name), Flags: 2, Children: kids, NChildren: int64(len(kids))}
}

func root(kids ...*cfake.Schema) *cfake.Schema { return fld("", "+s", kids...) }

func buf(b []byte) cfake.Buf        { return cfake.Buf{Data: b, Align: 8} }
func i32s(v ...int64) cfake.Buf     { return buf(le32(v)) }
func i64s(v ...int64) cfake.Buf     { return buf(le64(v)) }
func noBuf() cfake.Buf              { return cfake.Buf{Null: true} }
func bitmap(bits ...byte) cfake.Buf { return buf(bits) }

func arr(length int64, bufs []cfake.Buf, kids ...*cfake.Array) *cfake.Array {
	return &cfake.Array{Length: length, NBuffers: int64(len(bufs)), Buffers: bufs, NChildren: int64(len(kids)), Children: kids}
}

func longs(v ...int64) *cfake.Array { return arr(int64(len(v)), []cfake.Buf{noBuf(), i64s(v...)}) }

func strs(offsets []int64, values string) *cfake.Array {
	return arr(int64(len(offsets)-1), []cfake.Buf{noBuf(), i32s(offsets...), {Data: []byte(values)}})
}

func batchOf(length int64, cols ...*cfake.Array) *cfake.Array {
	return arr(length, []cfake.Buf{noBuf()}, cols...)
}

func streamOf(sc *cfake.Schema, batches ...*cfake.Array) *cfake.Stream {
	return &cfake.Stream{Schema: sc, Batches: batches, FailAt: -1}
}

// views makes a view buffer of one value of length n in data buffer 0 at off.
func view(n, bufIdx, off int32) []byte {
	h := make([]byte, 16)
	binary.LittleEndian.PutUint32(h, uint32(n))
	binary.LittleEndian.PutUint32(h[8:], uint32(bufIdx))
	binary.LittleEndian.PutUint32(h[12:], uint32(off))
	return h
}

// pull imports a stream and reads all its batches; it returns the number
// read and the first error.
func pull(t *testing.T, st *cfake.Stream) (int, error) {
	t.Helper()
	fk := cfake.Build(st)
	defer fk.Free()
	n := 0
	err := func() error {
		r, err := Import(fk.Stream())
		if err != nil {
			return err
		}
		defer r.Release()
		for r.Next() {
			walk(r.RecordBatch())
			n++
		}
		return r.Err()
	}()
	if cerr := fk.Check(); cerr != nil {
		t.Fatalf("releases: %v", cerr)
	}
	return n, err
}

func deepStruct(levels int) *cfake.Schema {
	s := fld("leaf", "l")
	for range levels {
		s = fld("s", "+s", s)
	}
	return root(s)
}

// Each malformed stream is refused with an invalid argument error that
// says what is wrong (and where), is released exactly once, and has none of
// its buffers read past what it declares (cfake's guard pages).
func TestMalformedStreams(t *testing.T) {
	longCol := root(fld("a", "l"))
	strCol := root(fld("s", "u"))
	dictCol := func() *cfake.Schema {
		d := fld("d", "i")
		d.Dict = fld("", "u")
		return root(d)
	}
	dictArr := func(idx cfake.Buf, valid cfake.Buf, nulls int64) *cfake.Array {
		a := arr(2, []cfake.Buf{valid, idx})
		a.NullCount = nulls
		a.Dict = strs([]int64{0, 1, 3}, "abc")
		return a
	}
	sticky := func(s *cfake.Schema) *cfake.Schema { s.Release = cfake.ReleaseSticky; return s }
	cycle := root(fld("a", "+s", fld("b", "l")))
	cycle.Children[0].Loop = 1
	released := root(fld("a", "l"))
	released.Children[0].Release = cfake.ReleaseNull
	badMeta := root(fld("a", "l"))
	badMeta.Children[0].Metadata = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 1), 0xfffffff0)
	nullFormat := root(fld("a", "l"))
	nullFormat.Children[0].Format = nil
	nullChild := root(fld("a", "l"))
	nullChild.Children[0] = nil
	for _, c := range []struct {
		name string
		st   *cfake.Stream
		want string // in the error; "" for none
	}{
		{"string offsets decrease", streamOf(strCol, batchOf(3, strs([]int64{0, 3, 1, 4}, "abcd"))), "offsets decrease at slot 1"},
		{"string offsets start below zero", streamOf(strCol, batchOf(2, strs([]int64{-1, 2, 3}, "abc"))), "first offset -1 is negative"},
		{"string values buffer missing", streamOf(strCol, batchOf(1, arr(1, []cfake.Buf{noBuf(), i32s(0, 3), noBuf()}))), "buffer 2 is NULL"},
		{"list offsets past the child", streamOf(root(fld("l", "+l", fld("item", "l"))),
			batchOf(2, arr(2, []cfake.Buf{noBuf(), i32s(0, 2, 5)}, longs(1, 2, 3)))), "offsets reach element 5, the child has 3"},
		{"struct column shorter than the batch", streamOf(longCol, batchOf(3, longs(1, 2))), "length 2 is shorter than its parent's 3 rows"},
		{"fixed-size list child too short", streamOf(root(fld("f", "+w:3", fld("item", "l"))),
			batchOf(2, arr(2, []cfake.Buf{noBuf()}, longs(1, 2, 3, 4, 5)))), "need 6 elements, the child has 5"},
		{"dictionary index out of range", streamOf(dictCol(), batchOf(2, dictArr(i32s(0, 5), noBuf(), 0))), "dictionary index 5 at slot 1"},
		{"dictionary index in a null slot is not read", streamOf(dictCol(), batchOf(2, dictArr(i32s(1, -1), bitmap(1), 1))), ""},
		{"dictionary missing", streamOf(dictCol(), batchOf(2, &cfake.Array{Length: 2, NBuffers: 2, Buffers: []cfake.Buf{noBuf(), i32s(0, 1)}})), "has no dictionary"},
		{"view past its data buffer", streamOf(root(fld("v", "vu")),
			batchOf(1, arr(1, []cfake.Buf{noBuf(), buf(view(20, 0, 10)), {Data: make([]byte, 25)}, i64s(25)}))), "outside its data buffers"},
		{"view naming a missing data buffer", streamOf(root(fld("v", "vu")),
			batchOf(1, arr(1, []cfake.Buf{noBuf(), buf(view(20, 3, 0)), {Data: make([]byte, 25)}, i64s(25)}))), "outside its data buffers"},
		{"view in a null slot is not read", streamOf(root(fld("v", "vu")),
			batchOf(1, &cfake.Array{Length: 1, NullCount: 1, NBuffers: 4, Buffers: []cfake.Buf{bitmap(0), buf(view(20, 3, 0)), {Data: make([]byte, 25)}, i64s(25)}})), ""},
		{"list view past the child", streamOf(root(fld("l", "+vl", fld("item", "l"))),
			batchOf(1, arr(1, []cfake.Buf{noBuf(), i32s(2), i32s(5)}, longs(1, 2, 3, 4)))), "is outside its 4 elements"},
		{"null count disagrees with the bitmap", streamOf(longCol, batchOf(2, arr(2, []cfake.Buf{bitmap(1), i64s(1, 2)}))), "null_count is 0, the validity bitmap has 1 nulls"},
		{"null count without a bitmap", streamOf(longCol, batchOf(2, &cfake.Array{Length: 2, NullCount: 1, NBuffers: 2, Buffers: []cfake.Buf{noBuf(), i64s(1, 2)}})), "null_count 1 without a validity bitmap"},
		{"values buffer missing", streamOf(longCol, batchOf(2, arr(2, []cfake.Buf{noBuf(), noBuf()}))), "buffer 1 is NULL but 16 bytes are needed"},
		{"too many buffers", streamOf(longCol, batchOf(1, arr(1, []cfake.Buf{noBuf(), i64s(1), noBuf()}))), "needs 2 buffers, the array has 3"},
		{"a huge buffer count", streamOf(longCol, batchOf(1, &cfake.Array{Length: 1, NBuffers: 1 << 40, Buffers: []cfake.Buf{noBuf(), i64s(1)}})), "needs 2 buffers"},
		{"children disagree with the schema", streamOf(root(fld("a", "l"), fld("b", "l")), batchOf(1, longs(1))), "needs 2 children, the array has 1"},
		{"negative length", streamOf(longCol, batchOf(1, &cfake.Array{Length: -1, NBuffers: 2, Buffers: []cfake.Buf{noBuf(), i64s(1)}})), "length -1 is negative"},
		{"offset and length overflow", streamOf(longCol, batchOf(1, &cfake.Array{Length: 1, Offset: 1<<63 - 1, NBuffers: 2, Buffers: []cfake.Buf{noBuf(), i64s(1)}})), "exceeds"},
		{"a null column of 2^40 rows", streamOf(root(fld("n", "n")), batchOf(1<<40, &cfake.Array{Length: 1 << 40, NullCount: 1 << 40})), "write smaller batches"},
		{"union", streamOf(root(fld("u", "+us:0,1", fld("a", "l"), fld("b", "l"))),
			batchOf(1, arr(1, []cfake.Buf{{Data: []byte{0}}}, longs(1), longs(2)))), "not supported"},
		{"format NULL", streamOf(nullFormat), "format is NULL"},
		{"child schema NULL", streamOf(nullChild), "child 0 is NULL"},
		{"schema children pointing back at a parent", streamOf(cycle), "deeper than 64 levels"},
		{"schema nested 70 deep", streamOf(deepStruct(70)), "deeper than 64 levels"},
		{"field name not UTF-8", streamOf(root(fld("bad\xffname", "l"))), "is not UTF-8"},
		{"negative metadata length", streamOf(badMeta), "negative count or length"},
		{"released child schema", streamOf(released), "is released"},
		{"bad format string", streamOf(root(fld("a", "+w:-2", fld("item", "l")))), "fixed-size list size"},
		{"unknown format string", streamOf(root(fld("a", "q"))), "unimplemented type"},
		{"get_schema missing", &cfake.Stream{Schema: longCol, NoGetSchema: true, FailAt: -1}, "no get_schema or get_next"},
		{"get_next missing", &cfake.Stream{Schema: longCol, NoGetNext: true, FailAt: -1}, "no get_schema or get_next"},
		{"get_schema fails", &cfake.Stream{Schema: longCol, SchemaRC: 22, LastError: str("no schema today"), FailAt: -1}, "get_schema failed (invalid argument): no schema today"},
		{"get_next fails after a batch", &cfake.Stream{Schema: longCol, Batches: []*cfake.Array{batchOf(1, longs(1)), batchOf(1, longs(2))}, FailAt: 1}, "get_next failed (input/output error)"},
		{"get_next fails, no get_last_error", &cfake.Stream{Schema: longCol, Batches: []*cfake.Array{batchOf(1, longs(1))}, FailAt: 0, NoLastError: true}, "get_next failed (input/output error)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := pull(t, c.st)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.want == "":
			case err == nil:
				t.Fatalf("no error, want one with %q", c.want)
			case !errors.Is(err, errs.ErrInvalidArgument):
				t.Fatalf("error %v is not an invalid argument", err)
			case !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q does not say %q", err, c.want)
			}
		})
	}
	// Release callbacks that leave their structure marked live would make
	// arrow-go abort the process; the library marks them itself. A batch
	// that comes released ends the stream.
	st := streamOf(sticky(root(sticky(fld("a", "l")))), batchOf(1, longs(1)), batchOf(2, longs(1, 2)))
	st.Batches[0].Release = cfake.ReleaseSticky
	st.Release = cfake.ReleaseSticky
	if n, err := pull(t, st); err != nil || n != 2 {
		t.Fatalf("sticky release callbacks: %d batches, %v", n, err)
	}
	st = streamOf(longCol, batchOf(1, longs(1)), batchOf(1, longs(2)))
	st.Batches[1].Release = cfake.ReleaseNull
	if n, err := pull(t, st); err != nil || n != 1 {
		t.Fatalf("a released batch: %d batches, %v", n, err)
	}
}
