package schema

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// Options are the write options that change schema validation. Callers
// default both to true.
type Options struct {
	// CheckNullability rejects a nullable input field (list element, map
	// value) written into a required one.
	CheckNullability bool
	// CheckOrdering rejects struct fields whose relative order differs from
	// the table's.
	CheckOrdering bool
	// Zone is the session time zone: timestamps without a time zone
	// written into a timestamptz column are wall-clock times in it, and
	// instants written into a timestamp column become its wall-clock
	// times (Spark's casts). nil is UTC.
	Zone *tz.Zone
}

// conv converts one input array to the table's Arrow type. The result has
// the same length and the same row positions as the input; the caller
// releases it.
type conv func(arr arrow.Array) (arrow.Array, error)

// column is the plan for one top-level column of the write schema.
type column struct {
	in       int // index in the input schema, -1 when missing
	conv     conv
	field    iceberg.NestedField
	out      arrow.DataType
	deepNull bool // a required field below this one must be checked per batch
}

// Conformer casts input batches of one input Arrow schema to the table's
// Arrow write schema. It is safe for concurrent use by several goroutines.
type Conformer struct {
	input *arrow.Schema
	out   *arrow.Schema
	cols  []column
	mem   memory.Allocator
}

// NewConformer validates input against the table schema (rules in the package
// documentation) and plans the conversion of its batches. Every error wraps
// errs.ErrValidation and names the column path.
func NewConformer(tbl *iceberg.Schema, input *arrow.Schema, opts Options, mem memory.Allocator) (*Conformer, error) {
	if tbl == nil || input == nil {
		return nil, fmt.Errorf("schema: NewConformer needs a table and an input schema: %w", errs.ErrValidation)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	out, err := table.SchemaToArrowSchema(tbl, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("schema: table schema has no Arrow form: %v: %w", err, errs.ErrValidation)
	}
	p := planner{opts: opts, mem: mem, ctx: exec.WithAllocator(context.Background(), mem)}
	children, err := p.match("", input.Fields(), tbl.Fields(), out.Fields(), false)
	if err != nil {
		return nil, err
	}
	c := &Conformer{input: input, out: out, mem: mem, cols: make([]column, len(children))}
	for i, ch := range children {
		c.cols[i] = column{in: ch.in, conv: ch.conv, field: tbl.Fields()[i], out: out.Field(i).Type,
			deepNull: hasNestedRequired(tbl.Fields()[i].Type)}
	}
	return c, nil
}

// Schema returns the table's Arrow write schema: iceberg-go's
// SchemaToArrowSchema(table, nil, true, false), with field ids in the
// "PARQUET:field_id" metadata of every field.
func (c *Conformer) Schema() *arrow.Schema { return c.out }

// Conform converts a batch of the input schema to the write schema. Columns
// whose type already matches are passed through without copying. The caller
// releases the result.
func (c *Conformer) Conform(rec arrow.RecordBatch) (res arrow.RecordBatch, err error) {
	if rec == nil {
		return nil, fmt.Errorf("schema: nil batch: %w", errs.ErrValidation)
	}
	if !sameShape(rec.Schema(), c.input) {
		return nil, fmt.Errorf("schema: batch schema %s differs from the stream's schema %s: %w",
			rec.Schema(), c.input, errs.ErrValidation)
	}
	n := int(rec.NumRows())
	cols := make([]arrow.Array, 0, len(c.cols))
	defer func() {
		for _, a := range cols {
			a.Release()
		}
		// arrow-go panics on inconsistent arrays; report instead of crashing.
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("schema: converting a batch: %v: %w", r, errs.ErrValidation)
		}
	}()
	for _, col := range c.cols {
		var a arrow.Array
		if col.in < 0 {
			a = array.MakeArrayOfNull(c.mem, col.out, n)
		} else {
			a, err = col.conv(rec.Column(col.in))
			if err != nil {
				return nil, err
			}
		}
		cols = append(cols, a)
		if col.field.Required && a.NullN() > 0 {
			return nil, nullInRequired(col.field.Name)
		}
		if col.deepNull {
			if err := checkRequired(a, col.field.Type, col.field.Name, nil); err != nil {
				return nil, err
			}
		}
	}
	return array.NewRecordBatch(c.out, cols, int64(n)), nil
}

