// Package microbatch plans a table read as a stream: the offsets of
// Spark's Iceberg streaming source (a snapshot of main's history and a
// position among the data files that snapshot added), how far one
// micro-batch goes under the read limits, and the data files between two
// offsets.
//
// The rules are Spark's (SparkMicroBatchStream with its synchronous
// planner, MicroBatches): a stream starts at the oldest ancestor of main's
// head, or at the oldest one committed at or after stream-from-timestamp;
// it reads the data files each append snapshot added, in the order of the
// snapshot's own manifests and their entries; replace snapshots
// (compactions) are passed over; an overwrite or delete snapshot stops the
// stream unless it is told to pass over them. max_files is a hard limit
// per micro-batch, max_rows a soft one (a batch always takes whole files,
// and at least one), and the first reached ends the batch. Positions are
// counted as Spark counts them, so a batch holds the files Spark's batch
// with the same options holds.
//
// It reads manifests only; core/scan reads the files' rows.
package microbatch

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/refs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// Offset is a position in a table's stream (request.Offset, Spark's
// StreamingOffset). A nil *Offset is the start of a table with no data to
// stream yet (Spark's START_OFFSET).
type Offset = request.Offset

// Limits bound one micro-batch; zero means no limit.
type Limits struct {
	MaxFiles int64
	MaxRows  int64
}

// Stream is a table's stream under one set of read options.
type Stream struct {
	Meta table.Metadata
	FS   iceio.IO
	// FromTimestampMs is stream-from-timestamp (nil: from the oldest
	// ancestor).
	FromTimestampMs *int64
	SkipOverwrite   bool
	SkipDelete      bool
}

// Start is where a new stream begins (Spark's determineStartingOffset):
// nil when main has no snapshot or none at or after FromTimestampMs.
func (s *Stream) Start() *Offset {
	head := s.Meta.CurrentSnapshot()
	if head == nil {
		return nil
	}
	if s.FromTimestampMs == nil {
		return &Offset{SnapshotID: s.oldestAncestor().SnapshotID}
	}
	if head.TimestampMs < *s.FromTimestampMs {
		return nil
	}
	if sn := s.oldestAncestorAfter(*s.FromTimestampMs); sn != nil {
		return &Offset{SnapshotID: sn.SnapshotID}
	}
	return &Offset{SnapshotID: s.oldestAncestor().SnapshotID}
}

// Latest is the end of the next micro-batch after start (nil: the start of
// the stream) under lim, going no further than snapshot until when it is
// not nil (Trigger.AvailableNow's end, fixed when the query starts). It is
// nil when there is nothing new.
func (s *Stream) Latest(ctx context.Context, start *Offset, lim Limits, until *int64) (*Offset, error) {
	head := s.Meta.CurrentSnapshot()
	if head == nil || (s.FromTimestampMs != nil && head.TimestampMs < *s.FromTimestampMs) {
		return nil, nil
	}
	from := start
	if from == nil {
		if from = s.Start(); from == nil {
			return nil, nil
		}
	}
	cur, err := s.snapshot(from)
	if err != nil {
		return nil, err
	}
	latest := head.SnapshotID
	if until != nil {
		latest = *until
	}
	maxFiles, maxRows := int64(math.MaxInt32), int64(math.MaxInt32)
	if lim.MaxFiles > 0 {
		maxFiles = lim.MaxFiles
	}
	if lim.MaxRows > 0 {
		maxRows = lim.MaxRows
	}
	startPos := from.Position
	scanAll := from.ScanAllFiles
	more := true
	var files, rows, pos int64
	for more {
		manifests, err := s.indexed(cur, startPos, scanAll)
		if err != nil {
			return nil, err
		}
		for _, im := range manifests {
			if !more {
				break
			}
			pos = im.index
			files, rows, pos, more, err = s.admit(ctx, cur, im.m, scanAll, startPos, pos, files, rows, maxFiles, maxRows)
			if err != nil {
				return nil, err
			}
		}
		if cur.SnapshotID == latest {
			break
		}
		if more {
			next, err := s.nextValid(cur, latest)
			if err != nil {
				return nil, err
			}
			if next == nil {
				break
			}
			cur, startPos, scanAll = next, -1, false
		}
	}
	end := &Offset{SnapshotID: cur.SnapshotID, Position: pos, ScanAllFiles: scanAll}
	if end.SnapshotID == from.SnapshotID && end.Position == from.Position && end.ScanAllFiles == from.ScanAllFiles {
		return nil, nil
	}
	return end, nil
}

