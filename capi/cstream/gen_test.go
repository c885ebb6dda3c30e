//go:build linux

package cstream

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/capi/internal/cfake"
)

// gen turns fuzzer bytes into a cfake.Stream: a schema of a few columns
// and batches that are valid for it, then mutations of array headers,
// buffers, children, dictionaries, schema nodes and callbacks, then every
// buffer padded to what the final declarations imply. The C interface
// carries no buffer sizes, so a producer whose buffers are shorter than its
// lengths declare cannot be detected by any consumer; one whose offsets,
// counts, lengths and children disagree can, and must be.
func gen(b []byte) *cfake.Stream {
	s := &src{b: b}
	root := &gtype{format: "+s"}
	for i := range 1 + s.n(4) {
		root.kids = append(root.kids, &gfield{name: "c" + strconv.Itoa(i), nullable: s.flag(70), t: genType(s, 0)})
	}
	st := &cfake.Stream{FailAt: -1, Schema: root.schema("", false)}
	for range s.n(4) {
		st.Batches = append(st.Batches, genArray(s, root, s.n(40), false, true))
	}
	mutate(s, st)
	for _, a := range st.Batches {
		fixArray(st.Schema, a, 0)
	}
	return st
}

// src hands out the fuzzer's bytes; past their end, zeros.
type src struct {
	b []byte
	i int
}

func (s *src) u8() int {
	if s.i >= len(s.b) {
		s.i++
		return 0
	}
	v := s.b[s.i]
	s.i++
	return int(v)
}

// n is a number in [0, k).
func (s *src) n(k int) int {
	switch {
	case k <= 1:
		return 0
	case k <= 256:
		return s.u8() % k
	}
	return (s.u8()<<8 | s.u8()) % k
}

func (s *src) flag(pct int) bool { return s.u8()*100 < pct*256 }
func (s *src) done() bool        { return s.i >= len(s.b) }

func (s *src) data(k int) []byte {
	out := make([]byte, k)
	for i := range out {
		out[i] = byte(s.u8())
	}
	return out
}

// gtype is a generated type: format is the Arrow format string; for a
// dictionary it is the index type and dict the value type.
type gtype struct {
	format string
	kids   []*gfield
	dict   *gtype
}

type gfield struct {
	name     string
	nullable bool
	t        *gtype
}

var leaves = []string{
	"b", "c", "C", "s", "S", "i", "I", "l", "L", "e", "f", "g", "z", "Z", "u", "U", "vz", "vu",
	"tdD", "tdm", "tts", "ttm", "ttu", "ttn", "tss:", "tsm:UTC", "tsu:", "tsn:America/New_York",
	"d:10,2", "d:38,10", "d:5,2,32", "d:15,3,64", "d:40,2", "d:0,0", "d:3,5", "d:60,4,256",
	"w:1", "w:16", "tDs", "tiM", "tiD", "tin", "n",
}

var indexFormats = []string{"c", "C", "s", "S", "i", "I", "l", "L"}

var badFormats = []string{
	"", "+", "x", "+w:", "+w:0", "+w:-2", "w:0", "w:-1", "w:99999999999999999999", "d:", "d:1",
	"d:1,2,3,4", "d:5,2,7", "+ud:", "+us:1,1", "+us:200", "+vq", "tsx:", "tdD\xff", "+s+s", "+m",
	"+r", "+ud:0", "+us:0,1", "\xff\xfe", "+l", "+s", "u", "n", "+w:2147483648",
}

