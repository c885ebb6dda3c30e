// Package config resolves catalog properties the way PyIceberg does, so one
// ~/.pyiceberg.yaml and one set of PYICEBERG_* variables serve both:
//
//   - the first .pyiceberg.yaml found in $PYICEBERG_HOME, then home, then the
//     working directory (keys are case-insensitive);
//   - PYICEBERG_CATALOG__<NAME>__<KEY> variables merged over it, the key's
//     "__" read as "." and "_" as "-" (PYICEBERG_CATALOG__PROD__S3__ACCESS_KEY_ID
//     is s3.access-key-id of catalog prod);
//   - Spark's catalog settings (spark.sql.catalog.<name>.*, in the session
//     conf or the file's spark_conf mapping; spark.go) merged over those;
//   - explicit properties given by the caller merged over all.
//
// With no configuration at all, the catalog "local" is an embedded SQLite
// catalog under $PYICEBERG_GO_HOME (default ~/.pyiceberg_go).
package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// DefaultCatalog is the catalog used when an identifier names none.
const DefaultCatalog = "local"

const yamlFile = ".pyiceberg.yaml"

// Session is what a caller passes to open a session.
type Session struct {
	// Catalogs holds explicit catalog properties by catalog name.
	Catalogs map[string]map[string]string `json:"catalogs,omitempty"`
	// Env is the environment to read PYICEBERG_* variables from; nil means
	// the process environment.
	Env map[string]string `json:"env,omitempty"`
	// Home is where to look for .pyiceberg.yaml; empty means $HOME.
	Home string `json:"home,omitempty"`
	// Conf is session configuration: write options for every write.
	Conf map[string]string `json:"conf,omitempty"`
}

// Resolved is the merged configuration of a session.
type Resolved struct {
	Catalogs       map[string]map[string]string
	DefaultCatalog string
	Conf           map[string]string
}

// Resolve merges the YAML file, the environment and the explicit settings.
func Resolve(s Session) (*Resolved, error) {
	env := s.Env
	if env == nil {
		env = processEnv()
	}
	home := s.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	tree := map[string]any{}
	dirs := []string{env["PYICEBERG_HOME"], home}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		t, ok, err := loadYAML(filepath.Join(d, yamlFile))
		if err != nil {
			return nil, err
		}
		if ok {
			tree = t
			break
		}
	}
	for k, v := range env {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "pyiceberg_") {
			continue
		}
		parts := strings.SplitN(lk[len("pyiceberg_"):], "__", 3)
		for i, p := range parts {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "__", "."), "_", "-")
		}
		if err := setPath(tree, parts, v); err != nil {
			return nil, err
		}
	}

	r := &Resolved{Catalogs: map[string]map[string]string{}, DefaultCatalog: DefaultCatalog, Conf: map[string]string{}}
	if cats, ok := tree["catalog"].(map[string]any); ok {
		for name, props := range cats {
			pm, ok := props.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%w: configuration catalog.%s must be a mapping", errs.ErrInvalidArgument, name)
			}
			r.Catalogs[name] = flatten(pm)
		}
	}
	if d, ok := tree["default-catalog"].(string); ok && d != "" {
		r.DefaultCatalog = strings.ToLower(d)
	}
	// Session conf: the YAML file's spark_conf mapping, then the caller's.
	if sc, ok := tree["spark_conf"].(map[string]any); ok {
		maps.Copy(r.Conf, flatten(sc))
	}
	maps.Copy(r.Conf, s.Conf)
	// Spark's catalog settings in the conf define catalogs over the YAML
	// file's and the environment's; the caller's catalogs win over them.
	spark, def, err := sparkCatalogs(r.Conf)
	if err != nil {
		return nil, err
	}
	for name, props := range spark {
		if r.Catalogs[name] == nil {
			r.Catalogs[name] = map[string]string{}
		}
		maps.Copy(r.Catalogs[name], props)
	}
	if _, ok := spark["spark_catalog"]; ok && def == "" {
		def = "spark_catalog" // Spark's own default catalog
	}
	if def != "" {
		_, known := r.Catalogs[def]
		_, given := s.Catalogs[def]
		if !known && !given && def != DefaultCatalog {
			return nil, fmt.Errorf("%w: spark.sql.defaultCatalog = %s names no configured catalog", errs.ErrInvalidArgument, def)
		}
		r.DefaultCatalog = def
	}
	for name, props := range s.Catalogs {
		name = strings.ToLower(name)
		if r.Catalogs[name] == nil {
			r.Catalogs[name] = map[string]string{}
		}
		maps.Copy(r.Catalogs[name], props)
	}
	if _, ok := r.Catalogs[DefaultCatalog]; !ok {
		r.Catalogs[DefaultCatalog] = embeddedDefault(env, home)
	}
	return r, nil
}

// embeddedDefault is the zero-configuration catalog: SQLite plus a local
// warehouse folder.
func embeddedDefault(env map[string]string, home string) map[string]string {
	dir := env["PYICEBERG_GO_HOME"]
	if dir == "" {
		dir = filepath.Join(home, ".pyiceberg_go")
	}
	dir, _ = filepath.Abs(dir)
	return map[string]string{
		"type":      "sql",
		"uri":       "sqlite:///" + filepath.Join(dir, "catalog.db"),
		"warehouse": "file://" + filepath.Join(dir, "warehouse"),
	}
}

func processEnv() map[string]string {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func loadYAML(path string) (map[string]any, bool, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%w: reading %s: %v", errs.ErrIO, path, err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, false, fmt.Errorf("%w: %s is not valid YAML: %v", errs.ErrInvalidArgument, path, err)
	}
	return lowerKeys(raw), true, nil
}

func lowerKeys(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = lowerKeys(sub)
		}
		out[strings.ToLower(k)] = v
	}
	return out
}

func setPath(tree map[string]any, path []string, v string) error {
	for i, p := range path {
		if i == len(path)-1 {
			tree[p] = v
			return nil
		}
		next, ok := tree[p]
		if !ok {
			next = map[string]any{}
			tree[p] = next
		}
		sub, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: configuration %s mixes a value and a mapping", errs.ErrInvalidArgument, strings.Join(path, "."))
		}
		tree = sub
	}
	return nil
}

// flatten turns nested YAML mappings into dotted property names, as PyIceberg
// reads "s3: {endpoint: x}" as s3.endpoint.
func flatten(m map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			if sub, ok := v.(map[string]any); ok {
				walk(key, sub)
				continue
			}
			out[key] = fmt.Sprint(v)
		}
	}
	walk("", m)
	return out
}
