package sqlstmt

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// OverwriteModeKey is Spark's session setting that makes INSERT OVERWRITE
// dynamic (replace the partitions the rows fall in) or static (replace
// what the PARTITION clause names: the whole table without one), static by
// default. The key without its spark.sql. prefix is accepted too.
const OverwriteModeKey = "spark.sql.sources.partitionOverwriteMode"

// Target is what Prepare needs to know of the table a statement writes.
type Target struct {
	Schema *iceberg.Schema
	Spec   iceberg.PartitionSpec
	Conf   map[string]string
}

// overwriteMode reads OverwriteModeKey: "static" or "dynamic".
func overwriteMode(conf map[string]string) (string, error) {
	mode := ""
	for k, v := range conf {
		if strings.EqualFold(k, OverwriteModeKey) || strings.EqualFold(k, strings.TrimPrefix(OverwriteModeKey, "spark.sql.")) {
			mode = strings.ToLower(strings.TrimSpace(v))
		}
	}
	switch mode {
	case "":
		return "static", nil
	case "static", "dynamic":
		return mode, nil
	}
	return "", fmt.Errorf("%w: %s=%q: expected static or dynamic", errs.ErrInvalidArgument, OverwriteModeKey, mode)
}

// Prepare finishes a write statement for its table: it picks INSERT
// OVERWRITE's operation and filter from the session and the PARTITION
// clause, and turns the source into the operation's input as Spark's
// INSERT reads it (VALUES rows typed to the columns, a view's columns by
// position or by name, static partition values added). input is the
// view's, table's or query's rows the caller passed (nil for VALUES); the
// result is the stream the operation takes (nil for DELETE and UPDATE), a
// reference of its own the caller releases.
func (d *DML) Prepare(ctx context.Context, r *request.Request, tg Target, input array.RecordReader) (array.RecordReader, error) {
	if d.Insert == nil {
		if input != nil {
			input.Retain()
		}
		return input, nil
	}
	zone, err := tz.FromConf(tg.Conf)
	if err != nil {
		return nil, err
	}
	ins := d.Insert
	fields := tg.Schema.Fields()
	byName := func(name string) (iceberg.NestedField, bool) {
		for _, f := range fields {
			if strings.EqualFold(f.Name, name) {
				return f, true
			}
		}
		return iceberg.NestedField{}, false
	}
	// Spark's partition columns of a PARTITION clause: the sources of
	// identity partition fields (other transforms' values cannot be set).
	partCols := map[int]bool{}
	for _, f := range tg.Spec.Fields() {
		if f.Transform.String() == "identity" {
			partCols[f.SourceID()] = true
		}
	}
	static := map[int]Static{}
	var statics []staticCol
	for _, s := range ins.Static {
		f, ok := byName(s.Column)
		if !ok || !partCols[f.ID] {
			return nil, fmt.Errorf("%w: PARTITION clause cannot contain the non-partition column %q (only sources of identity partition fields) (at position %d)", errs.ErrValidation, s.Column, ins.PartPos)
		}
		static[f.ID] = s
		e, err := bindConstant(&expr.CastNode{X: s.Value, To: f.Type}, f, zone)
		if err != nil {
			return nil, err
		}
		v, err := evalRows(e, 1)
		if err != nil {
			return nil, err
		}
		statics = append(statics, staticCol{field: f, value: v, expr: e})
	}
	for _, name := range ins.Dynamic {
		if f, ok := byName(name); !ok || !partCols[f.ID] {
			return nil, fmt.Errorf("%w: PARTITION clause cannot contain the non-partition column %q (at position %d)", errs.ErrValidation, name, ins.PartPos)
		}
	}
	// The columns the source's columns go to, in order.
	var target []iceberg.NestedField
	if ins.Columns != nil {
		for _, name := range ins.Columns {
			f, ok := byName(name)
			if !ok {
				return nil, fmt.Errorf("%w: INSERT names column %q, which table %s does not have (at position %d)", errs.ErrValidation, name, r.Table, ins.ColumnsPos)
			}
			if _, ok := static[f.ID]; ok {
				return nil, fmt.Errorf("%w: column %q is both in the PARTITION clause and in the column list (at position %d)", errs.ErrValidation, name, ins.ColumnsPos)
			}
			target = append(target, f)
		}
	} else {
		for _, f := range fields {
			if _, ok := static[f.ID]; !ok {
				target = append(target, f)
			}
		}
	}
	// The operation.
	if ins.Overwrite {
		mode, err := overwriteMode(tg.Conf)
		if err != nil {
			return nil, err
		}
		if mode == "dynamic" {
			r.Op = request.OpOverwritePartitions
		} else {
			r.Op = request.OpOverwrite
			r.Filter = staticFilter(ins.Static, statics)
		}
	}
	var src array.RecordReader
	if d.Source.Kind == SourceValues {
		if src, err = d.Source.values(target, zone); err != nil {
			return nil, err
		}
	} else {
		src = input
		input.Retain()
	}
	defer src.Release()
	return mapColumns(src, target, statics, ins.ByName, d.Source)
}

