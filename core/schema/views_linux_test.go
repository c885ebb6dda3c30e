package schema

import (
	"context"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/internal/guardmem"
)

// Views not inline are copied in whole 16-byte words, as many as the
// longest value needs when that is at most 48 bytes. For longest values
// at and on both sides of each word count, with the one data block ending
// right before a page that may not be read (the last values are long and
// end there), the conversion reads nothing past it and gives each value.
func TestViewsConvertAtEachLongestValue(t *testing.T) {
	mem := checkedMem(t)
	p := &planner{mem: mem, ctx: exec.WithAllocator(context.Background(), mem)}
	conv, err := p.leaf("c", arrow.BinaryTypes.StringView, arrow.BinaryTypes.String)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(41, 42))
	const n = 400
	for _, longest := range []int{13, 16, 17, 31, 32, 33, 47, 48, 49, 90} {
		want := make([]string, n)
		var block []byte
		var hs []view
		for i := range n {
			l := r.IntN(longest + 1)
			if i == n/2 || i >= n-2 {
				l = longest
			}
			b := make([]byte, l)
			for k := range b {
				b[k] = byte('a' + r.IntN(26))
			}
			want[i] = string(b)
			h := view{n: int32(l)}
			if l <= viewInline {
				copy(unsafe.Slice((*byte)(unsafe.Pointer(&h.prefix)), viewInline), b)
			} else {
				copy(unsafe.Slice((*byte)(unsafe.Pointer(&h.prefix)), 4), b)
				h.off = int32(len(block))
				block = append(block, b...)
			}
			hs = append(hs, h)
		}
		raw := unsafe.Slice((*byte)(unsafe.Pointer(&hs[0])), len(hs)*viewBytes)
		d := array.NewData(arrow.BinaryTypes.StringView, n,
			[]*memory.Buffer{nil, memory.NewBufferBytes(raw), memory.NewBufferBytes(guardmem.Copy(t, block))}, nil, 0, 0)
		in := array.MakeFromData(d)
		got, err := conv(in)
		if err != nil {
			t.Fatalf("longest %d: %v", longest, err)
		}
		s := got.(*array.String)
		for i, w := range want {
			if s.Value(i) != w {
				t.Fatalf("longest %d, value %d: %q, want %q", longest, i, s.Value(i), w)
			}
		}
		cast, err := compute.CastArray(p.ctx, in, compute.SafeCastOptions(arrow.BinaryTypes.String))
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(got, cast) {
			t.Errorf("longest %d: differs from arrow-go's cast", longest)
		}
		cast.Release()
		got.Release()
		in.Release()
		d.Release()
	}
}
