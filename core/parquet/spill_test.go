package parquet

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// testPool is a pool of the test's own, keeping budget bytes in memory,
// with its temporary files in a fresh directory.
func testPool(t *testing.T, budget int64) *spillPool {
	p := newSpillPool(budget)
	p.dir = t.TempDir()
	return p
}

// ownBuffer is a buffer of p with a store of its own.
func ownBuffer(p *spillPool) *spillBuffer { return p.bufferIn(&spillStore{}) }

// isolated gives opts a pool of page buffers (keeping budget bytes in
// memory) and a count of open encoders of their own.
func isolated(t *testing.T, opts Options, budget int64) Options {
	opts.pages = testPool(t, budget)
	opts.openFiles = new(atomic.Int32)
	return opts
}

// fillSpill writes pages of random sizes to a buffer whose pool keeps budget bytes
// in memory, and returns what it wrote.
func fillSpill(t *testing.T, b *spillBuffer, total int) []byte {
	return fillSpillPages(t, b, total, 3000)
}

// fillSpillPages is fillSpill with pages of up to maxPage bytes.
func fillSpillPages(t *testing.T, b *spillBuffer, total, maxPage int) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var want []byte
	for len(want) < total {
		p := make([]byte, 1+r.IntN(maxPage))
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		if n, err := b.Write(p); err != nil || n != len(p) {
			t.Fatalf("write %d bytes: %d, %v", len(p), n, err)
		}
		want = append(want, p...)
	}
	return want
}

// A buffer past its pool's budget holds the rest in a temporary file that is
// already unlinked; reading, seeking and WriteTo give back every byte in
// order, across the boundary; only appends are accepted; release closes it.
func TestSpillBufferKeepsEveryByteAcrossItsLimit(t *testing.T) {
	t.Parallel()
	budget := int64(3 * spillChunkBytes)
	pool := testPool(t, budget)
	dir := pool.dir
	b := ownBuffer(pool)
	want := fillSpill(t, b, 12*spillChunkBytes)
	if !b.onDisk || b.inMemory() > budget || b.inMemory() < budget-3000 {
		t.Fatalf("on disk %v, %d bytes in memory", b.onDisk, b.inMemory())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("temporary files visible: %v", left)
	}
	if _, err := b.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write([]byte("x")); err != errSpillWrite {
		t.Fatalf("write in the middle: %v", err)
	}
	var out bytes.Buffer
	if n, err := io.Copy(&out, b); err != nil || n != int64(len(want)) || !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("io.Copy gave %d bytes (%v), equal %v", n, err, bytes.Equal(out.Bytes(), want))
	}
	m := b.inMemory()
	for _, at := range []int64{0, spillChunkBytes - 1, spillChunkBytes, m - 1, m, m + 1, 5*spillChunkBytes + 17, int64(len(want)) - 1} {
		if _, err := b.Seek(at, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(io.LimitReader(b, 7000))
		end := min(at+7000, int64(len(want)))
		if err != nil || !bytes.Equal(got, want[at:end]) {
			t.Fatalf("read at %d: %d bytes, %v", at, len(got), err)
		}
	}
	if _, err := b.Seek(1, io.SeekEnd); err == nil {
		t.Fatal("seek past the end accepted")
	}
	f := b.store.file
	b.release()
	if _, err := f.Stat(); err == nil {
		t.Fatal("temporary file still open after release")
	}
	if b.size != 0 || b.mem != nil || b.onDisk || b.store.file != nil || b.ext != nil || pool.openFiles.Load() != 0 {
		t.Fatal("release left state behind")
	}
}

// Without a usable temporary directory the buffer keeps everything in memory.
func TestSpillBufferWithoutTempDirStaysInMemory(t *testing.T) {
	t.Parallel()
	pool := testPool(t, spillChunkBytes)
	pool.dir = filepath.Join(pool.dir, "missing")
	b := ownBuffer(pool)
	want := fillSpill(t, b, 5*spillChunkBytes)
	if b.onDisk || b.inMemory() != int64(len(want)) {
		t.Fatalf("on disk %v, %d of %d bytes in memory", b.onDisk, b.inMemory(), len(want))
	}
	b.Seek(0, io.SeekStart)
	var out bytes.Buffer
	if _, err := b.WriteTo(&out); err != nil || !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("WriteTo: %v, equal %v", err, bytes.Equal(out.Bytes(), want))
	}
}

