// Package ops is the entry point of every operation the C API runs:
// Execute resolves the table and its branch or tag suffix and dispatches a
// request to the path of its kind: writes (create, replace,
// createOrReplace, append: core/write), row-level changes (delete, update,
// overwrite, merge, overwritePartitions: core/rowlevel), ref operations
// (core/refs), metadata changes (update_table: core/evolve), the parts of a
// distributed write (write_files, commit_files, abort_files: distributed.go,
// over core/write's file descriptions), and the small catalog reads the
// callers need (here).
// Every operation is synchronous: when Execute returns, every goroutine it
// started has finished and the commit either happened or did not.
//
// It holds no write, row-level or ref logic itself; the types callers see
// (Progress, Result, RefInfo) are aliases of core/report and core/refs.
package ops

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/evolve"
	"github.com/pyiceberg-go/pyiceberg-go/core/maintenance"
	"github.com/pyiceberg-go/pyiceberg-go/core/refs"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/rowlevel"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
	"github.com/pyiceberg-go/pyiceberg-go/core/stream"
	"github.com/pyiceberg-go/pyiceberg-go/core/testhooks"
	"github.com/pyiceberg-go/pyiceberg-go/core/version"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// Version is this project's version, written as engine-version.
var Version = version.Version

// EngineName is written as engine-name in snapshot summaries.
const EngineName = version.EngineName

// Progress counts what an operation did so far; safe to read concurrently.
type Progress = report.Progress

// Result is what a write returns.
type Result = report.Result

// Metrics of a write.
type Metrics = report.Metrics

// RefInfo describes one branch or tag.
type RefInfo = refs.Info

// Execute runs a write or a catalog operation. input is consumed (and
// released) by writes; it may be nil for the others.
func Execute(ctx context.Context, s *session.Session, req *request.Request, input array.RecordReader, prog *Progress) (res any, err error) {
	if input != nil {
		defer input.Release()
	}
	if prog == nil {
		prog = &Progress{}
	}
	if req.Op == request.OpPanic {
		return nil, testhooks.Panic(s.Conf())
	}
	switch req.Op {
	case request.OpListTables:
		return listTables(ctx, s, req)
	case request.OpCreateNamespace:
		return createNamespace(ctx, s, req)
	case request.OpUse:
		return useNamespace(ctx, s, req)
	case request.OpSQL:
		return runSQL(ctx, s, req, input, prog)
	case request.OpSQLPlan:
		return planSQL(ctx, s, req, input)
	}
	id, err := s.Identifier(req.Table)
	if err != nil {
		return nil, err
	}
	cat, err := s.Catalog(ctx, id.Catalog)
	if err != nil {
		return nil, err
	}
	base, sel, err := refs.ResolveRef(ctx, cat, id)
	if err != nil {
		return nil, err
	}
	useOp := req.Op
	if request.IsDistributed(req.Op) {
		useOp = req.Distributed.Mode
	}
	if id, sel, err = refs.CheckUse(ctx, cat, useOp, id, base, sel); err != nil {
		return nil, err
	}
	ident := catalog.TableIdent(id)
	if refs.IsRefOp(req.Op) {
		return refs.Run(ctx, cat, id, req)
	}
	if request.IsDistributed(req.Op) {
		return distributed(ctx, s, cat, id, sel, req, input, prog)
	}
	switch req.Op {
	case request.OpCreateTable:
		return createTable(ctx, write.New(s, cat, id, req, input, prog))
	case request.OpRenameTable:
		return renameTable(ctx, s, cat, id, req.NewTable)
	case request.OpDropTable:
		return dropTable(ctx, maintenance.Target{Cat: cat, ID: id, Ident: ident, Conf: s.Conf()}, req)
	}
	if req.Op == request.OpUpdateTable {
		return updateTable(ctx, s, cat, id, req, input)
	}
	if maintenance.Handles(req.Op) {
		return maintenance.Run(ctx, maintenance.Target{Cat: cat, ID: id, Ident: ident, Conf: s.Conf()}, req, time.Now())
	}
	if request.IsWrite(req.Op) || request.IsRowLevel(req.Op) {
		if input == nil && request.IsWrite(req.Op) {
			return nil, fmt.Errorf("%w: %s needs input data", errs.ErrInvalidArgument, req.Op)
		}
		if input != nil && !request.IsWrite(req.Op) {
			return nil, fmt.Errorf("%w: %s takes no input data", errs.ErrInvalidArgument, req.Op)
		}
		w := write.New(s, cat, id, req, input, prog)
		if sel.Kind == "branch" {
			w.Target = stage.Target{Branch: sel.Name, Explicit: true}
		}
		res, err := run(ctx, w)
		return skipped(w, res, err)
	}
	switch req.Op {
	case request.OpStreamOffset:
		return streamOffset(ctx, cat, id, req)
	case request.OpLastCommittedBatch:
		return lastCommittedBatch(ctx, cat, id, ident, sel, req.Stream.QueryID)
	case request.OpSnapshots:
		return snapshots(ctx, cat, id, ident)
	case request.OpTableInfo:
		return tableInfo(ctx, cat, id, ident)
	}
	return nil, fmt.Errorf("%w: operation %s is not handled by Execute", errs.ErrInvalidArgument, req.Op)
}

