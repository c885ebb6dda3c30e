package config

import "testing"

// TestSparkHiveCatalogBlock: Spark's Hive catalog settings (by type or by
// catalog-impl) become a hive catalog with the metastore uri as written,
// the warehouse in our spelling and the Java lock settings kept (the
// catalog reads them).
func TestSparkHiveCatalogBlock(t *testing.T) {
	for _, how := range [][2]string{{"type", "hive"}, {"catalog-impl", "org.apache.iceberg.hive.HiveCatalog"}} {
		r, err := resolveSpark(t, map[string]string{
			"spark.sql.catalog.h":                              "org.apache.iceberg.spark.SparkCatalog",
			"spark.sql.catalog.h." + how[0]:                    how[1],
			"spark.sql.catalog.h.uri":                          "thrift://127.0.0.1:9083",
			"spark.sql.catalog.h.warehouse":                    "file:///data/wh",
			"spark.sql.catalog.h.iceberg.hive.lock-timeout-ms": "60000",
			"spark.sql.defaultCatalog":                         "h",
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"type": "hive", "uri": "thrift://127.0.0.1:9083", "warehouse": "file:///data/wh",
			"iceberg.hive.lock-timeout-ms": "60000"}
		got := r.Catalogs["h"]
		if len(got) != len(want) || r.DefaultCatalog != "h" {
			t.Errorf("%s: %v (default %q), want %v", how[0], got, r.DefaultCatalog, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", how[0], k, got[k], v)
			}
		}
	}
}
