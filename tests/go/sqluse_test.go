package gotests

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// TestUseSetsTheCurrentCatalogAndNamespace: Spark's USE. A name whose first
// part is a catalog switches catalogs; another is a namespace of the
// current catalog, which must exist; bare table names resolve in the
// current namespace (or the catalog's default-namespace), two-part names in
// the current catalog.
func TestUseSetsTheCurrentCatalogAndNamespace(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	s, err := session.Open(config.Session{
		Env:  map[string]string{},
		Home: dir,
		Conf: map[string]string{
			"spark.sql.catalog.local":                   "org.apache.iceberg.spark.SparkCatalog",
			"spark.sql.catalog.local.type":              "jdbc",
			"spark.sql.catalog.local.uri":               "jdbc:sqlite:" + strings.TrimPrefix(e.props["uri"], "sqlite:///"),
			"spark.sql.catalog.local.warehouse":         e.props["warehouse"],
			"spark.sql.catalog.files":                   "org.apache.iceberg.spark.SparkCatalog",
			"spark.sql.catalog.files.type":              "jdbc",
			"spark.sql.catalog.files.uri":               "jdbc:sqlite:" + filepath.Join(dir, "files.db"),
			"spark.sql.catalog.files.warehouse":         filepath.Join(dir, "fwh"),
			"spark.sql.catalog.files.default-namespace": "home",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	must := func(stmt string) map[string]any {
		t.Helper()
		res, err := runSQL(t, s, stmt)
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		return res
	}
	for _, stmt := range []string{
		"CREATE NAMESPACE local.db", "CREATE NAMESPACE local.db2", "CREATE NAMESPACE files.home", "CREATE NAMESPACE files.other",
	} {
		must(stmt)
	}
	// No current namespace yet: a bare name is an error naming the way out.
	if _, err := runSQL(t, s, "CREATE TABLE t (id bigint) USING iceberg"); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "USE") {
		t.Fatalf("bare name without a namespace: %v", err)
	}
	must("USE local.db")
	must("CREATE TABLE t (id bigint) USING iceberg")
	must("INSERT INTO t VALUES (1)")
	if _, err := runSQL(t, s, "INSERT INTO db2.u VALUES (2)"); !errors.Is(err, errs.ErrNoSuchTable) {
		t.Fatalf("db2.u does not exist yet: %v", err)
	}
	must("CREATE TABLE db2.u (id bigint, w string) USING iceberg") // local.db2.u: the current catalog
	must("INSERT INTO db2.u VALUES (2, 'x')")
	// A catalog alone: its default-namespace.
	res := must("USE files")
	if r := res["result"].(map[string]any); r["catalog"] != "files" || r["namespace"] != "home" {
		t.Fatalf("USE files: %v", r)
	}
	must("CREATE TABLE t (id bigint, v string) USING iceberg") // files.home.t
	must("USE NAMESPACE other")
	must("CREATE TABLE t (x int) USING iceberg") // files.other.t
	if _, err := runSQL(t, s, "USE nowhere"); !errors.Is(err, errs.ErrNoSuchNamespace) {
		t.Fatalf("USE of a missing namespace: %v", err)
	}
	// The failed USE changed nothing.
	if c, ns := s.Current(); c != "files" || ns != "other" {
		t.Fatalf("current after a failed USE: %s.%s", c, ns)
	}
	for name, cols := range map[string]int{"local.db.t": 1, "local.db2.u": 2, "files.home.t": 2, "files.other.t": 1} {
		if got := len(loadMeta(t, s, name).CurrentSchema().Fields()); got != cols {
			t.Errorf("%s has %d columns, want %d", name, got, cols)
		}
	}
}
