// Package scan reads tables back: the current snapshot or a given one.
package scan

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// Read returns the rows of the table at req.SnapshotID (default: current),
// with buffers from mem (the C ABI passes the C allocator so that exported
// buffers never live in Go memory).
func Read(ctx context.Context, s *session.Session, req *request.Request, mem memory.Allocator) (array.RecordReader, error) {
	t, refSnap, err := ops.LoadRef(ctx, s, req.Table)
	if err != nil {
		return nil, err
	}
	var opts []table.ScanOption
	if refSnap != nil {
		// db.t.branch_x / db.t.tag_x: the ref's snapshot.
		if req.SnapshotID != nil {
			return nil, fmt.Errorf("%w: %s names a branch or tag; it cannot be read at snapshot_id too", errs.ErrInvalidArgument, req.Table)
		}
		opts = append(opts, table.WithSnapshotID(*refSnap))
	}
	if req.SnapshotID != nil {
		if t.Metadata().SnapshotByID(*req.SnapshotID) == nil {
			return nil, fmt.Errorf("%w: table %s has no snapshot %d", errs.ErrInvalidArgument, req.Table, *req.SnapshotID)
		}
		opts = append(opts, table.WithSnapshotID(*req.SnapshotID))
	}
	if len(req.Columns) > 0 {
		for _, c := range req.Columns {
			if _, ok := t.Schema().FindFieldByName(c); !ok {
				return nil, fmt.Errorf("%w: column %q is not in table %s", errs.ErrValidation, c, req.Table)
			}
		}
		opts = append(opts, table.WithSelectedFields(req.Columns...))
	}
	ctx = compute.WithAllocator(ctx, mem)
	tbl, err := t.Scan(opts...).ToArrowTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, req.Table, err)
	}
	defer tbl.Release()
	return array.NewTableReader(tbl, 1<<16), nil
}