func genType(s *src, depth int) *gtype {
	k := s.n(18)
	if depth >= 3 {
		k = 0
	}
	field := func(name string) *gfield {
		return &gfield{name: name, nullable: s.flag(70), t: genType(s, depth+1)}
	}
	switch k {
	case 8:
		t := &gtype{format: "+s"}
		for i := range s.n(4) {
			t.kids = append(t.kids, field("f"+strconv.Itoa(i)))
		}
		return t
	case 9, 10, 11, 12:
		return &gtype{format: []string{"+l", "+L", "+vl", "+vL"}[k-9], kids: []*gfield{field("item")}}
	case 13:
		return &gtype{format: "+w:" + strconv.Itoa(1+s.n(3)), kids: []*gfield{field("item")}}
	case 14:
		key := &gfield{name: "key", t: &gtype{format: leaves[s.n(len(leaves)-1)]}}
		entries := &gtype{format: "+s", kids: []*gfield{key, field("value")}}
		return &gtype{format: "+m", kids: []*gfield{{name: "entries", t: entries}}}
	case 15:
		return &gtype{format: indexFormats[s.n(len(indexFormats))], dict: genType(s, depth+1)}
	case 16:
		return &gtype{format: "+us:0,1", kids: []*gfield{field("a"), field("b")}}
	case 17:
		return &gtype{format: "+r", kids: []*gfield{{name: "run_ends", t: &gtype{format: "i"}}, field("values")}}
	}
	return &gtype{format: leaves[s.n(len(leaves))]}
}

func str(s string) *string { return &s }

func (t *gtype) schema(name string, nullable bool) *cfake.Schema {
	sc := &cfake.Schema{Format: str(t.format), Name: str(name)}
	if nullable {
		sc.Flags = 2
	}
	for _, k := range t.kids {
		sc.Children = append(sc.Children, k.t.schema(k.name, k.nullable))
	}
	sc.NChildren = int64(len(sc.Children))
	if t.dict != nil {
		sc.Dict = t.dict.schema("", true)
	}
	return sc
}

// fixedWidth is the byte width of a fixed-width format's values (0: not
// fixed width; -1: bits).
func fixedWidth(f string) int64 {
	switch f {
	case "b":
		return -1
	case "c", "C":
		return 1
	case "s", "S", "e":
		return 2
	case "i", "I", "f", "tdD", "tts", "ttm", "tiM":
		return 4
	case "l", "L", "g", "tdm", "ttu", "ttn", "tDs", "tDm", "tDu", "tDn", "tiD":
		return 8
	case "tin":
		return 16
	}
	switch {
	case strings.HasPrefix(f, "ts") && len(f) >= 4 && f[3] == ':' && strings.ContainsRune("smun", rune(f[2])):
		return 8
	case strings.HasPrefix(f, "d:"):
		parts := strings.Split(f[2:], ",")
		if len(parts) == 3 {
			if bw, err := strconv.Atoi(parts[2]); err == nil && bw > 0 && bw%8 == 0 && bw <= 256 {
				return int64(bw / 8)
			}
			return 0
		}
		return 16
	case strings.HasPrefix(f, "w:"):
		if w, err := strconv.ParseInt(f[2:], 10, 64); err == nil && w > 0 && w < 1<<20 {
			return w
		}
	}
	return 0
}

// validity makes a validity bitmap for n slots (or none) and its null
// count over [off, n).
func validity(s *src, n, off int, nullable bool) (cfake.Buf, int64) {
	if !nullable || s.flag(40) {
		return cfake.Buf{Null: true}, 0
	}
	bits := s.data((n + 7) / 8)
	nulls := int64(0)
	for i := off; i < n; i++ {
		if bits[i/8]&(1<<(i%8)) == 0 {
			nulls++
		}
	}
	if s.flag(15) {
		nulls = -1
	}
	return cfake.Buf{Data: bits}, nulls
}

func isValid(v cfake.Buf, i int) bool {
	return v.Null || v.Data[i/8]&(1<<(i%8)) != 0
}

func le32(vals []int64) []byte {
	out := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(v)))
	}
	return out
}

func le64(vals []int64) []byte {
	out := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(v))
	}
	return out
}

func les(w int64, vals []int64) []byte {
	if w == 4 {
		return le32(vals)
	}
	return le64(vals)
}

