package write

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/paths"
)

// The fence of a distributed write. A write ends when it commits (the
// table records its write id) or when it is aborted (abort_files, or a
// commit_files that failed), and ending it deletes the write's files it
// did not commit, found by listing the data folder. A task still running
// then (a straggler of a failed job, a speculative or retried attempt)
// would finish after that listing and leave its files behind, so a task
// checks, after its files are closed, whether the write has ended, and
// deletes them itself if it has. An abort records itself in a marker
// object before it lists (MarkAborted), and a commit is recorded before
// its clean-up lists; so either the task's check sees the end, or its
// files were closed before the end's listing and that listing finds them.

// abortMarker is the object that records that write writeID was aborted,
// in the metadata folder of the table at loc: <write id>.aborted. It is
// not a table file, so remove_orphan_files collects it once it is older
// than its older_than.
func abortMarker(loc string, props map[string]string, writeID string) (paths.Root, string, error) {
	root := paths.MetadataRoot(loc, props)
	name, err := root.File(writeID + ".aborted")
	return root, name, err
}

// MarkAborted records that the write ended without a commit. It is
// written before the write's files are listed and deleted.
func (w *Writer) MarkAborted(ctx context.Context) error {
	t, err := w.loadIfExists(ctx)
	if err != nil {
		return err
	}
	loc, props, err := w.writeLocation(ctx, t)
	if err != nil {
		return err
	}
	root, name, err := abortMarker(loc, props, w.WriteID)
	if err != nil {
		return err
	}
	wfs, err := w.Cat.WriteFS(ctx, props, root.String())
	if err != nil {
		return err
	}
	if err := wfs.WriteFile(name, []byte("aborted\n")); err != nil {
		return fmt.Errorf("%w: recording that write %s is aborted: %v", errs.ErrIO, w.WriteID, err)
	}
	return nil
}

// WriteEndedError says a task of a distributed write ran after the write
// had ended (an errs.ErrValidation); its files are deleted.
type WriteEndedError struct {
	WriteID string
	// SnapshotID is the snapshot that committed the write; 0 when it
	// was aborted.
	SnapshotID int64
}

func (e *WriteEndedError) Error() string {
	if e.SnapshotID != 0 {
		return fmt.Sprintf("%v: write %s ended before this task did: it is committed (snapshot %d) without this task, whose files are deleted", errs.ErrValidation, e.WriteID, e.SnapshotID)
	}
	return fmt.Sprintf("%v: write %s ended before this task did: it is aborted, and this task's files are deleted (a new write needs a new write id)", errs.ErrValidation, e.WriteID)
}

// Unwrap makes the error an errs.ErrValidation.
func (e *WriteEndedError) Unwrap() error { return errs.ErrValidation }

// Ended returns a *WriteEndedError when the write has ended (committed or
// aborted), nil while it is open.
func (w *Writer) Ended(ctx context.Context) error {
	t, err := w.loadIfExists(ctx)
	if err != nil {
		return err
	}
	return w.EndedIn(ctx, t)
}

// EndedIn is Ended for the table t loaded already (nil: it does not exist).
func (w *Writer) EndedIn(ctx context.Context, t *table.Table) error {
	if t != nil {
		if id, ok := CommittedWrite(t.Metadata(), w.WriteID); ok {
			return &WriteEndedError{WriteID: w.WriteID, SnapshotID: id}
		}
	}
	aborted, err := w.abortedIn(ctx, t)
	if err != nil {
		return err
	}
	if aborted {
		return &WriteEndedError{WriteID: w.WriteID}
	}
	return nil
}

// abortedIn reports whether the write's abort marker exists in the
// metadata folder of t (nil: the table does not exist).
func (w *Writer) abortedIn(ctx context.Context, t *table.Table) (bool, error) {
	loc, props, err := w.writeLocation(ctx, t)
	if err != nil {
		return false, err
	}
	root, name, err := abortMarker(loc, props, w.WriteID)
	if err != nil {
		return false, err
	}
	lfs, err := catalog.OpenFS(ctx, catalog.FileIOProps(w.Cat.Props, props), root.String())
	if err != nil {
		return false, fmt.Errorf("%w: opening %s: %v", errs.ErrIO, root, err)
	}
	f, err := lfs.Open(name)
	switch {
	case err == nil:
		_ = f.Close()
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("%w: checking whether write %s is aborted: %v", errs.ErrIO, w.WriteID, err)
}
