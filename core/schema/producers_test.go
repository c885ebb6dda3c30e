package schema

import (
	"os"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// readProducerBatch reads testdata/inputs_<name>.arrow, written by
// testdata/gen_inputs.py from real pandas, polars and DuckDB output.
func readProducerBatch(t *testing.T, mem memory.Allocator, name string) arrow.RecordBatch {
	t.Helper()
	f, err := os.Open("testdata/inputs_" + name + ".arrow")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	rec.Retain()
	return rec
}

// conformProducer creates a table schema from the batch (the null column, if
// any, becomes an optional string) and conforms the batch into it.
func conformProducer(t *testing.T, mem memory.Allocator, rec arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	var fields []arrow.Field
	for _, f := range rec.Schema().Fields() {
		if f.Type.ID() == arrow.NULL {
			f.Type = arrow.BinaryTypes.String
		}
		fields = append(fields, f)
	}
	tbl, err := FromArrow(arrow.NewSchema(fields, nil), false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewConformer(tbl, rec.Schema(), strictOpts, mem)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Conform(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Schema().Equal(c.Schema()) {
		t.Fatalf("schema %s, want %s", out.Schema(), c.Schema())
	}
	return out
}

func TestConformPandasBatch(t *testing.T) {
	mem := checkedMem(t)
	rec := readProducerBatch(t, mem, "pandas")
	defer rec.Release()
	if _, err := FromArrow(rec.Schema(), false); err == nil {
		t.Error("FromArrow accepted the null-typed column")
	} else {
		wantValidation(t, err, "'nothing'")
	}
	out := conformProducer(t, mem, rec)
	defer out.Release()
	col := func(name string) (in, got arrow.Array) {
		i := rec.Schema().FieldIndices(name)[0]
		j := out.Schema().FieldIndices(name)[0]
		return rec.Column(i), out.Column(j)
	}
	for _, name := range []string{"ts", "ts_tz"} {
		in, got := col(name)
		for i := range in.Len() {
			ns := int64(in.(*array.Timestamp).Value(i))
			if want := time.Unix(0, ns).UnixMicro(); int64(got.(*array.Timestamp).Value(i)) != want {
				t.Errorf("%s[%d]: %d ns -> %d us, want %d", name, i, ns, got.(*array.Timestamp).Value(i), want)
			}
		}
	}
	if f, _ := out.Schema().FieldsByName("ts_tz"); f[0].Type.(*arrow.TimestampType).TimeZone != "UTC" {
		t.Errorf("ts_tz type %s", f[0].Type)
	}
	in, got := col("cat")
	dict := in.(*array.Dictionary)
	for i := range in.Len() {
		if dict.IsNull(i) != got.IsNull(i) ||
			(dict.IsValid(i) && dict.Dictionary().ValueStr(dict.GetValueIndex(i)) != got.(*array.String).Value(i)) {
			t.Errorf("cat[%d] = %q", i, got.ValueStr(i))
		}
	}
	if _, got := col("nothing"); got.NullN() != got.Len() {
		t.Errorf("nothing: %d nulls of %d", got.NullN(), got.Len())
	}
	in, got = col("small")
	for i := range in.Len() {
		if int32(in.(*array.Uint8).Value(i)) != got.(*array.Int32).Value(i) {
			t.Errorf("small[%d]", i)
		}
	}
	in, got = col("half")
	for i := range in.Len() {
		if in.(*array.Float16).Value(i).Float32() != got.(*array.Float32).Value(i) {
			t.Errorf("half[%d]", i)
		}
	}
}

// TestConformPolarsAndDuckDBBatches checks that string views, large lists,
// structs, maps, decimals, dates and uuids read back as they went in.
func TestConformPolarsAndDuckDBBatches(t *testing.T) {
	mem := checkedMem(t)
	for _, name := range []string{"polars", "duckdb"} {
		rec := readProducerBatch(t, mem, name)
		out := conformProducer(t, mem, rec)
		for i := range int(rec.NumCols()) {
			if want, got := jsonOf(t, rec.Column(i)), jsonOf(t, out.Column(i)); got != want {
				t.Errorf("%s.%s: got %s, want %s", name, rec.ColumnName(i), got, want)
			}
		}
		if name == "polars" {
			lt := out.Schema().Field(1).Type.(*arrow.ListType)
			if lt.Elem().ID() != arrow.STRING {
				t.Errorf("tags type %s", lt)
			}
		}
		out.Release()
		rec.Release()
	}
}
