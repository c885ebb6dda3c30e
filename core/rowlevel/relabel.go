package rowlevel

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// relabel returns arr as an array of type want when the two differ only in
// labels, not in layout: extension types against their storage (arrow-go's
// C data import leaves a pyarrow uuid as fixed_size_binary(16), inside
// structs and lists too), list element names, field nullability. The
// buffers are shared. ok is false when the layouts differ.
func relabel(arr arrow.Array, want arrow.DataType) (arrow.Array, bool) {
	if !sameLayout(arr.DataType(), want) {
		return nil, false
	}
	d := relabelData(arr.Data(), want)
	defer d.Release()
	return array.MakeFromData(d), true
}

func storageOf(t arrow.DataType) arrow.DataType {
	for {
		ext, ok := t.(arrow.ExtensionType)
		if !ok {
			return t
		}
		t = ext.StorageType()
	}
}

// sameLayout reports whether arrays of types a and b have the same buffers
// and children, read the same way.
func sameLayout(a, b arrow.DataType) bool {
	a, b = storageOf(a), storageOf(b)
	if a.ID() != b.ID() {
		return false
	}
	switch at := a.(type) {
	case *arrow.StructType:
		bt := b.(*arrow.StructType)
		if at.NumFields() != bt.NumFields() {
			return false
		}
		for i := range at.NumFields() {
			if at.Field(i).Name != bt.Field(i).Name || !sameLayout(at.Field(i).Type, bt.Field(i).Type) {
				return false
			}
		}
		return true
	case *arrow.FixedSizeListType:
		return at.Len() == b.(*arrow.FixedSizeListType).Len() && sameLayout(at.Elem(), b.(*arrow.FixedSizeListType).Elem())
	case arrow.ListLikeType: // list, large list, map (its entries struct)
		return sameLayout(at.Elem(), b.(arrow.ListLikeType).Elem())
	}
	return arrow.TypeEqual(a, b)
}

func relabelData(d arrow.ArrayData, want arrow.DataType) arrow.ArrayData {
	var kids []arrow.ArrayData
	switch wt := storageOf(want).(type) {
	case *arrow.StructType:
		for i, c := range d.Children() {
			kids = append(kids, relabelData(c, wt.Field(i).Type))
		}
	case arrow.ListLikeType:
		for _, c := range d.Children() {
			kids = append(kids, relabelData(c, wt.Elem()))
		}
	default:
		for _, c := range d.Children() {
			c.Retain()
			kids = append(kids, c)
		}
	}
	out := array.NewData(want, d.Len(), d.Buffers(), kids, d.NullN(), d.Offset())
	for _, k := range kids {
		k.Release()
	}
	return out
}