// staticFilter is Spark's staticDeleteExpression: col <=> CAST(value AS
// type) for every static partition value (true when there is none).
func staticFilter(ss []Static, cols []staticCol) string {
	if len(ss) == 0 {
		return "true"
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		f := cols[i].field
		col := (&expr.ColumnNode{Path: []string{f.Name}}).String()
		if cols[i].value.IsNull(0) {
			parts[i] = col + " IS NULL"
			continue
		}
		parts[i] = col + " = " + (&expr.CastNode{X: s.Value, To: f.Type}).String()
	}
	return strings.Join(parts, " AND ")
}

// staticCol is a static partition value, evaluated once (one row).
type staticCol struct {
	field iceberg.NestedField
	value arrow.Array // one row
	expr  *expr.Expr
}

var emptySchema = iceberg.NewSchema(0)

// bindConstant binds n (no columns) stored into column f.
func bindConstant(n expr.Node, f iceberg.NestedField, zone *tz.Zone) (*expr.Expr, error) {
	e, err := expr.Bind(n, emptySchema, expr.InZone(zone))
	if err != nil {
		return nil, err
	}
	return e.AssignTo(f.Name, f.Type)
}

// evalRows evaluates a constant e over rows rows.
func evalRows(e *expr.Expr, rows int) (arrow.Array, error) {
	rec := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, int64(rows))
	defer rec.Release()
	out, err := e.Eval(context.Background(), rec, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrValidation, err)
	}
	return out, nil
}

// constant evaluates n (no columns) stored into column f: one row.
func constant(n expr.Node, f iceberg.NestedField, zone *tz.Zone) (arrow.Array, error) {
	e, err := bindConstant(n, f, zone)
	if err != nil {
		return nil, err
	}
	return evalRows(e, 1)
}

func isNullLiteral(n expr.Node) bool {
	lit, ok := n.(*expr.LiteralNode)
	return ok && lit.String() == "NULL"
}

// arrowOf is the Arrow type values built here have for t.
func arrowOf(t iceberg.Type, zone *tz.Zone) (arrow.DataType, error) {
	switch t := t.(type) {
	case *iceberg.StructType:
		fs := make([]arrow.Field, len(t.FieldList))
		for i, f := range t.FieldList {
			dt, err := arrowOf(f.Type, zone)
			if err != nil {
				return nil, err
			}
			fs[i] = arrow.Field{Name: f.Name, Type: dt, Nullable: true}
		}
		return arrow.StructOf(fs...), nil
	case *iceberg.ListType:
		el, err := arrowOf(t.Element, zone)
		if err != nil {
			return nil, err
		}
		return arrow.ListOf(el), nil
	case *iceberg.MapType:
		k, err := arrowOf(t.KeyType, zone)
		if err != nil {
			return nil, err
		}
		v, err := arrowOf(t.ValueType, zone)
		if err != nil {
			return nil, err
		}
		return arrow.MapOf(k, v), nil
	}
	null, err := expr.Parse("NULL")
	if err != nil {
		return nil, err
	}
	a, err := constant(null, iceberg.NestedField{Name: "x", Type: t}, zone)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return a.DataType(), nil
}

