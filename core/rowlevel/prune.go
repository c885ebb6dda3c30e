package rowlevel

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// planFilter is scanFilter(f) for planning snapshot snap of t, or true when
// a manifest of snap has a string or binary partition field holding the
// empty value: iceberg-go v0.7.0 writes the bound of "" (and of an empty
// binary) as null in the manifest list, and its planning then takes the
// manifest for one whose values are all null and skips it for any
// predicate on that field, so a delete, update, overwrite or merge of those
// rows would change nothing. Such snapshots are planned without pruning by
// the filter; files are still judged one by one by the core.
func planFilter(ctx context.Context, f iceberg.BooleanExpression, t *table.Table, snap *table.Snapshot) iceberg.BooleanExpression {
	if snap != nil && emptyBoundSummaries(ctx, t, snap) {
		return iceberg.AlwaysTrue{}
	}
	return scanFilter(f, t.Metadata())
}

// emptyBoundSummaries reports whether a manifest of snap summarises a
// string or binary partition field with a null lower bound: all its values
// may be null, or some may be empty (the summary cannot tell).
func emptyBoundSummaries(ctx context.Context, t *table.Table, snap *table.Snapshot) bool {
	meta := t.Metadata()
	if !hasBytePartitions(meta) {
		return false
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return false // the scan reports it
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return false
	}
	for _, m := range manifests {
		spec := meta.PartitionSpecByID(int(m.PartitionSpecID()))
		if spec == nil {
			return true
		}
		sums := m.Partitions()
		for i, pf := range spec.Fields() {
			if i >= len(sums) || !bytePartition(meta.CurrentSchema(), pf) {
				continue
			}
			// A null lower bound is also all that shows of "" next to nulls.
			if sums[i].LowerBound == nil {
				return true
			}
		}
	}
	return false
}

func hasBytePartitions(meta table.Metadata) bool {
	for _, spec := range meta.PartitionSpecs() {
		for _, pf := range spec.Fields() {
			if bytePartition(meta.CurrentSchema(), pf) {
				return true
			}
		}
	}
	return false
}

// bytePartition reports whether pf's values are strings or binaries.
func bytePartition(sc *iceberg.Schema, pf iceberg.PartitionField) bool {
	src, ok := sc.FindFieldByID(pf.SourceID())
	if !ok {
		return true // a dropped column: be safe
	}
	switch pf.Transform.ResultType(src.Type).(type) {
	case iceberg.StringType, iceberg.BinaryType, iceberg.FixedType:
		return true
	}
	return false
}

// scanFilter is f made safe for iceberg-go's file pruning: predicates on a
// column whose type was widened (int -> long, float -> double, decimal
// precision) become true, because files written before the widening keep
// bounds in the old type, which iceberg-go v0.7.0 decodes as the new one
// and fails on. Pruning on other columns is kept; the rows themselves are
// always filtered by the core's own evaluation.
func scanFilter(f iceberg.BooleanExpression, meta table.Metadata) iceberg.BooleanExpression {
	widened := widenedColumns(meta)
	if len(widened) == 0 || f == nil {
		return f
	}
	// NOT is pushed down first, so that replacing a predicate by true only
	// ever widens what is kept.
	nnf, err := iceberg.RewriteNotExpr(f)
	if err != nil {
		return iceberg.AlwaysTrue{}
	}
	out, err := iceberg.VisitExpr[iceberg.BooleanExpression](nnf, dropWidened{widened: widened, sc: meta.CurrentSchema()})
	if err != nil {
		return iceberg.AlwaysTrue{}
	}
	return out
}

// widenedColumns are the field ids whose type in an older schema differs
// from the current one.
func widenedColumns(meta table.Metadata) map[int]bool {
	cur := meta.CurrentSchema()
	out := map[int]bool{}
	for _, old := range meta.Schemas() {
		if old.ID == cur.ID {
			continue
		}
		for _, f := range old.Fields() {
			markWidened(cur, f, out)
		}
	}
	return out
}

func markWidened(cur *iceberg.Schema, f iceberg.NestedField, out map[int]bool) {
	if now, ok := cur.FindFieldByID(f.ID); ok {
		if _, prim := f.Type.(iceberg.PrimitiveType); prim && !now.Type.Equals(f.Type) {
			out[f.ID] = true
		}
	}
	if st, ok := f.Type.(*iceberg.StructType); ok {
		for _, c := range st.FieldList {
			markWidened(cur, c, out)
		}
	}
}

