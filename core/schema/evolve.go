package schema

import (
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
)

// Evolve returns cur with what src adds, as a schema with id newID: src's
// top-level columns cur lacks (optional, with new field ids after
// lastColumnID) and, in the columns both have, what mergeType adds. ok is
// false (and the schema nil) when src adds nothing. This is Spark's MERGE
// withSchemaEvolution; the caller commits the schema with the data.
func Evolve(cur, src *iceberg.Schema, lastColumnID, newID int) (_ *iceberg.Schema, ok bool) {
	next := lastColumnID + 1
	fields := append([]iceberg.NestedField{}, cur.Fields()...)
	added := false
	for _, f := range src.Fields() {
		if i := TopLevelIndex(cur, f.Name); i >= 0 {
			if merged, changed := mergeType(fields[i].Type, f.Type, &next); changed {
				fields[i].Type = merged
				added = true
			}
			continue
		}
		nf := iceberg.NestedField{ID: next, Name: f.Name, Type: f.Type, Required: false, Doc: f.Doc}
		next++
		nf.Type = renumber(nf.Type, &next)
		fields = append(fields, nf)
		added = true
	}
	if !added {
		return nil, false
	}
	return iceberg.NewSchemaWithIdentifiers(newID, cur.IdentifierFieldIDs, fields...), true
}

// mergeType is the table type t with what the source type src adds:
// nested struct fields the table lacks (new ids from *next, optional),
// recursively through structs, list elements and map values, and Spark's
// allowed widenings (int->long, float->double, decimal precision).
// Anything else is left for the write to reject when it casts.
func mergeType(t, src iceberg.Type, next *int) (iceberg.Type, bool) {
	switch tt := t.(type) {
	case *iceberg.StructType:
		st, ok := src.(*iceberg.StructType)
		if !ok {
			return t, false
		}
		fields := append([]iceberg.NestedField{}, tt.FieldList...)
		changed := false
		for _, sf := range st.FieldList {
			i := slices.IndexFunc(fields, func(f iceberg.NestedField) bool { return strings.EqualFold(f.Name, sf.Name) })
			if i >= 0 {
				if m, ok := mergeType(fields[i].Type, sf.Type, next); ok {
					fields[i].Type, changed = m, true
				}
				continue
			}
			nf := iceberg.NestedField{ID: *next, Name: sf.Name, Type: sf.Type, Doc: sf.Doc}
			*next++
			nf.Type = renumber(nf.Type, next)
			fields = append(fields, nf)
			changed = true
		}
		if !changed {
			return t, false
		}
		return &iceberg.StructType{FieldList: fields}, true
	case *iceberg.ListType:
		sl, ok := src.(*iceberg.ListType)
		if !ok {
			return t, false
		}
		if m, ok := mergeType(tt.Element, sl.Element, next); ok {
			out := *tt
			out.Element = m
			return &out, true
		}
		return t, false
	case *iceberg.MapType:
		sm, ok := src.(*iceberg.MapType)
		if !ok {
			return t, false
		}
		if m, ok := mergeType(tt.ValueType, sm.ValueType, next); ok {
			out := *tt
			out.ValueType = m
			return &out, true
		}
		return t, false
	}
	if Promotable(t, src) {
		return src, true
	}
	return nil, false
}

// renumber gives the fields inside t new ids from *next (nested fields of
// a column the table did not have yet); nested fields are optional.
func renumber(t iceberg.Type, next *int) iceberg.Type {
	switch x := t.(type) {
	case *iceberg.StructType:
		fields := make([]iceberg.NestedField, len(x.FieldList))
		for i, f := range x.FieldList {
			f.ID = *next
			*next++
			f.Required = false
			fields[i] = f
		}
		for i := range fields {
			fields[i].Type = renumber(fields[i].Type, next)
		}
		return &iceberg.StructType{FieldList: fields}
	case *iceberg.ListType:
		id := *next
		*next++
		return &iceberg.ListType{ElementID: id, Element: renumber(x.Element, next), ElementRequired: false}
	case *iceberg.MapType:
		k, v := *next, *next+1
		*next += 2
		return &iceberg.MapType{KeyID: k, KeyType: renumber(x.KeyType, next), ValueID: v, ValueType: renumber(x.ValueType, next), ValueRequired: false}
	}
	return t
}

// TopLevelIndex finds a top-level column by name, case-insensitively.
func TopLevelIndex(sc *iceberg.Schema, name string) int {
	for i, f := range sc.Fields() {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}
