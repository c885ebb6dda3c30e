package write

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/io"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/gctune"
	"github.com/pyiceberg-go/pyiceberg-go/core/layout"
	"github.com/pyiceberg-go/pyiceberg-go/core/parquet"
	"github.com/pyiceberg-go/pyiceberg-go/core/paths"
	"github.com/pyiceberg-go/pyiceberg-go/core/schema"
	"github.com/pyiceberg-go/pyiceberg-go/core/transform"
)

// spreadAfterBytes is the input size after which an unpartitioned write
// opens more than one file.
const spreadAfterBytes = 64 << 20

// recycleBytes bounds the free partition buffers a write keeps for reuse:
// about what a few batches in flight (queued at the writers) hold.
const recycleBytes = 128 << 20

// slot is one partition's rolling writer.
type slot struct {
	key    string
	w      *parquet.Writer
	values map[int]any
	used   int64 // when it was last written to, in batches
	// assigned counts the bytes routed to an unpartitioned write's writer.
	assigned int64
}

// pending is a partition's rows waiting to be sorted and written.
type pending struct {
	values map[int]any
	recs   []arrow.RecordBatch
	bytes  int64
}

// distributor lays a write's rows out in files (layout.Settings):
//   - unsorted tables stream: one rolling writer per partition (several for
//     a large unpartitioned write), at most MaxOpenFiles open (the least
//     recently written is closed first) and at most MaxBufferedBytes
//     queued or in row groups (the largest row group is written out);
//   - sorted tables buffer each partition's rows, and write a buffer sorted
//     into files of its own when the buffers outgrow MaxBufferedBytes (the
//     largest, or with range distribution all of them) and at the end;
//   - a partitioned table written with distribution none and fanout off is
//     clustered as Spark clusters one task's rows: rows are buffered up to
//     MaxBufferedBytes, then every partition is written out to files of
//     its own.
type distributor struct {
	w    *Writer
	p    *Plan
	ctx  context.Context
	fs   io.WriteFileIO
	root paths.Root // where the files go (plan.dataRoot)
	opts parquet.Options
	sch  *arrow.Schema
	mem  memory.Allocator
	// splitMem allocates the partitions Split scatters into: a
	// transform.Recycler when the writers keep nothing of a batch once
	// encoded, so the next batch's scatter reuses the memory.
	splitMem memory.Allocator
	opID     string
	seq      atomic.Int64
	// naming names the files of a distributed write's task (nil: opID).
	naming *FileNaming
	batch  int64

	slots  map[string]*slot
	rr     []*slot
	spread int // at most this many writers in rr
	seen   int64

	bufs     map[string]*pending
	bufOrder []string
	buffered int64

	// closing are writers of finished buffers, closed at the end so they
	// encode in parallel with what follows.
	closing []*slot
	out     Written

	// held are the first batches, kept back until they hold enough rows
	// for the dictionary decision (a rewrite's first batch can be a few
	// hundred rows, and a file opened on that would dictionary-encode
	// every column); undecided is set when the whole input was too small.
	held      []arrow.RecordBatch
	heldLent  []bool // per held batch: lent (see borrow)
	heldRows  int64
	undecided bool
	// borrow: the input's batches are the caller's memory, alive and
	// unchanged until the write returns (request input_in_memory). A
	// conformed batch still made of that memory is lent to an unpartitioned
	// writer (parquet.Writer.WriteBorrowed) instead of copied into pages.
	borrow bool
}

// WriteData runs the data path: conform, partition, lay out, encode.
// Files of a failed write are deleted before it returns.
func (w *Writer) WriteData(ctx context.Context, p *Plan, in array.RecordReader) (Written, error) {
	if w.Prewritten != nil && in == w.Input {
		// The coordinator of a distributed write: the tasks wrote the
		// operation's files (twophase.go).
		return w.adopt(p)
	}
	return w.WriteFiles(ctx, p, in, Workers())
}