func nullInRequired(path string) error {
	return fmt.Errorf("column '%s': null value in a required field: %w", path, errs.ErrValidation)
}

type planner struct {
	opts Options
	mem  memory.Allocator
	ctx  context.Context
}

// child is the plan for one field of a struct (or the top level).
type child struct {
	in   int // input field index, -1 when missing
	conv conv
	out  arrow.DataType
}

// match pairs the table's fields with input fields by name, checks presence,
// nullability and (if checkOrder) relative order, and plans each conversion.
func (p *planner) match(path string, in []arrow.Field, tbl []iceberg.NestedField, out []arrow.Field, checkOrder bool) ([]child, error) {
	if err := checkUniqueNames(path, in); err != nil {
		return nil, err
	}
	byName := make(map[string]int, len(in))
	for i, f := range in {
		byName[f.Name] = i
	}
	known := make(map[string]bool, len(tbl))
	for _, tf := range tbl {
		known[tf.Name] = true
	}
	for _, f := range in {
		if !known[f.Name] {
			return nil, fmt.Errorf("column '%s': not in the table (schema merge is not enabled): %w",
				join(path, f.Name), errs.ErrValidation)
		}
	}
	res := make([]child, len(tbl))
	last, lastName := -1, ""
	for i, tf := range tbl {
		fp := join(path, tf.Name)
		idx, ok := byName[tf.Name]
		if !ok {
			if tf.Required {
				return nil, fmt.Errorf("column '%s': required column is missing from the input: %w", fp, errs.ErrValidation)
			}
			res[i] = child{in: -1, out: out[i].Type}
			continue
		}
		if checkOrder && idx < last {
			return nil, fmt.Errorf("column '%s': out of order, the table has it before '%s' (check-ordering): %w",
				fp, join(path, lastName), errs.ErrValidation)
		}
		last, lastName = idx, tf.Name
		if err := p.nullability(fp, tf.Required, in[idx].Nullable); err != nil {
			return nil, err
		}
		cv, err := p.typ(fp, in[idx].Type, tf.Type, out[i].Type)
		if err != nil {
			return nil, err
		}
		res[i] = child{in: idx, conv: cv, out: out[i].Type}
	}
	return res, nil
}

func (p *planner) nullability(path string, required, nullable bool) error {
	if p.opts.CheckNullability && required && nullable {
		return fmt.Errorf("column '%s': cannot write nullable values into a required field (check-nullability): %w",
			path, errs.ErrValidation)
	}
	return nil
}

func mismatch(path string, in arrow.DataType, t iceberg.Type) error {
	return fmt.Errorf("column '%s': cannot write Arrow type %s into Iceberg type %s: %w", path, in, t, errs.ErrValidation)
}

// typ plans the conversion of values of Arrow type in into table type t,
// whose Arrow form is out.
func (p *planner) typ(path string, in arrow.DataType, t iceberg.Type, out arrow.DataType) (conv, error) {
	switch dt := in.(type) {
	case *arrow.NullType:
		return func(a arrow.Array) (arrow.Array, error) {
			return array.MakeArrayOfNull(p.mem, out, a.Len()), nil
		}, nil
	case *arrow.DictionaryType:
		inner, err := p.typ(path, dt.ValueType, t, out)
		if err != nil {
			return nil, err
		}
		return func(a arrow.Array) (arrow.Array, error) {
			return p.decode(path, a.(*array.Dictionary), inner)
		}, nil
	case arrow.ExtensionType:
		if arrow.TypeEqual(in, out) {
			return retain, nil
		}
		if dt.ExtensionName() == "arrow.uuid" {
			return nil, mismatch(path, in, t)
		}
		inner, err := p.typ(path, dt.StorageType(), t, out)
		if err != nil {
			return nil, err
		}
		return func(a arrow.Array) (arrow.Array, error) {
			return inner(a.(array.ExtensionArray).Storage())
		}, nil
	}

	switch tt := t.(type) {
	case *iceberg.StructType:
		st, ok := in.(*arrow.StructType)
		if !ok {
			return nil, mismatch(path, in, t)
		}
		return p.structConv(path, st, tt, out.(*arrow.StructType))
	case *iceberg.MapType:
		mt, ok := in.(*arrow.MapType)
		if !ok {
			return nil, mismatch(path, in, t)
		}
		return p.mapConv(path, mt, tt, out.(*arrow.MapType))
	case *iceberg.ListType:
		lt, ok := in.(arrow.ListLikeType)
		if _, isMap := in.(*arrow.MapType); !ok || isMap {
			return nil, mismatch(path, in, t)
		}
		return p.listConv(path, lt, tt, out.(*arrow.ListType))
	case iceberg.UnknownType:
		return nil, mismatch(path, in, t) // only a null-typed input fits
	case iceberg.VariantType, iceberg.GeometryType, iceberg.GeographyType:
		if arrow.TypeEqual(in, out) {
			return retain, nil
		}
		return nil, mismatch(path, in, t)
	case iceberg.PrimitiveType:
		if _, nested := in.(arrow.NestedType); nested {
			return nil, mismatch(path, in, t)
		}
		it, err := primitiveOf(path, in)
		if err != nil {
			return nil, mismatch(path, in, t)
		}
		if !primitiveFits(it, tt, in) {
			return nil, mismatch(path, in, t)
		}
		c, err := p.leaf(path, in, out)
		if dt, ok := out.(*arrow.Decimal128Type); ok && err == nil && dt.Precision > 18 {
			c = checkPrecision(path, dt, c)
		}
		return c, err
	}
	return nil, mismatch(path, in, t)
}

