package transform

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/internal/guardmem"
)

// The block and word copies of a string scatter read past a value's end
// only where the input's bytes go on: with the bytes ending right before
// a page that may not be read, every longest-value class scatters without
// a fault and gives the input's values.
func TestScatterReadsNothingPastTheInput(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const n, ng = 200, 3
	for _, longest := range []int{1, 16, 32, 48, 70} {
		offs := make([]int32, n+1)
		var data []byte
		for i := range n {
			l := r.IntN(longest + 1)
			if i >= n-3 {
				l = 1 + r.IntN(3) // short last values: a block from them would cross the end
			}
			for range l {
				data = append(data, byte('a'+r.IntN(26)))
			}
			offs[i+1] = int32(len(data))
		}
		vals := guardmem.Copy(t, data)
		offBuf := memory.NewBufferBytes(unsafe.Slice((*byte)(unsafe.Pointer(&offs[0])), 4*len(offs)))
		arr := array.NewStringData(array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offBuf, memory.NewBufferBytes(vals)}, nil, 0, 0))
		gr := &groups{gid: make([]uint32, n), pos: make([]int32, n), counts: make([]int, ng), mem: memory.DefaultAllocator}
		var rows [ng][]int
		for i := range n {
			g := r.IntN(ng)
			gr.gid[i], gr.pos[i] = uint32(g), int32(gr.counts[g])
			gr.counts[g]++
			rows[g] = append(rows[g], i)
		}
		got, err := gr.scatter(arr)
		if err != nil {
			t.Fatal(err)
		}
		for g, out := range got {
			s := out.(*array.String)
			for k, i := range rows[g] {
				if s.Value(k) != arr.Value(i) {
					t.Fatalf("longest %d group %d row %d: %q, want %q", longest, g, k, s.Value(k), arr.Value(i))
				}
			}
			out.Release()
		}
		gr.release()
		arr.Release()
	}
}