// WriteFiles is WriteData with at most spread files encoding at once for
// an unpartitioned, unsorted write (rewrites running side by side each
// take their share of the cores).
func (w *Writer) WriteFiles(ctx context.Context, p *Plan, in array.RecordReader, spread int) (Written, error) {
	fs, err := w.DataFS(ctx, p)
	if err != nil {
		return Written{}, err
	}
	mem := memory.DefaultAllocator
	conf, err := schema.NewConformer(p.Schema, in.Schema(), schema.Options{CheckNullability: p.Eff.CheckNullability, CheckOrdering: p.Eff.CheckOrdering, Zone: p.Eff.Zone}, mem)
	if err != nil {
		return Written{}, err
	}
	pqOpts, err := parquet.OptionsFromProperties(p.Eff.Props)
	if err != nil {
		return Written{}, err
	}
	if err := ctx.Err(); err != nil {
		return Written{}, fmt.Errorf("%w: %v", errs.ErrCancelled, err)
	}
	d := &distributor{
		w: w, p: p, ctx: ctx, fs: fs, root: p.DataRoot(), opts: pqOpts, sch: conf.Schema(), mem: mem, opID: uuid.New().String(),
		slots: map[string]*slot{}, bufs: map[string]*pending{}, spread: max(1, spread),
	}
	d.splitMem = mem
	d.borrow = w.Req != nil && w.Req.InputInMemory && in == w.Input
	if w.Naming != nil && in == w.Input {
		d.naming = w.Naming
	}
	if parquet.KeepsNoInput(d.sch, pqOpts) {
		d.splitMem = transform.NewRecycler(recycleBytes)
	}
	for in.Next() {
		if err := ctx.Err(); err != nil {
			d.abort()
			return Written{}, fmt.Errorf("%w: %v", errs.ErrCancelled, err)
		}
		rec := in.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		w.Prog.Rows.Add(rec.NumRows())
		w.Prog.Bytes.Add(parquet.RecordBytes(rec))
		c, err := conf.Conform(rec)
		if err == nil {
			err = d.addSlices(c, d.borrow && sharesMemory(c, rec))
			c.Release()
		}
		if err != nil {
			d.abort()
			return Written{}, err
		}
	}
	if err := in.Err(); err != nil {
		d.abort()
		return Written{}, fmt.Errorf("%w: reading the input stream: %v", errs.ErrInvalidArgument, err)
	}
	return d.finish()
}

// splitRows bounds the rows split into partitions at once. A batch's
// partitions wait in their writers' queues (and their buffers in the
// recycler after), so smaller splits hold less: W2 (84 partitions of
// 113k-row batches), four alternating pairs, write extra 271-289 MB
// against 290-314 MB, time within the spread; W3 152-155 MB against
// 198-212 MB with 32k-row splits, which took W2 20% longer.
const splitRows = 1 << 16