// primitiveFits reports whether values whose natural Iceberg type is from
// (Arrow type in) may be written into a column of type to.
func primitiveFits(from, to iceberg.Type, in arrow.DataType) bool {
	if from.Equals(to) || Promotable(from, to) {
		return true
	}
	switch to.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType, iceberg.DateType:
		// Dates and timestamps of any unit, with or without a time zone,
		// fit each other's columns, converted in the session time zone as
		// Spark's ANSI store assignment casts them.
		switch from.(type) {
		case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.DateType:
			return true
		}
		return false
	case iceberg.UUIDType:
		fb, ok := in.(*arrow.FixedSizeBinaryType)
		return ok && fb.ByteWidth == 16
	}
	return false
}

// checkPrecision makes c refuse a value beyond the precision of dt, a
// decimal stored as FIXED_LEN_BYTE_ARRAY: arrow-go's nested encoder writes
// such a value as it is (its INT32 and INT64 decimals it checks itself, as
// does core/parquet's flat encoder all of them, while converting).
func checkPrecision(path string, dt *arrow.Decimal128Type, c conv) conv {
	return func(a arrow.Array) (arrow.Array, error) {
		out, err := c(a)
		if err != nil {
			return nil, err
		}
		d := out.(*array.Decimal128)
		for i := range d.Len() {
			if d.IsValid(i) && !d.Value(i).FitsInPrecision(dt.Precision) {
				out.Release()
				return nil, fmt.Errorf("column '%s': value %s does not fit its type %s: %w", path, d.ValueStr(i), dt, errs.ErrValidation)
			}
		}
		return out, nil
	}
}

func retain(a arrow.Array) (arrow.Array, error) {
	a.Retain()
	return a, nil
}

// structConv plans a struct column: fields matched by name, missing optional
// fields as nulls. The result keeps the input's offset and validity buffer.
func (p *planner) structConv(path string, in *arrow.StructType, t *iceberg.StructType, out *arrow.StructType) (conv, error) {
	children, err := p.match(path, in.Fields(), t.FieldList, out.Fields(), p.opts.CheckOrdering)
	if err != nil {
		return nil, err
	}
	holdsLists := make([]bool, len(children))
	for i, ch := range children {
		holdsLists[i] = ch.in >= 0 && hasLists(in.Field(ch.in).Type)
	}
	return func(a arrow.Array) (arrow.Array, error) {
		d := a.Data()
		kids := make([]arrow.ArrayData, len(children))
		defer func() {
			for _, k := range kids {
				if k != nil {
					k.Release()
				}
			}
		}()
		for i, ch := range children {
			var r arrow.Array
			if ch.in < 0 {
				r = array.MakeArrayOfNull(p.mem, ch.out, d.Offset()+d.Len())
			} else {
				cd := d.Children()[ch.in]
				if holdsLists[i] && d.NullN() != 0 { // -1: not counted yet
					// A list below a null struct slot is null there too:
					// its elements are then left out (dropNullElements).
					cd = p.pushNulls(d, cd)
					defer cd.Release()
				}
				raw := array.MakeFromData(cd)
				var err error
				r, err = ch.conv(raw)
				raw.Release()
				if err != nil {
					return nil, err
				}
			}
			kids[i] = r.Data()
			kids[i].Retain()
			r.Release()
		}
		return build(out, d, d.Buffers()[:1], kids), nil
	}, nil
}

