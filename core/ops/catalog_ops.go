package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/maintenance"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/sqlstmt"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// dropTable is DROP TABLE [IF EXISTS] t [PURGE].
func dropTable(ctx context.Context, tg maintenance.Target, req *request.Request) (any, error) {
	if req.Purge {
		res, err := maintenance.PurgeTable(ctx, tg)
		if err != nil && req.IfExists && errors.Is(err, errs.ErrNoSuchTable) {
			return map[string]any{"table": tg.ID.String(), "dropped": false}, nil
		}
		return res, err
	}
	if err := tg.Cat.DropTable(ctx, tg.Ident); err != nil {
		err = catalog.MapErr(err, tg.ID)
		if req.IfExists && errors.Is(err, errs.ErrNoSuchTable) {
			return map[string]any{"table": tg.ID.String(), "dropped": false}, nil
		}
		return nil, err
	}
	return map[string]any{"table": tg.ID.String(), "dropped": true}, nil
}

// renameTable is ALTER TABLE t RENAME TO u, within t's catalog.
func renameTable(ctx context.Context, s *session.Session, cat *catalog.Catalog, id request.Identifier, newName string) (any, error) {
	to, err := s.Identifier(newName)
	if err != nil {
		return nil, err
	}
	if to.Catalog != id.Catalog {
		return nil, fmt.Errorf("%w: cannot rename %s to %s: a table stays in its catalog", errs.ErrInvalidArgument, id, to)
	}
	if _, err := cat.RenameTable(ctx, catalog.TableIdent(id), catalog.TableIdent(to)); err != nil {
		if errors.Is(err, icecat.ErrTableAlreadyExists) {
			return nil, fmt.Errorf("%w: cannot rename %s: table %s already exists", errs.ErrTableAlreadyExists, id, to)
		}
		return nil, catalog.MapErr(err, id)
	}
	return map[string]any{"table": to.String(), "renamed_from": id.String()}, nil
}

// createNamespace is CREATE NAMESPACE [IF NOT EXISTS] ns [WITH PROPERTIES].
func createNamespace(ctx context.Context, s *session.Session, req *request.Request) (any, error) {
	id, err := s.Identifier(req.Namespace + ".x")
	if err != nil {
		return nil, err
	}
	for _, part := range id.Namespace {
		if strings.Contains(part, ".") {
			return nil, fmt.Errorf("%w: namespace part %q contains a dot", errs.ErrInvalidArgument, part)
		}
	}
	cat, err := s.Catalog(ctx, id.Catalog)
	if err != nil {
		return nil, err
	}
	ns := table.Identifier(id.Namespace)
	name := id.Catalog + "." + strings.Join(ns, ".")
	err = cat.CreateNamespace(ctx, ns, req.Properties)
	switch {
	case err == nil:
		return map[string]any{"namespace": name, "created": true}, nil
	case errors.Is(err, icecat.ErrNamespaceAlreadyExists) && req.IfNotExists:
		return map[string]any{"namespace": name, "created": false}, nil
	case errors.Is(err, icecat.ErrNamespaceAlreadyExists):
		return nil, fmt.Errorf("%w: namespace %s already exists", errs.ErrValidation, name)
	}
	return nil, catalog.MapErr(err, request.Identifier{Catalog: id.Catalog, Namespace: id.Namespace})
}

// useNamespace is Spark's USE: a name whose first part is a catalog makes
// that catalog current (with the rest as namespace, or its
// default-namespace); any other name is a namespace of the current catalog,
// which must exist.
func useNamespace(ctx context.Context, s *session.Session, req *request.Request) (any, error) {
	parts := strings.Split(req.Namespace, ".")
	for _, p := range parts {
		if strings.TrimSpace(p) == "" || p != strings.TrimSpace(p) {
			return nil, fmt.Errorf("%w: USE %q: empty or padded name part", errs.ErrInvalidArgument, req.Namespace)
		}
	}
	catName, _ := s.Current()
	if s.IsCatalog(parts[0]) {
		catName, parts = strings.ToLower(parts[0]), parts[1:]
	}
	if len(parts) > 0 {
		cat, err := s.Catalog(ctx, catName)
		if err != nil {
			return nil, err
		}
		ok, err := cat.CheckNamespaceExists(ctx, table.Identifier(parts))
		if err != nil {
			return nil, catalog.MapErr(err, request.Identifier{Catalog: catName, Namespace: parts})
		}
		if !ok {
			return nil, fmt.Errorf("%w: [SCHEMA_NOT_FOUND] the namespace %s.%s cannot be found", errs.ErrNoSuchNamespace, catName, strings.Join(parts, "."))
		}
	}
	if err := s.Use(catName, strings.Join(parts, ".")); err != nil {
		return nil, err
	}
	cur, ns := s.Current()
	return map[string]any{"catalog": cur, "namespace": ns}, nil
}

