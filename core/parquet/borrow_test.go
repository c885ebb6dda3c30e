package parquet

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeLent writes recs into one file, each one with WriteBorrowed when
// lend says so and with Write otherwise, asking for a new row group
// (Flush) before the batches listed in cuts; it returns the file's bytes.
func writeLent(t *testing.T, props map[string]string, sc *arrow.Schema, recs []arrow.RecordBatch, lend func(i int) bool, cuts ...int) []byte {
	t.Helper()
	fs := newMemFS()
	w := NewWriter(t.Context(), fs, sc, propOptions(t, props), pathGen("mem://t"))
	for i, rec := range recs {
		for _, c := range cuts {
			if c == i {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		write := w.Write
		if lend(i) {
			write = w.WriteBorrowed
		}
		if err := write(rec); err != nil {
			t.Fatal(err)
		}
	}
	files, err := w.Close()
	if err != nil || len(files) != 1 {
		t.Fatalf("%d files: %v", len(files), err)
	}
	return fs.bytes(t, files[0].Path)
}

// Borrowed batches give the file written batch by batch, byte for byte,
// with the native encoder's column-by-column row groups: one row group or
// several, dictionaries, nulls, NaN, decimals, bloom filters, and borrowed
// batches mixed with copied ones in a row group (held ones are then
// encoded in order before the copied one).
func TestBorrowedBatchesGiveTheSameFile(t *testing.T) {
	sc, recs := bloomBatches(t, false, 5, 12000)
	props := map[string]string{PropBloomEnabledPrefix + "s": "true", PropBloomEnabledPrefix + "id": "true"}
	all := func(int) bool { return true }
	none := func(int) bool { return false }
	for _, c := range []struct {
		name string
		lend func(int) bool
		cuts []int
	}{
		{"one row group", all, nil},
		{"three row groups", all, []int{2, 4}},
		{"copied batches among them", func(i int) bool { return i != 1 && i != 4 }, []int{3}},
		{"copied batch first", func(i int) bool { return i > 0 }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := writeLent(t, props, sc, recs, none, c.cuts...)
			got := writeLent(t, props, sc, recs, c.lend, c.cuts...)
			if !bytes.Equal(got, want) {
				t.Fatalf("files differ: %d and %d bytes", len(got), len(want))
			}
		})
	}
}

// The writer keeps borrowed batches (not their pages) until their row
// group is written, lets go of copied ones once encoded, and of every one
// by Close or Abort.
func TestBorrowedBatchesAreHeldUntilWrittenThenReleased(t *testing.T) {
	for _, c := range []struct {
		lend, abort bool
	}{{true, false}, {true, true}, {false, false}} {
		t.Run(fmt.Sprintf("lend=%v,abort=%v", c.lend, c.abort), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			sc := arrowSchema(t, stringsSchema())
			w := NewWriter(t.Context(), newMemFS(), sc, Options{}, pathGen("mem://t"))
			write := w.Write
			if c.lend {
				write = w.WriteBorrowed
			}
			for k := range 3 {
				b := array.NewRecordBuilder(mem, sc)
				for i := range 5000 {
					b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("a-%d-%d", k, i))
					b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("b-%d", i%17))
				}
				rec := b.NewRecordBatch()
				b.Release()
				if err := write(rec); err != nil {
					t.Fatal(err)
				}
				rec.Release()
			}
			deadline := time.Now().Add(hangBound)
			for w.queued.Load() > 0 || (!c.lend && mem.CurrentAlloc() > 0) {
				if time.Now().After(deadline) {
					t.Fatalf("still %d bytes queued, %d allocated", w.queued.Load(), mem.CurrentAlloc())
				}
				time.Sleep(time.Millisecond)
			}
			if c.lend && mem.CurrentAlloc() == 0 {
				t.Fatal("borrowed batches were let go before their row group was written")
			}
			if c.abort {
				w.Abort()
			} else if _, err := w.Close(); err != nil {
				t.Fatal(err)
			}
			mem.AssertSize(t, 0)
		})
	}
}
