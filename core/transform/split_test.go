package transform

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// eventsSchema: id long, ts timestamp, name string, s struct<a int, b string>.
func eventsSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 3, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
			{ID: 6, Name: "b", Type: iceberg.PrimitiveTypes.String},
		}}},
	)
}

func partField(id, src int, tr iceberg.Transform) iceberg.PartitionField {
	return iceberg.PartitionField{SourceIDs: []int{src}, FieldID: id, Name: fmt.Sprintf("p%d", id), Transform: tr}
}

// eventsRows holds the Go values of an events batch (nil is null).
type eventsRows struct {
	id, ts, name, a, b []any
	sValid             []bool
}

func randomEvents(r *rand.Rand, n int) eventsRows {
	var rows eventsRows
	names := []any{nil, "alpha", "Äpfel", "日本", "😀x", "", "beta"}
	bs := []any{nil, "x", "y", "zé", "", "longer than 7 bytes", "1234567", "12345678", "x\x00"}
	for i := range n {
		rows.id = append(rows.id, int64(i))
		var ts any
		if r.IntN(8) != 0 {
			ts = r.Int64N(2*365*dayMicros) - 365*dayMicros // 1969..1970
		}
		rows.ts = append(rows.ts, ts)
		rows.name = append(rows.name, pick(r, names...))
		rows.a = append(rows.a, int32(r.IntN(3)))
		rows.b = append(rows.b, pick(r, bs...))
		rows.sValid = append(rows.sValid, r.IntN(6) != 0)
	}
	return rows
}

// eventsRecord builds the batch with the Arrow schema iceberg-go derives
// (field ids in metadata), or with plain names when withIDs is false.
func eventsRecord(t testing.TB, mem memory.Allocator, rows eventsRows, withIDs bool) arrow.RecordBatch {
	t.Helper()
	sc, err := table.SchemaToArrowSchema(eventsSchema(), nil, withIDs, false)
	if err != nil {
		t.Fatal(err)
	}
	f := sc.Fields()
	id := buildArray(t, mem, f[0].Type, rows.id)
	ts := buildArray(t, mem, f[1].Type, rows.ts)
	name := buildArray(t, mem, f[2].Type, rows.name)
	st := f[3].Type.(*arrow.StructType)
	a := buildArray(t, mem, st.Field(0).Type, rows.a)
	b := buildArray(t, mem, st.Field(1).Type, rows.b)
	valid := memory.NewResizableBuffer(mem)
	valid.Resize(int(bitutil.BytesForBits(int64(len(rows.sValid)))))
	nulls := 0
	for i, v := range rows.sValid {
		bitutil.SetBitTo(valid.Bytes(), i, v)
		if !v {
			nulls++
		}
	}
	s, err := array.NewStructArrayWithFieldsAndNulls([]arrow.Array{a, b}, st.Fields(), valid, nulls, 0)
	if err != nil {
		t.Fatal(err)
	}
	valid.Release()
	cols := []arrow.Array{id, ts, name, s}
	rec := array.NewRecordBatch(sc, cols, int64(len(rows.id)))
	for _, c := range []arrow.Array{id, ts, name, s, a, b} {
		c.Release()
	}
	return rec
}

// eventsSpec has a void field on a source column the schema no longer has,
// as partition evolution in v1 tables leaves behind.
func eventsSpec() iceberg.PartitionSpec {
	return iceberg.NewPartitionSpecID(1,
		partField(1000, 2, iceberg.MonthTransform{}),
		partField(1001, 1, iceberg.BucketTransform{NumBuckets: 4}),
		partField(1002, 6, iceberg.IdentityTransform{}),
		partField(1003, 3, iceberg.TruncateTransform{Width: 1}),
		partField(1004, 77, iceberg.VoidTransform{}),
	)
}

// expectedTuple computes a row's partition tuple with iceberg-go's own
// row-at-a-time transforms.
func expectedTuple(spec iceberg.PartitionSpec, schema *iceberg.Schema, rows eventsRows, i int) map[int]any {
	src := map[int]any{1: rows.id[i], 2: rows.ts[i], 3: rows.name[i]}
	if rows.sValid[i] {
		src[5], src[6] = rows.a[i], rows.b[i]
	}
	out := map[int]any{}
	for _, f := range spec.Fields() {
		v := src[f.SourceID()]
		if v == nil {
			out[f.FieldID] = nil
			continue
		}
		typ, _ := schema.FindTypeByID(f.SourceID())
		res := f.Transform.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: literalOf(typ, v)})
		out[f.FieldID] = nil
		if res.Valid {
			out[f.FieldID] = res.Val.Any()
		}
	}
	return out
}