// run plans a write or row-level operation, applies write-audit-publish
// to its target and runs it on the path of its kind.
func run(ctx context.Context, w *write.Writer) (any, error) {
	op, existing, p, err := w.Prepare(ctx)
	if err != nil {
		return nil, err
	}
	if err := refs.ResolveTarget(&w.Committer, w.Req.Op, existing, p.Eff.WapID, p.Eff.WapBranch); err != nil {
		return nil, err
	}
	// A batch committed before is not written at all (every commit
	// attempt checks again).
	if existing != nil {
		if err := w.CheckStream(existing.Metadata()); err != nil {
			return nil, err
		}
	}
	switch op {
	case request.OpDelete, request.OpUpdate, request.OpOverwrite, request.OpMerge, request.OpOverwritePartitions:
		return rowlevel.Run(ctx, w, op, p, existing)
	case request.OpRewriteDataFiles:
		res, err := rowlevel.RewriteDataFiles(ctx, w, p, existing)
		if err != nil {
			return nil, err
		}
		return res, nil
	case request.OpRewritePositionDeleteFiles:
		res, err := rowlevel.RewritePositionDeleteFiles(ctx, w, p, existing)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	return w.Write(ctx, op, p)
}

// skipped turns the outcome of a streaming batch that was committed
// before into a result saying so.
func skipped(w *write.Writer, res any, err error) (any, error) {
	a, ok := stream.Skipped(err)
	if !ok {
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	last := a.Last.BatchID
	return &Result{Table: w.ID.String(), Skipped: true, LastBatchID: &last}, nil
}

// lastCommittedBatch reads the last batch queryID committed on the
// identifier's branch or tag (main by default).
func lastCommittedBatch(ctx context.Context, cat *catalog.Catalog, id request.Identifier, ident table.Identifier, sel refs.Selector, queryID string) (any, error) {
	t, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, catalog.MapErr(err, id)
	}
	m := t.Metadata()
	ref := table.MainBranch
	if sel.Kind != "" {
		ref = sel.Name
	}
	last, err := stream.Last(m, m.SnapshotByName(ref), queryID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"table": id.String(), "ref": ref, "query_id": queryID, "last": last}, nil
}

// updateTable runs update_table; its input stream, allowed only with
// union_by_name, gives that change its Arrow schema (its rows are not read).
func updateTable(ctx context.Context, s *session.Session, cat *catalog.Catalog, id request.Identifier, req *request.Request, input array.RecordReader) (any, error) {
	union := slices.ContainsFunc(req.Changes, func(c request.Change) bool { return c.Action == request.ActionUnionByName })
	switch {
	case union && input == nil:
		return nil, fmt.Errorf("%w: union_by_name needs the Arrow schema to union with as the input stream", errs.ErrInvalidArgument)
	case !union && input != nil:
		return nil, fmt.Errorf("%w: update_table takes an input stream only with union_by_name", errs.ErrInvalidArgument)
	case union:
		return evolve.Run(ctx, cat, id, req, input.Schema(), s.Conf())
	}
	return evolve.Run(ctx, cat, id, req, nil, s.Conf())
}

// LoadRef loads the table a read names and the snapshot its branch or tag
// suffix points at (nil: none given); see refs.LoadRef.
func LoadRef(ctx context.Context, s *session.Session, name string) (*table.Table, *int64, error) {
	return refs.LoadRef(ctx, s, name)
}

// LoadTable loads a table, mapping catalog errors to this project's kinds.
func LoadTable(ctx context.Context, s *session.Session, name string) (*table.Table, error) {
	id, err := s.Identifier(name)
	if err != nil {
		return nil, err
	}
	cat, err := s.Catalog(ctx, id.Catalog)
	if err != nil {
		return nil, err
	}
	t, err := cat.LoadTable(ctx, catalog.TableIdent(id))
	if err != nil {
		return nil, catalog.MapErr(err, id)
	}
	return t, nil
}

// SnapshotInfo describes one snapshot.
type SnapshotInfo struct {
	SnapshotID  int64             `json:"snapshot_id"`
	ParentID    *int64            `json:"parent_id"`
	TimestampMs int64             `json:"timestamp_ms"`
	Operation   string            `json:"operation"`
	Summary     map[string]string `json:"summary"`
	Current     bool              `json:"current"`
}

func snapshots(ctx context.Context, cat *catalog.Catalog, id request.Identifier, ident table.Identifier) (any, error) {
	t, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, catalog.MapErr(err, id)
	}
	cur := t.CurrentSnapshot()
	out := []SnapshotInfo{}
	for _, sn := range t.Metadata().Snapshots() {
		info := SnapshotInfo{SnapshotID: sn.SnapshotID, ParentID: sn.ParentSnapshotID, TimestampMs: sn.TimestampMs, Summary: map[string]string{}}
		if sn.Summary != nil {
			info.Operation = string(sn.Summary.Operation)
			maps.Copy(info.Summary, sn.Summary.Properties)
		}
		info.Current = cur != nil && cur.SnapshotID == sn.SnapshotID
		out = append(out, info)
	}
	return map[string]any{"table": id.String(), "snapshots": out}, nil
}