// genArray makes a valid array of type t with length rows; top is the
// record batch (a struct that takes no validity).
func genArray(s *src, t *gtype, length int, nullable, top bool) *cfake.Array {
	off := 0
	if !top && s.flag(25) {
		off = 1 + s.n(3)
	}
	n := off + length
	a := &cfake.Array{Length: int64(length), Offset: int64(off)}
	valid, nulls := validity(s, n, off, nullable && !top)
	a.NullCount = nulls
	f := t.format
	if t.dict != nil {
		dn := 1 + s.n(5)
		a.Dict = genArray(s, t.dict, dn, true, false)
		w := fixedWidth(f)
		idx := make([]int64, n)
		for i := range idx {
			idx[i] = int64(s.n(dn))
			if !isValid(valid, i) && s.flag(30) {
				idx[i] = -1
			}
		}
		var data []byte
		switch w {
		case 1:
			for _, v := range idx {
				data = append(data, byte(v))
			}
		case 2:
			for _, v := range idx {
				data = binary.LittleEndian.AppendUint16(data, uint16(v))
			}
		default:
			data = les(w, idx)
		}
		a.Buffers = []cfake.Buf{valid, {Data: data, Align: 8}}
		a.NBuffers = 2
		return a
	}
	child := func(k int, rows int) *cfake.Array {
		if k >= len(t.kids) {
			return nil
		}
		return genArray(s, t.kids[k].t, rows, t.kids[k].nullable, false)
	}
	switch {
	case f == "n":
		a.NullCount = int64(length)
	case f == "z" || f == "u" || f == "Z" || f == "U":
		w := int64(4)
		if f == "Z" || f == "U" {
			w = 8
		}
		offs := []int64{int64(s.n(3))}
		for range n {
			offs = append(offs, offs[len(offs)-1]+int64(s.n(9)))
		}
		a.Buffers = []cfake.Buf{valid, {Data: les(w, offs), Align: 8}, {Data: s.data(int(offs[n]))}}
	case f == "vz" || f == "vu":
		nData := 1 + s.n(2)
		data := make([][]byte, nData)
		views := make([]byte, 16*n)
		for i := range n {
			ln := s.n(24)
			h := views[16*i : 16*i+16]
			binary.LittleEndian.PutUint32(h, uint32(ln))
			if ln <= 12 {
				copy(h[4:], s.data(ln))
				continue
			}
			v := s.data(ln)
			bi := s.n(nData)
			copy(h[4:8], v)
			binary.LittleEndian.PutUint32(h[8:], uint32(bi))
			binary.LittleEndian.PutUint32(h[12:], uint32(len(data[bi])))
			data[bi] = append(data[bi], v...)
		}
		a.Buffers = []cfake.Buf{valid, {Data: views, Align: 8}}
		sizes := make([]int64, nData)
		for i, d := range data {
			a.Buffers = append(a.Buffers, cfake.Buf{Data: d})
			sizes[i] = int64(len(d))
		}
		a.Buffers = append(a.Buffers, cfake.Buf{Data: le64(sizes), Align: 8})
	case f == "+l" || f == "+L" || f == "+m":
		w := int64(4)
		if f == "+L" {
			w = 8
		}
		offs := []int64{0}
		for range n {
			offs = append(offs, offs[len(offs)-1]+int64(s.n(4)))
		}
		a.Buffers = []cfake.Buf{valid, {Data: les(w, offs), Align: 8}}
		if f == "+m" {
			// Map keys are never null.
			ent := t.kids[0].t
			e := &cfake.Array{Length: offs[n], Buffers: []cfake.Buf{{Null: true}}, NBuffers: 1}
			e.Children = []*cfake.Array{
				genArray(s, ent.kids[0].t, int(offs[n]), false, false),
				genArray(s, ent.kids[1].t, int(offs[n]), ent.kids[1].nullable, false),
			}
			e.NChildren = 2
			a.Children = []*cfake.Array{e}
		} else {
			a.Children = []*cfake.Array{child(0, int(offs[n])+s.n(2))}
		}
	case f == "+vl" || f == "+vL":
		w := int64(4)
		if f == "+vL" {
			w = 8
		}
		cl := s.n(8)
		offs, sizes := make([]int64, n), make([]int64, n)
		for i := range n {
			offs[i] = int64(s.n(cl + 1))
			sizes[i] = int64(s.n(cl - int(offs[i]) + 1))
		}
		a.Buffers = []cfake.Buf{valid, {Data: les(w, offs), Align: 8}, {Data: les(w, sizes), Align: 8}}
		a.Children = []*cfake.Array{child(0, cl)}
	case strings.HasPrefix(f, "+w:"):
		size, _ := strconv.Atoi(f[3:])
		a.Buffers = []cfake.Buf{valid}
		a.Children = []*cfake.Array{child(0, n*size+s.n(2))}
	case f == "+s":
		a.Buffers = []cfake.Buf{valid}
		for k := range t.kids {
			a.Children = append(a.Children, child(k, n+s.n(2)))
		}
	case f == "+us:0,1":
		ids := make([]byte, n)
		for i := range ids {
			ids[i] = byte(s.n(2))
		}
		a.Buffers = []cfake.Buf{{Data: ids}}
		a.NullCount = 0
		a.Children = []*cfake.Array{child(0, n), child(1, n)}
	case f == "+r":
		a.NullCount = 0
		runs := 1 + s.n(3)
		ends := make([]int64, runs)
		for i := range ends {
			ends[i] = int64((i + 1) * (n + runs) / runs)
		}
		re := &cfake.Array{Length: int64(runs), NBuffers: 2, Buffers: []cfake.Buf{{Null: true}, {Data: le32(ends), Align: 8}}}
		a.Children = []*cfake.Array{re, child(1, runs)}
	default:
		w := fixedWidth(f)
		switch {
		case w < 0:
			a.Buffers = []cfake.Buf{valid, {Data: s.data((n + 7) / 8)}}
		case w > 0:
			a.Buffers = []cfake.Buf{valid, {Data: s.data(n * int(w)), Align: 8}}
		}
	}
	a.NBuffers = int64(len(a.Buffers))
	a.NChildren = int64(len(a.Children))
	return a
}

