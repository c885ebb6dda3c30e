package rowlevel

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A merge copies nested source columns whole; a pyarrow uuid inside one
// arrives as fixed_size_binary(16) (found by tests/py/test_model.py: an
// insertAll of a list<uuid> column failed "merge value for column has type
// list<item: fixed_size_binary[16]>, the table has list<element: uuid>").
func TestRelabelNestedUUIDStorage(t *testing.T) {
	mem := memory.DefaultAllocator
	src := arrow.ListOf(arrow.StructOf(arrow.Field{Name: "u", Type: &arrow.FixedSizeBinaryType{ByteWidth: 16}, Nullable: true}))
	want := arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.StructOf(arrow.Field{Name: "u", Type: extensions.NewUUIDType(), Nullable: true}), Nullable: true})
	b := array.NewListBuilder(mem, src.Elem())
	defer b.Release()
	b.Append(true)
	sb := b.ValueBuilder().(*array.StructBuilder)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.FixedSizeBinaryBuilder).Append([]byte("0123456789abcdef"))
	sb.AppendNull()
	b.AppendNull()
	arr := b.NewArray()
	defer arr.Release()
	r, ok := relabel(arr, want)
	if !ok {
		t.Fatal("same layout not relabeled")
	}
	defer r.Release()
	if !arrow.TypeEqual(r.DataType(), want) || r.Len() != 2 || r.NullN() != 1 {
		t.Fatalf("relabeled to %s, %d rows, %d nulls", r.DataType(), r.Len(), r.NullN())
	}
	u := r.(*array.List).ListValues().(*array.Struct).Field(0).(*extensions.UUIDArray)
	if got := u.Storage().(*array.FixedSizeBinary).Value(0); string(got) != "0123456789abcdef" {
		t.Errorf("value %q", got)
	}
	if _, ok := relabel(arr, arrow.ListOf(arrow.StructOf(arrow.Field{Name: "v", Type: extensions.NewUUIDType()}))); ok {
		t.Error("a struct with another field name was relabeled")
	}
	if _, ok := relabel(arr, arrow.ListOf(arrow.BinaryTypes.String)); ok {
		t.Error("another layout was relabeled")
	}
}
