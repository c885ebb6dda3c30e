package parquet

import (
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// leafColumn is one Parquet leaf column of an Arrow schema.
type leafColumn struct {
	name string // Iceberg column name: field names joined by dots
	path string // Parquet column path, as arrow-go's writer properties name it
	top  int    // index of the top-level field holding the leaf
}

// leafColumns lists the leaves of sc in Parquet column order. Iceberg names
// list elements "element" and map entries "key" and "value" whatever the
// Arrow field names are; the Parquet paths come from pqarrow's own schema
// conversion, whose leaves are in the same depth-first order.
func leafColumns(sc *arrow.Schema, props *pq.WriterProperties) ([]leafColumn, map[string]bool, error) {
	var leaves []leafColumn
	groups := map[string]bool{}
	var walk func(prefix string, f arrow.Field, top int)
	walk = func(prefix string, f arrow.Field, top int) {
		name := f.Name
		if prefix != "" {
			name = prefix + "." + f.Name
		}
		switch t := f.Type.(type) {
		case *arrow.StructType:
			groups[name] = true
			for _, c := range t.Fields() {
				walk(name, c, top)
			}
			return
		case *arrow.MapType: // before ListLikeType, which a map also is
			groups[name] = true
			walk(name, arrow.Field{Name: "key", Type: t.KeyType()}, top)
			walk(name, arrow.Field{Name: "value", Type: t.ItemType()}, top)
			return
		case arrow.ListLikeType:
			groups[name] = true
			walk(name, arrow.Field{Name: "element", Type: t.Elem()}, top)
			return
		}
		leaves = append(leaves, leafColumn{name: name, top: top})
	}
	for i, f := range sc.Fields() {
		walk("", f, i)
	}
	ps, err := pqarrow.ToParquet(sc, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, nil, fmt.Errorf("parquet schema: %w", err)
	}
	if ps.NumColumns() != len(leaves) {
		return nil, nil, fmt.Errorf("parquet schema has %d leaf columns, arrow schema %d: %w",
			ps.NumColumns(), len(leaves), errs.ErrNotSupported)
	}
	for i := range leaves {
		leaves[i].path = ps.Column(i).Path()
	}
	return leaves, groups, nil
}

// columnPlan is the per-column configuration of a Writer, resolved against
// its schema once.
type columnPlan struct {
	// props are the pqarrow writer properties for bloom filters and
	// per-column dictionary switches, keyed by Parquet path.
	props []pq.WriterProperty
	// dict holds the per-column dictionary switches of top-level columns
	// (which overrule the per-file decision).
	dict map[string]bool
	// bloom holds the bloom filters of top-level columns by field index,
	// for the native encoder.
	bloom map[int]BloomFilter
}

// planColumns resolves the bloom filter and dictionary settings of r
// against sc. A setting naming no column, or a struct, list or map instead
// of a primitive column, is an invalid argument. (Iceberg Java logs and
// skips such settings; an error is clearer, since a misspelt column would
// otherwise silently get no filter.)
func planColumns(sc *arrow.Schema, r resolved) (columnPlan, error) {
	var plan columnPlan
	if len(r.BloomFilters) == 0 && len(r.Dictionary) == 0 {
		return plan, nil
	}
	leaves, groups, err := leafColumns(sc, r.writerProps(nil))
	if err != nil {
		return plan, err
	}
	byName := make(map[string]leafColumn, len(leaves))
	for _, l := range leaves {
		byName[l.name] = l
	}
	lookup := func(prefix, col string) (leafColumn, error) {
		l, ok := byName[col]
		switch {
		case ok:
			return l, nil
		case groups[col]:
			return l, fmt.Errorf("%s%s: column %q is not a primitive column: %w", prefix, col, col, errs.ErrInvalidArgument)
		default:
			return l, fmt.Errorf("%s%s: no column %q in the schema: %w", prefix, col, col, errs.ErrInvalidArgument)
		}
	}
	// Sorted, so that the first error reported does not depend on map order.
	for _, col := range sortedKeys(r.Dictionary) {
		on := r.Dictionary[col]
		l, err := lookup(PropDictEnabledPrefix, col)
		if err != nil {
			return plan, err
		}
		plan.props = append(plan.props, pq.WithDictionaryFor(l.path, on))
		if l.name == sc.Field(l.top).Name {
			if plan.dict == nil {
				plan.dict = map[string]bool{}
			}
			plan.dict[l.name] = on
		}
	}
	if len(r.BloomFilters) > 0 {
		plan.props = append(plan.props, pq.WithMaxBloomFilterBytes(r.BloomMaxBytes))
		plan.bloom = map[int]BloomFilter{}
	}
	for _, col := range sortedKeys(r.BloomFilters) {
		bf := r.BloomFilters[col]
		l, err := lookup(PropBloomEnabledPrefix, col)
		if err != nil {
			return plan, err
		}
		plan.props = append(plan.props,
			pq.WithBloomFilterEnabledFor(l.path, true),
			pq.WithBloomFilterFPPFor(l.path, bf.FPP))
		if bf.NDV > 0 {
			plan.props = append(plan.props, pq.WithBloomFilterNDVFor(l.path, bf.NDV))
		} else {
			// arrow-go's adaptive filter keeps candidates from the maximum
			// size down by halves and writes the smallest one sized for the
			// distinct values seen at the fpp; it stops adding candidates
			// below about 1 KiB by itself.
			plan.props = append(plan.props,
				pq.WithAdaptiveBloomFilterEnabledFor(l.path, true),
				pq.WithBloomFilterCandidatesFor(l.path, 16))
		}
		if l.name == sc.Field(l.top).Name {
			plan.bloom[l.top] = bf
		}
	}
	return plan, nil
}

// noDictionary applies the per-column dictionary switches to noDict, the
// top-level columns the per-file decision writes without a dictionary.
func (p columnPlan) noDictionary(noDict []string) []string {
	if len(p.dict) == 0 {
		return noDict
	}
	out := make([]string, 0, len(noDict)+len(p.dict))
	for _, n := range noDict {
		if _, ok := p.dict[n]; !ok {
			out = append(out, n)
		}
	}
	for _, n := range sortedKeys(p.dict) {
		if !p.dict[n] {
			out = append(out, n)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CheckColumns reports, as an invalid argument naming the column, a bloom
// filter or dictionary setting of o that names no primitive column of sc.
// Writers report the same error on their first Write.
func (o Options) CheckColumns(sc *arrow.Schema) error {
	r, err := o.resolve()
	if err != nil {
		return err
	}
	_, err = planColumns(sc, r)
	return err
}
