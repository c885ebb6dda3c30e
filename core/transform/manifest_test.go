package transform

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// allTypesSchema has one column of every type a partition source can have.
func allTypesSchema() *iceberg.Schema {
	types := []iceberg.Type{
		iceberg.PrimitiveTypes.Bool, iceberg.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Int64,
		iceberg.PrimitiveTypes.Float32, iceberg.PrimitiveTypes.Float64, iceberg.DecimalTypeOf(9, 2),
		iceberg.PrimitiveTypes.Date, iceberg.PrimitiveTypes.Time, iceberg.PrimitiveTypes.Timestamp,
		iceberg.PrimitiveTypes.TimestampTz, iceberg.PrimitiveTypes.TimestampNs, iceberg.PrimitiveTypes.String,
		iceberg.PrimitiveTypes.Binary, iceberg.FixedTypeOf(4), iceberg.PrimitiveTypes.UUID,
	}
	fields := make([]iceberg.NestedField, len(types))
	for i, typ := range types {
		fields[i] = iceberg.NestedField{ID: i + 1, Name: fmt.Sprintf("c%d", i+1), Type: typ}
	}
	return iceberg.NewSchema(0, fields...)
}

// allTypesSpec partitions by identity of every column and by every other
// transform that applies, so every partition result type appears. keep
// selects the fields: iceberg-go v0.7.0 cannot write a manifest whose spec has
// two decimal fields (the Avro schema fails with `invalid fixed name ""`).
func allTypesSpec(schema *iceberg.Schema, keep func(iceberg.Type, iceberg.Transform) bool) iceberg.PartitionSpec {
	var fields []iceberg.PartitionField
	next := 1000
	add := func(src int, tr iceberg.Transform) {
		if typ, _ := schema.FindTypeByID(src); !keep(typ, tr) {
			return
		}
		fields = append(fields, iceberg.PartitionField{
			SourceIDs: []int{src}, FieldID: next, Name: fmt.Sprintf("p%d", next), Transform: tr,
		})
		next++
	}
	others := []iceberg.Transform{
		iceberg.BucketTransform{NumBuckets: 8}, iceberg.TruncateTransform{Width: 3},
		iceberg.YearTransform{}, iceberg.MonthTransform{}, iceberg.DayTransform{}, iceberg.HourTransform{},
	}
	for _, f := range schema.Fields() {
		add(f.ID, iceberg.IdentityTransform{})
		for _, tr := range others {
			if tr.CanTransform(f.Type) {
				add(f.ID, tr)
			}
		}
	}
	return iceberg.NewPartitionSpecID(0, fields...)
}

func allTypesRecord(t testing.TB, mem memory.Allocator, schema *iceberg.Schema) arrow.RecordBatch {
	t.Helper()
	sc, err := table.SchemaToArrowSchema(schema, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	rows := [][]any{
		{true, int32(-7), int64(1) << 40, float32(1.5), -2.25, decimal128.FromI64(-1420), int32(-400), int64(81_068_000_000),
			int64(-1), int64(1_510_871_468_000_000), int64(-1_000_000_001), "日本語テキスト", []byte{0, 1, 2, 3, 4}, []byte{9, 8, 7, 6},
			uuid.MustParse("f79c3e09-677c-4bbd-a479-3f349cb785e7")},
		{false, int32(12), int64(-3), float32(-0.5), 1e10, decimal128.FromI64(999), int32(19000), int64(0),
			int64(1_700_000_000_123_456), int64(0), int64(1_700_000_000_123_456_789), "ab", []byte{}, []byte{0, 0, 0, 0},
			uuid.MustParse("00000000-0000-0000-0000-000000000001")},
		make([]any, 15), // all null
	}
	cols := make([]arrow.Array, len(sc.Fields()))
	for c, f := range sc.Fields() {
		vals := make([]any, len(rows))
		for r := range rows {
			vals[r] = rows[r][c]
		}
		cols[c] = buildArray(t, mem, f.Type, vals)
	}
	rec := array.NewRecordBatch(sc, cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// Partition values from Split go into iceberg.NewDataFileBuilder unchanged,
// through iceberg-go's manifest writer, and read back equal, for every
// partition result type, in v2 and v3 manifests.
func TestSplitValuesRoundTripThroughManifest(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := allTypesSchema()
	rec := allTypesRecord(t, mem, schema)
	defer rec.Release()
	isDecimalTruncate := func(typ iceberg.Type, tr iceberg.Transform) bool {
		_, dec := typ.(iceberg.DecimalType)
		_, trunc := tr.(iceberg.TruncateTransform)
		return dec && trunc
	}
	for _, keep := range []func(iceberg.Type, iceberg.Transform) bool{
		func(typ iceberg.Type, tr iceberg.Transform) bool { return !isDecimalTruncate(typ, tr) },
		isDecimalTruncate,
	} {
		spec := allTypesSpec(schema, keep)
		roundTripManifest(t, mem, rec, spec, schema)
	}
}

func roundTripManifest(t *testing.T, mem memory.Allocator, rec arrow.RecordBatch, spec iceberg.PartitionSpec, schema *iceberg.Schema) {
	t.Helper()

	parts, err := Split(rec, spec, schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, p := range parts {
			p.Record.Release()
		}
	}()
	if len(parts) != 3 {
		t.Fatalf("got %d partitions, want 3", len(parts))
	}

	for _, version := range []int{2, 3} {
		snapID := int64(42)
		var entries []iceberg.ManifestEntry
		for i, p := range parts {
			bldr, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, fmt.Sprintf("s3://b/f%d.parquet", i),
				iceberg.ParquetFile, p.Values, nil, nil, p.Record.NumRows(), 1024)
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snapID, nil, nil, bldr.Build()))
		}
		var buf bytes.Buffer
		mf, err := iceberg.WriteManifest("m.avro", &buf, version, spec, schema, snapID, entries)
		if err != nil {
			t.Fatalf("v%d: write manifest: %v", version, err)
		}
		read, err := iceberg.ReadManifest(mf, bytes.NewReader(buf.Bytes()), false)
		if err != nil {
			t.Fatalf("v%d: read manifest: %v", version, err)
		}
		if len(read) != len(parts) {
			t.Fatalf("v%d: read %d entries, want %d", version, len(read), len(parts))
		}
		for i, e := range read {
			got := e.DataFile().Partition()
			want := parts[i].Values
			if len(got) != len(want) {
				t.Errorf("v%d file %d: %d partition values, want %d", version, i, len(got), len(want))
			}
			for id, w := range want {
				g := got[id]
				if d, ok := g.(iceberg.DecimalLiteral); ok {
					g = iceberg.Decimal(d) // the reader hands decimals back as literals
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("v%d file %d field %d: read back %#v (%T), wrote %#v (%T)", version, i, id, g, g, w, w)
				}
			}
		}
	}
}