func tableInfo(ctx context.Context, cat *catalog.Catalog, id request.Identifier, ident table.Identifier) (any, error) {
	t, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, catalog.MapErr(err, id)
	}
	m := t.Metadata()
	info := map[string]any{
		"table":             id.String(),
		"metadata_location": t.MetadataLocation(),
		"location":          m.Location(),
		"format_version":    m.Version(),
		"properties":        m.Properties(),
		"schema":            m.CurrentSchema().String(),
		"partition_spec":    m.PartitionSpec().String(),
	}
	if sn := t.CurrentSnapshot(); sn != nil {
		info["current_snapshot_id"] = sn.SnapshotID
	}
	d, err := evolve.Describe(m)
	if err != nil {
		return nil, err
	}
	info["current_schema"], info["default_spec"], info["default_sort_order"] = d.Schema, d.Spec, d.SortOrder
	info["last_column_id"], info["last_partition_id"] = d.LastColumnID, d.LastPartitionID
	return info, nil
}

func listTables(ctx context.Context, s *session.Session, req *request.Request) (any, error) {
	id, err := s.Identifier(req.Namespace + ".x")
	if err != nil {
		return nil, err
	}
	cat, err := s.Catalog(ctx, id.Catalog)
	if err != nil {
		return nil, err
	}
	var names []string
	for ident, err := range cat.ListTables(ctx, table.Identifier(id.Namespace)) {
		if err != nil {
			return nil, catalog.MapErr(err, id)
		}
		names = append(names, strings.Join(ident, "."))
	}
	return map[string]any{"tables": names}, nil
}
