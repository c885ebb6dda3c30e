package parquet

import (
	"errors"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
)

// A Parquet column chunk must be contiguous in the file, so the encoder holds
// the encoded pages of each column until its row group is complete: up to a
// whole row group (write.parquet.row-group-size-bytes, 128 MB) per open file,
// compressed. A streamed append of any size therefore peaked higher than a
// small one until its row groups reached that size (bench/run.py W5: 921 MB
// at 10x the data against 739 MB at 1x).
//
// The encoder's page buffers (spillBuffer, from pageSpill) keep encoded
// pages in memory while all of them together hold less than the pool's
// budget (32 MB in the process); a buffer whose page would pass it writes
// that page and the rest of its row group to an unlinked temporary file (in
// os.TempDir, so TMPDIR moves it), read back once when the row group is
// flushed. The operating system's page cache usually holds those bytes
// until they are read and the file is closed. Small writes (commits of a
// few thousand rows, the files a copy-on-write delete rewrites) never touch
// the disk. When no temporary file can be made the buffer stays in memory.

// spillPool gives the encoder's page buffers and keeps count of them.
type spillPool struct {
	budget   int64        // bytes of pages all its buffers keep in memory
	inMemory atomic.Int64 // bytes they keep now
	// spills counts the buffers that went to a temporary file (tests read
	// it); openFiles the temporary files open now, at most maxFiles, so
	// that a write to many partitions at once cannot take the file
	// descriptors its data files need. A buffer that finds them all taken
	// stays in memory until one is free.
	spills    atomic.Int64
	openFiles atomic.Int64
	maxFiles  int64
	// dir is where the temporary files go; "" is os.TempDir().
	dir string
}

// pageSpill is the process's pool, which every Writer shares unless a test
// gives it its own (Options.pages).
//
// 32 MB rather than the first 64: partitioned writes hold the whole budget
// while they run, and half of it took 25 MB off the peaks of W2 and W3 (in
// bench/run.py, seven alternating pairs), within the spread in time. W5's
// 1x and 10x peaks fell by as much, so their ratio rose (docs/decisions.md,
// "Memory bounds of a write").
var pageSpill = newSpillPool(32 << 20)

// maxSpillFiles bounds the temporary files a pool keeps open at once.
const maxSpillFiles = 256

func newSpillPool(budget int64) *spillPool {
	return &spillPool{budget: budget, maxFiles: maxSpillFiles}
}

// bufferIn gives a buffer whose spilled bytes go to s, with those of the
// other buffers given s.
func (p *spillPool) bufferIn(s *spillStore) *spillBuffer {
	return &spillBuffer{pool: p, store: s}
}

// putBuffer hands b, a buffer from a spillPool, back.
func putBuffer(b io.ReadWriteSeeker) {
	if sb, ok := b.(*spillBuffer); ok {
		sb.release()
	}
}

// spillChunkBytes is the size of the chunks a buffer's in-memory part is
// made of. Fixed-size chunks keep what is counted against the budget what
// is held: slices grown by doubling and recycled through a pool had kept
// up to twice the budget, and more with each row group (W5 at 10x peaked
// as high as with no budget).
const spillChunkBytes = 64 << 10

var spillChunks = sync.Pool{New: func() any { b := make([]byte, 0, spillChunkBytes); return &b }}

// errSpillWrite reports a write anywhere but at the end of a buffer; the
// encoder only appends pages.
var errSpillWrite = errors.New("parquet page buffer: write not at the end")

// spillTailBytes is the size of the chunks written to a temporary file.
const spillTailBytes = 64 << 10

var spillTails = sync.Pool{New: func() any { b := make([]byte, 0, spillTailBytes); return &b }}

// spillStore is a temporary file that page buffers append to, each keeping
// where its bytes went. It is opened when a first buffer spills and closed
// (so deleted) when the last one is released, that is when the row group
// is flushed.
type spillStore struct {
	mu   sync.Mutex
	file *os.File
	size int64 // bytes in file
	// tail gathers appends into spillTailBytes writes: one system call per
	// page cost 0.7 CPU-s on W3 (7 files, ~100k pages).
	tail  *[]byte
	refs  int  // buffers with bytes here
	noTmp bool // a temporary file could not be made: buffers stay in memory
}