// admit walks one manifest's files from position pos, taking those at or
// after startPos while the limits allow; it returns the counts, the
// position after the last file taken and whether to go on.
func (s *Stream) admit(ctx context.Context, sn *table.Snapshot, m iceberg.ManifestFile, scanAll bool, startPos, pos, files, rows, maxFiles, maxRows int64) (int64, int64, int64, bool, error) {
	for e, err := range m.Entries(s.FS, true) {
		if err != nil {
			return 0, 0, 0, false, fmt.Errorf("%w: reading manifest %s: %v", errs.ErrIO, m.FilePath(), err)
		}
		if ctx.Err() != nil {
			return 0, 0, 0, false, fmt.Errorf("%w: %v", errs.ErrCancelled, ctx.Err())
		}
		if !takes(sn, e, scanAll) {
			continue
		}
		if pos >= startPos {
			if files+1 > maxFiles {
				return files, rows, pos, false, nil
			}
			files++
			rows += e.DataFile().Count()
			if rows >= maxRows {
				return files, rows, pos + 1, false, nil
			}
		}
		pos++
	}
	return files, rows, pos, true, nil
}

// Files are the data files of the micro-batch (start, end]: from start
// (nil: the stream's start) up to, not including, end's position in end's
// snapshot, in stream order. An overwrite or delete snapshot in the range
// is an error unless passed over.
func (s *Stream) Files(ctx context.Context, start *Offset, end Offset) ([]iceberg.DataFile, error) {
	from := start
	if from == nil {
		if from = s.Start(); from == nil {
			return nil, nil
		}
	}
	var out []iceberg.DataFile
	cur := *from
	for first := true; first || cur.SnapshotID != end.SnapshotID; first = false {
		if !first {
			after, err := s.snapshotAfter(cur.SnapshotID)
			if err != nil {
				return nil, err
			}
			cur = Offset{SnapshotID: after.SnapshotID}
		}
		sn, err := s.snapshot(&cur)
		if err != nil {
			return nil, err
		}
		ok, err := s.process(sn)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		stop := int64(math.MaxInt64)
		if cur.SnapshotID == end.SnapshotID {
			stop = end.Position
		}
		got, err := s.between(ctx, sn, cur.Position, stop, cur.ScanAllFiles)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// between lists the files of sn at positions [from, to).
func (s *Stream) between(ctx context.Context, sn *table.Snapshot, from, to int64, scanAll bool) ([]iceberg.DataFile, error) {
	manifests, err := s.indexed(sn, from, scanAll)
	if err != nil {
		return nil, err
	}
	var out []iceberg.DataFile
	for _, im := range manifests {
		pos := im.index
		if pos >= to {
			break
		}
		for e, err := range im.m.Entries(s.FS, true) {
			if err != nil {
				return nil, fmt.Errorf("%w: reading manifest %s: %v", errs.ErrIO, im.m.FilePath(), err)
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %v", errs.ErrCancelled, ctx.Err())
			}
			if !takes(sn, e, scanAll) {
				continue
			}
			if pos >= from && pos < to {
				out = append(out, e.DataFile())
			}
			pos++
			if pos >= to {
				break
			}
		}
	}
	return out, nil
}

// takes says whether entry e is one of sn's stream files: an entry sn
// added, or with scanAll every live entry.
func takes(sn *table.Snapshot, e iceberg.ManifestEntry, scanAll bool) bool {
	if scanAll {
		return true
	}
	return e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == sn.SnapshotID
}

type indexedManifest struct {
	m     iceberg.ManifestFile
	index int64
}

// indexed lists sn's data manifests (those sn wrote unless scanAll), each
// with the position of its first file (previous manifests' added and
// existing file counts), from the one holding position from on.
func (s *Stream) indexed(sn *table.Snapshot, from int64, scanAll bool) ([]indexedManifest, error) {
	all, err := sn.Manifests(s.FS)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the manifest list of snapshot %d: %v", errs.ErrIO, sn.SnapshotID, err)
	}
	var out []indexedManifest
	var idx int64
	for _, m := range all {
		if m.ManifestContent() != iceberg.ManifestContentData || (!scanAll && m.SnapshotID() != sn.SnapshotID) {
			continue
		}
		out = append(out, indexedManifest{m: m, index: idx})
		idx += int64(m.AddedDataFiles()) + int64(m.ExistingDataFiles())
	}
	if from <= 0 {
		return out, nil
	}
	skip := 0
	for _, im := range out {
		if im.index > from {
			break
		}
		skip++
	}
	return out[max(skip-1, 0):], nil
}

// process says whether sn's files are streamed (Spark's shouldProcess):
// appends are, replaces are not, overwrites and deletes fail unless
// passed over.
func (s *Stream) process(sn *table.Snapshot) (bool, error) {
	op := table.OpAppend
	if sn.Summary != nil {
		op = sn.Summary.Operation
	}
	switch op {
	case table.OpAppend:
		return true, nil
	case table.OpReplace:
		return false, nil
	case table.OpDelete:
		if !s.SkipDelete {
			return false, fmt.Errorf("%w: Cannot process delete snapshot: %d, to ignore deletes, set streaming-skip-delete-snapshots=true", errs.ErrValidation, sn.SnapshotID)
		}
		return false, nil
	case table.OpOverwrite:
		if !s.SkipOverwrite {
			return false, fmt.Errorf("%w: Cannot process overwrite snapshot: %d, to ignore overwrites, set streaming-skip-overwrite-snapshots=true", errs.ErrValidation, sn.SnapshotID)
		}
		return false, nil
	}
	return false, fmt.Errorf("%w: Cannot process unknown snapshot operation: %s (snapshot id %d)", errs.ErrValidation, op, sn.SnapshotID)
}

// nextValid is the first snapshot after cur on main's history whose files
// are streamed, up to snapshot last (nil: none).
func (s *Stream) nextValid(cur *table.Snapshot, last int64) (*table.Snapshot, error) {
	head := s.Meta.CurrentSnapshot()
	if cur.SnapshotID == head.SnapshotID || cur.SnapshotID == last {
		return nil, nil
	}
	next, err := s.snapshotAfter(cur.SnapshotID)
	if err != nil {
		return nil, err
	}
	for {
		ok, err := s.process(next)
		if err != nil {
			return nil, err
		}
		if ok {
			return next, nil
		}
		if next.SnapshotID == head.SnapshotID || next.SnapshotID == last {
			return nil, nil
		}
		if next, err = s.snapshotAfter(next.SnapshotID); err != nil {
			return nil, err
		}
	}
}

// ancestors are main's head and its ancestors, newest first.
func (s *Stream) ancestors() []*table.Snapshot {
	return refs.Ancestors(s.Meta, s.Meta.CurrentSnapshot())
}

func (s *Stream) oldestAncestor() *table.Snapshot {
	a := s.ancestors()
	return a[len(a)-1]
}

// oldestAncestorAfter is the oldest ancestor of main's head committed at
// or after ts (nil: it cannot be told, as an expired parent may be newer).
func (s *Stream) oldestAncestorAfter(ts int64) *table.Snapshot {
	var last *table.Snapshot
	for _, sn := range s.ancestors() {
		if sn.TimestampMs < ts {
			return last
		}
		if sn.TimestampMs == ts {
			return sn
		}
		last = sn
	}
	if last != nil && last.ParentSnapshotID == nil {
		return last
	}
	return nil
}

// snapshotAfter is the child of id on main's history.
func (s *Stream) snapshotAfter(id int64) (*table.Snapshot, error) {
	if s.Meta.SnapshotByID(id) == nil {
		return nil, s.expired(id)
	}
	for _, sn := range s.ancestors() {
		if sn.ParentSnapshotID != nil && *sn.ParentSnapshotID == id {
			return sn, nil
		}
	}
	return nil, fmt.Errorf("%w: Cannot find snapshot after %d: not an ancestor of table's current snapshot", errs.ErrValidation, id)
}

func (s *Stream) snapshot(o *Offset) (*table.Snapshot, error) {
	sn := s.Meta.SnapshotByID(o.SnapshotID)
	if sn == nil {
		return nil, s.expired(o.SnapshotID)
	}
	return sn, nil
}

func (s *Stream) expired(id int64) error {
	return fmt.Errorf("%w: Cannot load current offset at snapshot %d, the snapshot was expired or removed", errs.ErrValidation, id)
}
