package catalog

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/go-sql-driver/mysql"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// mysqlPrefixes are the uri schemes of a MySQL or MariaDB catalog: the
// SQLAlchemy forms PyIceberg's SqlCatalog takes (its mysql and mariadb
// dialects with their usual drivers) and Spark's JDBC URLs.
var mysqlPrefixes = []string{
	"mysql+pymysql://", "mysql+mysqldb://", "mysql+mysqlconnector://", "mysql://",
	"mariadb+pymysql://", "mariadb+mysqldb://", "mariadb+mariadbconnector://", "mariadb://",
	"jdbc:mysql://", "jdbc:mariadb://",
}

// isMySQLURI reports whether uri names a MySQL or MariaDB catalog.
func isMySQLURI(uri string) bool {
	for _, prefix := range mysqlPrefixes {
		if strings.HasPrefix(uri, prefix) {
			return true
		}
	}
	return false
}

// mysqlURI is a MySQL catalog uri turned into the driver's settings, and the
// password as it was spelled in the uri (percent-encoded), a secret too.
// initTables is false when init_catalog_tables is.
type mysqlURI struct {
	cfg        *mysql.Config
	rawPasswd  string
	initTables bool
}

// mysqlConfig turns a MySQL or MariaDB catalog uri into the driver's
// settings: PyIceberg's SQLAlchemy uris (mysql+pymysql://user:pw@host:port/db,
// mysql+mysqldb://, mysql://, mariadb+...) and Spark's JdbcCatalog's
// jdbc:mysql://host:port/db or jdbc:mariadb://... with jdbc.user /
// jdbc.password (or user / password parameters). ok is false for any other
// uri. Of the URL's parameters, the TLS mode (sslMode, ssl_mode, or
// Connector/J's useSSL, requireSSL, verifyServerCertificate), charset,
// unix_socket and the connect timeout apply; other settings of the
// JDBC and Python drivers have no meaning here and are ignored, except
// that a TLS setting this driver cannot honour is refused rather than
// dropped.
func mysqlConfig(uri string, p iceberg.Properties) (*mysqlURI, bool, error) {
	if !isMySQLURI(uri) {
		return nil, false, nil
	}
	_, rest, _ := strings.Cut(uri, "://")
	u, err := url.Parse("mysql://" + rest)
	if err != nil {
		// The error would quote the uri, password and all.
		return nil, true, fmt.Errorf("%w: the catalog uri is not a valid MySQL url", errs.ErrInvalidArgument)
	}
	if strings.Contains(u.Host, ",") {
		return nil, true, fmt.Errorf("%w: a MySQL catalog uri with several hosts (failover or load balancing) is not supported", errs.ErrNotSupported)
	}
	cfg := mysql.NewConfig()
	cfg.Logger = &mysql.NopLogger{}
	// Rows matched, not rows changed, as SQLAlchemy and JDBC report them: an
	// update that rewrites a value unchanged still counts.
	cfg.ClientFoundRows = true
	out := &mysqlURI{cfg: cfg, initTables: p.GetBool("init_catalog_tables", true)}

	q := u.Query()
	cfg.User = p["jdbc.user"]
	if cfg.User == "" {
		cfg.User = q.Get("user")
	}
	if cfg.User == "" {
		cfg.User = u.User.Username()
	}
	cfg.Passwd = p["jdbc.password"]
	if cfg.Passwd == "" {
		cfg.Passwd = q.Get("password")
		for _, kv := range strings.Split(u.RawQuery, "&") {
			if k, v, _ := strings.Cut(kv, "="); k == "password" && v != cfg.Passwd {
				out.rawPasswd = v // as written, percent-encoded
			}
		}
	}
	if pw, set := u.User.Password(); cfg.Passwd == "" && set {
		cfg.Passwd = pw
		// The password as written in the uri (percent-encoded) is a secret too.
		auth := rest
		if i := strings.IndexAny(auth, "/?#"); i >= 0 {
			auth = auth[:i]
		}
		if i := strings.LastIndex(auth, "@"); i >= 0 {
			_, out.rawPasswd, _ = strings.Cut(auth[:i], ":")
		}
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if cfg.DBName == "" || strings.Contains(cfg.DBName, "/") {
		return nil, true, fmt.Errorf("%w: a MySQL catalog uri names its database: mysql+pymysql://user:password@host:3306/database", errs.ErrInvalidArgument)
	}
	cfg.Net, cfg.Addr = "tcp", "127.0.0.1:3306"
	if host := u.Hostname(); host != "" {
		port := u.Port()
		if port == "" {
			port = "3306"
		}
		cfg.Addr = net.JoinHostPort(host, port)
	}

	// Connector/J's older TLS switches, read after sslMode (which wins).
	legacy := map[string]bool{}
	for key, vals := range q {
		v := vals[len(vals)-1]
		lk := strings.ToLower(key)
		switch lk {
		case "user", "password":
		case "charset":
			if err := cfg.Apply(mysql.Charset(v, "")); err != nil {
				return nil, true, fmt.Errorf("%w: charset %q: %v", errs.ErrInvalidArgument, v, err)
			}
		case "unix_socket":
			cfg.Net, cfg.Addr = "unix", v
		case "connect_timeout", "connecttimeout":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, true, fmt.Errorf("%w: %s = %q: expected a whole number", errs.ErrInvalidArgument, key, v)
			}
			if lk == "connecttimeout" { // JDBC's is in milliseconds, SQLAlchemy's in seconds
				cfg.Timeout = time.Duration(n) * time.Millisecond
			} else {
				cfg.Timeout = time.Duration(n) * time.Second
			}
		case "sslmode", "ssl_mode", "ssl-mode":
			mode, ok := map[string]string{
				"disabled": "false", "disable": "false",
				"preferred": "preferred", "prefer": "preferred",
				"required": "skip-verify", "require": "skip-verify", "trust": "skip-verify",
				"verify_ca": "true", "verify-ca": "true",
				"verify_identity": "true", "verify-full": "true",
			}[strings.ToLower(v)]
			if !ok {
				return nil, true, fmt.Errorf("%w: %s = %q: expected DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY", errs.ErrInvalidArgument, key, v)
			}
			cfg.TLSConfig = mode
		case "usessl", "requiressl", "verifyservercertificate":
			on, err := strconv.ParseBool(v)
			if err != nil {
				return nil, true, fmt.Errorf("%w: %s = %q: expected true or false", errs.ErrInvalidArgument, key, v)
			}
			legacy[lk] = on
		default:
			if strings.Contains(lk, "ssl") || strings.Contains(lk, "tls") {
				return nil, true, fmt.Errorf("%w: the MySQL catalog uri's %s parameter: this library sets TLS by sslMode only (DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY)", errs.ErrNotSupported, key)
			}
		}
	}
	if on, set := legacy["usessl"]; cfg.TLSConfig == "" && len(legacy) > 0 {
		switch {
		case set && !on:
			cfg.TLSConfig = "false"
		case legacy["verifyservercertificate"]:
			cfg.TLSConfig = "true"
		case legacy["requiressl"]:
			cfg.TLSConfig = "skip-verify"
		default:
			cfg.TLSConfig = "preferred"
		}
	}
	return out, true, nil
}

