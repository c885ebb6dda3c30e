package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, registered as "pgx"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// postgresURL turns a PostgreSQL catalog uri into the driver's URL: the
// SQLAlchemy forms PyIceberg's SqlCatalog takes (postgresql://,
// postgresql+psycopg2://, postgresql+psycopg://) and Spark's JdbcCatalog's
// jdbc:postgresql://host:port/db with jdbc.user / jdbc.password; ok is
// false for any other uri.
func postgresURL(uri string, p iceberg.Properties) (*url.URL, bool, error) {
	rest, ok := "", false
	for _, prefix := range []string{"postgresql+psycopg2://", "postgresql+psycopg://", "postgresql://", "postgres://", "jdbc:postgresql://"} {
		if r, found := strings.CutPrefix(uri, prefix); found {
			rest, ok = r, true
			break
		}
	}
	if !ok {
		return nil, false, nil
	}
	u, err := url.Parse("postgres://" + rest)
	if err != nil {
		// The error would quote the uri, password and all.
		return nil, true, fmt.Errorf("%w: the catalog uri is not a valid PostgreSQL url", errs.ErrInvalidArgument)
	}
	// JDBC URLs often carry the credentials as parameters.
	q := u.Query()
	user, pass := cmp.Or(p["jdbc.user"], q.Get("user")), cmp.Or(p["jdbc.password"], q.Get("password"))
	q.Del("user")
	q.Del("password")
	u.RawQuery = q.Encode()
	if user == "" {
		user = u.User.Username()
	}
	if pw, set := u.User.Password(); pass == "" && set {
		pass = pw
	}
	if user != "" {
		if pass != "" {
			u.User = url.UserPassword(user, pass)
		} else {
			u.User = url.User(user)
		}
	}
	return u, true, nil
}

// openPostgres opens a JDBC-layout catalog (Spark's JdbcCatalog, PyIceberg's
// SqlCatalog) in a PostgreSQL database. Commits are the database's
// compare-and-swap of the metadata location (iceberg-go's sql catalog),
// so no local lock is taken: writers on other machines arbitrate the same
// way.
func openPostgres(ctx context.Context, name string, p iceberg.Properties, u *url.URL, red *redactor) (*Catalog, error) {
	red = postgresRedactor(p, u, red)
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		return nil, red.wrap(fmt.Sprintf("opening PostgreSQL catalog %q", name), errs.ErrIO, err)
	}
	db.SetConnMaxIdleTime(time.Minute)
	// Creating the catalog tables races with other processes doing the
	// same (CREATE TABLE IF NOT EXISTS is not atomic in PostgreSQL): retry.
	c, err := newSQLCatalog(ctx, name, db, sqlcat.Postgres, p, func(error) bool { return true }, 2*time.Second)
	if err != nil {
		db.Close()
		if errors.Is(err, errs.ErrCancelled) {
			return nil, err
		}
		return nil, red.wrap(fmt.Sprintf("opening PostgreSQL catalog %q", name), errs.ErrIO, err)
	}
	tc := &typedCatalog{Catalog: c, red: red, props: p, head: &sqlHead{db: db, catalog: name, props: p, numbered: true}, meta: newMetaCache(), advisory: db, lostAnswer: lostSQLAnswer}
	return &Catalog{Catalog: tc, Name: name, Props: p, close: db.Close}, nil
}

// postgresRedactor adds the password the driver's URL carries (from the
// uri or jdbc.password) to the catalog's secrets.
func postgresRedactor(p iceberg.Properties, u *url.URL, red *redactor) *redactor {
	pw, ok := u.User.Password()
	if !ok {
		return red
	}
	all := map[string]string{"uri-password": pw}
	for k, v := range p {
		all[k] = v
	}
	return newRedactor(all)
}

// advisoryLock holds PostgreSQL's session advisory lock of key (a 64-bit
// hash of the catalog and table) on a connection of its own until the
// returned release: committers of one table through this library, on any
// machine, queue on it instead of failing each other's compare-and-swap.
// Other engines do not take it; the compare-and-swap still decides.
func advisoryLock(ctx context.Context, db *sql.DB, key string) (func(), error) {
	h := fnv.New64a()
	h.Write([]byte("pyiceberg-go commit\x00" + key))
	id := int64(h.Sum64())
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: taking the commit lock: %v", errs.ErrIO, err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", id); err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: waiting for the commit lock: %v", errs.ErrCancelled, ctx.Err())
		}
		return nil, fmt.Errorf("%w: taking the commit lock: %v", errs.ErrIO, err)
	}
	return func() {
		// A failed unlock closes the connection, which releases the lock.
		if _, err := conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", id); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, nil
}