// cell builds one value (a one-row array) of type t from n: a literal
// expression, or for nested columns struct(...) / named_struct(...),
// array(...) and map(...) of such values.
func cell(n expr.Node, path string, t iceberg.Type, zone *tz.Zone) (arrow.Array, error) {
	mem := memory.DefaultAllocator
	if isNullLiteral(n) {
		if _, nested := t.(iceberg.NestedType); nested {
			dt, err := arrowOf(t, zone)
			if err != nil {
				return nil, err
			}
			return array.MakeArrayOfNull(mem, dt, 1), nil
		}
	}
	call, _ := n.(*expr.CallNode)
	bad := func(want string) error {
		return fmt.Errorf("%w: cannot store %s into column %q of type %s: write %s", errs.ErrValidation, n.String(), path, t, want)
	}
	switch t := t.(type) {
	case *iceberg.StructType:
		if call == nil || call.Name != "struct" && call.Name != "named_struct" {
			return nil, bad("struct(...) or named_struct(...)")
		}
		vals := call.Args
		if call.Name == "named_struct" {
			if len(vals)%2 != 0 {
				return nil, bad("named_struct('name', value, ...)")
			}
			var vs []expr.Node
			for i := 1; i < len(vals); i += 2 {
				vs = append(vs, vals[i])
			}
			vals = vs
		}
		if len(vals) != len(t.FieldList) {
			return nil, fmt.Errorf("%w: column %q is a struct of %d fields, the value gives %d", errs.ErrValidation, path, len(t.FieldList), len(vals))
		}
		kids := make([]arrow.ArrayData, len(vals))
		for i, v := range vals {
			a, err := cell(v, path+"."+t.FieldList[i].Name, t.FieldList[i].Type, zone)
			if err != nil {
				return nil, err
			}
			defer a.Release()
			kids[i] = a.Data()
		}
		dt, err := arrowOf(t, zone)
		if err != nil {
			return nil, err
		}
		return array.MakeFromData(array.NewData(dt, 1, []*memory.Buffer{nil}, kids, 0, 0)), nil
	case *iceberg.ListType:
		if call == nil || call.Name != "array" {
			return nil, bad("array(...)")
		}
		el, err := cells(call.Args, path+".element", t.Element, zone)
		if err != nil {
			return nil, err
		}
		defer el.Release()
		dt, err := arrowOf(t, zone)
		if err != nil {
			return nil, err
		}
		off := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, int32(el.Len())}))
		return array.MakeFromData(array.NewData(dt, 1, []*memory.Buffer{nil, off}, []arrow.ArrayData{el.Data()}, 0, 0)), nil
	case *iceberg.MapType:
		if call == nil || call.Name != "map" || len(call.Args)%2 != 0 {
			return nil, bad("map(key, value, ...)")
		}
		var ks, vs []expr.Node
		for i := 0; i < len(call.Args); i += 2 {
			ks, vs = append(ks, call.Args[i]), append(vs, call.Args[i+1])
		}
		ka, err := cells(ks, path+".key", t.KeyType, zone)
		if err != nil {
			return nil, err
		}
		defer ka.Release()
		va, err := cells(vs, path+".value", t.ValueType, zone)
		if err != nil {
			return nil, err
		}
		defer va.Release()
		dt, err := arrowOf(t, zone)
		if err != nil {
			return nil, err
		}
		mt := dt.(*arrow.MapType)
		entries := array.NewData(mt.Elem(), ka.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{ka.Data(), va.Data()}, 0, 0)
		defer entries.Release()
		off := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, int32(ka.Len())}))
		return array.MakeFromData(array.NewData(dt, 1, []*memory.Buffer{nil, off}, []arrow.ArrayData{entries}, 0, 0)), nil
	}
	return constant(n, iceberg.NestedField{Name: path, Type: t}, zone)
}

// cells builds the values ns of type t as one array.
func cells(ns []expr.Node, path string, t iceberg.Type, zone *tz.Zone) (arrow.Array, error) {
	if len(ns) == 0 {
		dt, err := arrowOf(t, zone)
		if err != nil {
			return nil, err
		}
		return array.MakeArrayOfNull(memory.DefaultAllocator, dt, 0), nil
	}
	parts := make([]arrow.Array, 0, len(ns))
	defer func() {
		for _, a := range parts {
			a.Release()
		}
	}()
	for _, n := range ns {
		a, err := cell(n, path, t, zone)
		if err != nil {
			return nil, err
		}
		parts = append(parts, a)
	}
	out, err := array.Concatenate(parts, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%w: column %q: %v", errs.ErrValidation, path, err)
	}
	return out, nil
}

