package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/maintenance"
	"github.com/pyiceberg-go/pyiceberg-go/core/refs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
	"github.com/pyiceberg-go/pyiceberg-go/core/stream"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// FilesResult is what write_files returns: the descriptions of the data
// files one task attempt wrote, for the coordinator's commit_files.
type FilesResult struct {
	Table   string             `json:"table"`
	WriteID string             `json:"write_id"`
	Task    int64              `json:"task"`
	Attempt int64              `json:"attempt"`
	Files   []request.DataFile `json:"files"`
	Metrics Metrics            `json:"metrics"`
	// Skipped: the write's streaming batch is committed already; nothing
	// was written.
	Skipped     bool   `json:"skipped,omitempty"`
	LastBatchID *int64 `json:"last_batch_id,omitempty"`
}

// CommitResult is what commit_files returns: the operation's result and
// the files of the write that were not committed and were deleted (those
// of retried or abandoned attempts; all of them when nothing committed).
type CommitResult struct {
	*Result
	DeletedFilesCount int      `json:"deleted_files_count"`
	FailedDeletes     []string `json:"failed_deletes"`
}

// AbortResult is what abort_files returns.
type AbortResult struct {
	Table             string   `json:"table"`
	WriteID           string   `json:"write_id"`
	DeletedFilesCount int      `json:"deleted_files_count"`
	FailedDeletes     []string `json:"failed_deletes"`
}

// distributed runs one part of a distributed write (write_files,
// commit_files, abort_files) as its mode's operation would run on one
// machine; core/write holds the file descriptions and their checks.
func distributed(ctx context.Context, s *session.Session, cat *catalog.Catalog, id request.Identifier, sel refs.Selector, req *request.Request, input array.RecordReader, prog *Progress) (any, error) {
	d := req.Distributed
	mreq := *req
	mreq.Op, mreq.Distributed = d.Mode, nil
	newShape := d.Mode == request.OpCreate || d.Mode == request.OpReplace || d.Mode == request.OpCreateOrReplace
	switch {
	case req.Op == request.OpWriteFiles && input == nil:
		return nil, fmt.Errorf("%w: write_files needs the task's input data", errs.ErrInvalidArgument)
	case req.Op == request.OpCommitFiles && newShape && input == nil:
		return nil, fmt.Errorf("%w: commit_files of a %s needs an input stream with the data's schema (its rows are not read)", errs.ErrInvalidArgument, d.Mode)
	case req.Op == request.OpCommitFiles && !newShape && input != nil:
		return nil, fmt.Errorf("%w: commit_files of %s takes no input stream", errs.ErrInvalidArgument, d.Mode)
	case req.Op == request.OpAbortFiles && input != nil:
		return nil, fmt.Errorf("%w: abort_files takes no input stream", errs.ErrInvalidArgument)
	}
	w := write.New(s, cat, id, &mreq, input, prog)
	w.WriteID = d.WriteID
	if sel.Kind == "branch" {
		w.Target = stage.Target{Branch: sel.Name, Explicit: true}
	}
	switch req.Op {
	case request.OpWriteFiles:
		return writeFiles(ctx, w, d)
	case request.OpCommitFiles:
		return commitFiles(ctx, w, d)
	}
	return abortFiles(ctx, w, d)
}

// writeFiles plans the write as its mode's operation and writes the
// task's input to files named after the write, the task and the attempt.
func writeFiles(ctx context.Context, w *write.Writer, d *request.Distributed) (any, error) {
	naming := write.FileNaming{WriteID: d.WriteID, Task: *d.Task, Attempt: *d.Attempt}
	w.Naming = &naming
	res := &FilesResult{Table: w.ID.String(), WriteID: d.WriteID, Task: naming.Task, Attempt: naming.Attempt, Files: []request.DataFile{}}
	_, existing, p, err := w.Prepare(ctx)
	if err != nil {
		return nil, err
	}
	if p.Evolution != nil {
		return nil, fmt.Errorf("%w: mergeSchema in a distributed write (evolve the schema first, then write)", errs.ErrNotSupported)
	}
	if existing != nil {
		if err := w.CheckStream(existing.Metadata()); err != nil {
			if a, ok := stream.Skipped(err); ok {
				last := a.Last.BatchID
				res.Skipped, res.LastBatchID = true, &last
				return res, nil
			}
			return nil, err
		}
	}
	// A task of a write that has ended writes nothing (see write.Ended);
	// one that ends while it writes deletes what it wrote.
	if err := w.EndedIn(ctx, existing); err != nil {
		return nil, err
	}
	wr, err := w.WriteData(ctx, p, w.Input)
	if err != nil {
		return nil, err
	}
	files, err := write.Describe(p, wr, naming)
	if err == nil {
		err = w.Ended(ctx)
	}
	if err != nil {
		w.DeleteFiles(ctx, p, wr.Paths)
		return nil, err
	}
	res.Files = files
	res.Metrics = Metrics{Rows: wr.Rows, Files: int64(len(wr.Files)), Bytes: wr.Bytes, Seconds: time.Since(w.Start).Seconds()}
	return res, nil
}

