package parquet

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A null struct whose wide-decimal child holds a valid value in that row
// (as pyarrow builds it) must not shift the child's later values: found by
// tests/py/test_model.py, a struct<decimal(38,10)> read back 0 for the row
// after a null struct and lost the column's last value.
func TestStructNullsAboveWideDecimals(t *testing.T) {
	mem := memory.DefaultAllocator
	for _, prec := range []int32{18, 19, 38} {
		dt := &arrow.Decimal128Type{Precision: prec, Scale: 1}
		db := array.NewDecimal128Builder(mem, dt)
		for _, v := range []int64{15, 0, -25, 30, 0, 45} {
			db.Append(decimal128.FromI64(v)) // every child value valid
		}
		child := db.NewArray()
		// rows 1 and 4 are null structs
		st, err := array.NewStructArrayWithNulls([]arrow.Array{child}, []string{"f"}, memory.NewBufferBytes([]byte{0b101101}), 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		// the same again inside a list, and a slice (an offset into the struct)
		lb := array.NewListBuilder(mem, st.DataType())
		lb.Append(true)
		lb.ValueBuilder().(*array.StructBuilder).Append(true)
		lb.ValueBuilder().(*array.StructBuilder).FieldBuilder(0).(*array.Decimal128Builder).Append(decimal128.FromI64(1))
		lb.ValueBuilder().(*array.StructBuilder).AppendNull()
		lb.ValueBuilder().(*array.StructBuilder).Append(true)
		lb.ValueBuilder().(*array.StructBuilder).FieldBuilder(0).(*array.Decimal128Builder).Append(decimal128.FromI64(2))
		for range 5 {
			lb.AppendNull()
		}
		lst := lb.NewArray()
		sc := arrow.NewSchema([]arrow.Field{
			{Name: "c", Type: st.DataType(), Nullable: true},
			{Name: "l", Type: lst.DataType(), Nullable: true},
		}, nil)
		rec := array.NewRecordBatch(sc, []arrow.Array{st, lst}, 6)
		sliced := rec.NewSlice(1, 6)
		fs := newMemFS()
		files := writeAll(t, fs, sc, Options{}, []arrow.RecordBatch{rec, sliced})
		got := readBack(t, fs.bytes(t, files[0].Path))
		want := `[{"f":"1.5"},null,{"f":"-2.5"},{"f":"3"},null,{"f":"4.5"},null,{"f":"-2.5"},{"f":"3"},null,{"f":"4.5"}]`
		if js := compact(columnJSON(t, got.Column(0).Data().Chunks())); js != want {
			t.Errorf("precision %d: read back %s\nwant %s", prec, js, want)
		}
		wantList := `[[{"f":"0.1"},null,{"f":"0.2"}],null,null,null,null,null,null,null,null,null,null]`
		if js := compact(columnJSON(t, got.Column(1).Data().Chunks())); js != wantList {
			t.Errorf("precision %d: list read back %s\nwant %s", prec, js, wantList)
		}
		sliced.Release()
		rec.Release()
		st.Release()
		lst.Release()
		child.Release()
	}
}

func compact(js string) string { return strings.Join(strings.Fields(js), "") }
