package config

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Spark's catalog settings, verbatim: a session conf (or the YAML file's
// spark_conf mapping) may hold a Spark user's block of
//
//	spark.sql.catalog.<name>              org.apache.iceberg.spark.SparkCatalog
//	spark.sql.catalog.<name>.type         rest | hadoop | jdbc | hive | glue | nessie
//	spark.sql.catalog.<name>.<property>   uri, warehouse, io-impl, default-namespace, ...
//	spark.sql.defaultCatalog              <name>
//
// and each named catalog becomes one of ours with the same properties, the
// type and the few values Spark spells otherwise translated (sparkCatalog).
// What we cannot serve is refused by name, never dropped silently.

const (
	sparkCatalogPrefix = "spark.sql.catalog."
	sparkDefaultKey    = "spark.sql.defaultcatalog"
	sparkCatalogClass  = "org.apache.iceberg.spark.sparkcatalog"
	sparkSessionClass  = "org.apache.iceberg.spark.sparksessioncatalog"
)

// catalogImpls maps Iceberg Java's catalog-impl classes to our types.
var catalogImpls = map[string]string{
	"org.apache.iceberg.rest.restcatalog":     "rest",
	"org.apache.iceberg.hadoop.hadoopcatalog": "hadoop",
	"org.apache.iceberg.jdbc.jdbccatalog":     "jdbc",
	"org.apache.iceberg.hive.hivecatalog":     "hive",
	"org.apache.iceberg.aws.glue.gluecatalog": "glue",
	"org.apache.iceberg.nessie.nessiecatalog": "nessie",
}

// fileIOs are the io-impl classes whose storage we serve (through the
// warehouse's scheme: local files and S3).
var fileIOs = map[string]bool{
	"org.apache.iceberg.aws.s3.s3fileio":         true,
	"org.apache.iceberg.hadoop.hadoopfileio":     true,
	"org.apache.iceberg.io.resolvingfileio":      true,
	"org.apache.iceberg.inmemory.inmemoryfileio": false,
}

// sparkCatalogs takes Spark's catalog settings out of conf: the catalogs
// they define (our property names) and the default catalog they name (""
// if none). The keys read are deleted from conf.
func sparkCatalogs(conf map[string]string) (map[string]map[string]string, string, error) {
	raw := map[string]map[string]string{}
	classes := map[string]string{}
	def := ""
	for k, v := range conf {
		lk := strings.ToLower(k)
		switch {
		case lk == sparkDefaultKey:
			def = strings.ToLower(strings.TrimSpace(v))
			delete(conf, k)
		case strings.HasPrefix(lk, sparkCatalogPrefix):
			rest := k[len(sparkCatalogPrefix):]
			name, prop, hasProp := strings.Cut(rest, ".")
			name = strings.ToLower(name)
			if name == "" {
				return nil, "", fmt.Errorf("%w: Spark setting %q names no catalog", errs.ErrInvalidArgument, k)
			}
			if raw[name] == nil {
				raw[name] = map[string]string{}
			}
			if hasProp {
				raw[name][prop] = v
			} else {
				classes[name] = v
			}
			delete(conf, k)
		}
	}
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]map[string]string{}
	for _, name := range names {
		props, err := sparkCatalog(name, classes[name], raw[name])
		if err != nil {
			return nil, "", err
		}
		out[name] = props
	}
	return out, def, nil
}

