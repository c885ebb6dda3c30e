package parquet

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// arrow-go v18.8.0's pqarrow writes a FIXED_LEN_BYTE_ARRAY decimal leaf
// (decimal128 of precision > 18, decimal256) that has no nulls of its own
// with WriteBatch, one value per slot, even when a struct above it is null
// in some rows: the column writer takes values only for the rows whose
// definition level is full, so every value after a null parent moves up by
// one and the last ones are lost. (Its other types check for parent nulls.)
// Arrow lets a null struct's children hold any value there, and pyarrow
// gives them a valid zero. Pushing each struct's nulls down into the
// children that hold such a leaf makes the leaf itself null there, and
// pqarrow then writes it with the spaced path, which skips those rows.

// holdsWideDecimal reports whether dt is, or holds, a leaf that pqarrow
// writes by the path described above.
func holdsWideDecimal(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.Decimal128Type:
		return t.Precision > 18
	case *arrow.Decimal256Type, *arrow.Float16Type:
		return true
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if holdsWideDecimal(f.Type) {
				return true
			}
		}
	case arrow.ListLikeType:
		return holdsWideDecimal(t.Elem())
	}
	return false
}

// pushRecordNulls returns rec with struct nulls pushed down to the wide
// decimal leaves below them, or ok=false when rec needs no change.
func pushRecordNulls(rec arrow.RecordBatch, mem memory.Allocator) (out arrow.RecordBatch, ok bool) {
	need := false
	for _, f := range rec.Schema().Fields() {
		if _, nested := f.Type.(arrow.NestedType); nested && holdsWideDecimal(f.Type) {
			need = true
		}
	}
	if !need {
		return nil, false
	}
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		cols[i] = pushNulls(c, mem)
	}
	out = array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out, true
}

// pushNulls returns a new reference to arr with the nulls of its structs
// pushed into their children, where those hold a wide decimal.
func pushNulls(arr arrow.Array, mem memory.Allocator) arrow.Array {
	if !holdsWideDecimal(arr.DataType()) {
		arr.Retain()
		return arr
	}
	switch a := arr.(type) {
	case *array.Struct:
		n := a.Len()
		kids := make([]arrow.ArrayData, a.NumField())
		var made []arrow.Array
		defer func() {
			for _, m := range made {
				m.Release()
			}
		}()
		for i := range kids {
			child := a.Field(i) // already sliced to a's rows
			if a.NullN() > 0 && holdsWideDecimal(child.DataType()) {
				child = andValidity(child, a, mem)
				made = append(made, child)
			}
			pushed := pushNulls(child, mem)
			made = append(made, pushed)
			kids[i] = pushed.Data()
		}
		valid := bitsOf(a, mem)
		if valid != nil {
			defer valid.Release()
		}
		data := array.NewData(a.DataType(), n, []*memory.Buffer{valid}, kids, a.NullN(), 0)
		defer data.Release()
		return array.MakeFromData(data)
	case array.ListLike:
		// A list's elements are not under its validity row by row: only
		// the structs inside them need the push.
		d := a.Data()
		values := pushNulls(a.ListValues(), mem)
		defer values.Release()
		data := array.NewData(a.DataType(), a.Len(), d.Buffers(), []arrow.ArrayData{values.Data()}, a.NullN(), d.Offset())
		defer data.Release()
		return array.MakeFromData(data)
	}
	arr.Retain()
	return arr
}

// bitsOf returns a's validity as a bitmap starting at bit 0 (nil when a
// has no nulls).
func bitsOf(a arrow.Array, mem memory.Allocator) *memory.Buffer {
	if a.NullN() == 0 {
		return nil
	}
	n := a.Len()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	clear(bits)
	for j := range n {
		if a.IsValid(j) {
			bitutil.SetBit(bits, j)
		}
	}
	return buf
}

// andValidity returns child (a struct's field, row j under the struct's
// row j) made null where parent is null.
func andValidity(child, parent arrow.Array, mem memory.Allocator) arrow.Array {
	d := child.Data()
	off, n := d.Offset(), child.Len()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(off + n))))
	bits := buf.Bytes()
	clear(bits)
	for j := range n {
		if child.IsValid(j) && parent.IsValid(j) {
			bitutil.SetBit(bits, off+j)
		}
	}
	bufs := append([]*memory.Buffer{buf}, d.Buffers()[1:]...)
	data := array.NewData(child.DataType(), n, bufs, d.Children(), array.UnknownNullCount, off)
	buf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}