// addSlices adds c, in slices of at most splitRows rows when its rows are
// split into partitions; lent as for add.
func (d *distributor) addSlices(c arrow.RecordBatch, lent bool) error {
	n := c.NumRows()
	if d.p.Spec.IsUnpartitioned() || n <= splitRows {
		return d.add(c, lent)
	}
	for off := int64(0); off < n; off += splitRows {
		sl := c.NewSlice(off, min(off+splitRows, n))
		err := d.add(sl, lent)
		sl.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// add routes one conformed batch, once the dictionary decision is made;
// lent says it is the caller's memory (borrow).
func (d *distributor) add(c arrow.RecordBatch, lent bool) error {
	if d.opts.NoDictionary != nil || d.undecided {
		return d.route(c, lent)
	}
	c.Retain()
	d.held = append(d.held, c)
	d.heldLent = append(d.heldLent, lent)
	d.heldRows += c.NumRows()
	if d.heldRows < dictSampleRows && !d.p.dictionaryDecided() {
		return nil
	}
	return d.routeHeld()
}

// routeHeld makes the dictionary decision on the held batches (or takes
// the operation's) and routes them.
func (d *distributor) routeHeld() error {
	held, lent := d.held, d.heldLent
	d.held, d.heldLent, d.heldRows = nil, nil, 0
	defer ReleaseAll(held)
	sample := held[len(held)-1]
	if sample.NumRows() < dictSampleRows && len(held) > 1 {
		all, err := ConcatBatches(d.sch, held)
		if err != nil {
			return err
		}
		defer all.Release()
		sample = all
	}
	noDict, raw, err := d.p.decideDictionary(d.opts, sample)
	if err != nil {
		return err
	}
	d.opts.NoDictionary, d.opts.Incompressible = noDict, raw
	d.undecided = noDict == nil // each file decides on its own first rows
	for i, h := range held {
		if err := d.route(h, lent[i]); err != nil {
			return err
		}
	}
	return nil
}

// route sends one batch to its writers.
func (d *distributor) route(c arrow.RecordBatch, lent bool) error {
	d.batch++
	if d.p.sorter == nil && d.p.Spec.IsUnpartitioned() {
		// Spread batches over up to one writer per core so encoding runs
		// on all of them, once the input is large enough that the extra
		// files pay for themselves (small appends stay one file).
		n := parquet.RecordBytes(c)
		d.seen += n
		if len(d.rr) == 0 || (len(d.rr) < d.spread && d.seen > spreadAfterBytes) {
			s, err := d.newSlot(fmt.Sprint(len(d.rr)), voidValues(d.p.Spec))
			if err != nil {
				return err
			}
			d.rr = append(d.rr, s)
		}
		// The writer given the fewest bytes so far takes the batch: one
		// opened later catches up, and all of them finish with the same
		// work (taking turns, the first would end with the 64 MB it
		// wrote alone still to encode while the others idle).
		s := d.rr[0]
		for _, o := range d.rr[1:] {
			if o.assigned < s.assigned {
				s = o
			}
		}
		s.assigned += n
		write := s.w.Write
		if lent {
			write = s.w.WriteBorrowed
		}
		if err := write(c); err != nil {
			return err
		}
		return d.limitBuffered()
	}
	// Rows buffered for sorting or clustering are held until their flush:
	// recycling would round each buffer up to a power of two for that
	// long and return the memory only when no split needs it any more.
	splitMem := d.splitMem
	if d.buffering() {
		splitMem = d.mem
	}
	parts, err := transform.Split(c, d.p.Spec, d.p.Schema, splitMem)
	defer func() {
		for _, part := range parts {
			part.Record.Release()
		}
	}()
	if err != nil {
		return err
	}
	for _, part := range parts {
		if d.buffering() {
			err = d.buffer(part, c.NumRows())
		} else {
			err = d.stream(part, c.NumRows())
		}
		if err != nil {
			return err
		}
	}
	if !d.buffering() {
		return d.limitBuffered()
	}
	return nil
}

// buffering reports whether rows wait in per-partition buffers (sorted or
// clustered) rather than stream to open writers.
func (d *distributor) buffering() bool {
	return d.p.sorter != nil || d.clustered()
}

// clustered is Spark's writer without fanout under distribution none.
func (d *distributor) clustered() bool {
	return d.p.layout.Mode == layout.None && !d.p.layout.Fanout && !d.p.Spec.IsUnpartitioned()
}

// voidValues is the partition tuple of an unpartitioned spec: a null for
// each of its fields (a spec of void transforms only, e.g. after every
// field was dropped from a v1 table's spec, still has fields, and a data
// file must give each of them a value).
func voidValues(spec iceberg.PartitionSpec) map[int]any {
	values := map[int]any{}
	for _, f := range spec.Fields() {
		values[f.FieldID] = nil
	}
	return values
}

// newSlot opens a rolling writer for a partition. Its files go in the
// partition's folder under the data root (paths.Root.Dir: a value too long
// to name a folder is an error here, before any of its rows is written).
func (d *distributor) newSlot(key string, values map[int]any) (*slot, error) {
	dir, err := d.root.Dir(d.p.Spec, d.p.Schema, values)
	if err != nil {
		return nil, err
	}
	return &slot{key: key, values: values, w: parquet.NewWriter(d.ctx, d.fs, d.sch, d.opts, func() string {
		if d.naming != nil {
			return dir + "/" + d.naming.name(d.seq.Add(1))
		}
		return fmt.Sprintf("%s/%05d-%s.parquet", dir, d.seq.Add(1), d.opID)
	})}, nil
}

// stream writes a partition's rows to its open writer, opening one (and
// closing the least recently used when too many are open).
func (d *distributor) stream(part transform.Partition, batchRows int64) error {
	s := d.slots[part.Key]
	if s == nil {
		if len(d.slots) >= d.p.layout.MaxOpenFiles {
			var lru *slot
			for _, o := range d.slots {
				if lru == nil || o.used < lru.used {
					lru = o
				}
			}
			delete(d.slots, lru.key)
			if err := d.collect(lru); err != nil {
				return err
			}
		}
		var err error
		if s, err = d.newSlot(part.Key, part.Values); err != nil {
			return err
		}
		d.slots[part.Key] = s
	}
	s.used = d.batch
	rec, err := compact(part, batchRows, d.mem)
	if err != nil {
		return err
	}
	defer rec.Release()
	return s.w.Write(rec)
}

// limitBuffered writes out the largest row groups while the open writers
// hold more than the buffer limit, down to half of it so that flushes come
// in bursts rather than once per batch.
func (d *distributor) limitBuffered() error {
	all := slices.Clone(d.rr)
	for _, s := range d.slots {
		all = append(all, s)
	}
	held := make(map[*slot]int64, len(all))
	var total int64
	for _, s := range all {
		held[s] = s.w.Buffered()
		total += held[s]
	}
	if total <= d.p.layout.MaxBufferedBytes {
		return nil
	}
	slices.SortFunc(all, func(a, b *slot) int { return cmp.Compare(held[b], held[a]) })
	for _, s := range all {
		if total <= d.p.layout.MaxBufferedBytes/2 {
			break
		}
		if err := s.w.Flush(); err != nil {
			return err
		}
		total -= held[s]
	}
	return nil
}

// buffer keeps a partition's rows for sorting.
func (d *distributor) buffer(part transform.Partition, batchRows int64) error {
	rec, err := compact(part, batchRows, d.mem)
	if err != nil {
		return err
	}
	b := d.bufs[part.Key]
	if b == nil {
		b = &pending{values: part.Values}
		d.bufs[part.Key] = b
		d.bufOrder = append(d.bufOrder, part.Key)
	}
	n := parquet.RecordBytes(rec)
	b.recs = append(b.recs, rec)
	b.bytes += n
	d.buffered += n
	for d.buffered > d.p.layout.MaxBufferedBytes && len(d.bufs) > 0 {
		if d.p.layout.Mode == layout.Range || d.clustered() {
			// Range: everything buffered goes out together, so files
			// written at one time hold disjoint key ranges.
			for _, k := range slices.Clone(d.bufOrder) {
				if err := d.flush(k, false); err != nil {
					return err
				}
			}
			continue
		}
		largest := ""
		for _, k := range d.bufOrder {
			if largest == "" || d.bufs[k].bytes > d.bufs[largest].bytes {
				largest = k
			}
		}
		if err := d.flush(largest, false); err != nil {
			return err
		}
	}
	return nil
}

// flush sorts a partition's buffer and writes it into files of its own.
// A flush forced by the buffer limit waits for the files; the final flush
// leaves them encoding in parallel (closed by finish). A large final
// unpartitioned buffer is cut into one contiguous run per core. Sorted
// rows are gathered gatherRows at a time, taking turns between the runs,
// so the buffer is held once and the runs' writers encode at once.
func (d *distributor) flush(key string, final bool) error {
	b := d.bufs[key]
	delete(d.bufs, key)
	d.bufOrder = slices.DeleteFunc(d.bufOrder, func(k string) bool { return k == key })
	d.buffered -= b.bytes
	rows, err := layout.NewRows(b.recs, d.mem)
	b.recs = nil
	if err != nil {
		return err
	}
	defer rows.Release()
	// The buffer is held until its last piece is written: the garbage of
	// sorting and gathering around it is collected early (gctune.Hold).
	defer gctune.Hold(b.bytes)()
	var order arrow.Array // nil: rows in their order
	if d.p.sorter != nil {
		if order, err = d.p.sorter.Order(d.ctx, rows.Batches, d.mem); err != nil {
			return err
		}
		defer order.Release()
	}
	runs := int64(1)
	if final && d.p.Spec.IsUnpartitioned() && b.bytes > spreadAfterBytes {
		runs = int64(Workers())
	}
	n := rows.NumRows()
	type run struct {
		s      *slot
		lo, hi int64
	}
	var open []run
	for i := range runs {
		lo, hi := n*i/runs, n*(i+1)/runs
		if lo == hi {
			continue
		}
		s, err := d.newSlot(key, b.values)
		if err != nil {
			return err
		}
		d.closing = append(d.closing, s)
		open = append(open, run{s, lo, hi})
	}
	for len(open) > 0 {
		for i := 0; i < len(open); i++ {
			r := &open[i]
			var piece arrow.RecordBatch
			if order == nil { // the rest of the batch holding row lo
				piece = rows.InOrder(r.lo, r.hi)
				r.lo += piece.NumRows()
			} else {
				hi := min(r.hi, r.lo+gatherRows)
				idx := array.NewSlice(order, r.lo, hi)
				piece, err = rows.Gather(d.ctx, idx, d.mem)
				idx.Release()
				if err != nil {
					return err
				}
				r.lo = hi
			}
			err := r.s.w.Write(piece)
			piece.Release()
			if err != nil {
				return err
			}
			if r.lo == r.hi {
				open = slices.Delete(open, i, i+1)
				i--
			}
		}
	}
	if final {
		return nil
	}
	return d.closeWaiting()
}

// gatherRows is the rows of a sorted buffer copied into order at a time.
const gatherRows = 1 << 16

// closeWaiting closes the writers of finished buffers.
func (d *distributor) closeWaiting() error {
	var err error
	for _, s := range d.closing {
		err = errors.Join(err, d.collect(s))
	}
	d.closing = nil
	return err
}

// collect closes a writer and records its files (all paths, so a failed
// write can delete them).
func (d *distributor) collect(s *slot) error {
	files, err := s.w.Close()
	for _, f := range files {
		d.out.Paths = append(d.out.Paths, f.Path)
		if err != nil {
			continue
		}
		wf := WrittenFile{File: f, Values: s.values}
		if d.p.sorter != nil && !d.p.foreignOrder {
			wf.SortOrderID = d.p.sorter.OrderID()
		}
		d.out.Files = append(d.out.Files, wf)
		d.out.Rows += f.Rows
		d.out.Bytes += f.Size
		d.w.Prog.Files.Add(1)
	}
	return err
}

// finish writes what is buffered, closes every writer and returns the
// files; on error it deletes them.
func (d *distributor) finish() (Written, error) {
	var err error
	if len(d.held) > 0 {
		err = d.routeHeld()
	}
	for _, k := range slices.Clone(d.bufOrder) {
		if err != nil {
			break
		}
		if err = d.flush(k, true); err != nil {
			break
		}
	}
	if err == nil {
		// Every writer finishes its last pages and writes its buffered row
		// group at once; collecting them one by one without this ran the
		// ends of the files in turn, on one core.
		for _, s := range d.closing {
			s.w.Drain()
		}
		for _, s := range d.rr {
			s.w.Drain()
		}
		for _, s := range d.slots {
			s.w.Drain()
		}
	}
	err = errors.Join(err, d.closeWaiting())
	for _, s := range d.rr {
		err = errors.Join(err, d.collect(s))
	}
	keys := make([]string, 0, len(d.slots))
	for k := range d.slots {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		err = errors.Join(err, d.collect(d.slots[k]))
	}
	d.rr, d.slots = nil, map[string]*slot{}
	if err == nil {
		err = d.ctx.Err()
	}
	if err != nil {
		d.abort()
		if errors.Is(err, context.Canceled) {
			return Written{}, fmt.Errorf("%w: %v", errs.ErrCancelled, err)
		}
		return Written{}, err
	}
	return d.out, nil
}

// abort stops every writer and deletes every file written.
func (d *distributor) abort() {
	paths := d.out.Paths
	for _, s := range d.rr {
		paths = append(paths, s.w.Abort()...)
	}
	for _, s := range d.slots {
		paths = append(paths, s.w.Abort()...)
	}
	for _, s := range d.closing {
		paths = append(paths, s.w.Abort()...)
	}
	for _, b := range d.bufs {
		ReleaseAll(b.recs)
	}
	ReleaseAll(d.held)
	d.held, d.heldLent = nil, nil
	d.rr, d.slots, d.closing, d.bufs, d.bufOrder = nil, map[string]*slot{}, nil, map[string]*pending{}, nil
	d.out = Written{}
	d.w.DeleteFiles(context.WithoutCancel(d.ctx), d.p, paths)
}

// sharesMemory reports whether every buffer of out's columns lies in the
// memory of in's (a conformed batch that converted nothing); false for
// nested columns, which are not looked into.
func sharesMemory(out, in arrow.RecordBatch) bool {
	var spans [][2]uintptr
	for _, c := range in.Columns() {
		for _, b := range c.Data().Buffers() {
			if b != nil && b.Len() > 0 {
				p := uintptr(unsafe.Pointer(unsafe.SliceData(b.Bytes())))
				spans = append(spans, [2]uintptr{p, p + uintptr(b.Len())})
			}
		}
	}
	for _, c := range out.Columns() {
		if len(c.Data().Children()) > 0 {
			return false
		}
		for _, b := range c.Data().Buffers() {
			if b == nil || b.Len() == 0 {
				continue
			}
			p := uintptr(unsafe.Pointer(unsafe.SliceData(b.Bytes())))
			if !slices.ContainsFunc(spans, func(s [2]uintptr) bool { return p >= s[0] && p+uintptr(b.Len()) <= s[1] }) {
				return false
			}
		}
	}
	return true
}

// compact returns part's record, or a copy of it when it is a small slice of
// a large batch: a kept slice would pin the whole batch it came from (many
// partitions would pin many batches). The caller releases the result.
func compact(p transform.Partition, batchRows int64, mem memory.Allocator) (arrow.RecordBatch, error) {
	part := p.Record
	if p.Owned || part.NumRows()*4 > batchRows {
		part.Retain()
		return part, nil
	}
	cols := make([]arrow.Array, part.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, col := range part.Columns() {
		c, err := array.Concatenate([]arrow.Array{col}, mem)
		if err != nil {
			return nil, fmt.Errorf("%w: copying a partition: %v", errs.ErrInvalidArgument, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(part.Schema(), cols, part.NumRows()), nil
}