func releaseAll(parts []Partition) {
	for _, p := range parts {
		p.Record.Release()
	}
}

// Rows land in the partition iceberg-go computes for them, in input order,
// partitions come in order of first appearance, null tuples (null ts, null
// struct parent) form their own partitions, and every column travels along.
func TestSplitGroupsRowsLikeIcebergGo(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := eventsSchema()
	spec := eventsSpec()
	rows := randomEvents(rand.New(rand.NewPCG(3, 4)), 20000)
	rec := eventsRecord(t, mem, rows, true)
	defer rec.Release()

	parts, err := Split(rec, spec, schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(parts)

	// expected groups, keyed by the printed tuple, in first-appearance order
	var order []string
	want := map[string][]int64{}
	tuples := map[string]map[int]any{}
	for i := range rows.id {
		tup := expectedTuple(spec, schema, rows, i)
		k := fmt.Sprintf("%v|%v|%v|%v|%v", tup[1000], tup[1001], tup[1002], tup[1003], tup[1004])
		if _, ok := want[k]; !ok {
			order = append(order, k)
			tuples[k] = tup
		}
		want[k] = append(want[k], int64(i))
	}
	if len(parts) != len(order) {
		t.Fatalf("got %d partitions, want %d", len(parts), len(order))
	}
	sawNullMonth, sawNullB := false, false
	keys := map[string]bool{}
	for g, p := range parts {
		k := order[g]
		if !reflect.DeepEqual(p.Values, tuples[k]) {
			t.Fatalf("partition %d: values %v, want %v", g, p.Values, tuples[k])
		}
		sawNullMonth = sawNullMonth || p.Values[1000] == nil
		sawNullB = sawNullB || p.Values[1002] == nil
		ids := p.Record.Column(0).(*array.Int64).Int64Values()
		if !reflect.DeepEqual(ids, want[k]) {
			t.Fatalf("partition %d (%s): rows %v, want %v", g, k, ids, want[k])
		}
		names := p.Record.Column(2).(*array.String)
		for j, id := range ids {
			wantName := rows.name[id]
			if (wantName == nil) != names.IsNull(j) || (wantName != nil && wantName.(string) != names.Value(j)) {
				t.Fatalf("partition %d row %d: name column not gathered with its row", g, j)
			}
		}
		if keys[p.Key] {
			t.Fatalf("partition %d: duplicate key", g)
		}
		keys[p.Key] = true
	}
	if !sawNullMonth || !sawNullB {
		t.Errorf("test data should produce null partition values (month %v, s.b %v)", sawNullMonth, sawNullB)
	}
}

// Source columns are found by field id when the batch carries ids (names
// may differ) and by name otherwise.
func TestSplitFindsSourcesByFieldIDThenName(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := eventsSchema()
	spec := eventsSpec()
	rows := randomEvents(rand.New(rand.NewPCG(5, 6)), 300)

	byName := eventsRecord(t, mem, rows, false)
	defer byName.Release()
	withIDs := eventsRecord(t, mem, rows, true)
	defer withIDs.Release()
	// rename every top-level column; ids still match
	fields := withIDs.Schema().Fields()
	for i := range fields {
		fields[i].Name = "renamed_" + fields[i].Name
	}
	renamed := array.NewRecordBatch(arrow.NewSchema(fields, nil), withIDs.Columns(), withIDs.NumRows())
	defer renamed.Release()

	ref, err := Split(byName, spec, schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(ref)
	got, err := Split(renamed, spec, schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(got)
	if len(ref) != len(got) {
		t.Fatalf("%d partitions by name, %d by id", len(ref), len(got))
	}
	for i := range ref {
		if ref[i].Key != got[i].Key {
			t.Fatalf("partition %d: keys differ", i)
		}
		if !array.Equal(ref[i].Record.Column(0), got[i].Record.Column(0)) {
			t.Fatalf("partition %d: rows differ", i)
		}
	}

	// an id in the batch that names another field is not matched by name
	wrong := withIDs.Schema().Fields()
	wrong[1].Metadata = arrow.NewMetadata([]string{FieldIDKey}, []string{"99"})
	bad := array.NewRecordBatch(arrow.NewSchema(wrong, nil), withIDs.Columns(), withIDs.NumRows())
	defer bad.Release()
	_, err = Split(bad, spec, schema, mem)
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), `"ts"`) {
		t.Errorf("want ErrInvalidArgument naming ts, got %v", err)
	}
}

func TestSplitUnpartitionedReturnsTheBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rows := randomEvents(rand.New(rand.NewPCG(7, 8)), 10)
	rec := eventsRecord(t, mem, rows, true)
	defer rec.Release()
	for _, spec := range []iceberg.PartitionSpec{
		*iceberg.UnpartitionedSpec,
		iceberg.NewPartitionSpecID(2, partField(1000, 2, iceberg.VoidTransform{})),
	} {
		parts, err := Split(rec, spec, eventsSchema(), mem)
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) != 1 || parts[0].Record != rec {
			t.Fatalf("want the batch itself, got %d partitions", len(parts))
		}
		wantValues := map[int]any{}
		for _, f := range spec.Fields() {
			wantValues[f.FieldID] = nil
		}
		if !reflect.DeepEqual(parts[0].Values, wantValues) {
			t.Errorf("values %v, want %v", parts[0].Values, wantValues)
		}
		releaseAll(parts)
	}
}

