package rowlevel

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// scope says which concurrent changes conflict with an operation.
type scope struct {
	// name describes the scope in error messages ("the replaced partitions").
	name string
	// newData: a data file added concurrently that conflicts under
	// serializable isolation.
	newData func(df iceberg.DataFile) bool
	// deletesIn: a data file removed, or a delete file added, concurrently
	// that conflicts under snapshot and serializable isolation.
	deletesIn func(df iceberg.DataFile) bool
	// rewritten are the data files this operation read and drops. A
	// concurrent removal of one of them, or a delete file on one of them,
	// conflicts at every level: committing would undo that delete.
	rewritten map[string]bool
	// eqDeletesApply: the files that replace the rewritten ones keep the
	// data sequence number of the snapshot the operation started from, so
	// a concurrent equality delete still applies to their rows and does
	// not conflict (compaction with use-starting-sequence-number).
	eqDeletesApply bool
}

// validateIsolation checks the snapshots committed on the target branch after from (the
// snapshot the operation started from, or validate-from-snapshot-id) for
// changes that conflict with sc at level. A conflict is final: retrying
// cannot resolve it.
func (w *writer) validateIsolation(ctx context.Context, t *table.Table, from *table.Snapshot, level string, sc scope) error {
	if level == write.IsolationNone && len(sc.rewritten) == 0 {
		return nil
	}
	m := t.Metadata()
	var fromID *int64
	if from != nil {
		fromID = &from.SnapshotID
	}
	concurrent, err := w.committedSince(m, fromID, "the operation")
	if err != nil {
		return err
	}
	if len(concurrent) == 0 {
		return nil
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return fmt.Errorf("%w: opening the table's files: %v", errs.ErrIO, err)
	}
	for i := len(concurrent) - 1; i >= 0; i-- {
		sn := concurrent[i]
		op := "unknown"
		if sn.Summary != nil {
			op = string(sn.Summary.Operation)
		}
		conflict := func(what string) error {
			return commit.Final(fmt.Errorf("%w: concurrent snapshot %d (%s) %s", errs.ErrCommitConflict, sn.SnapshotID, op, what))
		}
		manifests, err := sn.Manifests(fs)
		if err != nil {
			return fmt.Errorf("%w: reading snapshot %d: %v", errs.ErrIO, sn.SnapshotID, err)
		}
		for _, mf := range manifests {
			if mf.SnapshotID() != sn.SnapshotID {
				continue
			}
			for e, err := range mf.Entries(fs, false) {
				if err != nil {
					return fmt.Errorf("%w: reading manifest %s: %v", errs.ErrIO, mf.FilePath(), err)
				}
				if e.SnapshotID() != sn.SnapshotID || e.Status() == iceberg.EntryStatusEXISTING {
					continue
				}
				df := e.DataFile()
				added := e.Status() == iceberg.EntryStatusADDED
				switch {
				case df.ContentType() == iceberg.EntryContentData && added:
					if level == write.IsolationSerializable && sc.newData != nil && sc.newData(df) {
						return conflict(fmt.Sprintf("added data file %s that may hold rows in %s", df.FilePath(), sc.name))
					}
				case df.ContentType() == iceberg.EntryContentData:
					if sc.rewritten[df.FilePath()] {
						return conflict(fmt.Sprintf("removed data file %s, which this operation rewrites", df.FilePath()))
					}
					if level != write.IsolationNone && sc.deletesIn != nil && sc.deletesIn(df) {
						return conflict(fmt.Sprintf("removed data file %s in %s", df.FilePath(), sc.name))
					}
				case added:
					if sc.eqDeletesApply && df.ContentType() == iceberg.EntryContentEqDeletes {
						continue
					}
					if path, ok := deletesFrom(df, sc.rewritten); ok {
						return conflict(fmt.Sprintf("deleted rows of data file %s, which this operation rewrites", path))
					}
					if level != write.IsolationNone && sc.deletesIn != nil && sc.deletesIn(df) {
						return conflict(fmt.Sprintf("added delete file %s in %s", df.FilePath(), sc.name))
					}
				}
			}
		}
	}
	return nil
}

// Field ids of a position delete file's columns (spec: reserved ids).
const (
	posDeleteFilePathID = 2147483546
)

// deletesFrom reports whether delete file df may delete rows of one of the
// files in paths, and which.
func deletesFrom(df iceberg.DataFile, paths map[string]bool) (string, bool) {
	if len(paths) == 0 {
		return "", false
	}
	if ref := df.ReferencedDataFile(); ref != nil && *ref != "" {
		return *ref, paths[*ref]
	}
	if df.ContentType() == iceberg.EntryContentPosDeletes {
		lo, hi := df.LowerBoundValues()[posDeleteFilePathID], df.UpperBoundValues()[posDeleteFilePathID]
		for p := range paths {
			if (lo == nil || string(lo) <= p) && (hi == nil || p <= string(hi)) {
				return p, true
			}
		}
		return "", false
	}
	// An equality delete may match rows of any file it is not sequenced
	// before: be conservative.
	for p := range paths {
		return p, true
	}
	return "", false
}

// committedSince lists the snapshots of the target branch committed after
// snapshot fromID (all of them when nil), newest first. A fromID that is no
// longer an ancestor of the branch's head is a final conflict, naming what
// started from it.
func (w *writer) committedSince(m table.Metadata, fromID *int64, what string) ([]*table.Snapshot, error) {
	var out []*table.Snapshot
	for cur := w.Head(m); ; {
		if cur == nil {
			if fromID != nil {
				return nil, commit.Final(fmt.Errorf("%w: snapshot %d that %s started from is no longer an ancestor of branch %s", errs.ErrCommitConflict, *fromID, what, w.BranchName()))
			}
			return out, nil
		}
		if fromID != nil && cur.SnapshotID == *fromID {
			return out, nil
		}
		out = append(out, cur)
		if cur.ParentSnapshotID == nil {
			cur = nil
		} else {
			cur = m.SnapshotByID(*cur.ParentSnapshotID)
		}
	}
}
