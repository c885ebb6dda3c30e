package write

import (
	"errors"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestOptionPrecedence(t *testing.T) {
	table := map[string]string{"write.parquet.compression-codec": "zstd", "write.target-file-size-bytes": "100"}
	session := map[string]string{"compression-codec": "snappy", "target-file-size-bytes": "200"}
	options := map[string]string{"compression-codec": "gzip", "snapshot-property.source": "job-7", "check-ordering": "false"}
	e, err := resolveOptions(table, session, options)
	if err != nil {
		t.Fatal(err)
	}
	if e.Props["write.parquet.compression-codec"] != "gzip" {
		t.Errorf("write option must win: %v", e.Props)
	}
	if e.Props["write.target-file-size-bytes"] != "200" {
		t.Errorf("session configuration must beat the table property: %v", e.Props)
	}
	if e.SnapshotProps["source"] != "job-7" || len(e.SnapshotProps) != 1 {
		t.Errorf("snapshot-property prefix not stripped: %v", e.SnapshotProps)
	}
	if e.CheckOrdering || !e.CheckNullability {
		t.Errorf("checks: %+v", e)
	}
	if table["write.parquet.compression-codec"] != "zstd" {
		t.Error("the table's properties were modified")
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []map[string]string{
		{"no-such-option": "1"},
		{"check-nullability": "maybe"},
		{"snapshot-property.total-records": "1"},
		{"write-format": "orc"},
	} {
		if _, err := resolveOptions(nil, nil, o); !errors.Is(err, errs.ErrInvalidArgument) && !errors.Is(err, errs.ErrNotSupported) {
			t.Errorf("%v: err = %v", o, err)
		}
	}
}

func TestLayoutOptionPrecedenceAndSparkSessionNames(t *testing.T) {
	table := map[string]string{"write.distribution-mode": "hash", "write.spark.fanout.enabled": "false"}
	session := map[string]string{"spark.sql.iceberg.distribution-mode": "range", "fanout-enabled": "true", "max-open-files": "9"}
	options := map[string]string{"distribution-mode": "none", "max-buffered-bytes": "1234"}
	e, err := resolveOptions(table, session, options)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"write.distribution-mode":               "none", // option beats session and table
		"write.spark.fanout.enabled":            "true", // session beats table
		"write.pyiceberg-go.max-open-files":     "9",
		"write.pyiceberg-go.max-buffered-bytes": "1234",
	} {
		if e.Props[k] != want {
			t.Errorf("%s = %q, want %q", k, e.Props[k], want)
		}
	}
	e, err = resolveOptions(table, session, nil)
	if err != nil || e.Props["write.distribution-mode"] != "range" {
		t.Errorf("session (Spark's name) must beat the table property: %v %v", e.Props, err)
	}
	if e, _ := resolveOptions(nil, nil, map[string]string{"mergeSchema": "true"}); !e.MergeSchema {
		t.Error("mergeSchema option not read")
	}
}