// Keys are equal for equal tuples across batches and differ otherwise.
func TestSplitKeysStableAcrossBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := eventsSchema()
	spec := eventsSpec()
	keyOf := map[string]string{} // printed tuple -> key
	for seed := range uint64(3) {
		rec := eventsRecord(t, mem, randomEvents(rand.New(rand.NewPCG(seed, 9)), 400), true)
		parts, err := Split(rec, spec, schema, mem)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			tup := fmt.Sprintf("%v", p.Values)
			if k, ok := keyOf[tup]; ok && k != p.Key {
				t.Errorf("tuple %s: key changed between batches", tup)
			}
			keyOf[tup] = p.Key
		}
		releaseAll(parts)
	}
	seen := map[string]string{}
	for tup, k := range keyOf {
		if other, ok := seen[k]; ok {
			t.Errorf("tuples %s and %s share a key", tup, other)
		}
		seen[k] = tup
	}
}

// splitThreeMonths builds 30 rows, row i (id i, name name(i)) in month
// month(i) of three, and splits them by month; the caller releases both.
func splitThreeMonths(t *testing.T, mem memory.Allocator, month func(i int) int, name func(i int) string) (arrow.RecordBatch, []Partition) {
	t.Helper()
	rows := eventsRows{}
	for i := range 30 {
		rows.id = append(rows.id, int64(i))
		rows.ts = append(rows.ts, int64(month(i))*40*dayMicros)
		rows.name = append(rows.name, name(i))
		rows.a = append(rows.a, int32(i))
		rows.b = append(rows.b, "b")
		rows.sValid = append(rows.sValid, true)
	}
	rec := eventsRecord(t, mem, rows, true)
	spec := iceberg.NewPartitionSpecID(1, partField(1000, 2, iceberg.MonthTransform{}))
	parts, err := Split(rec, spec, eventsSchema(), mem)
	if err != nil {
		rec.Release()
		t.Fatal(err)
	}
	if len(parts) != 3 {
		t.Fatalf("got %d partitions, want 3", len(parts))
	}
	return rec, parts
}

// A batch already clustered by partition is sliced, not copied.
func TestSplitClusteredBatchIsSlicedWithoutCopy(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec, parts := splitThreeMonths(t, mem, func(i int) int { return i / 10 }, func(int) string { return "n" })
	defer rec.Release()
	defer releaseAll(parts)
	base := rec.Column(0).Data().Buffers()[1]
	for i, p := range parts {
		if p.Record.NumRows() != 10 || p.Record.Column(0).Data().Buffers()[1] != base {
			t.Errorf("partition %d: not a zero-copy slice of the input", i)
		}
		if got := p.Record.Column(0).(*array.Int64).Value(0); got != int64(10*i) {
			t.Errorf("partition %d starts at row %d", i, got)
		}
	}
}

