package ops

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/refs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/sqlstmt"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// planSQL is sql_plan: the statement read, nothing run. The caller learns
// which view or table (or query) the statement's input rows come from, so
// that it can pass them as the sql operation's input stream.
func planSQL(ctx context.Context, s *session.Session, req *request.Request, input array.RecordReader) (any, error) {
	if input != nil {
		return nil, fmt.Errorf("%w: sql_plan takes no input data", errs.ErrInvalidArgument)
	}
	zone, err := tz.FromConf(s.Conf())
	if err != nil {
		return nil, err
	}
	st, err := sqlstmt.Parse(req.SQL, zone)
	if err != nil {
		return nil, err
	}
	if st.DML != nil && st.DML.Subquery != nil {
		t, _, err := refs.LoadRef(ctx, s, st.Request.Table)
		if err != nil {
			return nil, err
		}
		if err := st.BindTarget(t.Schema()); err != nil {
			return nil, err
		}
	}
	out := map[string]any{"statement": st.Kind, "op": st.Request.Op, "table": st.Request.Table, "source": nil}
	if st.DML != nil && st.DML.Source != nil {
		out["source"] = st.DML.Source
	}
	return out, nil
}

// runDML runs a write statement: its source rows (input: the view, table
// or query result the caller passed; VALUES are built here) are made the
// input of the document's operation as Spark's statement reads them, and
// the document runs as if a caller had sent it.
func runDML(ctx context.Context, s *session.Session, st *sqlstmt.Statement, input array.RecordReader, prog *Progress) (any, error) {
	src := st.DML.Source
	switch {
	case src.NeedsInput() && input == nil:
		what := map[string]string{sqlstmt.SourceView: "view", sqlstmt.SourceTable: "table", sqlstmt.SourceQuery: "query"}[src.Kind]
		name := src.Name
		if name == "" {
			name = src.Query
		}
		return nil, fmt.Errorf("%w: %s reads %s %q: pass its rows as the input stream (ig.sql's views= or ig.register)", errs.ErrInvalidArgument, st.Kind, what, name)
	case !src.NeedsInput() && input != nil:
		return nil, fmt.Errorf("%w: %s takes no input data", errs.ErrInvalidArgument, st.Kind)
	}
	r := st.Request
	tg := sqlstmt.Target{Conf: s.Conf()}
	if st.DML.Insert != nil || st.DML.Subquery != nil {
		t, _, err := refs.LoadRef(ctx, s, r.Table)
		if err != nil {
			return nil, err
		}
		tg.Schema, tg.Spec = t.Schema(), t.Spec()
		if err := st.BindTarget(tg.Schema); err != nil {
			return nil, err
		}
	}
	rd, err := st.DML.Prepare(ctx, r, tg, input)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(r)
	if err != nil {
		if rd != nil {
			rd.Release()
		}
		return nil, fmt.Errorf("%w: %v", errs.ErrInvalidArgument, err)
	}
	inner, err := request.Decode(doc)
	if err != nil {
		if rd != nil {
			rd.Release()
		}
		return nil, fmt.Errorf("%s: %w", st.Kind, err)
	}
	res, err := Execute(ctx, s, inner, rd, prog)
	if err != nil {
		return nil, err
	}
	return map[string]any{"statement": st.Kind, "op": inner.Op, "result": res}, nil
}