// values builds VALUES' rows as one batch with the target columns.
func (s *Source) values(target []iceberg.NestedField, zone *tz.Zone) (array.RecordReader, error) {
	for i, row := range s.rows {
		if len(row) != len(target) {
			return nil, fmt.Errorf("%w: cannot write to the table: VALUES row %d has %d values, the table takes %d columns here (at position %d)", errs.ErrValidation, i+1, len(row), len(target), s.rowAt[i])
		}
	}
	cols := make([]arrow.Array, len(target))
	fs := make([]arrow.Field, len(target))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for j, f := range target {
		col := make([]expr.Node, len(s.rows))
		for i, row := range s.rows {
			col[i] = row[j]
		}
		a, err := cells(col, f.Name, f.Type, zone)
		if err != nil {
			return nil, err
		}
		cols[j] = a
		fs[j] = arrow.Field{Name: f.Name, Type: a.DataType(), Nullable: true}
	}
	sc := arrow.NewSchema(fs, nil)
	rec := array.NewRecordBatch(sc, cols, int64(len(s.rows)))
	defer rec.Release()
	return array.NewRecordReader(sc, []arrow.RecordBatch{rec})
}

// mapColumns names src's columns as the target columns they go to (by
// position, or matched by name case-insensitively with BY NAME) and adds
// the static partition columns.
func mapColumns(src array.RecordReader, target []iceberg.NestedField, statics []staticCol, byName bool, s *Source) (array.RecordReader, error) {
	in := src.Schema().Fields()
	fs := make([]arrow.Field, 0, len(in)+len(statics))
	if byName {
		for _, f := range in {
			var to *iceberg.NestedField
			for i := range target {
				if strings.EqualFold(target[i].Name, f.Name) {
					to = &target[i]
				}
			}
			if to == nil {
				return nil, fmt.Errorf("%w: cannot write to the table: the query's column %q is not a column it writes (at position %d)", errs.ErrValidation, f.Name, s.Pos)
			}
			f.Name = to.Name
			fs = append(fs, f)
		}
	} else {
		if len(in) != len(target) {
			names := make([]string, len(target))
			for i, f := range target {
				names[i] = f.Name
			}
			return nil, fmt.Errorf("%w: cannot write to the table: the source has %d columns, the table takes %d here (%s) (at position %d)", errs.ErrValidation, len(in), len(target), strings.Join(names, ", "), s.Pos)
		}
		for i, f := range in {
			f.Name = target[i].Name
			fs = append(fs, f)
		}
	}
	for _, st := range statics {
		fs = append(fs, arrow.Field{Name: st.field.Name, Type: st.value.DataType(), Nullable: true})
	}
	r := &mapped{in: src, schema: arrow.NewSchema(fs, nil), statics: statics}
	r.refs.Store(1)
	src.Retain()
	for _, st := range statics {
		st.value.Retain()
	}
	return r, nil
}

// mapped is a RecordReader renaming another's columns and adding constant
// columns.
type mapped struct {
	refs    atomic.Int64
	in      array.RecordReader
	schema  *arrow.Schema
	statics []staticCol
	cur     arrow.RecordBatch
	err     error
}

func (m *mapped) Retain() { m.refs.Add(1) }
func (m *mapped) Release() {
	if m.refs.Add(-1) == 0 {
		if m.cur != nil {
			m.cur.Release()
			m.cur = nil
		}
		for _, st := range m.statics {
			st.value.Release()
		}
		m.in.Release()
	}
}
func (m *mapped) Schema() *arrow.Schema { return m.schema }
func (m *mapped) Err() error {
	if m.err != nil {
		return m.err
	}
	return m.in.Err()
}
func (m *mapped) RecordBatch() arrow.RecordBatch { return m.cur }

// Record is RecordBatch (the interface's deprecated name).
func (m *mapped) Record() arrow.RecordBatch { return m.cur }

func (m *mapped) Next() bool {
	if m.cur != nil {
		m.cur.Release()
		m.cur = nil
	}
	if m.err != nil || !m.in.Next() {
		return false
	}
	rec := m.in.RecordBatch()
	n := int(rec.NumRows())
	cols := append([]arrow.Array{}, rec.Columns()...)
	var made []arrow.Array
	for _, st := range m.statics {
		a, err := evalRows(st.expr, n)
		if err != nil {
			m.err = err
			return false
		}
		made = append(made, a)
		cols = append(cols, a)
	}
	m.cur = array.NewRecordBatch(m.schema, cols, int64(n))
	for _, a := range made {
		a.Release()
	}
	return true
}