// TestSplitInterleavedBatchGivesOwnedPartitions: when partitions
// interleave, each partition's record has buffers sized to its own rows
// (Owned), so keeping it does not keep the input batch alive.
func TestSplitInterleavedBatchGivesOwnedPartitions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec, parts := splitThreeMonths(t, mem, func(i int) int { return i % 3 }, func(i int) string { return strings.Repeat("x", i) })
	defer rec.Release()
	defer releaseAll(parts)
	for g, p := range parts {
		if !p.Owned || p.Record.NumRows() != 10 {
			t.Fatalf("partition %d: owned %v, %d rows", g, p.Owned, p.Record.NumRows())
		}
		ids := p.Record.Column(0)
		if n := ids.Data().Buffers()[1].Len(); n != 10*8 {
			t.Errorf("partition %d: id buffer of %d bytes for 10 rows", g, n)
		}
		names := p.Record.Column(2).(*array.String)
		want := 0
		for k := range 10 {
			id := ids.(*array.Int64).Value(k)
			if id != int64(3*k+g) || names.Value(k) != strings.Repeat("x", int(id)) {
				t.Fatalf("partition %d row %d: id %d name %q", g, k, id, names.Value(k))
			}
			want += int(id)
		}
		if n := names.Data().Buffers()[2].Len(); n != want {
			t.Errorf("partition %d: name data of %d bytes, its names hold %d", g, n, want)
		}
	}
}

func TestSplitEmptyBatchHasNoPartitions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := eventsRecord(t, mem, eventsRows{}, true)
	defer rec.Release()
	parts, err := Split(rec, eventsSpec(), eventsSchema(), mem)
	if err != nil || len(parts) != 0 {
		t.Fatalf("got %d partitions, %v", len(parts), err)
	}
}

func TestSplitRejectsMissingOrMistypedSources(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := eventsRecord(t, mem, randomEvents(rand.New(rand.NewPCG(1, 1)), 5), true)
	defer rec.Release()
	// the table says ts is timestamp_ns but the batch holds microseconds
	nsSchema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampNs},
	)
	cases := []struct {
		name   string
		spec   iceberg.PartitionSpec
		schema *iceberg.Schema
		want   string
	}{
		{"unknown source id", iceberg.NewPartitionSpecID(1, partField(1000, 42, iceberg.IdentityTransform{})), eventsSchema(), "42"},
		{"column absent from batch", iceberg.NewPartitionSpecID(1, partField(1000, 7, iceberg.IdentityTransform{})),
			iceberg.NewSchema(0, iceberg.NestedField{ID: 7, Name: "zone", Type: iceberg.PrimitiveTypes.String}), `"zone"`},
		{"type mismatch", iceberg.NewPartitionSpecID(1, partField(1000, 2, iceberg.DayTransform{})), nsSchema, `"ts"`},
		{"bad transform for type", iceberg.NewPartitionSpecID(1, partField(1000, 3, iceberg.YearTransform{})), eventsSchema(), `"name"`},
	}
	for _, c := range cases {
		parts, err := Split(rec, c.spec, c.schema, mem)
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want ErrInvalidArgument mentioning %s, got %v", c.name, c.want, err)
		}
		releaseAll(parts)
	}
}

// A sliced batch (non-zero offsets everywhere, nested struct included)
// splits exactly like a batch built from the same rows.
func TestSplitSlicedBatchMatchesFreshBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rows := randomEvents(rand.New(rand.NewPCG(13, 14)), 700)
	rec := eventsRecord(t, mem, rows, true)
	defer rec.Release()
	sliced := rec.NewSlice(123, 611)
	defer sliced.Release()
	sub := eventsRows{rows.id[123:611], rows.ts[123:611], rows.name[123:611], rows.a[123:611], rows.b[123:611], rows.sValid[123:611]}
	fresh := eventsRecord(t, mem, sub, true)
	defer fresh.Release()

	got, err := Split(sliced, eventsSpec(), eventsSchema(), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(got)
	want, err := Split(fresh, eventsSpec(), eventsSchema(), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(want)
	if len(got) != len(want) {
		t.Fatalf("%d partitions, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Key != want[i].Key || !reflect.DeepEqual(got[i].Values, want[i].Values) ||
			!array.RecordEqual(got[i].Record, want[i].Record) {
			t.Fatalf("partition %d differs", i)
		}
	}
}

// An empty binary value is an empty partition value, not a null one, also
// when every value of the transformed array is empty (no data buffer).
func TestSplitEmptyBinaryIsNotNull(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "b", Type: iceberg.PrimitiveTypes.Binary})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "b", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1001, Name: "b_trunc", Transform: iceberg.TruncateTransform{Width: 3}},
	)
	bld := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	bld.Append([]byte{})
	col := bld.NewArray()
	bld.Release()
	defer col.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil), []arrow.Array{col}, 1)
	defer rec.Release()
	parts, err := Split(rec, spec, schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(parts)
	for _, id := range []int{1000, 1001} {
		v, ok := parts[0].Values[id].([]byte)
		if !ok || v == nil || len(v) != 0 {
			t.Errorf("field %d: %#v, want an empty, non-nil []byte", id, parts[0].Values[id])
		}
	}
}