// dropWidened rebuilds an expression with predicates on widened columns
// replaced by true.
type dropWidened struct {
	widened map[int]bool
	sc      *iceberg.Schema
}

func (dropWidened) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (dropWidened) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }
func (dropWidened) VisitNot(c iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewNot(c)
}
func (dropWidened) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewAnd(l, r)
}
func (dropWidened) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewOr(l, r)
}
func (d dropWidened) VisitUnbound(p iceberg.UnboundPredicate) iceberg.BooleanExpression {
	if ref, ok := p.Term().(iceberg.Reference); ok {
		if f, ok := d.sc.FindFieldByNameCaseInsensitive(string(ref)); ok && d.widened[f.ID] {
			return iceberg.AlwaysTrue{}
		}
	}
	return p
}
func (d dropWidened) VisitBound(p iceberg.BoundPredicate) iceberg.BooleanExpression {
	if d.widened[p.Term().Ref().Field().ID] {
		return iceberg.AlwaysTrue{}
	}
	return p
}

// partitionPruner judges files by their partition values against a filter
// projected onto their spec inclusively, as Java's Projections.inclusive:
// a predicate on a source column becomes, for each partition field of that
// column, its transform's projection (true where the transform has none),
// so a file is pruned only when no row of its partition can match.
type partitionPruner struct {
	sc    *iceberg.Schema
	bound iceberg.BooleanExpression // the filter, bound, NOT pushed down (nil: prune nothing)
	evals map[int]func(iceberg.StructLike) (bool, error)
}

// newPartitionPruner prunes by f (scanFilter'd for meta: predicates on
// widened columns do not prune); nil f prunes nothing.
func newPartitionPruner(f iceberg.BooleanExpression, meta table.Metadata) *partitionPruner {
	p := &partitionPruner{sc: meta.CurrentSchema(), evals: map[int]func(iceberg.StructLike) (bool, error){}}
	if f == nil {
		return p
	}
	nnf, err := iceberg.RewriteNotExpr(scanFilter(f, meta))
	if err != nil {
		return p
	}
	if p.bound, err = iceberg.BindExpr(p.sc, nnf, true); err != nil {
		p.bound = nil
	}
	return p
}

// mightMatch is false only when no row of a file of spec with df's
// partition values can match the filter.
func (p *partitionPruner) mightMatch(df iceberg.DataFile, spec iceberg.PartitionSpec) bool {
	if p.bound == nil || spec.NumFields() == 0 {
		return true
	}
	eval, ok := p.evals[spec.ID()]
	if !ok {
		projected, err := iceberg.VisitExpr[iceberg.BooleanExpression](p.bound, inclusiveProjection{spec: &spec})
		if err == nil {
			fields := spec.PartitionType(p.sc).FieldList
			eval, err = iceberg.ExpressionEvaluator(iceberg.NewSchema(0, fields...), projected, true)
		}
		if err != nil {
			eval = nil
		}
		p.evals[spec.ID()] = eval
	}
	if eval == nil {
		return true
	}
	match, err := eval(table.GetPartitionRecord(df, spec.PartitionType(p.sc)))
	return err != nil || match
}

// inclusiveProjection rewrites a bound expression (NOT pushed down) over
// the source columns into one over spec's partition fields that every
// partition holding a matching row satisfies.
type inclusiveProjection struct{ spec *iceberg.PartitionSpec }

func (inclusiveProjection) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (inclusiveProjection) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }

// VisitNot is not reached once NOT is pushed down; true keeps it sound.
func (inclusiveProjection) VisitNot(iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.AlwaysTrue{}
}
func (inclusiveProjection) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewAnd(l, r)
}
func (inclusiveProjection) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewOr(l, r)
}
func (inclusiveProjection) VisitUnbound(iceberg.UnboundPredicate) iceberg.BooleanExpression {
	return iceberg.AlwaysTrue{}
}
func (v inclusiveProjection) VisitBound(p iceberg.BoundPredicate) iceberg.BooleanExpression {
	var out iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	for _, pf := range v.spec.FieldsBySourceID(p.Term().Ref().Field().ID) {
		if q, err := pf.Transform.Project(pf.Name, p); err == nil && q != nil {
			out = iceberg.NewAnd(out, q)
		}
	}
	return out
}