var interesting = []int64{
	-1, 0, 1, 2, -2, math.MinInt64, math.MaxInt64, 1 << 31, 1 << 40, 1 << 62, math.MinInt32, math.MaxInt32, 1 << 16,
}

// interestingLengths leaves out lengths up to the library's limit
// (cimport.MaxLength) that a null-typed array, which needs no buffers,
// could declare: the library believes them, and filling such a column
// costs memory in proportion (docs/decisions/).
var interestingLengths = []int64{
	-1, 0, 1, 2, -2, math.MinInt64, math.MaxInt64, math.MaxInt64 - 1, 1 << 31, 1 << 40, 1 << 62, math.MinInt32, 1 << 16,
}

// mutate applies up to eight mutations the remaining bytes describe.
func mutate(s *src, st *cfake.Stream) {
	var arrays []*cfake.Array
	var walkA func(a *cfake.Array)
	walkA = func(a *cfake.Array) {
		if a == nil {
			return
		}
		arrays = append(arrays, a)
		for _, c := range a.Children {
			walkA(c)
		}
		walkA(a.Dict)
	}
	for _, b := range st.Batches {
		walkA(b)
	}
	var schemas []*cfake.Schema
	var walkS func(x *cfake.Schema)
	walkS = func(x *cfake.Schema) {
		if x == nil {
			return
		}
		schemas = append(schemas, x)
		for _, c := range x.Children {
			walkS(c)
		}
		walkS(x.Dict)
	}
	walkS(st.Schema)
	for k := 0; k < 8 && !s.done(); k++ {
		switch s.n(8) {
		case 0, 1, 2, 3:
			if len(arrays) > 0 {
				mutateArray(s, arrays[s.n(len(arrays))])
			}
		case 4, 5:
			mutateSchema(s, schemas[s.n(len(schemas))], schemas)
		case 6:
			mutateStream(s, st)
		case 7:
			// Non-UTF-8 and odd bytes in a value buffer.
			if len(arrays) > 0 {
				a := arrays[s.n(len(arrays))]
				if len(a.Buffers) > 0 {
					b := &a.Buffers[len(a.Buffers)-1]
					if len(b.Data) > 0 {
						b.Data[s.n(len(b.Data))] = []byte{0xff, 0xc0, 0x80, 0xed, 0x00}[s.n(5)]
					}
				}
			}
		}
	}
}