// openMySQL opens a JDBC-layout catalog (Spark's JdbcCatalog, PyIceberg's
// SqlCatalog) in a MySQL or MariaDB database. Commits are the database's
// compare-and-swap of the metadata location (iceberg-go's sql catalog);
// committers of one table through this library queue on a named lock
// (mysqlLock).
func openMySQL(ctx context.Context, name string, p iceberg.Properties, m *mysqlURI, red *redactor) (*Catalog, error) {
	red = withPasswords(p, red, m.cfg.Passwd, m.rawPasswd)
	what := fmt.Sprintf("opening MySQL catalog %q", name)
	conn, err := mysql.NewConnector(m.cfg)
	if err != nil {
		return nil, red.wrap(what, errs.ErrInvalidArgument, err)
	}
	db := sql.OpenDB(conn)
	db.SetConnMaxIdleTime(time.Minute)
	// Creating the catalog tables races with other processes doing the
	// same: retry what may pass (not a refused login or a missing database).
	err = retrySQL(ctx, name, mysqlMayPass, 2*time.Second, func() error {
		if !m.initTables {
			return nil
		}
		return createJDBCTables(ctx, db)
	})
	var c *sqlcat.Catalog
	if err == nil {
		c, err = newSQLCatalog(ctx, name, db, sqlcat.MySQL, p, mysqlMayPass, 2*time.Second)
	}
	if err != nil {
		db.Close()
		if errors.Is(err, errs.ErrCancelled) {
			return nil, err
		}
		return nil, red.wrap(what, errs.ErrIO, err)
	}
	tc := &typedCatalog{Catalog: c, red: red, props: p, head: &sqlHead{db: db, catalog: name, props: p}, meta: newMetaCache(), advisory: db, lostAnswer: lostSQLAnswer}
	return &Catalog{Catalog: tc, Name: name, Props: p, close: db.Close}, nil
}