// createTable is CREATE [OR REPLACE] TABLE t (columns) without data.
func createTable(ctx context.Context, w *write.Writer) (any, error) {
	res, created, err := w.CreateEmpty(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"table": res.Table, "created": created}, nil
}

// runSQL runs one Spark SQL statement: core/sqlstmt reads it into the
// request document of its operation, which is checked and run as if a
// caller had sent it.
func runSQL(ctx context.Context, s *session.Session, req *request.Request, input array.RecordReader, prog *Progress) (any, error) {
	zone, err := tz.FromConf(s.Conf())
	if err != nil {
		return nil, err
	}
	st, err := sqlstmt.Parse(req.SQL, zone)
	if err != nil {
		return nil, err
	}
	if st.DML != nil {
		// The caller's promise about its input holds for the statement's source.
		st.Request.InputInMemory = req.InputInMemory && st.DML.Source.NeedsInput()
		return runDML(ctx, s, st, input, prog)
	}
	if input != nil {
		return nil, fmt.Errorf("%w: sql takes no input data for %s", errs.ErrInvalidArgument, st.Kind)
	}
	if op := st.Request.Op; (op == request.OpCreateTable || op == request.OpCreateNamespace) && st.Request.Properties["owner"] == "" {
		// Spark's CreateTableExec and CreateNamespaceExec record who created it.
		if st.Request.Properties == nil {
			st.Request.Properties = map[string]string{}
		}
		st.Request.Properties["owner"] = currentUser()
	}
	if st.Request.Op == request.OpScan {
		return readSQL(ctx, s, st)
	}
	doc, err := json.Marshal(st.Request)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrInvalidArgument, err)
	}
	inner, err := request.Decode(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Kind, err)
	}
	res, err := Execute(ctx, s, inner, nil, prog)
	if err != nil {
		return nil, err
	}
	return map[string]any{"statement": st.Kind, "op": inner.Op, "result": res}, nil
}

// currentUser is Spark's Utils.getCurrentUserName: SPARK_USER, else the
// process's user.
func currentUser() string {
	if u := os.Getenv("SPARK_USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

// readSQL answers a SELECT with the read document that runs it (a scan,
// or an inspect when the table names a metadata table of an existing
// table, as Spark resolves db.t.files): reads stream through pig_scan /
// pig_read, not through this call.
func readSQL(ctx context.Context, s *session.Session, st *sqlstmt.Statement) (any, error) {
	r := st.Request
	id, err := s.Identifier(r.Table)
	if err != nil {
		return nil, err
	}
	if slices.Contains(request.MetadataTables, id.Name) && len(id.Namespace) >= 2 {
		cat, err := s.Catalog(ctx, id.Catalog)
		if err != nil {
			return nil, err
		}
		n := len(id.Namespace)
		parent := request.Identifier{Catalog: id.Catalog, Namespace: id.Namespace[:n-1], Name: id.Namespace[n-1]}
		own, _ := cat.CheckTableExists(ctx, catalog.TableIdent(id))
		if ok, _ := cat.CheckTableExists(ctx, catalog.TableIdent(parent)); ok && !own {
			if len(r.Columns) > 0 || r.Filter != "" || r.AsOfTimestampMs != nil || r.Ref != "" {
				return nil, fmt.Errorf("%w: SELECT from metadata table %s reads * only (optionally VERSION AS OF a snapshot id)", errs.ErrNotSupported, id.Name)
			}
			r = &request.Request{Op: request.OpInspect, Table: parent.String(), MetadataTable: id.Name, SnapshotID: r.SnapshotID}
		}
	}
	doc, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrInvalidArgument, err)
	}
	if _, err := request.DecodeScan(doc); err != nil {
		return nil, fmt.Errorf("%s: %w", st.Kind, err)
	}
	// The document as raw JSON: a map[string]any would round snapshot ids
	// through float64.
	return map[string]any{"statement": st.Kind, "op": r.Op, "read": json.RawMessage(doc)}, nil
}
