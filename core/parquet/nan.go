package parquet

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

const fieldIDKey = "PARQUET:field_id"

// fieldID returns the Iceberg field id stored in an Arrow field's metadata.
func fieldID(f arrow.Field) (int, bool) {
	v, ok := f.Metadata.GetValue(fieldIDKey)
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(v)
	return id, err == nil
}

// hasFloat reports whether t is or contains a float32/float64 column.
func hasFloat(t arrow.DataType) bool {
	switch dt := t.(type) {
	case *arrow.Float32Type, *arrow.Float64Type:
		return true
	case *arrow.StructType:
		for _, f := range dt.Fields() {
			if hasFloat(f.Type) {
				return true
			}
		}
	case arrow.ListLikeType:
		return hasFloat(dt.Elem())
	}
	return false
}

// floatIDs adds a zero NaN count for every float leaf under f, as Iceberg
// reports NaN counts for all float columns.
func floatIDs(f arrow.Field, counts map[int]int64) {
	switch dt := f.Type.(type) {
	case *arrow.Float32Type, *arrow.Float64Type:
		if id, ok := fieldID(f); ok {
			counts[id] += 0
		}
	case *arrow.StructType:
		for _, c := range dt.Fields() {
			floatIDs(c, counts)
		}
	case *arrow.MapType:
		floatIDs(dt.KeyField(), counts)
		floatIDs(dt.ItemField(), counts)
	case arrow.ListLikeType:
		floatIDs(dt.ElemField(), counts)
	}
}

// countNaN adds the NaN values of arr (a column of field f) to counts. sel
// lists the row indices whose ancestors are all valid; nil means every row.
func countNaN(f arrow.Field, arr arrow.Array, sel []int, counts map[int]int64) {
	switch a := arr.(type) {
	case *array.Float32:
		if id, ok := fieldID(f); ok {
			counts[id] += nanIn(a.Float32Values(), a, sel)
		}
	case *array.Float64:
		if id, ok := fieldID(f); ok {
			counts[id] += nanIn(a.Float64Values(), a, sel)
		}
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		childSel := sel
		if a.NullN() > 0 {
			childSel = validRows(a, sel)
		}
		for i := 0; i < a.NumField(); i++ {
			if hasFloat(st.Field(i).Type) {
				countNaN(st.Field(i), a.Field(i), childSel, counts)
			}
		}
	case *array.Map:
		mt := a.DataType().(*arrow.MapType)
		if hasFloat(mt.KeyType()) {
			withChildren(a, a.Keys(), sel, func(c arrow.Array, s []int) { countNaN(mt.KeyField(), c, s, counts) })
		}
		if hasFloat(mt.ItemType()) {
			withChildren(a, a.Items(), sel, func(c arrow.Array, s []int) { countNaN(mt.ItemField(), c, s, counts) })
		}
	case array.ListLike:
		elem := a.DataType().(arrow.ListLikeType).ElemField()
		if hasFloat(elem.Type) {
			withChildren(a, a.ListValues(), sel, func(c arrow.Array, s []int) { countNaN(elem, c, s, counts) })
		}
	}
}

// withChildren calls fn with the child values of the valid, selected rows of
// a list-like array: a contiguous slice when no row is skipped, else the
// whole child with a selection of indices.
func withChildren(a array.ListLike, child arrow.Array, sel []int, fn func(arrow.Array, []int)) {
	if a.Len() == 0 {
		return
	}
	if sel == nil && a.NullN() == 0 {
		s, _ := a.ValueOffsets(0)
		_, e := a.ValueOffsets(a.Len() - 1)
		sl := array.NewSlice(child, s, e)
		defer sl.Release()
		fn(sl, nil)
		return
	}
	fn(child, listRows(a, sel))
}

type floatish interface{ ~float32 | ~float64 }

func nanIn[T floatish](vals []T, arr arrow.Array, sel []int) int64 {
	var n int64
	if sel == nil {
		if arr.NullN() == 0 {
			for _, v := range vals {
				if v != v {
					n++
				}
			}
			return n
		}
		for i, v := range vals {
			if v != v && arr.IsValid(i) {
				n++
			}
		}
		return n
	}
	for _, i := range sel {
		if v := vals[i]; v != v && arr.IsValid(i) {
			n++
		}
	}
	return n
}

// validRows returns the rows of sel (or all rows) that are valid in arr.
func validRows(arr arrow.Array, sel []int) []int {
	out := make([]int, 0, arr.Len()-arr.NullN())
	if sel == nil {
		for i := 0; i < arr.Len(); i++ {
			if arr.IsValid(i) {
				out = append(out, i)
			}
		}
		return out
	}
	for _, i := range sel {
		if arr.IsValid(i) {
			out = append(out, i)
		}
	}
	return out
}

// listRows returns the child indices covered by the valid, selected rows of
// a list-like array.
func listRows(a array.ListLike, sel []int) []int {
	var out []int
	add := func(i int) {
		if a.IsNull(i) {
			return
		}
		s, e := a.ValueOffsets(i)
		for j := s; j < e; j++ {
			out = append(out, int(j))
		}
	}
	if sel == nil {
		out = make([]int, 0, a.Len())
		for i := 0; i < a.Len(); i++ {
			add(i)
		}
		return out
	}
	for _, i := range sel {
		add(i)
	}
	return out
}
