package inspect

import (
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// metricColumn is one primitive column of the table's current schema in
// the readable_metrics struct (Java's MetricsUtil.readableMetricsStruct:
// every primitive column by its full name, sorted by name).
type metricColumn struct {
	id   int
	name string
	typ  iceberg.Type
	at   arrow.DataType
}

func (r *reader) metricColumns() ([]metricColumn, error) {
	sc := r.t.Schema()
	names, err := iceberg.IndexNameByID(sc)
	if err != nil {
		return nil, fmt.Errorf("%w: the schema of %s: %v", errs.ErrValidation, r.name, err)
	}
	var out []metricColumn
	for id, name := range names {
		f, ok := sc.FindFieldByID(id)
		if !ok {
			continue
		}
		if _, prim := f.Type.(iceberg.PrimitiveType); !prim {
			continue
		}
		at, err := table.TypeToArrowType(f.Type, false, false)
		if err != nil {
			return nil, fmt.Errorf("%w: column %s of %s: %v", errs.ErrNotSupported, name, r.name, err)
		}
		out = append(out, metricColumn{id: id, name: name, typ: f.Type, at: at})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func readableMetricsField(cols []metricColumn) arrow.Field {
	i64 := arrow.PrimitiveTypes.Int64
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = field(c.name, arrow.StructOf(
			field("column_size", i64, true), field("value_count", i64, true),
			field("null_value_count", i64, true), field("nan_value_count", i64, true),
			field("lower_bound", c.at, true), field("upper_bound", c.at, true)), true)
	}
	return field("readable_metrics", arrow.StructOf(fields...), true)
}

// appendReadableMetrics appends df's metrics of cols, bounds decoded to
// the columns' types (a bound that does not decode is null).
func appendReadableMetrics(sb *array.StructBuilder, cols []metricColumn, df iceberg.DataFile) {
	sb.Append(true)
	counts := []map[int]int64{df.ColumnSizes(), df.ValueCounts(), df.NullValueCounts(), df.NaNValueCounts()}
	bounds := []map[int][]byte{df.LowerBoundValues(), df.UpperBoundValues()}
	for k, c := range cols {
		cb := sb.FieldBuilder(k).(*array.StructBuilder)
		cb.Append(true)
		for j, m := range counts {
			var v any
			if n, ok := m[c.id]; ok {
				v = n
			}
			_ = appendValue(cb.FieldBuilder(j), v)
		}
		for j, m := range bounds {
			var v any
			if raw, ok := m[c.id]; ok {
				if lit, err := iceberg.LiteralFromBytes(c.typ, raw); err == nil {
					v = lit.Any()
				}
			}
			_ = appendValue(cb.FieldBuilder(4+j), v)
		}
	}
}
