package write

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/schema"
)

// A conformed batch is lent to the writers only while it is the input's
// own memory: columns taken as they are (reordered, renamed to the table's
// fields) are; a converted column, a column of nulls for a missing field
// or a nested column is not.
func TestSharesMemoryOnlyWhatConformingDidNotCopy(t *testing.T) {
	mem := memory.NewGoAllocator()
	ib := array.NewInt64Builder(mem)
	i32 := array.NewInt32Builder(mem)
	sb := array.NewStringBuilder(mem)
	for i := range 100 {
		ib.Append(int64(i))
		i32.Append(int32(i))
		sb.Append("s")
	}
	ids, small, strs := ib.NewArray(), i32.NewArray(), sb.NewArray()
	defer ids.Release()
	defer small.Release()
	defer strs.Release()

	long, str := iceberg.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.String
	for _, c := range []struct {
		name  string
		table []iceberg.NestedField
		in    []arrow.Field
		cols  []arrow.Array
		want  bool
	}{
		{"same columns", []iceberg.NestedField{{ID: 1, Name: "id", Type: long}, {ID: 2, Name: "s", Type: str}},
			[]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}},
			[]arrow.Array{ids, strs}, true},
		{"reordered", []iceberg.NestedField{{ID: 1, Name: "id", Type: long}, {ID: 2, Name: "s", Type: str}},
			[]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}},
			[]arrow.Array{strs, ids}, true},
		{"int widened to long", []iceberg.NestedField{{ID: 1, Name: "id", Type: long}, {ID: 2, Name: "s", Type: str}},
			[]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}},
			[]arrow.Array{small, strs}, false},
		{"missing column filled with nulls", []iceberg.NestedField{{ID: 1, Name: "id", Type: long}, {ID: 2, Name: "s", Type: str}, {ID: 3, Name: "x", Type: long}},
			[]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}},
			[]arrow.Array{ids, strs}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := arrow.NewSchema(c.in, nil)
			conf, err := schema.NewConformer(iceberg.NewSchema(0, c.table...), in, schema.Options{}, mem)
			if err != nil {
				t.Fatal(err)
			}
			rec := array.NewRecordBatch(in, c.cols, 100)
			defer rec.Release()
			out, err := conf.Conform(rec)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			if got := sharesMemory(out, rec); got != c.want {
				t.Fatalf("sharesMemory = %v, want %v", got, c.want)
			}
		})
	}

	// A nested column is not looked into.
	st := array.NewStructBuilder(mem, arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64}))
	st.Append(true)
	st.FieldBuilder(0).(*array.Int64Builder).Append(1)
	nested := st.NewArray()
	defer nested.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "st", Type: nested.DataType()}}, nil), []arrow.Array{nested}, 1)
	defer rec.Release()
	if sharesMemory(rec, rec) {
		t.Fatal("a nested column counted as shared")
	}
}
