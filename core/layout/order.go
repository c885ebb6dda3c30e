// Package layout decides how a write lays rows out in files: the table's
// sort order (parsed from Spark's WRITE ORDERED BY terms, applied to whole
// files), the distribution mode and the limits on open writers and
// buffered bytes.
package layout

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/transform"
)

var (
	callRe  = regexp.MustCompile(`^([A-Za-z_]+)\s*\((.*)\)$`)
	nullsRe = regexp.MustCompile(`(?i)\s+NULLS\s+(FIRST|LAST)$`)
	dirRe   = regexp.MustCompile(`(?i)\s+(ASC|DESC)$`)
)

// ParseOrder binds sort terms written as in Spark's WRITE ORDERED BY
// ("id", "days(ts) DESC", "bucket(16, id) ASC NULLS LAST", "`a b`.c") to
// sc. The default null order is Spark's: nulls first ascending, nulls last
// descending. No terms give the unsorted order.
func ParseOrder(terms []string, sc *iceberg.Schema) (table.SortOrder, error) {
	if len(terms) == 0 {
		return table.UnsortedSortOrder, nil
	}
	fields := make([]table.SortField, 0, len(terms))
	for _, term := range terms {
		f, err := parseTerm(term, sc)
		if err != nil {
			return table.SortOrder{}, err
		}
		fields = append(fields, f)
	}
	so, err := table.NewSortOrder(1, fields)
	if err != nil {
		return table.SortOrder{}, fmt.Errorf("%w: sort order %q: %v", errs.ErrInvalidArgument, terms, err)
	}
	return so, nil
}

func parseTerm(term string, sc *iceberg.Schema) (table.SortField, error) {
	s := strings.TrimSpace(term)
	f := table.SortField{Direction: table.SortASC}
	nulls := ""
	if m := nullsRe.FindStringSubmatch(s); m != nil {
		nulls = strings.ToLower(m[1])
		s = strings.TrimSpace(s[:len(s)-len(m[0])])
	}
	if m := dirRe.FindStringSubmatch(s); m != nil {
		if strings.EqualFold(m[1], "desc") {
			f.Direction = table.SortDESC
		}
		s = strings.TrimSpace(s[:len(s)-len(m[0])])
	}
	switch {
	case nulls == "first", nulls == "" && f.Direction == table.SortASC:
		f.NullOrder = table.NullsFirst
	default:
		f.NullOrder = table.NullsLast
	}
	if s == "" {
		return f, fmt.Errorf("%w: sort term %q names no column", errs.ErrInvalidArgument, term)
	}
	col, tr := s, iceberg.Transform(iceberg.IdentityTransform{})
	if m := callRe.FindStringSubmatch(s); m != nil && !strings.HasPrefix(s, "`") {
		var err error
		if col, tr, err = parseCall(strings.ToLower(m[1]), m[2], term); err != nil {
			return f, err
		}
	}
	name := unquote(col)
	nf, ok := sc.FindFieldByNameCaseInsensitive(name)
	if !ok {
		return f, fmt.Errorf("%w: sort term %q: column %q is not in the table schema", errs.ErrValidation, term, name)
	}
	if !tr.CanTransform(nf.Type) {
		return f, fmt.Errorf("%w: sort term %q: transform %s cannot apply to column %q of type %s", errs.ErrValidation, term, tr, name, nf.Type)
	}
	if _, ok := nf.Type.(iceberg.PrimitiveType); !ok {
		return f, fmt.Errorf("%w: sort term %q: column %q is %s; only primitive columns can be sort keys", errs.ErrValidation, term, name, nf.Type)
	}
	if inList(sc, nf.ID) {
		return f, fmt.Errorf("%w: sort term %q: column %q is inside a list or map", errs.ErrValidation, term, name)
	}
	f.SourceIDs = []int{nf.ID}
	f.Transform = tr
	return f, nil
}

