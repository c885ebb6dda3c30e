// Package catalog opens the catalogs a session names: the embedded SQLite
// catalog (the default, shared with PyIceberg's SqlCatalog through the Java
// JDBC table layout), the directory ("hadoop") catalog and the Iceberg REST
// catalog, and the FileIO of their tables (local files and S3).
package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceconfig "github.com/apache/iceberg-go/config"
	"github.com/apache/iceberg-go/table"
	"modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/internal/filelock"
	"github.com/pyiceberg-go/pyiceberg-go/core/paths"
)

func init() {
	// iceberg-go reads ~/.iceberg-go.yaml at init; a user's file must not
	// change this library's behaviour.
	iceconfig.EnvConfig = iceconfig.Config{DefaultCatalog: "default", MaxWorkers: runtime.GOMAXPROCS(0)}
	// Another copy of SQLite in the process (Python's sqlite3, PyIceberg's
	// SqlCatalog) shares the process's POSIX record locks with ours: its
	// locks never conflict with ours and any close of its descriptors drops
	// ours. Open file description locks belong to our descriptor alone, so
	// with them the other copy is kept out as another process would be
	// (docs/decisions.md, "Embedded catalog: SQLite with a rollback journal
	// and OFD locks"). This must happen before the first database is opened.
	_, _ = sqlite.OFDLocking(true)
}

// Catalog is an open catalog and how to close it.
type Catalog struct {
	icecat.Catalog
	Name  string
	Props iceberg.Properties
	close func() error
}

// IsREST reports whether the catalog is a REST catalog (its server creates
// tables from a staged create; the others commit them).
func (c *Catalog) IsREST() bool {
	_, ok := c.Catalog.(*restCatalog)
	return ok
}

// Close releases the catalog's resources.
func (c *Catalog) Close() error {
	if c.close != nil {
		return c.close()
	}
	return nil
}

// CommitSerializer returns what a commit to ident holds around each attempt
// so that committers of one table, in this process or others, queue instead
// of failing each other's optimistic commits; nil when the catalog has no
// such lock (REST servers and directory catalogs arbitrate themselves).
func (c *Catalog) CommitSerializer(ident table.Identifier) func(ctx context.Context) (func(), error) {
	tc, ok := c.Catalog.(*typedCatalog)
	if !ok {
		return nil
	}
	key := c.Name + "\x00" + strings.Join(ident, "\x00")
	switch {
	case tc.advisory != nil:
		lock := advisoryLock
		if isMySQL(tc.advisory) {
			lock = mysqlLock
		}
		return func(ctx context.Context) (func(), error) {
			return lock(ctx, tc.advisory, key)
		}
	case tc.commitLock != "":
		return func(ctx context.Context) (func(), error) {
			return filelock.Lock(ctx, tc.commitLock, key)
		}
	}
	return nil
}

// Open opens catalog name with its properties (PyIceberg's property names).
func Open(ctx context.Context, name string, props map[string]string) (*Catalog, error) {
	return openWaiting(ctx, name, props, journalWait)
}

// openWaiting is Open waiting up to wait for a SQLite catalog file to leave WAL
// mode (checkJournal; tests wait less).
func openWaiting(ctx context.Context, name string, props map[string]string, wait time.Duration) (*Catalog, error) {
	p := iceberg.Properties{}
	for k, v := range props {
		p[k] = v
	}
	red := newRedactor(p)
	if err := normalizeProps(p); err != nil {
		return nil, fmt.Errorf("catalog %q: %w", name, err)
	}
	typ := strings.ToLower(p["type"])
	if typ == "" {
		typ = inferType(p["uri"])
	}
	switch typ {
	case "rest":
		return openREST(ctx, name, p, red)
	case "sql":
		return openSQL(ctx, name, p, red, wait)
	case "glue":
		return openGlue(ctx, name, p, red)
	case "hive":
		return openHive(ctx, name, p, red)
	case "hadoop", "directory":
		wh := p["warehouse"]
		if wh == "" {
			return nil, fmt.Errorf("%w: catalog %q of type %s needs a warehouse", errs.ErrInvalidArgument, name, typ)
		}
		if err := mkdirLocal(wh); err != nil {
			return nil, err
		}
		c, err := hadoop.NewCatalog(name, wh, p)
		if err != nil {
			return nil, fmt.Errorf("%w: opening catalog %q: %v", errs.ErrInvalidArgument, name, err)
		}
		tc := &typedCatalog{Catalog: c, red: red, props: p}
		if dir, ok := paths.LocalPath(wh); ok {
			tc.commitLock = filepath.Join(dir, ".pyiceberg-go-commit.lock")
		}
		return &Catalog{Catalog: tc, Name: name, Props: p}, nil
	case "":
		return nil, fmt.Errorf("%w: catalog %q has no type and no uri", errs.ErrInvalidArgument, name)
	default:
		return nil, fmt.Errorf("%w: catalog %q: type %q is not supported yet (supported: sql, rest, hadoop, glue, hive)", errs.ErrNotSupported, name, typ)
	}
}

func inferType(uri string) string {
	switch {
	case strings.HasPrefix(uri, "http://"), strings.HasPrefix(uri, "https://"):
		return "rest"
	case strings.HasPrefix(uri, "sqlite"), strings.HasPrefix(uri, "postgres"), strings.HasPrefix(uri, "jdbc:"), isMySQLURI(uri):
		return "sql"
	case strings.HasPrefix(uri, "thrift://"):
		return "hive"
	}
	return ""
}