func (s *src) interesting(cur int64) int64 {
	if s.flag(30) {
		return cur + int64(s.n(5)) - 2
	}
	return interesting[s.n(len(interesting))]
}

func (s *src) length(cur int64) int64 {
	if s.flag(30) {
		return cur + int64(s.n(5)) - 2
	}
	return interestingLengths[s.n(len(interestingLengths))]
}

func mutateArray(s *src, a *cfake.Array) {
	switch s.n(16) {
	case 0:
		a.Length = s.length(a.Length)
	case 1:
		a.Offset = s.length(a.Offset)
	case 2:
		a.NullCount = s.interesting(a.NullCount)
	case 3:
		a.NBuffers = s.interesting(a.NBuffers)
	case 4:
		a.NChildren = s.interesting(a.NChildren)
	case 5:
		if len(a.Buffers) > 0 {
			a.Buffers[s.n(len(a.Buffers))] = cfake.Buf{Null: true}
		}
	case 6, 7:
		// An offset, index, size or view field set to an odd value.
		if len(a.Buffers) > 0 {
			b := &a.Buffers[s.n(len(a.Buffers))]
			w := 4
			if s.flag(40) {
				w = 8
			}
			if len(b.Data) >= w {
				p := s.n(len(b.Data)/w) * w
				v := s.interesting(0)
				if w == 4 {
					binary.LittleEndian.PutUint32(b.Data[p:], uint32(int32(v)))
				} else {
					binary.LittleEndian.PutUint64(b.Data[p:], uint64(v))
				}
			}
		}
	case 8:
		if len(a.Buffers) > 0 {
			b := &a.Buffers[s.n(len(a.Buffers))]
			if len(b.Data) > 0 {
				b.Data[s.n(len(b.Data))] ^= byte(1 + s.n(255))
			}
		}
	case 9:
		a.Dict = nil
	case 10:
		a.Dict = &cfake.Array{Length: 1, NBuffers: 2, Buffers: []cfake.Buf{{Null: true}, {Data: make([]byte, 4), Align: 8}}}
	case 11:
		if len(a.Children) > 0 {
			a.Children[s.n(len(a.Children))] = nil
		}
	case 12:
		a.NoBufs = true
	case 13:
		a.NoKids = true
	case 14:
		a.Release = []cfake.Release{cfake.ReleaseNull, cfake.ReleaseSticky}[s.n(2)]
	case 15:
		if len(a.Buffers) > 0 {
			b := &a.Buffers[s.n(len(a.Buffers))]
			b.Front = !b.Front
		}
	}
}

func metadata(pairs ...string) []byte {
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(pairs)/2))
	for _, p := range pairs {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out
}