// attach counts one more buffer in, opening the file if it is not (and
// counting it in p's open files); false when no file can be had.
func (s *spillStore) attach(p *spillPool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		if s.noTmp || p.openFiles.Add(1) > p.maxFiles {
			p.openFiles.Add(-1)
			return false
		}
		f, err := os.CreateTemp(p.dir, "pyiceberg-go-pages-*")
		if err == nil {
			// Unlinked at once: the file lives until it is closed, and
			// nothing is left behind should the process die.
			if err = os.Remove(f.Name()); err != nil {
				_ = f.Close()
			}
		}
		if err != nil {
			p.openFiles.Add(-1)
			s.noTmp = true
			return false
		}
		s.file, s.size = f, 0
	}
	s.refs++
	return true
}

// append adds p at the end and says where it starts.
func (s *spillStore) append(p []byte) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tail == nil {
		s.tail = spillTails.Get().(*[]byte)
	}
	off := s.size + int64(len(*s.tail))
	if len(*s.tail)+len(p) > cap(*s.tail) {
		if err := s.flushLocked(); err != nil {
			return 0, err
		}
	}
	if len(p) >= cap(*s.tail) {
		n, err := s.file.WriteAt(p, s.size)
		s.size += int64(n)
		return off, err
	}
	*s.tail = append(*s.tail, p...)
	return off, nil
}

func (s *spillStore) flushLocked() error {
	if s.tail == nil || len(*s.tail) == 0 {
		return nil
	}
	n, err := s.file.WriteAt(*s.tail, s.size)
	s.size += int64(n)
	*s.tail = (*s.tail)[:0]
	return err
}

// readAt reads bytes from off on into p, up to the end of what is written
// or gathered.
func (s *spillStore) readAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	if off >= s.size {
		n := copy(p, (*s.tail)[off-s.size:])
		s.mu.Unlock()
		return n, nil
	}
	// Bytes below size stay where they are while others append.
	p = p[:min(int64(len(p)), s.size-off)]
	s.mu.Unlock()
	n, err := s.file.ReadAt(p, off)
	if err == io.EOF && n == len(p) {
		err = nil
	}
	return n, err
}

// detach counts one buffer out, closing the file after the last (and
// counting it out of p's open files).
func (s *spillStore) detach(p *spillPool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs--; s.refs > 0 {
		return
	}
	_ = s.file.Close()
	s.file, s.size = nil, 0
	p.openFiles.Add(-1)
	if s.tail != nil {
		*s.tail = (*s.tail)[:0]
		spillTails.Put(s.tail)
		s.tail = nil
	}
}

// spillExtent is a run of a buffer's bytes in its store: from off, n bytes,
// which are the buffer's bytes from at (counted after those in memory).
type spillExtent struct{ off, n, at int64 }

// spillBuffer is an append-only byte buffer, in memory while its pool has
// room and in a temporary file after that.
type spillBuffer struct {
	pool   *spillPool
	mem    []*[]byte     // the first bytes, in chunks of spillChunkBytes
	memN   int64         // bytes in mem
	store  *spillStore   // where the bytes past the budget go, shared with other buffers
	onDisk bool          // attached to store: the bytes after mem's are there
	ext    []spillExtent // where they are
	size   int64         // bytes written
	pos    int64         // read position (Seek and Read move it)
	noTmp  bool          // a temporary file could not be made: memory only
}

func (b *spillBuffer) Write(p []byte) (int, error) {
	if b.pos != b.size {
		return 0, errSpillWrite
	}
	if !b.onDisk {
		// Room for p in the chunks already held, or in new ones that fit
		// the budget?
		room := int64(len(b.mem))*spillChunkBytes - b.memN
		more := (int64(len(p)) - room + spillChunkBytes - 1) / spillChunkBytes
		if more <= 0 || b.pool.inMemory.Load()+more*spillChunkBytes <= b.pool.budget || !b.spill() {
			b.appendMem(p)
			b.size += int64(len(p))
			b.pos = b.size
			return len(p), nil
		}
	}
	off, err := b.store.append(p)
	if err != nil {
		return 0, err
	}
	n := int64(len(p))
	if k := len(b.ext) - 1; k >= 0 && b.ext[k].off+b.ext[k].n == off {
		b.ext[k].n += n
	} else {
		b.ext = append(b.ext, spillExtent{off: off, n: n, at: b.size - b.memN})
	}
	b.size += n
	b.pos = b.size
	return len(p), nil
}

