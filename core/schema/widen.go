package schema

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Widen returns a (rows written under an older schema) as type want,
// which schema evolution derived from a's type: struct fields matched by
// name, fields a lacks all null, primitives cast by the allowed
// promotions, recursively through structs, list elements and map entries.
// Buffers are shared, not copied. The caller releases the result.
func Widen(a arrow.Array, want arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	d, err := widenData(a.Data(), want, mem)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

func widenData(d arrow.ArrayData, want arrow.DataType, mem memory.Allocator) (arrow.ArrayData, error) {
	if arrow.TypeEqual(d.DataType(), want) {
		d.Retain()
		return d, nil
	}
	switch w := want.(type) {
	case *arrow.StructType:
		have, ok := d.DataType().(*arrow.StructType)
		if !ok {
			break
		}
		// Children are full length: the struct's offset applies to them.
		full := d.Offset() + d.Len()
		children := make([]arrow.ArrayData, w.NumFields())
		defer func() {
			for _, c := range children {
				if c != nil {
					c.Release()
				}
			}
		}()
		for i, f := range w.Fields() {
			j, found := have.FieldIdx(f.Name)
			if !found {
				nulls := array.MakeArrayOfNull(mem, f.Type, full)
				children[i] = nulls.Data()
				children[i].Retain()
				nulls.Release()
				continue
			}
			c, err := widenData(d.Children()[j], f.Type, mem)
			if err != nil {
				return nil, err
			}
			children[i] = c
		}
		return array.NewData(w, d.Len(), d.Buffers()[:1], children, d.NullN(), d.Offset()), nil
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		elem := want.(arrow.ListLikeType).ElemField().Type
		child, err := widenData(d.Children()[0], elem, mem)
		if err != nil {
			return nil, err
		}
		defer child.Release()
		return array.NewData(want, d.Len(), d.Buffers(), []arrow.ArrayData{child}, d.NullN(), d.Offset()), nil
	}
	if _, nested := want.(arrow.NestedType); !nested {
		in := array.MakeFromData(d)
		defer in.Release()
		out, err := compute.CastToType(compute.WithAllocator(context.Background(), mem), in, want)
		if err != nil {
			return nil, fmt.Errorf("%w: widening %s to %s: %v", errs.ErrValidation, d.DataType(), want, err)
		}
		defer out.Release()
		od := out.Data()
		od.Retain()
		return od, nil
	}
	return nil, fmt.Errorf("%w: cannot widen %s to %s", errs.ErrValidation, d.DataType(), want)
}
