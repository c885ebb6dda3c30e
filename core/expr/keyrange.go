package expr

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// keyRangeMaxIn is the most distinct values KeyRange lists in an IN
// predicate; above it a min/max range is used.
const keyRangeMaxIn = 1000

// KeyRange returns an iceberg-go predicate that every target row matching
// one of values holds, for pruning the target of a MERGE by the source's
// keys: target is a Key.Target and values the evaluated Key.Source (the
// type of target, as EquiJoin gives it). It is `col IN (...)` for at most
// 1000 distinct non-null values, else `col >= min AND col <= max`;
// AlwaysFalse when there is no non-null value, unless target is the side of
// a null-safe key, where NULL values add `OR col IS NULL`. When target is
// not a column of scope 0 (possibly under an exact widening cast, as for
// an int column keyed by a bigint) the result is AlwaysTrue.
func KeyRange(target *Expr, values arrow.Array) (out iceberg.BooleanExpression) {
	defer func() {
		// iceberg-go constructors panic on invalid input; never let that escape
		if recover() != nil {
			out = iceberg.AlwaysTrue{}
		}
	}()
	if target == nil || values == nil {
		return iceberg.AlwaysTrue{}
	}
	c, zone, ok := colTerm(target.root)
	if !ok {
		return iceberg.AlwaysTrue{}
	}
	t := target.root.typ
	v, err := arrayVec(values, t)
	if err != nil {
		return iceberg.AlwaysTrue{}
	}
	ref := iceberg.Reference(c.name)
	k := kindOf(c.typ)
	isFloat := k == kFloat || k == kDouble
	// Distinct values are collected only while they could still be listed;
	// past that, only the smallest and largest are kept.
	distinct := map[value]struct{}{}
	var vals []value
	var lo, hi value
	many := false
	hasNull, hasNaN := false, false
	for i := 0; i < v.n; i++ {
		x := v.get(i)
		if x.null {
			hasNull = true
			continue
		}
		// a value with no exact counterpart in the column's type equals no
		// column value (the cast is injective, see exactCast)
		cv, ok := litFor(x, t, c.typ, zone)
		if !ok {
			continue
		}
		if isFloat {
			if math.IsNaN(cv.f) {
				hasNaN = true
				continue
			}
			if cv.f == 0 {
				cv.f = 0 // -0.0 and 0.0 are one key; both are listed below
			}
		}
		if many {
			if cmpValues(k, cv, lo) < 0 {
				lo = cv
			}
			if cmpValues(k, cv, hi) > 0 {
				hi = cv
			}
			continue
		}
		if _, dup := distinct[cv]; !dup {
			distinct[cv] = struct{}{}
			vals = append(vals, cv)
			if len(vals) > keyRangeMaxIn {
				many, distinct = true, nil
				lo = slices.MinFunc(vals, func(a, b value) int { return cmpValues(k, a, b) })
				hi = slices.MaxFunc(vals, func(a, b value) int { return cmpValues(k, a, b) })
			}
		}
	}
	if !many {
		slices.SortFunc(vals, func(a, b value) int { return cmpValues(k, a, b) })
		if len(vals) > 0 {
			lo, hi = vals[0], vals[len(vals)-1]
		}
	}
	var parts []iceberg.BooleanExpression
	switch {
	case len(vals) == 0:
	case len(vals) <= keyRangeMaxIn:
		var lits []iceberg.Literal
		for _, x := range vals {
			if isFloat && x.f == 0 {
				// Iceberg orders -0.0 below 0.0; Spark's equality does not
				l, _ := iceLiteral(value{f: math.Copysign(0, -1)}, c.typ)
				lits = append(lits, l)
			}
			l, ok := iceLiteral(x, c.typ)
			if !ok {
				return iceberg.AlwaysTrue{}
			}
			lits = append(lits, l)
		}
		parts = append(parts, iceberg.SetPredicate(iceberg.OpIn, ref, lits))
	default:
		if isFloat && lo.f == 0 {
			lo.f = math.Copysign(0, -1)
		}
		ll, ok1 := iceLiteral(lo, c.typ)
		hl, ok2 := iceLiteral(hi, c.typ)
		if !ok1 || !ok2 {
			return iceberg.AlwaysTrue{}
		}
		parts = append(parts, iceberg.NewAnd(
			iceberg.LiteralPredicate(iceberg.OpGTEQ, ref, ll),
			iceberg.LiteralPredicate(iceberg.OpLTEQ, ref, hl)))
	}
	if hasNaN {
		parts = append(parts, iceberg.IsNaN(ref))
	}
	if hasNull && target.nullSafe {
		parts = append(parts, iceberg.IsNull(ref))
	}
	if len(parts) == 0 {
		return iceberg.AlwaysFalse{}
	}
	out = parts[0]
	for _, p := range parts[1:] {
		out = iceberg.NewOr(out, p)
	}
	return out
}

// arrayVec converts an array into a vec of type t.
func arrayVec(values arrow.Array, t iceberg.Type) (*vec, error) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "v", Type: values.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{values}, int64(values.Len()))
	defer rec.Release()
	return loadColumn(rec, &colRef{path: []string{"v"}, name: "key", typ: t}, "")
}