// commitFiles commits the tasks' files as one snapshot of the write's
// mode, then deletes the write's files that were not committed: those of
// other attempts, or all of them when the commit failed for sure.
func commitFiles(ctx context.Context, w *write.Writer, d *request.Distributed) (any, error) {
	w.Prewritten = &write.Prewritten{WriteID: d.WriteID, Files: d.Files}
	res, err := run(ctx, w)
	res, err = skipped(w, res, err)
	if err != nil {
		var done *write.AlreadyCommittedError
		if errors.Is(err, errs.ErrCommitStateUnknown) || errors.As(err, &done) {
			// The files may be (or are) the table's: leave them.
			return nil, err
		}
		// The write ends: a task still running deletes its own files.
		_ = w.MarkAborted(context.WithoutCancel(ctx))
		_, _, _ = removeWriteFiles(ctx, w, d, nil)
		return nil, err
	}
	out := &CommitResult{Result: res.(*Result)}
	keep := map[string]bool{}
	if out.SnapshotID != nil {
		for _, f := range d.Files {
			keep[f.FilePath] = true
		}
	}
	out.DeletedFilesCount, out.FailedDeletes, _ = removeWriteFiles(ctx, w, d, keep)
	if out.FailedDeletes == nil {
		out.FailedDeletes = []string{}
	}
	return out, nil
}

// abortFiles deletes every file of a write that is not committed.
func abortFiles(ctx context.Context, w *write.Writer, d *request.Distributed) (any, error) {
	if t, err := w.Cat.LoadTable(ctx, w.Ident); err == nil {
		if id, ok := write.CommittedWrite(t.Metadata(), d.WriteID); ok {
			return nil, fmt.Errorf("%w: write %s is committed (snapshot %d): its files are the table's", errs.ErrValidation, d.WriteID, id)
		}
	}
	// Recorded before the listing, so a task still running either sees it
	// (and deletes its own files) or closed its files before the listing.
	if err := w.MarkAborted(ctx); err != nil {
		return nil, err
	}
	n, failed, err := removeWriteFiles(ctx, w, d, nil)
	if err != nil {
		return nil, err
	}
	if failed == nil {
		failed = []string{}
	}
	return &AbortResult{Table: w.ID.String(), WriteID: d.WriteID, DeletedFilesCount: n, FailedDeletes: failed}, nil
}

// removeWriteFiles deletes the files of the write in its data folder
// (named after its write id) except keep; on storage that cannot list,
// the described files only.
func removeWriteFiles(ctx context.Context, w *write.Writer, d *request.Distributed, keep map[string]bool) (int, []string, error) {
	ctx = context.WithoutCancel(ctx)
	root, props, err := w.WriteRoot(ctx)
	if err != nil {
		return 0, nil, err
	}
	var extra []string
	for _, f := range d.Files {
		if root.Check(f.FilePath) == nil {
			extra = append(extra, f.FilePath)
		}
	}
	lfs, err := catalog.OpenFS(ctx, catalog.FileIOProps(w.Cat.Props, props), root.String())
	if err != nil {
		return 0, nil, fmt.Errorf("%w: opening %s: %v", errs.ErrIO, root, err)
	}
	wfs, err := w.Cat.WriteFS(ctx, props, root.String())
	if err != nil {
		return 0, nil, err
	}
	names := write.WriteFileName(d.WriteID)
	return maintenance.RemoveMatching(lfs, wfs, root.String(), nil, names.MatchString, keep, extra)
}