func mutateSchema(s *src, x *cfake.Schema, all []*cfake.Schema) {
	switch s.n(10) {
	case 0:
		if s.flag(60) {
			x.Format = str(badFormats[s.n(len(badFormats))])
		} else if s.flag(20) {
			x.Format = nil
		} else {
			x.Format = str(leaves[s.n(len(leaves))])
		}
	case 1:
		switch s.n(4) {
		case 0:
			x.Name = nil
		case 1:
			x.Name = str("bad\xff\xfename")
		case 2:
			x.Name = str("c0")
		default:
			x.Name = str(strings.Repeat("n", 1+s.n(300)))
		}
	case 2:
		switch s.n(4) {
		case 0:
			x.Metadata = metadata("k", "v", "PARQUET:field_id", "7")
		case 1:
			x.Metadata = binary.LittleEndian.AppendUint32(nil, uint32(0xffffffff))
		case 2:
			// A negative length (a positive one past the end would be a
			// producer lying about its bytes, which no consumer can see).
			md := metadata("key", "value")
			binary.LittleEndian.PutUint32(md[4+s.n(2)*7:], uint32([]int32{-1, -2, math.MinInt32}[s.n(3)]))
			x.Metadata = md
		default:
			x.Metadata = metadata()
		}
	case 3:
		x.NChildren = s.interesting(x.NChildren)
	case 4:
		if len(x.Children) > 0 {
			x.Children[s.n(len(x.Children))] = nil
		}
	case 5:
		x.NoKids = true
	case 6:
		if x.Dict != nil {
			x.Dict = nil
		} else {
			x.Dict = &cfake.Schema{Format: str(leaves[s.n(len(leaves))]), Name: str("")}
		}
	case 7:
		x.Release = []cfake.Release{cfake.ReleaseNull, cfake.ReleaseSticky}[s.n(2)]
	case 8:
		if len(x.Children) > 0 || x.NChildren > 0 {
			x.Loop = 1 + s.n(max(1, len(x.Children)))
		}
	case 9:
		x.Flags = s.interesting(x.Flags)
	}
}

func mutateStream(s *src, st *cfake.Stream) {
	switch s.n(7) {
	case 0:
		st.SchemaRC = 22
	case 1:
		st.FailAt = s.n(len(st.Batches) + 1)
	case 2:
		st.LastError = []*string{nil, str("producer failed"), str("bad \xff utf8")}[s.n(3)]
	case 3:
		st.NoGetSchema = true
	case 4:
		st.NoGetNext = true
	case 5:
		st.NoLastError = true
	case 6:
		st.Release = cfake.ReleaseSticky
	}
}

// fixCap is the most a buffer is padded to; one that would need more is
// made NULL (which the consumer must then refuse).
const fixCap = 1 << 20

type role int

const (
	rBitmap role = iota
	rBits
	rFixed
	rOffsets
	rValues
	rViews
	rData
	rSizes
)

type slot struct {
	role  role
	width int64
}

// layoutOf is the buffers an array of format f has, by the Arrow spec.
func layoutOf(f string, dict bool, nbuf int) []slot {
	if dict {
		if w := fixedWidth(f); w > 0 {
			return []slot{{role: rBitmap}, {role: rFixed, width: w}}
		}
		return nil
	}
	switch f {
	case "n", "+r":
		return nil
	case "z", "u":
		return []slot{{role: rBitmap}, {rOffsets, 4}, {rValues, 4}}
	case "Z", "U":
		return []slot{{role: rBitmap}, {rOffsets, 8}, {rValues, 8}}
	case "vz", "vu":
		out := []slot{{role: rBitmap}, {role: rViews, width: 16}}
		for range max(nbuf-3, 0) {
			out = append(out, slot{role: rData})
		}
		return append(out, slot{role: rSizes})
	case "+l", "+m":
		return []slot{{role: rBitmap}, {rOffsets, 4}}
	case "+L":
		return []slot{{role: rBitmap}, {rOffsets, 8}}
	case "+vl":
		return []slot{{role: rBitmap}, {rFixed, 4}, {rFixed, 4}}
	case "+vL":
		return []slot{{role: rBitmap}, {rFixed, 8}, {rFixed, 8}}
	case "+s":
		return []slot{{role: rBitmap}}
	}
	switch {
	case strings.HasPrefix(f, "+w:"):
		return []slot{{role: rBitmap}}
	case strings.HasPrefix(f, "+us:"):
		return []slot{{rFixed, 1}}
	case strings.HasPrefix(f, "+ud:"):
		return []slot{{rFixed, 1}, {rFixed, 4}}
	}
	switch w := fixedWidth(f); {
	case w < 0:
		return []slot{{role: rBitmap}, {role: rBits}}
	case w > 0:
		return []slot{{role: rBitmap}, {rFixed, w}}
	}
	return nil
}