// appendMem copies p into the in-memory chunks, taking new ones as needed.
func (b *spillBuffer) appendMem(p []byte) {
	for len(p) > 0 {
		if len(b.mem) == 0 || len(*b.mem[len(b.mem)-1]) == spillChunkBytes {
			b.mem = append(b.mem, spillChunks.Get().(*[]byte))
			b.pool.inMemory.Add(spillChunkBytes)
		}
		c := b.mem[len(b.mem)-1]
		n := min(len(p), spillChunkBytes-len(*c))
		*c = append(*c, p[:n]...)
		p = p[n:]
		b.memN += int64(n)
	}
}

// spill attaches the buffer to its store, where the rest of its bytes go;
// false when it cannot, and then the buffer keeps everything in memory.
func (b *spillBuffer) spill() bool {
	if b.noTmp {
		return false
	}
	if !b.store.attach(b.pool) {
		b.noTmp = b.store.noTmp
		return false
	}
	b.onDisk = true
	b.pool.spills.Add(1)
	return true
}

func (b *spillBuffer) inMemory() int64 { return b.memN }

func (b *spillBuffer) Read(p []byte) (int, error) {
	if b.pos >= b.size {
		return 0, io.EOF
	}
	if b.pos < b.memN {
		c := *b.mem[b.pos/spillChunkBytes]
		n := copy(p, c[b.pos%spillChunkBytes:])
		b.pos += int64(n)
		return n, nil
	}
	n, err := b.readDisk(p)
	b.pos += int64(n)
	return n, err
}

// readDisk reads from the read position, which is past the bytes in
// memory, up to the end of the extent it is in.
func (b *spillBuffer) readDisk(p []byte) (int, error) {
	rel := b.pos - b.memN
	i := sort.Search(len(b.ext), func(i int) bool { return b.ext[i].at+b.ext[i].n > rel })
	e := b.ext[i]
	in := rel - e.at
	return b.store.readAt(p[:min(int64(len(p)), e.n-in)], e.off+in)
}

func (b *spillBuffer) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += b.pos
	case io.SeekEnd:
		offset += b.size
	}
	if offset < 0 || offset > b.size {
		return b.pos, errors.New("parquet page buffer: seek out of range")
	}
	b.pos = offset
	return offset, nil
}

// spillCopyBytes is the size of the buffer a spilled part is copied out with.
const spillCopyBytes = 1 << 20

var spillCopy = sync.Pool{New: func() any { b := make([]byte, spillCopyBytes); return &b }}

// WriteTo writes the bytes from the read position on to w (a column
// chunk goes to the file with io.Copy).
func (b *spillBuffer) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for b.pos < b.memN {
		c := *b.mem[b.pos/spillChunkBytes]
		n, err := w.Write(c[b.pos%spillChunkBytes:])
		total += int64(n)
		b.pos += int64(n)
		if err != nil {
			return total, err
		}
	}
	if b.pos < b.size {
		buf := spillCopy.Get().(*[]byte)
		defer spillCopy.Put(buf)
		for b.pos < b.size {
			// Gather extents into the buffer before writing it out.
			n := 0
			for n < len(*buf) && b.pos < b.size {
				k, err := b.readDisk((*buf)[n:])
				n += k
				b.pos += int64(k)
				if err != nil {
					return total, err
				}
			}
			k, err := w.Write((*buf)[:n])
			total += int64(k)
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// release hands the buffer's place in its store back (the store's file is
// closed after the last) and recycles the memory.
func (b *spillBuffer) release() {
	if b.onDisk {
		b.store.detach(b.pool)
		b.onDisk = false
	}
	for _, c := range b.mem {
		*c = (*c)[:0]
		spillChunks.Put(c)
	}
	b.pool.inMemory.Add(-int64(len(b.mem)) * spillChunkBytes)
	b.mem, b.memN, b.ext = nil, 0, nil
	b.size, b.pos = 0, 0
}