// openSQL opens a SQLite catalog from a SQLAlchemy-style uri
// (sqlite:////abs/path.db), as PyIceberg's SqlCatalog takes it.
func openSQL(ctx context.Context, name string, p iceberg.Properties, red *redactor, wait time.Duration) (*Catalog, error) {
	uri := p["uri"]
	if u, ok, err := postgresURL(uri, p); ok || err != nil {
		if err != nil {
			return nil, fmt.Errorf("catalog %q: %w", name, err)
		}
		return openPostgres(ctx, name, p, u, red)
	}
	if m, ok, err := mysqlConfig(uri, p); ok || err != nil {
		if err != nil {
			return nil, fmt.Errorf("catalog %q: %w", name, err)
		}
		return openMySQL(ctx, name, p, m, red)
	}
	path, ok := sqlitePath(uri)
	if !ok {
		return nil, fmt.Errorf("%w: catalog %q: type sql takes sqlite:////path/catalog.db, a PostgreSQL uri (postgresql://user@host:port/db, jdbc:postgresql://...) or a MySQL/MariaDB uri (mysql+pymysql://user@host:port/db, jdbc:mysql://..., jdbc:mariadb://...), got %q", errs.ErrNotSupported, name, red.clean(uri))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("%w: catalog %q: %v", errs.ErrIO, name, err)
	}
	if wh := p["warehouse"]; wh != "" {
		if err := mkdirLocal(wh); err != nil {
			return nil, err
		}
	}
	// A rollback journal, not WAL: WAL coordinates through the -shm file with
	// POSIX locks, which another SQLite copy in the process silently drops
	// (and whose WAL it then checkpoints and deletes under us). With a
	// rollback journal every lock is on the database file and every commit
	// is in that file when it returns.
	dsn := "file:" + path + "?_pragma=busy_timeout(30000)&_pragma=journal_mode(DELETE)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: opening %s: %v", errs.ErrIO, path, err)
	}
	// Connections stay open: closing one closes a descriptor of the file,
	// which drops every POSIX lock the process holds on it, the other
	// copies' included.
	db.SetMaxOpenConns(sqlConns)
	db.SetMaxIdleConns(sqlConns)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if err := checkJournal(ctx, db, path, wait); err != nil {
		db.Close()
		return nil, fmt.Errorf("catalog %q: %w", name, err)
	}
	// Opening creates the catalog tables if needed; a writer holding the
	// database can make that fail with SQLITE_BUSY before the busy timeout
	// applies (schema changes and WAL set-up), so opening retries.
	c, err := newSQLCatalog(ctx, name, db, sqlcat.SQLite, p, isBusy, 5*time.Second)
	if err != nil {
		db.Close()
		if errors.Is(err, errs.ErrCancelled) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: opening SQLite catalog %q at %s: %v", errs.ErrIO, name, path, err)
	}
	tc := &typedCatalog{Catalog: c, red: red, props: p, head: &sqlHead{db: db, catalog: name, props: p}, meta: newMetaCache(), commitLock: path + "-commit.lock"}
	return &Catalog{Catalog: tc, Name: name, Props: p, close: db.Close}, nil
}

// newSQLCatalog opens iceberg-go's sql catalog on db (creating its tables
// if needed), retrying with growing waits up to about limit while again
// says the error is one that passes (a busy or racing database).
func newSQLCatalog(ctx context.Context, name string, db *sql.DB, dialect sqlcat.SupportedDialect, p iceberg.Properties, again func(error) bool, limit time.Duration) (*sqlcat.Catalog, error) {
	for wait := 20 * time.Millisecond; ; wait *= 2 {
		c, err := sqlcat.NewCatalog(name, db, dialect, p)
		if err == nil || !again(err) || wait > limit {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: opening catalog %q: %v", errs.ErrCancelled, name, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// sqlConns bounds a SQLite catalog's connections: SQLite runs one writer at
// a time, and a few readers cover metadata lookups during a commit.
const sqlConns = 4

// journalWait bounds how long opening waits for a WAL-mode file to be
// released by the processes that hold it.
const journalWait = 10 * time.Second

// checkJournal makes sure the catalog file left WAL mode (an earlier version
// of this library used it): a file another process still holds open in WAL
// mode cannot switch, and is refused, after waiting up to wait for it to be
// released, rather than used unsafely.
func checkJournal(ctx context.Context, db *sql.DB, path string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for wait := 20 * time.Millisecond; ; wait = min(wait*2, time.Second) {
		var mode string
		err := db.QueryRowContext(ctx, "PRAGMA journal_mode=DELETE").Scan(&mode)
		if err == nil && strings.EqualFold(mode, "delete") {
			return nil
		}
		if err != nil && !isBusy(err) {
			return fmt.Errorf("%w: opening SQLite catalog at %s: %v", errs.ErrIO, path, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: the SQLite catalog at %s is in %s journal mode and another process keeps it open in that mode; close it there (a rollback journal is needed to share the file safely)", errs.ErrIO, path, mode)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: opening SQLite catalog at %s: %v", errs.ErrCancelled, path, ctx.Err())
		case <-time.After(wait):
		}
	}
}

func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

func sqlitePath(uri string) (string, bool) {
	switch {
	case strings.HasPrefix(uri, "sqlite:////"):
		return "/" + strings.TrimPrefix(uri, "sqlite:////"), true
	case strings.HasPrefix(uri, "sqlite:///"):
		abs, err := filepath.Abs(strings.TrimPrefix(uri, "sqlite:///"))
		return abs, err == nil
	}
	return "", false
}

// mkdirLocal creates a local warehouse folder (its location read
// literally, as every local FileIO here reads it); other schemes need
// nothing.
func mkdirLocal(loc string) error {
	dir, local := paths.LocalPath(loc)
	if !local {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: creating warehouse %s: %v", errs.ErrIO, dir, err)
	}
	return nil
}
