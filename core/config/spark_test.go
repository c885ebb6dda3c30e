package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func resolveSpark(t *testing.T, conf map[string]string, cats map[string]map[string]string) (*Resolved, error) {
	t.Helper()
	return Resolve(Session{Home: t.TempDir(), Env: map[string]string{}, Conf: conf, Catalogs: cats})
}

// TestSparkCatalogBlocksBecomeCatalogs: a Spark user's catalog settings,
// verbatim, define our catalogs; other Spark settings stay session conf.
func TestSparkCatalogBlocksBecomeCatalogs(t *testing.T) {
	dir := t.TempDir()
	r, err := resolveSpark(t, map[string]string{
		"spark.sql.catalog.Prod":                                                "org.apache.iceberg.spark.SparkCatalog",
		"spark.sql.catalog.Prod.type":                                           "rest",
		"spark.sql.catalog.Prod.uri":                                            "http://rest:8181",
		"spark.sql.catalog.Prod.warehouse":                                      "s3a://bucket/wh",
		"spark.sql.catalog.Prod.io-impl":                                        "org.apache.iceberg.aws.s3.S3FileIO",
		"spark.sql.catalog.Prod.s3.endpoint":                                    "http://minio:9000",
		"spark.sql.catalog.Prod.cache-enabled":                                  "false",
		"spark.sql.catalog.Prod.cache.expiration-interval-ms":                   "30000",
		"spark.sql.catalog.Prod.table-default.write.format.default":             "parquet",
		"spark.sql.catalog.Prod.table-override.write.parquet.compression-codec": "zstd",
		"spark.sql.catalog.Prod.default-namespace":                              "db",
		"spark.sql.catalog.jd":                                                  "org.apache.iceberg.spark.SparkCatalog",
		"spark.sql.catalog.jd.catalog-impl":                                     "org.apache.iceberg.jdbc.JdbcCatalog",
		"spark.sql.catalog.jd.uri":                                              "jdbc:sqlite:file:" + dir + "/c.db",
		"spark.sql.catalog.jd.jdbc.user":                                        "u",
		"spark.sql.catalog.jd.warehouse":                                        "file:" + dir + "/wh",
		"spark.sql.catalog.h":                                                   "org.apache.iceberg.spark.SparkCatalog",
		"spark.sql.catalog.h.type":                                              "hadoop",
		"spark.sql.catalog.h.warehouse":                                         dir + "/hwh",
		"spark.sql.defaultCatalog":                                              "prod",
		"spark.sql.session.timeZone":                                            "Europe/Paris",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"prod": {"type": "rest", "uri": "http://rest:8181", "warehouse": "s3://bucket/wh", "s3.endpoint": "http://minio:9000",
			"table-default.write.format.default": "parquet", "table-override.write.parquet.compression-codec": "zstd", "default-namespace": "db"},
		"jd": {"type": "sql", "uri": "sqlite:///" + dir + "/c.db", "jdbc.user": "u", "warehouse": "file://" + dir + "/wh"},
		"h":  {"type": "hadoop", "warehouse": "file://" + dir + "/hwh"},
	}
	for name, props := range want {
		got := r.Catalogs[name]
		if len(got) != len(props) {
			t.Errorf("%s: %v, want %v", name, got, props)
		}
		for k, v := range props {
			if got[k] != v {
				t.Errorf("%s[%s] = %q, want %q", name, k, got[k], v)
			}
		}
	}
	if r.DefaultCatalog != "prod" {
		t.Errorf("default catalog %q", r.DefaultCatalog)
	}
	if len(r.Conf) != 1 || r.Conf["spark.sql.session.timeZone"] != "Europe/Paris" {
		t.Errorf("conf keeps only the non-catalog settings: %v", r.Conf)
	}
}

// TestSparkSettingsPrecedence: the YAML file's spark_conf, then the
// caller's conf, override the file's catalogs; the caller's catalogs win.
func TestSparkSettingsPrecedence(t *testing.T) {
	home := t.TempDir()
	yml := "catalog:\n  prod:\n    type: rest\n    uri: http://yaml\n    token: t0\n" +
		"spark_conf:\n  spark.sql.catalog.prod: org.apache.iceberg.spark.SparkCatalog\n  spark.sql.catalog.prod.type: rest\n" +
		"  spark.sql.catalog.prod.uri: http://yaml-spark\n  spark.sql.catalog.prod.credential: c1\n"
	if err := os.WriteFile(filepath.Join(home, ".pyiceberg.yaml"), []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(Session{Home: home, Env: map[string]string{},
		Conf:     map[string]string{"spark.sql.catalog.prod.credential": "c2"},
		Catalogs: map[string]map[string]string{"prod": {"token": "t9"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Catalogs["prod"]
	for k, v := range map[string]string{"type": "rest", "uri": "http://yaml-spark", "credential": "c2", "token": "t9"} {
		if got[k] != v {
			t.Errorf("prod[%s] = %q, want %q (all %v)", k, got[k], v, got)
		}
	}
	// A Spark session catalog is Spark's default catalog.
	r, err = resolveSpark(t, map[string]string{
		"spark.sql.catalog.spark_catalog":      "org.apache.iceberg.spark.SparkSessionCatalog",
		"spark.sql.catalog.spark_catalog.type": "rest",
		"spark.sql.catalog.spark_catalog.uri":  "http://x",
	}, nil)
	if err != nil || r.DefaultCatalog != "spark_catalog" {
		t.Errorf("spark_catalog: %v %v", r, err)
	}
}

// TestSparkGlueCatalogBlock: Spark's Glue catalog settings (by type or by
// catalog-impl) become a glue catalog with Iceberg's property names kept
// (the catalog maps them: glue.endpoint, client.region, s3.*).
func TestSparkGlueCatalogBlock(t *testing.T) {
	for _, how := range [][2]string{{"type", "glue"}, {"catalog-impl", "org.apache.iceberg.aws.glue.GlueCatalog"}} {
		r, err := resolveSpark(t, map[string]string{
			"spark.sql.catalog.g":                      "org.apache.iceberg.spark.SparkCatalog",
			"spark.sql.catalog.g." + how[0]:            how[1],
			"spark.sql.catalog.g.warehouse":            "s3a://bucket/wh",
			"spark.sql.catalog.g.glue.endpoint":        "http://127.0.0.1:5000",
			"spark.sql.catalog.g.client.region":        "eu-west-1",
			"spark.sql.catalog.g.s3.endpoint":          "http://127.0.0.1:5000",
			"spark.sql.catalog.g.s3.path-style-access": "true",
			"spark.sql.catalog.g.io-impl":              "org.apache.iceberg.aws.s3.S3FileIO",
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"type": "glue", "warehouse": "s3://bucket/wh", "glue.endpoint": "http://127.0.0.1:5000",
			"client.region": "eu-west-1", "s3.endpoint": "http://127.0.0.1:5000", "s3.path-style-access": "true"}
		got := r.Catalogs["g"]
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", how[0], got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", how[0], k, got[k], v)
			}
		}
	}
}

// TestSparkSettingsWeCannotServeAreRefusedByName: every refusal is typed
// and names the setting.
func TestSparkSettingsWeCannotServeAreRefusedByName(t *testing.T) {
	block := func(kv ...string) map[string]string {
		m := map[string]string{"spark.sql.catalog.c": "org.apache.iceberg.spark.SparkCatalog"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		conf map[string]string
		want error
		says string
	}{
		{block("spark.sql.catalog.c.type", "nessie"), errs.ErrNotSupported, "REST endpoint"},
		{block("spark.sql.catalog.c.type", "cassandra"), errs.ErrInvalidArgument, "unknown catalog type"},
		{block(), errs.ErrNotSupported, "neither type nor catalog-impl"},
		{block("spark.sql.catalog.c.catalog-impl", "com.example.MyCatalog"), errs.ErrNotSupported, "com.example.MyCatalog"},
		{block("spark.sql.catalog.c.type", "rest", "spark.sql.catalog.c.catalog-impl", "org.apache.iceberg.rest.RESTCatalog"), errs.ErrInvalidArgument, "both type and catalog-impl"},
		{block("spark.sql.catalog.c.type", "rest", "spark.sql.catalog.c.io-impl", "org.apache.iceberg.gcp.gcs.GCSFileIO"), errs.ErrNotSupported, "io-impl"},
		{block("spark.sql.catalog.c.type", "rest", "spark.sql.catalog.c.cache-enabled", "maybe"), errs.ErrInvalidArgument, "cache-enabled"},
		{block("spark.sql.catalog.c.type", "rest", "spark.sql.catalog.c.cache.expiration-interval-ms", "soon"), errs.ErrInvalidArgument, "expiration-interval-ms"},
		{block("spark.sql.catalog.c.type", "jdbc", "spark.sql.catalog.c.uri", "jdbc:sqlserver://db;databaseName=iceberg"), errs.ErrNotSupported, "sqlserver"},
		{block("spark.sql.catalog.c.type", "jdbc", "spark.sql.catalog.c.uri", "jdbc:sqlite::memory:"), errs.ErrInvalidArgument, "database file"},
		{block("spark.sql.catalog.c.type", "jdbc", "spark.sql.catalog.c.uri", "sqlite:///x.db"), errs.ErrInvalidArgument, "not a JDBC URL"},
		{map[string]string{"spark.sql.catalog.c.type": "rest"}, errs.ErrInvalidArgument, "declared by its class"},
		{map[string]string{"spark.sql.catalog.c": "org.apache.spark.sql.delta.catalog.DeltaCatalog", "spark.sql.catalog.c.type": "rest"}, errs.ErrNotSupported, "DeltaCatalog"},
		{map[string]string{"spark.sql.defaultCatalog": "nowhere"}, errs.ErrInvalidArgument, "nowhere"},
	} {
		_, err := resolveSpark(t, c.conf, nil)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: got %v, want %v saying %q", c.conf, err, c.want, c.says)
		}
	}
}