func readInt(b []byte, i, w int64) (int64, bool) {
	if i < 0 || (i+1)*w > int64(len(b)) {
		return 0, false
	}
	if w == 4 {
		return int64(int32(binary.LittleEndian.Uint32(b[i*4:]))), true
	}
	return int64(binary.LittleEndian.Uint64(b[i*8:])), true
}

// pad makes b at least need bytes, or NULL past fixCap.
func pad(b *cfake.Buf, need int64) {
	if b.Null || need <= int64(len(b.Data)) {
		return
	}
	if need > fixCap {
		*b = cfake.Buf{Null: true}
		return
	}
	b.Data = append(b.Data, make([]byte, need-int64(len(b.Data)))...)
}

// fixArray pads a's buffers to what schema x (as the consumer reads it)
// and a's final header declare.
func fixArray(x *cfake.Schema, a *cfake.Array, depth int) {
	if x == nil || a == nil || x.Format == nil || depth > 64 {
		return
	}
	if a.Offset < 0 || a.Length < 0 || a.Offset > fixCap || a.Length > fixCap {
		return // the header alone must be refused
	}
	end := a.Offset + a.Length
	// The consumer reads as many buffers as declared.
	nb := len(a.Buffers)
	if a.NBuffers >= 0 && a.NBuffers < int64(nb) {
		nb = int(a.NBuffers)
	}
	lay := layoutOf(*x.Format, x.Dict != nil, nb)
	var sizes []int64
	if len(lay) > 0 && lay[len(lay)-1].role == rSizes && len(lay) == nb && !a.NoBufs {
		sb := &a.Buffers[nb-1]
		pad(sb, int64(len(lay)-3)*8)
		for i := range len(lay) - 3 {
			v, _ := readInt(sb.Data, int64(i), 8)
			sizes = append(sizes, v)
		}
	}
	for i := range nb {
		if i >= len(lay) {
			break
		}
		b := &a.Buffers[i]
		switch sl := lay[i]; sl.role {
		case rBitmap, rBits:
			pad(b, (end+7)/8)
		case rFixed:
			pad(b, end*sl.width)
		case rViews:
			pad(b, end*16)
		case rOffsets:
			pad(b, (end+1)*sl.width)
		case rValues:
			if last, ok := readInt(a.Buffers[1].Data, end, sl.width); ok && last >= 0 && !a.Buffers[1].Null {
				pad(b, last)
			}
		case rData:
			if i-2 < len(sizes) && sizes[i-2] >= 0 {
				pad(b, sizes[i-2])
			}
		}
	}
	for i, c := range a.Children {
		if i < len(x.Children) {
			fixArray(x.Children[i], c, depth+1)
		}
	}
	fixArray(x.Dict, a.Dict, depth+1)
}

// describe is a short text of a generated stream, for failures.
func describe(st *cfake.Stream) string {
	var b strings.Builder
	var walk func(x *cfake.Schema, ind string)
	walk = func(x *cfake.Schema, ind string) {
		if x == nil {
			fmt.Fprintf(&b, "%s<nil>\n", ind)
			return
		}
		f, n := "<NULL>", "<NULL>"
		if x.Format != nil {
			f = strconv.Quote(*x.Format)
		}
		if x.Name != nil {
			n = strconv.Quote(*x.Name)
		}
		fmt.Fprintf(&b, "%s%s %s n_children=%d release=%d\n", ind, n, f, x.NChildren, x.Release)
		if x.Loop > 0 {
			return
		}
		for _, c := range x.Children {
			walk(c, ind+"  ")
		}
		if x.Dict != nil {
			walk(x.Dict, ind+"  dict ")
		}
	}
	walk(st.Schema, "")
	fmt.Fprintf(&b, "%d batches\n", len(st.Batches))
	return b.String()
}