// Spilling pages changes nothing in the file: with every column chunk
// spilled once 64 bytes are held (several row groups, strings, decimals, bloom
// filters, nulls) the file is byte for byte the one kept in memory.
func TestSpilledPagesGiveTheSameFile(t *testing.T) {
	t.Parallel()
	sc, recs := bloomBatches(t, false, 3, 20000)
	opts := propOptions(t, map[string]string{PropRowGroupBytes: "400000", PropBloomEnabledPrefix + "s": "true"})
	_, inMemory := writeFlatWith(t, isolated(t, opts, 64<<20), sc, recs)
	opts = isolated(t, opts, 64)
	_, spilled := writeFlatWith(t, opts, sc, recs)
	if n := opts.pages.spills.Load(); n < 2*int64(sc.NumFields()) {
		t.Fatalf("%d column chunks spilled for %d columns", n, sc.NumFields())
	}
	if !bytes.Equal(inMemory, spilled) {
		t.Fatalf("files differ: %d and %d bytes", len(inMemory), len(spilled))
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(spilled))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if rdr.NumRowGroups() < 2 || rdr.NumRows() != 60000 {
		t.Fatalf("%d row groups, %d rows", rdr.NumRowGroups(), rdr.NumRows())
	}
}

// No more than maxFiles temporary files of a pool are open at once: the
// buffer past the cap keeps its bytes in memory, and spills once a file is
// free.
func TestSpillFilesAreCapped(t *testing.T) {
	t.Parallel()
	pool := testPool(t, spillChunkBytes)
	pool.maxFiles = 1
	a, b := ownBuffer(pool), ownBuffer(pool)
	fillSpill(t, a, 3*spillChunkBytes)
	want := fillSpill(t, b, 3*spillChunkBytes)
	if !a.onDisk || b.onDisk || b.inMemory() != int64(len(want)) {
		t.Fatalf("first spilled %v, second spilled %v with %d bytes in memory", a.onDisk, b.onDisk, b.inMemory())
	}
	a.release()
	more := bytes.Repeat([]byte("more"), spillChunkBytes)
	if _, err := b.Write(more); err != nil || !b.onDisk {
		t.Fatalf("second did not spill once a file was free: %v", err)
	}
	b.Seek(0, io.SeekStart)
	got, _ := io.ReadAll(b)
	if !bytes.Equal(got, append(want, more...)) {
		t.Fatal("bytes differ after the late spill")
	}
	b.release()
}

// With more files open than fullPageFiles, each file's pages shrink in
// proportion (not below minPageRows); the values read back are the same.
func TestPagesShrinkWhenManyFilesAreOpen(t *testing.T) {
	t.Parallel()
	sc, recs := bloomBatches(t, false, 2, 20000)
	opts := isolated(t, propOptions(t, map[string]string{PropPageRowLimit: "10000"}), 32<<20)
	_, alone := writeFlatWith(t, opts, sc, recs)
	opts.openFiles.Add(63) // with this file's encoder, 64 open
	_, crowded := writeFlatWith(t, opts, sc, recs)
	opts.openFiles.Add(-63)
	largest := func(data []byte) (most, pages int) {
		for _, rg := range chunkPages(t, data, "id") {
			for _, p := range rg {
				most = max(most, p.values)
				pages++
			}
		}
		return most, pages
	}
	if most, pages := largest(alone); most != 10000 || pages != 4 {
		t.Fatalf("alone: %d pages, largest %d rows", pages, most)
	}
	want := 10000 * fullPageFiles / 64 // 2,500
	if most, pages := largest(crowded); most != want || pages != (40000+want-1)/want {
		t.Fatalf("64 files open: %d pages, largest %d rows, want %d", pages, most, want)
	}
	if a, b := columnJSON(t, readBack(t, alone).Column(2).Data().Chunks()), columnJSON(t, readBack(t, crowded).Column(2).Data().Chunks()); a != b {
		t.Fatal("values differ")
	}
	if n := opts.openFiles.Load(); n != 0 {
		t.Fatalf("%d encoders counted open after the writes", n)
	}
}

