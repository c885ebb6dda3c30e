package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestYAMLThenEnvThenExplicit(t *testing.T) {
	home := t.TempDir()
	yml := "catalog:\n  Prod:\n    URI: sqlite:////from/yaml.db\n    warehouse: file:///yaml\n    s3:\n      endpoint: http://yaml\n"
	if err := os.WriteFile(filepath.Join(home, ".pyiceberg.yaml"), []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(Session{
		Home: home,
		Env: map[string]string{
			"PYICEBERG_CATALOG__PROD__WAREHOUSE":         "file:///env",
			"PYICEBERG_CATALOG__PROD__S3__ACCESS_KEY_ID": "AK",
			"UNRELATED": "x",
		},
		Catalogs: map[string]map[string]string{"prod": {"uri": "sqlite:////explicit.db"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Catalogs["prod"]
	want := map[string]string{"uri": "sqlite:////explicit.db", "warehouse": "file:///env", "s3.endpoint": "http://yaml", "s3.access-key-id": "AK"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("prod[%s] = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if _, ok := r.Catalogs["local"]; !ok {
		t.Error("the embedded default catalog local is missing")
	}
}

func TestPyicebergHomeWinsOverHome(t *testing.T) {
	home, phome := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, ".pyiceberg.yaml"), []byte("catalog:\n  a:\n    uri: sqlite:////home.db\n"), 0o600)
	os.WriteFile(filepath.Join(phome, ".pyiceberg.yaml"), []byte("catalog:\n  a:\n    uri: sqlite:////phome.db\n"), 0o600)
	r, err := Resolve(Session{Home: home, Env: map[string]string{"PYICEBERG_HOME": phome}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Catalogs["a"]["uri"] != "sqlite:////phome.db" {
		t.Fatalf("got %v", r.Catalogs["a"])
	}
}

func TestEmbeddedDefault(t *testing.T) {
	dir := t.TempDir()
	r, err := Resolve(Session{Home: t.TempDir(), Env: map[string]string{"PYICEBERG_GO_HOME": dir}})
	if err != nil {
		t.Fatal(err)
	}
	l := r.Catalogs[DefaultCatalog]
	if l["type"] != "sql" || l["uri"] != "sqlite:///"+filepath.Join(dir, "catalog.db") || l["warehouse"] != "file://"+filepath.Join(dir, "warehouse") {
		t.Fatalf("local = %v", l)
	}
	if r.DefaultCatalog != DefaultCatalog {
		t.Fatalf("default catalog %q", r.DefaultCatalog)
	}
}

func TestBadYAMLIsInvalidArgument(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".pyiceberg.yaml"), []byte("catalog: [unclosed\n"), 0o600)
	_, err := Resolve(Session{Home: home, Env: map[string]string{}})
	if !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("err = %v", err)
	}
}
