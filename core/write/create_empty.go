package write

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/schema"
)

// newSchema is the schema a create or replace writes: create_table's
// given schema (fresh field ids, as Java's TypeUtil.assignFreshIds), else
// the input stream's.
func (w *Writer) newSchema() (*iceberg.Schema, error) {
	if w.Req.Schema != nil {
		if err := uniqueNames("", w.Req.Schema.Fields()); err != nil {
			return nil, err
		}
		return schema.Fresh(w.Req.Schema), nil
	}
	keepNullability := strings.EqualFold(w.Cat.Props["use-nullable-query-schema"], "false")
	return schema.FromArrow(w.Input.Schema(), keepNullability)
}

// uniqueNames refuses two fields of one struct whose names differ only in
// case (Spark's "Found duplicate column(s)"; its analyzer is
// case-insensitive).
func uniqueNames(prefix string, fields []iceberg.NestedField) error {
	seen := map[string]string{}
	for _, f := range fields {
		k := strings.ToLower(f.Name)
		if prev, ok := seen[k]; ok {
			return fmt.Errorf("%w: Found duplicate column(s) in the table definition: %s%s and %s%s", errs.ErrInvalidArgument, prefix, prev, prefix, f.Name)
		}
		seen[k] = f.Name
		if f.Name == "" {
			return fmt.Errorf("%w: a column of %q has an empty name", errs.ErrInvalidArgument, strings.TrimSuffix(prefix, "."))
		}
		switch n := f.Type.(type) {
		case *iceberg.StructType:
			if err := uniqueNames(prefix+f.Name+".", n.FieldList); err != nil {
				return err
			}
		case *iceberg.ListType:
			if st, ok := n.Element.(*iceberg.StructType); ok {
				if err := uniqueNames(prefix+f.Name+".element.", st.FieldList); err != nil {
					return err
				}
			}
		case *iceberg.MapType:
			if st, ok := n.ValueType.(*iceberg.StructType); ok {
				if err := uniqueNames(prefix+f.Name+".value.", st.FieldList); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// CreateEmpty commits create_table: a new or replaced table of the
// request's schema with no data (Spark's CREATE [OR REPLACE] TABLE
// without AS SELECT). created is false when the table existed and the
// request said if_not_exists.
func (w *Writer) CreateEmpty(ctx context.Context) (res *report.Result, created bool, err error) {
	if w.Input != nil {
		return nil, false, fmt.Errorf("%w: create_table takes no input data", errs.ErrInvalidArgument)
	}
	req := *w.Req
	switch w.Req.Mode {
	case request.ModeReplace:
		req.Op = request.OpReplace
	case request.ModeCreateOrReplace:
		req.Op = request.OpCreateOrReplace
	default:
		req.Op = request.OpCreate
	}
	w.Req = &req
	op, existing, p, err := w.Prepare(ctx)
	if err != nil {
		if w.Req.IfNotExists && existing == nil && errors.Is(err, errs.ErrTableAlreadyExists) {
			return &report.Result{Table: w.ID.String()}, false, nil
		}
		return nil, false, err
	}
	retry, err := w.RetryPolicy(p.Props)
	if err != nil {
		return nil, false, err
	}
	if op == request.OpCreate && p.shape.formatVersion() == 1 && !w.Cat.IsREST() {
		return w.createV1(ctx, p)
	}
	var committed *table.Table
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		var err error
		if op == request.OpCreate {
			committed, err = w.commitCreate(ctx, p, Written{})
		} else {
			committed, err = w.commitReplace(ctx, p, Written{})
		}
		return err
	})
	if err != nil {
		err = w.Failed(ctx, op, p, Written{}, err)
		if w.Req.IfNotExists && errors.Is(err, errs.ErrTableAlreadyExists) {
			return &report.Result{Table: w.ID.String()}, false, nil
		}
		return nil, false, err
	}
	return w.Result(committed, Written{}, false), true, nil
}

func (s *shape) formatVersion() int {
	fv, _ := FormatVersion(s.props)
	return fv
}

// createV1 creates a format-version 1 table through the catalog's own
// create: a create by commit starts from iceberg-go's placeholder
// metadata, which is v2 and cannot be downgraded. The catalog renumbers
// the schema as iceberg-go does (a nested field's children right after
// it, where Java numbers a struct's fields first); flat schemas get the
// same ids either way.
func (w *Writer) createV1(ctx context.Context, p *Plan) (*report.Result, bool, error) {
	if err := w.ensureNamespace(ctx); err != nil {
		return nil, false, err
	}
	sh := p.shape
	spec := sh.spec
	opts := []icecat.CreateTableOpt{icecat.WithPartitionSpec(&spec), icecat.WithLocation(sh.location), icecat.WithProperties(sh.props)}
	if sh.order.Len() > 0 {
		opts = append(opts, icecat.WithSortOrder(sh.order))
	}
	if _, err := w.Cat.CreateTable(ctx, w.Ident, sh.schema, opts...); err != nil {
		err = catalog.MapErr(err, w.ID)
		if errors.Is(err, icecat.ErrTableAlreadyExists) || errors.Is(err, errs.ErrTableAlreadyExists) {
			if w.Req.IfNotExists {
				return &report.Result{Table: w.ID.String()}, false, nil
			}
			return nil, false, fmt.Errorf("%w: table %s already exists", errs.ErrTableAlreadyExists, w.ID)
		}
		return nil, false, err
	}
	return &report.Result{Table: w.ID.String()}, true, nil
}
