package inspect

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

func TestAppendValueTypes(t *testing.T) {
	for _, tc := range []struct {
		typ  arrow.DataType
		v    any
		want string
	}{
		{arrow.PrimitiveTypes.Int32, int32(7), "[7]"},
		{arrow.PrimitiveTypes.Int64, int32(7), "[7]"},
		{arrow.FixedWidthTypes.Date32, iceberg.Date(19000), "[2022-01-08]"},
		{arrow.BinaryTypes.String, "x", `["x"]`},
		{arrow.BinaryTypes.String, nil, "[(null)]"},
	} {
		b := array.NewBuilder(memory.DefaultAllocator, tc.typ)
		if err := appendValue(b, tc.v); err != nil {
			t.Fatalf("%s %v: %v", tc.typ, tc.v, err)
		}
		a := b.NewArray()
		if got := a.String(); got != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.typ, tc.v, got, tc.want)
		}
		a.Release()
		b.Release()
	}
	b := array.NewBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int32)
	defer b.Release()
	if err := appendValue(b, "not an int"); err == nil || b.Len() != 1 {
		t.Fatalf("a mismatched value: %v (len %d)", err, b.Len())
	}
}

func TestHumanBound(t *testing.T) {
	// day(ts) partitions: bounds are dates, shown as Java shows them.
	raw := []byte{0x3a, 0x4a, 0x00, 0x00} // 19002 days
	if got := humanBound(iceberg.DayTransform{}, iceberg.PrimitiveTypes.Date, raw); got != "2022-01-10" {
		t.Errorf("day bound %v", got)
	}
	if got := humanBound(iceberg.IdentityTransform{}, iceberg.PrimitiveTypes.String, []byte("c0")); got != "c0" {
		t.Errorf("identity bound %v", got)
	}
	if got := humanBound(iceberg.IdentityTransform{}, iceberg.PrimitiveTypes.Int64, []byte{1}); got != nil {
		t.Errorf("a malformed bound: %v", got)
	}
}
