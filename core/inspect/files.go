package inspect

import (
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// partitionField is one field of the table's unified partition type: the
// fields of every spec, by field id (Java's Partitioning.partitionType).
type partitionField struct {
	id   int
	name string
	typ  arrow.DataType
}

func (r *reader) partitionType() ([]partitionField, error) {
	seen := map[int]bool{}
	var out []partitionField
	specs := r.m.PartitionSpecs()
	sort.Slice(specs, func(i, j int) bool { return specs[i].ID() < specs[j].ID() })
	for _, spec := range specs {
		pt := spec.PartitionType(r.t.Schema())
		for _, f := range pt.FieldList {
			if seen[f.ID] {
				continue
			}
			seen[f.ID] = true
			at, err := table.TypeToArrowType(f.Type, false, false)
			if err != nil {
				return nil, fmt.Errorf("%w: partition field %s of %s: %v", errs.ErrNotSupported, f.Name, r.name, err)
			}
			out = append(out, partitionField{id: f.ID, name: f.Name, typ: at})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

func partitionStruct(pf []partitionField) arrow.DataType {
	fields := make([]arrow.Field, len(pf))
	for i, f := range pf {
		fields[i] = field(f.name, f.typ, true)
	}
	return arrow.StructOf(fields...)
}

// dataFileFields are Java's DataFile.getType fields, without partition
// when the table has no partition field (as Java's BaseFilesTable).
func dataFileFields(pf []partitionField) []arrow.Field {
	i32, i64 := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64
	out := []arrow.Field{
		field("content", i32, true), field("file_path", arrow.BinaryTypes.String, false),
		field("file_format", arrow.BinaryTypes.String, false), field("spec_id", i32, true),
	}
	if len(pf) > 0 {
		out = append(out, field("partition", partitionStruct(pf), false))
	}
	return append(out,
		field("record_count", i64, false), field("file_size_in_bytes", i64, false),
		field("column_sizes", longMap, true), field("value_counts", longMap, true),
		field("null_value_counts", longMap, true), field("nan_value_counts", longMap, true),
		field("lower_bounds", bytesMap, true), field("upper_bounds", bytesMap, true),
		field("key_metadata", arrow.BinaryTypes.Binary, true), field("split_offsets", arrow.ListOf(i64), true),
		field("equality_ids", arrow.ListOf(i32), true), field("sort_order_id", i32, true),
		field("first_row_id", i64, true), field("referenced_data_file", arrow.BinaryTypes.String, true),
		field("content_offset", i64, true), field("content_size_in_bytes", i64, true),
	)
}

// fieldBuilders is what appendDataFile appends to: a record builder's
// fields or a struct builder's.
type fieldBuilders interface{ Field(i int) array.Builder }

type structFields struct{ *array.StructBuilder }

func (s structFields) Field(i int) array.Builder { return s.FieldBuilder(i) }

func appendDataFile(b fieldBuilders, off int, pf []partitionField, df iceberg.DataFile) error {
	i := off
	next := func() array.Builder { i++; return b.Field(i - 1) }
	_ = appendValue(next(), int32(df.ContentType()))
	_ = appendValue(next(), df.FilePath())
	_ = appendValue(next(), string(df.FileFormat()))
	_ = appendValue(next(), df.SpecID())
	if len(pf) > 0 {
		sb := next().(*array.StructBuilder)
		sb.Append(true)
		vals := df.Partition()
		for k, f := range pf {
			v, ok := vals[f.id]
			if !ok {
				v = nil
			}
			if err := appendValue(sb.FieldBuilder(k), v); err != nil {
				return fmt.Errorf("%w: partition field %s of %s: %v", errs.ErrNotSupported, f.name, df.FilePath(), err)
			}
		}
	}
	_ = appendValue(next(), df.Count())
	_ = appendValue(next(), df.FileSizeBytes())
	for _, m := range []map[int]int64{df.ColumnSizes(), df.ValueCounts(), df.NullValueCounts(), df.NaNValueCounts()} {
		appendIntMap(next().(*array.MapBuilder), m)
	}
	for _, m := range []map[int][]byte{df.LowerBoundValues(), df.UpperBoundValues()} {
		appendBytesMap(next().(*array.MapBuilder), m)
	}
	if km := df.KeyMetadata(); km != nil {
		_ = appendValue(next(), km)
	} else {
		next().AppendNull()
	}
	lb := next().(*array.ListBuilder)
	if so := df.SplitOffsets(); so != nil {
		lb.Append(true)
		for _, o := range so {
			lb.ValueBuilder().(*array.Int64Builder).Append(o)
		}
	} else {
		lb.AppendNull()
	}
	lb = next().(*array.ListBuilder)
	if eq := df.EqualityFieldIDs(); eq != nil {
		lb.Append(true)
		for _, o := range eq {
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(o))
		}
	} else {
		lb.AppendNull()
	}
	var so any
	if p := df.SortOrderID(); p != nil {
		so = int32(*p)
	}
	_ = appendValue(next(), so)
	_ = appendValue(next(), ptrAny(df.FirstRowID()))
	_ = appendValue(next(), ptrAny(df.ReferencedDataFile()))
	_ = appendValue(next(), ptrAny(df.ContentOffset()))
	_ = appendValue(next(), ptrAny(df.ContentSizeInBytes()))
	return nil
}

// liveManifests lists the manifests of snaps, each once.
func (r *reader) distinctManifests(snaps []table.Snapshot) ([]iceberg.ManifestFile, error) {
	mfs, _, err := r.manifestsOf(snaps)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := mfs[:0]
	for _, mf := range mfs {
		if !seen[mf.FilePath()] {
			seen[mf.FilePath()] = true
			out = append(out, mf)
		}
	}
	return out, nil
}

// eachEntry calls fn with every entry of mfs (live ones only when live).
func (r *reader) eachEntry(mfs []iceberg.ManifestFile, live bool, fn func(iceberg.ManifestFile, iceberg.ManifestEntry) error) error {
	fs, err := r.io()
	if err != nil {
		return err
	}
	for _, mf := range mfs {
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("%w: reading %s: %v", errs.ErrCancelled, r.name, err)
		}
		for e, err := range mf.Entries(fs, live) {
			if err != nil {
				return fmt.Errorf("%w: reading manifest %s of %s: %v", errs.ErrIO, mf.FilePath(), r.name, err)
			}
			if err := fn(mf, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// files is the files table and its variants (kind: files, data_files,
// delete_files): the live files of the snapshots' manifests.
func (r *reader) files(snaps []table.Snapshot, kind string) (arrow.RecordBatch, error) {
	pf, err := r.partitionType()
	if err != nil {
		return nil, err
	}
	mc, err := r.metricColumns()
	if err != nil {
		return nil, err
	}
	fields := dataFileFields(pf)
	b := r.builder(append(fields, readableMetricsField(mc))...)
	defer b.Release()
	mfs, err := r.distinctManifests(snaps)
	if err != nil {
		return nil, err
	}
	err = r.eachEntry(mfs, true, func(mf iceberg.ManifestFile, e iceberg.ManifestEntry) error {
		data := mf.ManifestContent() == iceberg.ManifestContentData
		if (kind == "data_files" && !data) || (kind == "delete_files" && data) {
			return nil
		}
		if err := appendDataFile(b, 0, pf, e.DataFile()); err != nil {
			return err
		}
		appendReadableMetrics(b.Field(len(fields)).(*array.StructBuilder), mc, e.DataFile())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.NewRecordBatch(), nil
}

// entries is the entries table: every entry of the snapshots' manifests,
// deleted ones included (Java's ManifestReader.entries()).
func (r *reader) entries(snaps []table.Snapshot) (arrow.RecordBatch, error) {
	pf, err := r.partitionType()
	if err != nil {
		return nil, err
	}
	mc, err := r.metricColumns()
	if err != nil {
		return nil, err
	}
	i64 := arrow.PrimitiveTypes.Int64
	b := r.builder(field("status", arrow.PrimitiveTypes.Int32, false), field("snapshot_id", i64, true),
		field("sequence_number", i64, true), field("file_sequence_number", i64, true),
		field("data_file", arrow.StructOf(dataFileFields(pf)...), false), readableMetricsField(mc))
	defer b.Release()
	mfs, err := r.distinctManifests(snaps)
	if err != nil {
		return nil, err
	}
	err = r.eachEntry(mfs, false, func(_ iceberg.ManifestFile, e iceberg.ManifestEntry) error {
		_ = appendValue(b.Field(0), int32(e.Status()))
		_ = appendValue(b.Field(1), e.SnapshotID())
		_ = appendValue(b.Field(2), e.SequenceNum())
		_ = appendValue(b.Field(3), ptrAny(e.FileSequenceNum()))
		sb := b.Field(4).(*array.StructBuilder)
		sb.Append(true)
		if err := appendDataFile(structFields{sb}, 0, pf, e.DataFile()); err != nil {
			return err
		}
		appendReadableMetrics(b.Field(5).(*array.StructBuilder), mc, e.DataFile())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.NewRecordBatch(), nil
}

// partitionRow is one row of the partitions table.
type partitionRow struct {
	values                map[int]any
	specID                int32
	records, size         int64
	files                 int32
	posRecords, eqRecords int64
	posFiles, eqFiles     int32
	lastAt                *int64
	lastSnapshot          *int64
}

// partitions is the partitions table: the live files of the snapshot
// grouped by partition (Java's PartitionsTable).
func (r *reader) partitions(snaps []table.Snapshot) (arrow.RecordBatch, error) {
	pf, err := r.partitionType()
	if err != nil {
		return nil, err
	}
	i32, i64 := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64
	var fields []arrow.Field
	if len(pf) > 0 {
		fields = append(fields, field("partition", partitionStruct(pf), false), field("spec_id", i32, false))
	}
	fields = append(fields, field("record_count", i64, false), field("file_count", i32, false),
		field("total_data_file_size_in_bytes", i64, false), field("position_delete_record_count", i64, false),
		field("position_delete_file_count", i32, false), field("equality_delete_record_count", i64, false),
		field("equality_delete_file_count", i32, false), field("last_updated_at", tsType, true),
		field("last_updated_snapshot_id", i64, true))
	b := r.builder(fields...)
	defer b.Release()
	mfs, err := r.distinctManifests(snaps)
	if err != nil {
		return nil, err
	}
	rows := map[string]*partitionRow{}
	var order []string
	err = r.eachEntry(mfs, true, func(_ iceberg.ManifestFile, e iceberg.ManifestEntry) error {
		df := e.DataFile()
		vals := df.Partition()
		key := ""
		for _, f := range pf {
			key += fmt.Sprintf("%#v|", vals[f.id])
		}
		row := rows[key]
		if row == nil {
			row = &partitionRow{values: vals}
			rows[key] = row
			order = append(order, key)
		}
		row.specID = df.SpecID()
		switch df.ContentType() {
		case iceberg.EntryContentData:
			row.records += df.Count()
			row.files++
			row.size += df.FileSizeBytes()
		case iceberg.EntryContentPosDeletes:
			row.posRecords += df.Count()
			row.posFiles++
		case iceberg.EntryContentEqDeletes:
			row.eqRecords += df.Count()
			row.eqFiles++
		}
		if sn := r.m.SnapshotByID(e.SnapshotID()); sn != nil && (row.lastAt == nil || sn.TimestampMs > *row.lastAt) {
			at, id := sn.TimestampMs, sn.SnapshotID
			row.lastAt, row.lastSnapshot = &at, &id
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(order)
	for _, k := range order {
		row := rows[k]
		i := 0
		if len(pf) > 0 {
			sb := b.Field(0).(*array.StructBuilder)
			sb.Append(true)
			for j, f := range pf {
				if err := appendValue(sb.FieldBuilder(j), row.values[f.id]); err != nil {
					return nil, fmt.Errorf("%w: partition field %s: %v", errs.ErrNotSupported, f.name, err)
				}
			}
			_ = appendValue(b.Field(1), row.specID)
			i = 2
		}
		for _, v := range []any{row.records, row.files, row.size, row.posRecords, row.posFiles, row.eqRecords, row.eqFiles} {
			_ = appendValue(b.Field(i), v)
			i++
		}
		if row.lastAt != nil {
			b.Field(i).(*array.TimestampBuilder).Append(arrow.Timestamp(*row.lastAt * 1000))
		} else {
			b.Field(i).AppendNull()
		}
		_ = appendValue(b.Field(i+1), ptrAny(row.lastSnapshot))
	}
	return b.NewRecordBatch(), nil
}

func appendStringMap(b *array.MapBuilder, m map[string]string) {
	if m == nil {
		b.AppendNull()
		return
	}
	b.Append(true)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.KeyBuilder().(*array.StringBuilder).Append(k)
		b.ItemBuilder().(*array.StringBuilder).Append(m[k])
	}
}

func sortedIDs[V any](m map[int]V) []int {
	ids := make([]int, 0, len(m))
	for k := range m {
		ids = append(ids, k)
	}
	sort.Ints(ids)
	return ids
}

func appendIntMap(b *array.MapBuilder, m map[int]int64) {
	if m == nil {
		b.AppendNull()
		return
	}
	b.Append(true)
	for _, k := range sortedIDs(m) {
		b.KeyBuilder().(*array.Int32Builder).Append(int32(k))
		b.ItemBuilder().(*array.Int64Builder).Append(m[k])
	}
}

func appendBytesMap(b *array.MapBuilder, m map[int][]byte) {
	if m == nil {
		b.AppendNull()
		return
	}
	b.Append(true)
	for _, k := range sortedIDs(m) {
		b.KeyBuilder().(*array.Int32Builder).Append(int32(k))
		b.ItemBuilder().(*array.BinaryBuilder).Append(m[k])
	}
}

// appendValue appends v (nil: null) to b; v is one of the Go values
// iceberg-go decodes metadata into.
func appendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.Int32Builder:
		switch v := v.(type) {
		case int32:
			b.Append(v)
			return nil
		case int:
			b.Append(int32(v))
			return nil
		}
	case *array.Int64Builder:
		switch v := v.(type) {
		case int64:
			b.Append(v)
			return nil
		case int:
			b.Append(int64(v))
			return nil
		case int32:
			b.Append(int64(v))
			return nil
		}
	case *array.StringBuilder:
		if s, ok := v.(string); ok {
			b.Append(s)
			return nil
		}
	case *array.BinaryBuilder:
		if s, ok := v.([]byte); ok {
			b.Append(s)
			return nil
		}
	case *array.FixedSizeBinaryBuilder:
		switch v := v.(type) {
		case []byte:
			b.Append(v)
			return nil
		case uuid.UUID:
			b.Append(v[:])
			return nil
		}
	case *array.BooleanBuilder:
		if s, ok := v.(bool); ok {
			b.Append(s)
			return nil
		}
	case *array.Float32Builder:
		if s, ok := v.(float32); ok {
			b.Append(s)
			return nil
		}
	case *array.Float64Builder:
		if s, ok := v.(float64); ok {
			b.Append(s)
			return nil
		}
	case *array.Date32Builder:
		switch v := v.(type) {
		case iceberg.Date:
			b.Append(arrow.Date32(v))
			return nil
		case int32:
			b.Append(arrow.Date32(v))
			return nil
		}
	case *array.TimestampBuilder:
		switch v := v.(type) {
		case iceberg.Timestamp:
			b.Append(arrow.Timestamp(v))
			return nil
		case int64:
			b.Append(arrow.Timestamp(v))
			return nil
		}
	case *array.Time64Builder:
		switch v := v.(type) {
		case iceberg.Time:
			b.Append(arrow.Time64(v))
			return nil
		case int64:
			b.Append(arrow.Time64(v))
			return nil
		}
	case *array.Decimal128Builder:
		switch v := v.(type) {
		case iceberg.Decimal:
			b.Append(v.Val)
			return nil
		case decimal128.Num:
			b.Append(v)
			return nil
		}
	}
	b.AppendNull()
	return fmt.Errorf("cannot put a %T into a %s column", v, b.Type())
}
