package rowlevel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
)

var pruneSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
	iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String},
)

func pruneMeta(t *testing.T, spec iceberg.PartitionSpec) table.Metadata {
	t.Helper()
	m, err := table.NewMetadata(pruneSchema, &spec, table.UnsortedSortOrder, "file:///t", iceberg.Properties{"format-version": "2"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fileIn is a file of the current spec of m with partition values v.
func fileIn(t *testing.T, m table.Metadata, v map[int]any) (iceberg.DataFile, iceberg.PartitionSpec) {
	t.Helper()
	spec := m.PartitionSpec()
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentPosDeletes, "file:///t/d.parquet", iceberg.ParquetFile, v, nil, nil, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	return b.Build(), spec
}

func pruner(t *testing.T, m table.Metadata, where string) *partitionPruner {
	t.Helper()
	e, err := expr.Compile(where, pruneSchema)
	if err != nil {
		t.Fatal(err)
	}
	return newPartitionPruner(e.Iceberg(), m)
}

// trunc10 is truncate[10] of v (towards negative infinity).
func trunc10(v int64) int64 { return v - ((v%10)+10)%10 }

// TestPartitionPrunerIsSoundOnTruncate: for generated values, comparisons
// and their negations, a file whose truncate[10](id) partition holds a
// value the filter matches is never pruned; and the partitions the filter
// cannot reach are pruned (Spark's inclusive projection).
func TestPartitionPrunerIsSoundOnTruncate(t *testing.T) {
	m := pruneMeta(t, iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "id_trunc", Transform: iceberg.TruncateTransform{Width: 10}}))
	rng := rand.New(rand.NewPCG(3, 4))
	ops := []struct {
		sql string
		fn  func(v, lit int64) bool
	}{
		{"<", func(v, l int64) bool { return v < l }},
		{"<=", func(v, l int64) bool { return v <= l }},
		{">", func(v, l int64) bool { return v > l }},
		{">=", func(v, l int64) bool { return v >= l }},
		{"=", func(v, l int64) bool { return v == l }},
		{"!=", func(v, l int64) bool { return v != l }},
	}
	pruned := 0
	for range 400 {
		op := ops[rng.IntN(len(ops))]
		lit := rng.Int64N(200) - 100
		neg := rng.IntN(3) == 0
		where := fmt.Sprintf("id %s %d", op.sql, lit)
		if neg {
			where = "NOT (" + where + ")"
		}
		p := pruner(t, m, where)
		for range 20 {
			v := rng.Int64N(200) - 100
			df, spec := fileIn(t, m, map[int]any{1000: trunc10(v)})
			if op.fn(v, lit) != neg && !p.mightMatch(df, spec) {
				t.Fatalf("%s pruned the partition %d, which holds %d", where, trunc10(v), v)
			}
		}
		// A partition whose every value fails the filter is pruned.
		for part := int64(-100); part < 100; part += 10 {
			none := true
			for v := part; v < part+10; v++ {
				none = none && op.fn(v, lit) == neg
			}
			df, spec := fileIn(t, m, map[int]any{1000: part})
			if none && !neg && op.sql != "!=" && p.mightMatch(df, spec) {
				t.Fatalf("%s kept the partition %d, which cannot match", where, part)
			}
			if !p.mightMatch(df, spec) {
				pruned++
			}
		}
	}
	if pruned == 0 {
		t.Fatal("nothing was pruned")
	}
}

// TestPartitionPrunerTransforms: bucket prunes equality only; identity and
// truncate of strings; predicates on other columns prune nothing.
func TestPartitionPrunerTransforms(t *testing.T) {
	m := pruneMeta(t, iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "s_trunc", Transform: iceberg.TruncateTransform{Width: 2}},
	))
	bucketOf := func(v int64) int32 {
		return iceberg.BucketTransform{NumBuckets: 4}.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: iceberg.Int64Literal(v)}).Val.(iceberg.Int32Literal).Value()
	}
	for _, c := range []struct {
		where string
		part  map[int]any
		keep  bool
	}{
		{"id = 7", map[int]any{1000: bucketOf(7), 1001: "ab"}, true},
		{"id = 7", map[int]any{1000: (bucketOf(7) + 1) % 4, 1001: "ab"}, false},
		{"id < 7", map[int]any{1000: (bucketOf(7) + 1) % 4, 1001: "ab"}, true},
		{"s = 'abc'", map[int]any{1000: int32(0), 1001: "ab"}, true},
		{"s = 'abc'", map[int]any{1000: int32(0), 1001: "ac"}, false},
		{"s >= 'b'", map[int]any{1000: int32(0), 1001: "ab"}, false},
		{"s >= 'b' OR id = 7", map[int]any{1000: bucketOf(7), 1001: "ab"}, true},
		{"s >= 'b' AND id = 7", map[int]any{1000: bucketOf(7), 1001: "ab"}, false},
		{"length(s) = 3", map[int]any{1000: int32(0), 1001: "zz"}, true},
	} {
		df, spec := fileIn(t, m, c.part)
		if got := pruner(t, m, c.where).mightMatch(df, spec); got != c.keep {
			t.Errorf("%s on %v: kept %v, want %v", c.where, c.part, got, c.keep)
		}
	}
}
