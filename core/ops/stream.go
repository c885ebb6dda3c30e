package ops

import (
	"context"
	"fmt"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/microbatch"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// streamOffset plans the next micro-batch of a table read as a stream:
// the start it resolved (the stream's first when the request gives none)
// and the end its limits allow (null: nothing new).
func streamOffset(ctx context.Context, cat *catalog.Catalog, id request.Identifier, req *request.Request) (any, error) {
	t, err := cat.LoadTable(ctx, catalog.TableIdent(id))
	if err != nil {
		return nil, catalog.MapErr(err, id)
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, id, err)
	}
	mb := req.MicroBatch
	st := &microbatch.Stream{Meta: t.Metadata(), FS: fs, FromTimestampMs: mb.FromTimestampMs, SkipOverwrite: mb.SkipOverwriteSnapshots, SkipDelete: mb.SkipDeleteSnapshots}
	start := mb.Start
	if start == nil {
		start = st.Start()
	}
	end, err := st.Latest(ctx, mb.Start, microbatch.Limits{MaxFiles: mb.MaxFiles, MaxRows: mb.MaxRows}, mb.UntilSnapshotID)
	if err != nil {
		return nil, err
	}
	var head *int64
	if sn := t.CurrentSnapshot(); sn != nil {
		head = &sn.SnapshotID
	}
	return map[string]any{"table": id.String(), "start": start, "end": end, "head_snapshot_id": head}, nil
}
