package rowlevel

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// The writer's partition tuples carry iceberg.Decimal, the ones decoded
// from manifests iceberg.DecimalLiteral: both must give one key, or a
// dynamic overwrite never replaces a decimal partition (found by
// tests/py/test_model.py: overwritePartitions kept every old row).
func TestPartitionKeyOfDecimalsFromWriterAndManifest(t *testing.T) {
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	n := decimal128.FromI64(150)
	written := partitionKey(spec, map[int]any{1000: iceberg.Decimal{Val: n, Scale: 2}})
	decoded := partitionKey(spec, map[int]any{1000: iceberg.DecimalLiteral{Val: n, Scale: 2}})
	if written != decoded {
		t.Errorf("writer key %q, manifest key %q", written, decoded)
	}
	if other := partitionKey(spec, map[int]any{1000: iceberg.DecimalLiteral{Val: decimal128.FromI64(151), Scale: 2}}); other == written {
		t.Errorf("different decimals share key %q", other)
	}
}