// parseCall reads fn(args) as a transform and the column it applies to.
func parseCall(fn, args, term string) (string, iceberg.Transform, error) {
	parts := strings.Split(args, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	bad := func() (string, iceberg.Transform, error) {
		return "", nil, fmt.Errorf("%w: sort term %q: expected a column, years/months/days/hours(col), bucket(N, col) or truncate(W, col)",
			errs.ErrInvalidArgument, term)
	}
	one := map[string]iceberg.Transform{
		"years": iceberg.YearTransform{}, "year": iceberg.YearTransform{},
		"months": iceberg.MonthTransform{}, "month": iceberg.MonthTransform{},
		"days": iceberg.DayTransform{}, "day": iceberg.DayTransform{}, "date": iceberg.DayTransform{},
		"hours": iceberg.HourTransform{}, "hour": iceberg.HourTransform{}, "date_hour": iceberg.HourTransform{},
		"identity": iceberg.IdentityTransform{},
	}
	if tr, ok := one[fn]; ok {
		if len(parts) != 1 || parts[0] == "" {
			return bad()
		}
		return parts[0], tr, nil
	}
	if fn != "bucket" && fn != "truncate" || len(parts) != 2 {
		return bad()
	}
	// Spark accepts the width first (bucket(16, id)) and, for truncate,
	// also second (truncate(id, 4)).
	col, num := parts[1], parts[0]
	if _, err := strconv.Atoi(num); err != nil {
		col, num = parts[0], parts[1]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return bad()
	}
	if fn == "bucket" {
		return col, iceberg.BucketTransform{NumBuckets: n}, nil
	}
	return col, iceberg.TruncateTransform{Width: n}, nil
}

func unquote(s string) string {
	if !strings.Contains(s, "`") {
		return s
	}
	var parts []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '`' && quoted && i+1 < len(s) && s[i+1] == '`':
			cur.WriteByte('`')
			i++
		case c == '`':
			quoted = !quoted
		case c == '.' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return strings.Join(append(parts, cur.String()), ".")
}

// inList reports whether field id sits inside a list or a map of sc.
func inList(sc *iceberg.Schema, id int) bool {
	var walk func(t iceberg.Type, under bool) (bool, bool)
	walk = func(t iceberg.Type, under bool) (found, listed bool) {
		switch t := t.(type) {
		case *iceberg.StructType:
			for _, f := range t.FieldList {
				if f.ID == id {
					return true, under
				}
				if found, listed := walk(f.Type, under); found {
					return true, listed
				}
			}
		case *iceberg.ListType:
			if t.ElementID == id {
				return true, true
			}
			return walk(t.Element, true)
		case *iceberg.MapType:
			if t.KeyID == id || t.ValueID == id {
				return true, true
			}
			if found, listed := walk(t.KeyType, true); found {
				return true, listed
			}
			return walk(t.ValueType, true)
		}
		return false, false
	}
	st := sc.AsStruct()
	_, listed := walk(&st, false)
	return listed
}

// Describe renders an order as Spark's WRITE ORDERED BY terms, with
// column names from sc (for messages and for tests).
func Describe(so table.SortOrder, sc *iceberg.Schema) []string {
	var out []string
	for _, f := range so.Fields() {
		name, _ := sc.FindColumnName(f.SourceID())
		term := name
		switch tr := f.Transform.(type) {
		case iceberg.IdentityTransform:
		case iceberg.BucketTransform:
			term = fmt.Sprintf("bucket(%d, %s)", tr.NumBuckets, name)
		case iceberg.TruncateTransform:
			term = fmt.Sprintf("truncate(%d, %s)", tr.Width, name)
		default:
			term = fmt.Sprintf("%ss(%s)", tr, name)
		}
		term += " " + strings.ToUpper(string(f.Direction))
		if f.NullOrder == table.NullsFirst {
			term += " NULLS FIRST"
		} else {
			term += " NULLS LAST"
		}
		out = append(out, term)
	}
	return out
}

// Sorter sorts record batches of a table schema by a sort order.
type Sorter struct {
	order  table.SortOrder
	schema *iceberg.Schema
	// zorder are the field ids a z-order sorter orders by (zorder.go);
	// order is then unsorted.
	zorder []int
}

// NewSorter returns a Sorter for so over batches of sc; nil when so is
// unsorted.
func NewSorter(so table.SortOrder, sc *iceberg.Schema) (*Sorter, error) {
	if so.IsUnsorted() {
		return nil, nil
	}
	for _, f := range so.Fields() {
		nf, ok := sc.FindFieldByID(f.SourceID())
		if !ok {
			return nil, fmt.Errorf("%w: sort order %d: source field id %d is not in the table schema", errs.ErrValidation, so.OrderID(), f.SourceID())
		}
		if !f.Transform.CanTransform(nf.Type) {
			return nil, fmt.Errorf("%w: sort order %d: transform %s cannot apply to column %q of type %s", errs.ErrNotSupported, so.OrderID(), f.Transform, nf.Name, nf.Type)
		}
	}
	return &Sorter{order: so, schema: sc}, nil
}

// OrderID is the id of the sort order, recorded in each file's
// sort_order_id.
func (s *Sorter) OrderID() int { return s.order.OrderID() }

// Sort returns the rows of recs (one schema) as one batch in the sort
// order; ties keep their input order. The caller releases the result.
func (s *Sorter) Sort(ctx context.Context, recs []arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	for _, r := range recs {
		r.Retain()
	}
	rows, err := NewRows(recs, mem)
	if err != nil {
		return nil, err
	}
	defer rows.Release()
	idx, err := s.Order(ctx, rows.Batches, mem)
	if err != nil {
		return nil, err
	}
	defer idx.Release()
	return rows.Gather(ctx, idx, mem)
}

// Order returns the row numbers of recs (taken as one run of rows) in the
// sort order, ties in row order, as an integer array for Rows.Gather.
// The caller releases it.
func (s *Sorter) Order(ctx context.Context, recs []arrow.RecordBatch, mem memory.Allocator) (arrow.Array, error) {
	if len(s.zorder) > 0 {
		return s.orderZ(recs, mem)
	}
	keys := make([]arrow.Array, 0, s.order.Len())
	defer func() {
		for _, k := range keys {
			k.Release()
		}
	}()
	fields := make([]arrow.Field, 0, s.order.Len())
	opts := make(compute.SortOptions, 0, s.order.Len())
	for i, f := range s.order.Fields() {
		key, err := s.key(recs, f, mem)
		if err != nil {
			return nil, err
		}
		nulls := compute.SortNullsAtStart
		if f.NullOrder == table.NullsLast {
			nulls = compute.SortNullsAtEnd
		}
		// Arrow places NaN next to the nulls whatever the direction;
		// Spark orders NaN above every number. A leading key (NaN or
		// not, null for nulls) puts NaN last ascending, first descending.
		if rank := nanRank(key, f.Direction == table.SortDESC, mem); rank != nil {
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("n%d", i), Type: rank.DataType(), Nullable: true})
			opts = append(opts, compute.SortKey{ColumnIndex: len(keys), Order: compute.SortOrderAscending, NullPlacement: nulls})
			keys = append(keys, rank)
		}
		k := compute.SortKey{ColumnIndex: len(keys), Order: compute.SortOrderAscending, NullPlacement: nulls}
		if f.Direction == table.SortDESC {
			k.Order = compute.SortOrderDescending
		}
		keys = append(keys, key)
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("k%d", i), Type: key.DataType(), Nullable: true})
		opts = append(opts, k)
	}
	keyRec := array.NewRecordBatch(arrow.NewSchema(fields, nil), keys, int64(keys[0].Len()))
	defer keyRec.Release()
	// sort_indices takes Go's allocator: arrow-go v18.8 keeps an extra
	// reference on the indices' buffer, which only the garbage collector
	// frees.
	sortCtx := compute.WithAllocator(ctx, memory.DefaultAllocator)
	keyDatum := compute.NewDatum(keyRec) // NewDatum retains what it wraps
	defer keyDatum.Release()
	idx, err := compute.CallFunction(sortCtx, "sort_indices", opts, keyDatum)
	if err != nil {
		return nil, fmt.Errorf("%w: sorting by %s: %v", errs.ErrNotSupported, strings.Join(Describe(s.order, s.schema), ", "), err)
	}
	defer idx.Release()
	return idx.(*compute.ArrayDatum).MakeArray(), nil
}

