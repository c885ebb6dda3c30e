package transform

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// dirtyAllocator hands out memory full of garbage, as a Recycler's reused
// buffers are: the scatter must write every byte it hands on.
type dirtyAllocator struct{ memory.Allocator }

func (d dirtyAllocator) Allocate(size int) []byte {
	b := d.Allocator.Allocate(size)
	for i := range b {
		b[i] = 0xA5
	}
	return b
}

// The hand-written scatter gives each group what arrow's Take kernel gives
// for the group's rows, for every source type, on sliced inputs with nulls,
// for structs (with a null parent), for a list column (which falls back to
// the kernel) and for an empty group; its buffers come from memory full of
// garbage. Strings of up to 40 bytes cover the 16-byte word copy, and the
// last values of the input the exact copy that keeps it from reading past
// the input's bytes.
func TestScatterMatchesArrowTake(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(11, 12))
	const n = 500
	var arrays []arrow.Array
	cases := append(sourceCases(), srcCase{"long strings", arrow.BinaryTypes.String, nil, func(r *rand.Rand) any {
		return strings.Repeat("ab", r.IntN(21))
	}})
	for _, sc := range cases {
		vals := make([]any, n+4)
		for i := range vals {
			if r.IntN(7) != 0 {
				vals[i] = sc.gen(r)
			}
		}
		full := buildArray(t, mem, sc.dt, vals)
		arrays = append(arrays, array.NewSlice(full, 2, n+2))
		full.Release()
	}
	parentValid := memory.NewResizableBuffer(mem)
	parentValid.Resize(int(bitutil.BytesForBits(n)))
	parentNulls := 0
	for i := range n {
		v := i%9 != 4
		bitutil.SetBitTo(parentValid.Bytes(), i, v)
		if !v {
			parentNulls++
		}
	}
	st, err := array.NewStructArrayWithNulls(arrays[1:4], []string{"x", "y", "z"}, parentValid, parentNulls, 0)
	parentValid.Release()
	if err != nil {
		t.Fatal(err)
	}
	arrays = append(arrays, array.NewSlice(st, 1, n-1))
	st.Release()
	list, _, err := array.FromJSON(mem, arrow.ListOf(arrow.PrimitiveTypes.Int32), stringsReader(`[[1,2],null,[],[3]]`))
	if err != nil {
		t.Fatal(err)
	}
	arrays = append(arrays, list)

	ctx := compute.WithAllocator(context.Background(), mem)
	for _, arr := range arrays {
		const ng = 5
		gr := &groups{gid: make([]uint32, arr.Len()), pos: make([]int32, arr.Len()), counts: make([]int, ng), mem: mem, out: dirtyAllocator{mem}}
		rows := make([][]int32, ng)
		for i := range gr.gid {
			g := r.IntN(ng - 1) // the last group stays empty
			gr.gid[i], gr.pos[i] = uint32(g), int32(gr.counts[g])
			gr.counts[g]++
			rows[g] = append(rows[g], int32(i))
		}
		got, err := gr.scatter(arr)
		if err != nil {
			t.Fatalf("%s: %v", arr.DataType(), err)
		}
		for g := range got {
			indices := buildInt32(t, mem, rows[g])
			want, err := compute.TakeArray(ctx, arr, indices)
			if err != nil {
				t.Fatalf("%s: %v", arr.DataType(), err)
			}
			if !array.Equal(got[g], want) || got[g].NullN() != want.NullN() {
				t.Errorf("%s group %d: scatter differs from arrow Take", arr.DataType(), g)
			}
			got[g].Release()
			want.Release()
			indices.Release()
		}
		gr.release()
		arr.Release()
	}
}

func buildInt32(t *testing.T, mem memory.Allocator, v []int32) arrow.Array {
	t.Helper()
	b := array.NewInt32Builder(mem)
	defer b.Release()
	b.AppendValues(v, nil)
	return b.NewArray()
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// Strings are scattered in whole blocks of 16, 32 or 48 bytes when the
// longest value fits one (scatterBlocks), with a word loop otherwise. For
// longest values at and on both sides of each block size (and all empty),
// in 32- and 64-bit offsets, with the input sliced to the end of its bytes
// (where the last values must be copied exactly), each group gets what
// arrow's Take gives, from buffers full of garbage.
func TestScatterStringsAtEachLongestValue(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ctx := compute.WithAllocator(context.Background(), mem)
	r := rand.New(rand.NewPCG(21, 22))
	const n, ng = 300, 4
	for _, dt := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString} {
		for _, longest := range []int{0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 70} {
			vals := make([]any, n+1)
			for i := range vals {
				if r.IntN(9) != 0 {
					s := make([]byte, r.IntN(longest+1))
					for k := range s {
						s[k] = byte('a' + r.IntN(26))
					}
					vals[i] = string(s)
				}
			}
			vals[1+r.IntN(n)] = strings.Repeat("z", longest)
			vals[n] = strings.Repeat("y", longest) // the last value ends the input's bytes
			full := buildArray(t, mem, dt, vals)
			arr := array.NewSlice(full, 1, int64(n+1))
			full.Release()
			gr := &groups{gid: make([]uint32, n), pos: make([]int32, n), counts: make([]int, ng), mem: mem, out: dirtyAllocator{mem}}
			rows := make([][]int32, ng)
			for i := range n {
				g := r.IntN(ng)
				gr.gid[i], gr.pos[i] = uint32(g), int32(gr.counts[g])
				gr.counts[g]++
				rows[g] = append(rows[g], int32(i))
			}
			got, err := gr.scatter(arr)
			if err != nil {
				t.Fatalf("%s longest %d: %v", dt, longest, err)
			}
			for g := range got {
				indices := buildInt32(t, mem, rows[g])
				want, err := compute.TakeArray(ctx, arr, indices)
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(got[g], want) {
					t.Errorf("%s longest %d group %d: scatter differs from arrow Take", dt, longest, g)
				}
				got[g].Release()
				want.Release()
				indices.Release()
			}
			gr.release()
			arr.Release()
		}
	}
}