// createJDBCTables creates the catalog tables as Iceberg's JdbcCatalog does
// (its V1 layout: iceberg_type added), before iceberg-go would: its own
// create makes every text column VARCHAR(255) on MySQL, too short for the
// metadata locations of deep warehouses, which JdbcCatalog and PyIceberg
// keep in VARCHAR(1000).
func createJDBCTables(ctx context.Context, db *sql.DB) error {
	for _, ddl := range []string{
		"CREATE TABLE IF NOT EXISTS iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), PRIMARY KEY (catalog_name, table_namespace, table_name))",
		"CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000), PRIMARY KEY (catalog_name, namespace, property_key))",
	} {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			return err
		}
	}
	return nil
}

// mysqlMayPass reports whether opening may succeed when tried again: not
// after a refused login or a missing database.
func mysqlMayPass(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1044, 1045, 1049, 1698, 1142: // access denied (database, login, plugin, command), unknown database
			return false
		}
	}
	return true
}

// retrySQL runs fn, again with growing waits up to about limit while again
// says its error may pass.
func retrySQL(ctx context.Context, name string, again func(error) bool, limit time.Duration, fn func() error) error {
	for wait := 20 * time.Millisecond; ; wait *= 2 {
		err := fn()
		if err == nil || !again(err) || wait > limit {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: opening catalog %q: %v", errs.ErrCancelled, name, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// withPasswords adds passwords (from the uri or jdbc.password) to the
// catalog's secrets.
func withPasswords(p iceberg.Properties, red *redactor, pws ...string) *redactor {
	all := map[string]string{}
	for i, pw := range pws {
		if pw != "" {
			all[fmt.Sprintf("uri-%d-password", i)] = pw
		}
	}
	if len(all) == 0 {
		return red
	}
	for k, v := range p {
		all[k] = v
	}
	return newRedactor(all)
}

// isMySQL reports whether db is a MySQL catalog's database.
func isMySQL(db *sql.DB) bool {
	_, ok := db.Driver().(*mysql.MySQLDriver)
	return ok
}

// mysqlLockName is the GET_LOCK name of key: at most 64 characters, so a
// hash of it.
func mysqlLockName(key string) string {
	sum := sha256.Sum256([]byte("pyiceberg-go commit\x00" + key))
	return "pyiceberg-go:" + hex.EncodeToString(sum[:24])
}

// mysqlLockWait is how long one GET_LOCK call waits before the context is
// checked again.
const mysqlLockWait = 2

// mysqlLock holds MySQL's named lock of key (GET_LOCK names are at most 64
// characters: a hash of the catalog and table) on a connection of its own
// until the returned release, as advisoryLock does on PostgreSQL:
// committers of one table through this library, on any machine, queue on
// it instead of failing each other's compare-and-swap. The session ending
// (a killed process) releases it. Other engines do not take it; the
// compare-and-swap still decides.
func mysqlLock(ctx context.Context, db *sql.DB, key string) (func(), error) {
	name := mysqlLockName(key)
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: taking the commit lock: %v", errs.ErrIO, err)
	}
	for {
		var got sql.NullInt64
		err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", name, mysqlLockWait).Scan(&got)
		if err == nil && got.Valid && got.Int64 == 1 {
			break
		}
		if ctx.Err() != nil {
			conn.Close()
			return nil, fmt.Errorf("%w: waiting for the commit lock: %v", errs.ErrCancelled, ctx.Err())
		}
		if err == nil && !got.Valid {
			err = errors.New("GET_LOCK returned NULL")
		}
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("%w: taking the commit lock: %v", errs.ErrIO, err)
		}
		// 0: another committer still holds it; wait again.
	}
	return func() {
		// A failed release closes the connection, which releases the lock.
		if _, err := conn.ExecContext(context.Background(), "DO RELEASE_LOCK(?)", name); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, nil
}