// An aborted write hands its encoder's page buffers back (closing spilled
// ones) and leaves the count of open encoders.
func TestAbortReleasesTheOpenFile(t *testing.T) {
	t.Parallel()
	sc, recs := bloomBatches(t, false, 2, 20000)
	opts := isolated(t, Options{PageBytes: 4 << 10}, 64)
	pool, open := opts.pages, opts.openFiles
	w := NewWriter(t.Context(), newMemFS(), sc, opts, pathGen("mem://x"))
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	// The encoder runs on its own goroutine: wait for it to reach the pages.
	for deadline := time.Now().Add(hangBound); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if w.Buffered() > 0 && pool.openFiles.Load() > 0 {
			break
		}
	}
	if open.Load() != 1 || pool.openFiles.Load() == 0 {
		t.Fatalf("while writing: %d encoders, %d spill files", open.Load(), pool.openFiles.Load())
	}
	w.Abort()
	if open.Load() != 0 || pool.openFiles.Load() != 0 || pool.inMemory.Load() != 0 {
		t.Fatalf("after Abort: %d encoders, %d spill files, %d bytes in memory",
			open.Load(), pool.openFiles.Load(), pool.inMemory.Load())
	}
}

// A write that fails while a row group goes to the file in the background
// still hands back every page buffer, written or not, and closes the
// temporary files of both row groups in flight.
func TestFailedRowGroupWriteReleasesItsPages(t *testing.T) {
	t.Parallel()
	sc, recs := nativeBatches(t, 40, 500)
	opts := isolated(t, Options{RowGroupBytes: 200 << 10}, 64)
	pool := opts.pages
	fs := newMemFS()
	fs.failAfter = 300 << 10 // in the second row group
	w := NewWriter(t.Context(), fs, sc, opts, pathGen("mem://f"))
	var werr error
	for _, rec := range recs {
		if werr = w.Write(rec); werr != nil {
			break
		}
	}
	_, cerr := w.Close()
	if err := cmpErr(werr, cerr); !errors.Is(err, errInjected) || !errors.Is(err, errs.ErrIO) {
		t.Fatalf("error %v, want the injected I/O error", err)
	}
	if n := pool.spills.Load(); n < int64(sc.NumFields()) {
		t.Fatalf("%d page buffers spilled, want the row groups' pages on disk", n)
	}
	if pool.openFiles.Load() != 0 || pool.inMemory.Load() != 0 {
		t.Fatalf("after the failure: %d spill files open, %d bytes in memory",
			pool.openFiles.Load(), pool.inMemory.Load())
	}
}

// Writes past the budget are gathered into chunks of spillTailBytes (pages
// as large as a chunk go straight to the file); every byte comes back.
func TestSpillBufferGathersWritesIntoChunks(t *testing.T) {
	t.Parallel()
	b := ownBuffer(testPool(t, spillChunkBytes))
	want := fillSpillPages(t, b, 3<<20, 400<<10)
	if !b.onDisk {
		t.Fatal("nothing spilled")
	}
	st, err := b.store.file.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if pending := int64(len(*b.store.tail)); st.Size()+pending+b.inMemory() != int64(len(want)) || pending >= spillTailBytes {
		t.Fatalf("file %d + pending %d + memory %d bytes, wrote %d", st.Size(), pending, b.inMemory(), len(want))
	}
	b.Seek(0, io.SeekStart)
	var out bytes.Buffer
	if _, err := b.WriteTo(&out); err != nil || !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("WriteTo: %v, equal %v", err, bytes.Equal(out.Bytes(), want))
	}
	b.release()
}

// What a pool counts is what its buffers hold, in whole chunks, and all of
// it comes back on release.
func TestSpillPoolCountsHeldChunks(t *testing.T) {
	t.Parallel()
	pool := testPool(t, 4*spillChunkBytes)
	a, b := ownBuffer(pool), ownBuffer(pool)
	fillSpill(t, a, spillChunkBytes+1)
	if got := pool.inMemory.Load(); got != 2*spillChunkBytes {
		t.Fatalf("%d bytes counted for %d held", got, a.inMemory())
	}
	fillSpill(t, b, 10*spillChunkBytes)
	if got := pool.inMemory.Load(); got > pool.budget || !b.onDisk {
		t.Fatalf("%d bytes counted against a budget of %d; second spilled %v", got, pool.budget, b.onDisk)
	}
	a.release()
	b.release()
	if got := pool.inMemory.Load(); got != 0 {
		t.Fatalf("%d bytes still counted", got)
	}
}