// hasLists reports whether lists or maps sit in (or below) type t.
func hasLists(t arrow.DataType) bool {
	switch t := t.(type) {
	case arrow.ListLikeType:
		return true
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if hasLists(f.Type) {
				return true
			}
		}
	case *arrow.DictionaryType:
		return hasLists(t.ValueType)
	}
	return false
}

// pushNulls returns child (a field of struct d) with d's null slots null
// as well.
func (p *planner) pushNulls(d, child arrow.ArrayData) arrow.ArrayData {
	coff, n := child.Offset(), child.Len()
	buf := memory.NewResizableBuffer(p.mem)
	buf.Resize(int(bitutil.BytesForBits(int64(coff + n))))
	bits := buf.Bytes()
	clear(bits)
	parent, own := validity(d), validity(child)
	for j := range min(n, d.Offset()+d.Len()) {
		if parent(j) && own(coff+j) {
			bitutil.SetBit(bits, coff+j)
		}
	}
	bufs := append([]*memory.Buffer{buf}, child.Buffers()[1:]...)
	out := array.NewData(child.DataType(), n, bufs, child.Children(), array.UnknownNullCount, coff)
	buf.Release()
	if dict := child.Dictionary(); dict != nil && dict != (*array.Data)(nil) {
		out.SetDictionary(dict)
	}
	return out
}

// build makes an array of type dt shaped like d (length, offset, nulls) from
// the given buffers and children.
func build(dt arrow.DataType, d arrow.ArrayData, bufs []*memory.Buffer, kids []arrow.ArrayData) arrow.Array {
	nd := array.NewData(dt, d.Len(), bufs, kids, d.NullN(), d.Offset())
	defer nd.Release()
	return array.MakeFromData(nd)
}

// mapConv plans a map column: keys and values match by position.
func (p *planner) mapConv(path string, in *arrow.MapType, t *iceberg.MapType, out *arrow.MapType) (conv, error) {
	kc, err := p.typ(path+".key", in.KeyType(), t.KeyType, out.KeyType())
	if err != nil {
		return nil, err
	}
	if err := p.nullability(path+".value", t.ValueRequired, in.ItemField().Nullable); err != nil {
		return nil, err
	}
	vc, err := p.typ(path+".value", in.ItemType(), t.ValueType, out.ItemType())
	if err != nil {
		return nil, err
	}
	entriesType := out.Elem()
	return func(a arrow.Array) (arrow.Array, error) {
		d := a.Data()
		ed := d.Children()[0]
		convs := []conv{kc, vc}
		kids := make([]arrow.ArrayData, 0, 2)
		defer func() {
			for _, k := range kids {
				k.Release()
			}
		}()
		for i, cv := range convs {
			raw := array.MakeFromData(ed.Children()[i])
			r, err := cv(raw)
			raw.Release()
			if err != nil {
				return nil, err
			}
			kids = append(kids, r.Data())
			r.Data().Retain()
			r.Release()
		}
		var entries arrow.Array = build(entriesType, ed, ed.Buffers()[:1], kids)
		defer entries.Release()
		offs := p.offsetsOf(d)
		defer offs.Release()
		if o2, e2, err := p.dropNullElements(path, d, values[int32](offs), entries); err != nil {
			return nil, err
		} else if o2 != nil {
			defer o2.Release()
			defer e2.Release()
			offs, entries = o2, e2
		}
		return build(out, d, []*memory.Buffer{d.Buffers()[0], offs}, []arrow.ArrayData{entries.Data()}), nil
	}, nil
}

// sameShape reports whether two schemas have the same field names and types
// (metadata aside).
func sameShape(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || !arrow.TypeEqual(fa.Type, fb.Type) {
			return false
		}
	}
	return true
}
