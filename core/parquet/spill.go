package parquet

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// A Parquet column chunk must be contiguous in the file, so parquet-go holds
// the encoded pages of each column until its row group is complete: up to a
// whole row group (write.parquet.row-group-size-bytes, 128 MB) per open file,
// compressed. A streamed append of any size therefore peaked higher than a
// small one until its row groups reached that size (bench/run.py W5: 921 MB
// at 10x the data against 739 MB at 1x).
//
// The encoder's page buffers (spillBuffer, from pageSpill) keep encoded
// pages in memory while all of them together hold less than the pool's
// budget (64 MB in the process); a buffer whose page would pass it writes
// that page and the rest of its row group to an unlinked temporary file (in
// os.TempDir, so TMPDIR moves it), read back once when the row group is
// flushed. The operating system's page cache usually holds those bytes
// until they are read and the file is closed. Small writes (commits of a
// few thousand rows, the files a copy-on-write delete rewrites) never touch
// the disk. When no temporary file can be made the buffer stays in memory.

// spillPool is the parquet-go BufferPool of the encoder's page buffers.
type spillPool struct {
	budget   int64        // bytes of pages all its buffers keep in memory
	inMemory atomic.Int64 // bytes they keep now
}

// pageSpill is the encoders' pool; tests lower its budget.
var pageSpill = &spillPool{budget: 64 << 20}

// spills counts the temporary files made (tests read it); openSpills
// those open now, at most maxOpenSpills, so that a write to many
// partitions at once cannot take the file descriptors its data files need.
// A buffer that finds them all taken stays in memory until one is free.
var (
	spills        atomic.Int64
	openSpills    atomic.Int64
	maxOpenSpills int64 = 256
)

func (p *spillPool) GetBuffer() io.ReadWriteSeeker { return &spillBuffer{pool: p} }

func (p *spillPool) PutBuffer(b io.ReadWriteSeeker) {
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

// errSpillWrite reports a write anywhere but at the end of a buffer;
// parquet-go only appends pages.
var errSpillWrite = errors.New("parquet page buffer: write not at the end")

// spillBuffer is an append-only byte buffer, in memory while its pool has
// room and in a temporary file after that.
type spillBuffer struct {
	pool *spillPool
	mem  []*[]byte // the first bytes, in chunks of spillChunkBytes
	memN int64     // bytes in mem
	file *os.File  // the bytes after mem's, nil until they exist
	// tail gathers writes bound for file into spillTailBytes chunks: one
	// system call per page cost 0.7 CPU-s on W3 (7 files, ~100k pages).
	tail  *[]byte
	size  int64 // bytes written
	pos   int64 // read position (Seek and Read move it)
	noTmp bool  // a temporary file could not be made: memory only
}

func (b *spillBuffer) Write(p []byte) (int, error) {
	if b.pos != b.size {
		return 0, errSpillWrite
	}
	if b.file == nil {
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
	if b.tail == nil {
		b.tail = spillTails.Get().(*[]byte)
	}
	if len(*b.tail)+len(p) > cap(*b.tail) {
		if err := b.flushTail(); err != nil {
			return 0, err
		}
	}
	var n int
	var err error
	if len(p) >= cap(*b.tail) {
		n, err = b.file.Write(p)
	} else {
		*b.tail = append(*b.tail, p...)
		n = len(p)
	}
	b.size += int64(n)
	b.pos = b.size
	return n, err
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

// spillTailBytes is the size of the chunks written to a temporary file.
const spillTailBytes = 256 << 10

var spillTails = sync.Pool{New: func() any { b := make([]byte, 0, spillTailBytes); return &b }}

// flushTail writes the gathered bytes to the file.
func (b *spillBuffer) flushTail() error {
	if b.tail == nil || len(*b.tail) == 0 {
		return nil
	}
	_, err := b.file.Write(*b.tail)
	*b.tail = (*b.tail)[:0]
	return err
}

// spill opens the temporary file the rest of the bytes go to; false when it
// cannot, and then the buffer keeps everything in memory.
func (b *spillBuffer) spill() bool {
	if b.noTmp {
		return false
	}
	if openSpills.Add(1) > maxOpenSpills {
		openSpills.Add(-1)
		return false
	}
	f, err := os.CreateTemp("", "pyiceberg-go-pages-*")
	if err != nil {
		openSpills.Add(-1)
		b.noTmp = true
		return false
	}
	// Unlinked at once: the file lives until it is closed, and nothing is
	// left behind should the process die.
	if os.Remove(f.Name()) != nil {
		_ = f.Close()
		openSpills.Add(-1)
		b.noTmp = true
		return false
	}
	b.file = f
	spills.Add(1)
	return true
}

func (b *spillBuffer) inMemory() int64 { return b.memN }

func (b *spillBuffer) Read(p []byte) (int, error) {
	if err := b.flushTail(); err != nil {
		return 0, err
	}
	if b.pos >= b.size {
		return 0, io.EOF
	}
	if b.pos < b.memN {
		c := *b.mem[b.pos/spillChunkBytes]
		n := copy(p, c[b.pos%spillChunkBytes:])
		b.pos += int64(n)
		return n, nil
	}
	n, err := b.file.ReadAt(p, b.pos-b.inMemory())
	b.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
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

// WriteTo writes the bytes from the read position on to w (parquet-go
// flushes a row group's column chunk with io.Copy).
func (b *spillBuffer) WriteTo(w io.Writer) (int64, error) {
	if err := b.flushTail(); err != nil {
		return 0, err
	}
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
		src := io.NewSectionReader(b.file, b.pos-b.inMemory(), b.size-b.pos)
		n, err := io.CopyBuffer(onlyWriter{w}, src, *buf)
		total += n
		b.pos += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// onlyWriter hides a destination's ReadFrom, so io.CopyBuffer uses the
// buffer it is given.
type onlyWriter struct{ io.Writer }

// release closes the temporary file and recycles the memory.
func (b *spillBuffer) release() {
	if b.file != nil {
		_ = b.file.Close()
		b.file = nil
		openSpills.Add(-1)
	}
	for _, c := range b.mem {
		*c = (*c)[:0]
		spillChunks.Put(c)
	}
	b.pool.inMemory.Add(-int64(len(b.mem)) * spillChunkBytes)
	b.mem, b.memN = nil, 0
	if b.tail != nil {
		*b.tail = (*b.tail)[:0]
		spillTails.Put(b.tail)
		b.tail = nil
	}
	b.size, b.pos = 0, 0
}