// key is sort field f's values over recs, as one array.
func (s *Sorter) key(recs []arrow.RecordBatch, f table.SortField, mem memory.Allocator) (arrow.Array, error) {
	parts := make([]arrow.Array, 0, len(recs))
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for _, r := range recs {
		src, err := transform.SourceColumn(r, s.schema, f.SourceID(), mem)
		if err != nil {
			return nil, err
		}
		key, err := transform.Apply(f.Transform, src, mem)
		src.Release()
		if err != nil {
			return nil, err
		}
		parts = append(parts, key)
	}
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	key, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, fmt.Errorf("%w: joining the sort keys of %d batches: %v", errs.ErrNotSupported, len(parts), err)
	}
	return key, nil
}

// nanRank is, for a float key holding NaN, 0 or 1 per row (NaN rows 1
// ascending, 0 descending; null for nulls); nil for other keys.
func nanRank(key arrow.Array, desc bool, mem memory.Allocator) arrow.Array {
	var isNaN func(i int) bool
	switch a := key.(type) {
	case *array.Float64:
		isNaN = func(i int) bool { return math.IsNaN(a.Value(i)) }
	case *array.Float32:
		isNaN = func(i int) bool { return math.IsNaN(float64(a.Value(i))) }
	default:
		return nil
	}
	found := false
	for i := range key.Len() {
		if key.IsValid(i) && isNaN(i) {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	b := array.NewInt8Builder(mem)
	defer b.Release()
	b.Reserve(key.Len())
	for i := range key.Len() {
		switch {
		case key.IsNull(i):
			b.AppendNull()
		case isNaN(i) != desc:
			b.Append(1)
		default:
			b.Append(0)
		}
	}
	return b.NewArray()
}
