// Package ops runs the operations of DataFrameWriterV2: create, replace,
// createOrReplace and append, plus the small catalog reads the callers need.
// Every operation is synchronous: when Execute returns, every goroutine it
// started has finished and the commit either happened or did not.
package ops

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/testhooks"
	"github.com/pyiceberg-go/pyiceberg-go/core/version"
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
	if req.Op == request.OpListTables {
		return listTables(ctx, s, req)
	}
	id, err := s.Identifier(req.Table)
	if err != nil {
		return nil, err
	}
	cat, err := s.Catalog(ctx, id.Catalog)
	if err != nil {
		return nil, err
	}
	base, sel, err := ResolveRef(ctx, cat, id)
	if err != nil {
		return nil, err
	}
	if id, sel, err = CheckUse(ctx, cat, req.Op, id, base, sel); err != nil {
		return nil, err
	}
	ident := append(append(table.Identifier{}, id.Namespace...), id.Name)
	if IsRefOp(req.Op) {
		return Run(ctx, cat, id, req)
	}
	if request.IsWrite(req.Op) || request.IsRowLevel(req.Op) {
		if input == nil && request.IsWrite(req.Op) {
			return nil, fmt.Errorf("%w: %s needs input data", errs.ErrInvalidArgument, req.Op)
		}
		if input != nil && !request.IsWrite(req.Op) {
			return nil, fmt.Errorf("%w: %s takes no input data", errs.ErrInvalidArgument, req.Op)
		}
		w := &Writer{Sess: s, Cat: cat, ID: id, Ident: ident, Req: req, Input: input, Prog: prog, Start: time.Now()}
		if sel.Kind == "branch" {
			w.Target = Target{Branch: sel.Name, Explicit: true}
		}
		return w.run(ctx)
	}
	switch req.Op {
	case request.OpSnapshots:
		return snapshots(ctx, cat, id, ident)
	case request.OpTableInfo:
		return tableInfo(ctx, cat, id, ident)
	case request.OpDropTable:
		if err := cat.DropTable(ctx, ident); err != nil {
			return nil, catalog.MapErr(err, id)
		}
		return map[string]any{"table": id.String(), "dropped": true}, nil
	}
	return nil, fmt.Errorf("%w: operation %s is not handled by Execute", errs.ErrInvalidArgument, req.Op)
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
	t, err := cat.LoadTable(ctx, append(append(table.Identifier{}, id.Namespace...), id.Name))
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

// formatVersion reads format-version from properties (default 2).
func FormatVersion(props map[string]string) (int, error) {
	v, ok := props["format-version"]
	if !ok {
		return 2, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 3 {
		return 0, fmt.Errorf("%w: format-version %q is not 1, 2 or 3", errs.ErrInvalidArgument, v)
	}
	return n, nil
}