// Buffers given one store share its temporary file: pages written to them
// from several goroutines at once, small and large, then to each in turn,
// interleave in it, yet
// each buffer reads back its own bytes in order; the file is opened once
// and closed with the last buffer released.
func TestSpillBuffersShareOneFile(t *testing.T) {
	t.Parallel()
	pool := testPool(t, spillChunkBytes)
	var store spillStore
	files := pool.openFiles.Load()
	bufs := make([]*spillBuffer, 6)
	wants := make([][]byte, len(bufs))
	for i := range bufs {
		bufs[i] = pool.bufferIn(&store)
	}
	var wg sync.WaitGroup
	for i := range bufs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 9))
			for len(wants[i]) < 2<<20 {
				// Mostly pages under the gathering chunk, some over it.
				n := 1 + r.IntN(20<<10)
				if r.IntN(20) == 0 {
					n = spillTailBytes + r.IntN(spillTailBytes)
				}
				p := make([]byte, n)
				for j := range p {
					p[j] = byte(r.Uint32())
				}
				if _, err := bufs[i].Write(p); err != nil {
					t.Error(err)
					return
				}
				wants[i] = append(wants[i], p...)
			}
		}()
	}
	wg.Wait()
	// How the goroutines' pages interleave depends on their scheduling (on
	// a loaded machine one may well write all its pages in a row): pages in
	// turn, twice, make every buffer's bytes lie in two runs at least.
	r := rand.New(rand.NewPCG(99, 9))
	for range 2 {
		for i, b := range bufs {
			p := make([]byte, 1+r.IntN(20<<10))
			for j := range p {
				p[j] = byte(r.Uint32())
			}
			if _, err := b.Write(p); err != nil {
				t.Fatal(err)
			}
			wants[i] = append(wants[i], p...)
		}
	}
	if got := pool.openFiles.Load() - files; got != 1 {
		t.Fatalf("%d temporary files open for %d buffers", got, len(bufs))
	}
	for i, b := range bufs {
		if !b.onDisk || len(b.ext) < 2 {
			t.Fatalf("buffer %d: on disk %v in %d runs", i, b.onDisk, len(b.ext))
		}
		b.Seek(0, io.SeekStart)
		var out bytes.Buffer
		if n, err := io.Copy(&out, b); err != nil || n != int64(len(wants[i])) || !bytes.Equal(out.Bytes(), wants[i]) {
			t.Fatalf("buffer %d: copied %d of %d bytes (%v), equal %v", i, n, len(wants[i]), err, bytes.Equal(out.Bytes(), wants[i]))
		}
		// Reads from anywhere stop at a run's end and go on from there.
		r := rand.New(rand.NewPCG(uint64(i), 10))
		for range 50 {
			at := r.Int64N(int64(len(wants[i])))
			b.Seek(at, io.SeekStart)
			got, err := io.ReadAll(io.LimitReader(b, 100<<10))
			if end := min(at+100<<10, int64(len(wants[i]))); err != nil || !bytes.Equal(got, wants[i][at:end]) {
				t.Fatalf("buffer %d: read at %d: %d bytes, %v", i, at, len(got), err)
			}
		}
	}
	f := store.file
	for _, b := range bufs[:len(bufs)-1] {
		b.release()
	}
	if _, err := f.Stat(); err != nil || pool.openFiles.Load()-files != 1 {
		t.Fatalf("file closed before its last buffer was released: %v", err)
	}
	bufs[len(bufs)-1].release()
	if _, err := f.Stat(); err == nil || pool.openFiles.Load() != files || store.file != nil {
		t.Fatal("file still open after every buffer was released")
	}
	// The store opens a new file for the next row group.
	want := fillSpill(t, bufs[0], 3*spillChunkBytes)
	if !bufs[0].onDisk || store.file == nil {
		t.Fatal("no new file after the first was closed")
	}
	bufs[0].Seek(0, io.SeekStart)
	if got, _ := io.ReadAll(bufs[0]); !bytes.Equal(got, want) {
		t.Fatal("bytes differ in the second file")
	}
	bufs[0].release()
}