// sparkCatalog translates one Spark catalog's class and properties.
func sparkCatalog(name, class string, in map[string]string) (map[string]string, error) {
	where := func(p string) string { return sparkCatalogPrefix + name + p }
	switch strings.ToLower(strings.TrimSpace(class)) {
	case sparkCatalogClass, sparkSessionClass:
	case "":
		return nil, fmt.Errorf("%w: %s is not set: a Spark catalog is declared by its class (org.apache.iceberg.spark.SparkCatalog)", errs.ErrInvalidArgument, where(""))
	default:
		return nil, fmt.Errorf("%w: %s = %s: only Iceberg's SparkCatalog and SparkSessionCatalog name Iceberg catalogs", errs.ErrNotSupported, where(""), class)
	}
	out := map[string]string{}
	typ := ""
	for k, v := range in {
		lk := strings.ToLower(k)
		switch lk {
		case "type":
			typ = strings.ToLower(strings.TrimSpace(v))
		case "catalog-impl":
			t, ok := catalogImpls[strings.ToLower(strings.TrimSpace(v))]
			if !ok {
				return nil, fmt.Errorf("%w: %s = %s: not a catalog this library can open (rest, hadoop, jdbc, glue, hive)", errs.ErrNotSupported, where(".catalog-impl"), v)
			}
			if typ == "" {
				typ = t
			}
		case "io-impl":
			if !fileIOs[strings.ToLower(strings.TrimSpace(v))] {
				return nil, fmt.Errorf("%w: %s = %s: this library reads and writes local files and S3 (S3FileIO, HadoopFileIO, ResolvingFileIO)", errs.ErrNotSupported, where(".io-impl"), v)
			}
		case "cache-enabled":
			// We never cache tables: every call loads the table afresh, which
			// is what cache-enabled=false gives a Spark session.
			if _, err := strconv.ParseBool(strings.TrimSpace(v)); err != nil {
				return nil, fmt.Errorf("%w: %s = %q: expected true or false", errs.ErrInvalidArgument, where(".cache-enabled"), v)
			}
		case "cache.expiration-interval-ms":
			if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
				return nil, fmt.Errorf("%w: %s = %q: expected milliseconds", errs.ErrInvalidArgument, where(".cache.expiration-interval-ms"), v)
			}
		default:
			out[k] = v
		}
	}
	if _, ok := in["catalog-impl"]; ok {
		if _, both := in["type"]; both {
			return nil, fmt.Errorf("%w: %s sets both type and catalog-impl (Iceberg refuses that too)", errs.ErrInvalidArgument, where(""))
		}
	}
	switch typ {
	case "rest", "hadoop", "glue", "hive":
		out["type"] = typ
	case "jdbc":
		uri, err := jdbcURI(out["uri"])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where(".uri"), err)
		}
		out["type"], out["uri"] = "sql", uri
	case "":
		return nil, fmt.Errorf("%w: %s has neither type nor catalog-impl (Spark's default would be a Hive catalog)", errs.ErrNotSupported, where(""))
	case "nessie":
		return nil, fmt.Errorf("%w: %s = %s: this library opens rest, hadoop, jdbc, glue and hive catalogs; for Nessie use its Iceberg REST endpoint with type rest", errs.ErrNotSupported, where(".type"), typ)
	default:
		return nil, fmt.Errorf("%w: %s = %s: unknown catalog type (hive, hadoop, rest, glue, jdbc, nessie)", errs.ErrInvalidArgument, where(".type"), typ)
	}
	if w, ok := out["warehouse"]; ok {
		out["warehouse"] = warehouseURI(w)
	}
	return out, nil
}

// jdbcURI is the SQL catalog URI of a JDBC URL: jdbc:sqlite:<path> (a
// file path or file: URL), or jdbc:postgresql://..., jdbc:mysql://... and
// jdbc:mariadb://... as they are. Other
// databases are refused by name.
func jdbcURI(u string) (string, error) {
	u = strings.TrimSpace(u)
	rest, ok := strings.CutPrefix(strings.ToLower(u), "jdbc:")
	if !ok {
		return "", fmt.Errorf("%w: %q is not a JDBC URL (jdbc:sqlite:/path/catalog.db)", errs.ErrInvalidArgument, u)
	}
	if strings.HasPrefix(rest, "postgresql:") || strings.HasPrefix(rest, "mysql:") || strings.HasPrefix(rest, "mariadb:") {
		// The catalog opens Spark's JDBC URL itself (core/catalog, postgres.go, mysql.go).
		return u, nil
	}
	if !strings.HasPrefix(rest, "sqlite:") {
		db, _, _ := strings.Cut(rest, ":")
		return "", fmt.Errorf("%w: a JDBC catalog on %s: this library's SQL catalog runs on SQLite, PostgreSQL and MySQL/MariaDB (jdbc:sqlite:/path/catalog.db, jdbc:postgresql://host:port/db, jdbc:mysql://host:port/db)", errs.ErrNotSupported, db)
	}
	path := u[len("jdbc:sqlite:"):]
	path, _, _ = strings.Cut(path, "?")
	path = strings.TrimPrefix(path, "file:")
	if strings.HasPrefix(path, "//") {
		path = strings.TrimPrefix(path, "//")
		if !strings.HasPrefix(path, "/") {
			return "", fmt.Errorf("%w: jdbc:sqlite:%s: a file URL with a host", errs.ErrInvalidArgument, path)
		}
	}
	if path == "" || path == ":memory:" {
		return "", fmt.Errorf("%w: %q: the catalog needs a database file", errs.ErrInvalidArgument, u)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", errs.ErrInvalidArgument, u, err)
	}
	return "sqlite:///" + abs, nil
}

// warehouseURI spells a Spark warehouse location as ours: Hadoop's s3a://
// and s3n:// are s3://, file:/x is file:///x, a bare path is a local folder.
func warehouseURI(w string) string {
	w = strings.TrimSpace(w)
	lw := strings.ToLower(w)
	switch {
	case strings.HasPrefix(lw, "s3a://"), strings.HasPrefix(lw, "s3n://"):
		return "s3://" + w[len("s3a://"):]
	case strings.HasPrefix(lw, "file:") && !strings.HasPrefix(lw, "file://"):
		return "file://" + w[len("file:"):]
	case strings.HasPrefix(w, "/"):
		return "file://" + w
	}
	return w
}
