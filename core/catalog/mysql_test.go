package catalog

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestMySQLURIForms(t *testing.T) {
	for _, c := range []struct {
		uri                 string
		props               iceberg.Properties
		user, pw, addr, db  string
		net, tls, rawPasswd string
		timeout             time.Duration
	}{
		{uri: "mysql+pymysql://u:p%40ss@h:3307/db?charset=utf8mb4", user: "u", pw: "p@ss", addr: "h:3307", db: "db", net: "tcp", rawPasswd: "p%40ss"},
		{uri: "mysql+mysqldb://u:pw@h/db", user: "u", pw: "pw", addr: "h:3306", db: "db", net: "tcp", rawPasswd: "pw"},
		{uri: "mysql://u@[::1]:3310/db?connect_timeout=7", user: "u", addr: "[::1]:3310", db: "db", net: "tcp", timeout: 7 * time.Second},
		{uri: "mariadb+pymysql://u:pw@/db?unix_socket=/run/mysqld/mysqld.sock", user: "u", pw: "pw", addr: "/run/mysqld/mysqld.sock", db: "db", net: "unix", rawPasswd: "pw"},
		{uri: "jdbc:mysql://h:3306/db", props: iceberg.Properties{"jdbc.user": "u", "jdbc.password": "jpw"}, user: "u", pw: "jpw", addr: "h:3306", db: "db", net: "tcp"},
		{uri: "jdbc:mysql://h/db?user=u&password=qpw&useSSL=false&serverTimezone=UTC&connectTimeout=1500", user: "u", pw: "qpw", addr: "h:3306", db: "db", net: "tcp", tls: "false", timeout: 1500 * time.Millisecond},
		{uri: "jdbc:mariadb://h:3306/db?user=u&password=qpw&sslMode=verify-full", user: "u", pw: "qpw", addr: "h:3306", db: "db", net: "tcp", tls: "true"},
		{uri: "jdbc:mysql://h/db?sslMode=REQUIRED&useSSL=false", user: "", addr: "h:3306", db: "db", net: "tcp", tls: "skip-verify"},
		{uri: "jdbc:mysql://h/db?useSSL=true&requireSSL=true", addr: "h:3306", db: "db", net: "tcp", tls: "skip-verify"},
		// jdbc.password wins over the uri's own.
		{uri: "mysql+pymysql://u:old@h/db", props: iceberg.Properties{"jdbc.password": "new"}, user: "u", pw: "new", addr: "h:3306", db: "db", net: "tcp"},
	} {
		m, ok, err := mysqlConfig(c.uri, c.props)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", c.uri, ok, err)
		}
		got := m.cfg
		if got.User != c.user || got.Passwd != c.pw || got.Addr != c.addr || got.DBName != c.db || got.Net != c.net || got.TLSConfig != c.tls || got.Timeout != c.timeout || m.rawPasswd != c.rawPasswd {
			t.Fatalf("%s: got user %q pw %q addr %q db %q net %q tls %q timeout %v raw %q", c.uri, got.User, got.Passwd, got.Addr, got.DBName, got.Net, got.TLSConfig, got.Timeout, m.rawPasswd)
		}
		if !got.ClientFoundRows {
			t.Fatalf("%s: rows changed, not matched", c.uri)
		}
		if inferType(c.uri) != "sql" {
			t.Fatalf("%s: type %q", c.uri, inferType(c.uri))
		}
	}
	for _, uri := range []string{"sqlite:////x.db", "postgresql://u@h/db", "jdbc:postgresql://h/db", "mysqlx://h/db"} {
		if _, ok, err := mysqlConfig(uri, nil); ok || err != nil {
			t.Fatalf("%s taken as MySQL: %v %v", uri, ok, err)
		}
	}
	for _, c := range []struct {
		uri  string
		kind error
		says string
	}{
		{"mysql+pymysql://u:secret-pw@h:bad-port/db", errs.ErrInvalidArgument, "not a valid MySQL url"},
		{"mysql+pymysql://u:secret-pw@h:3306", errs.ErrInvalidArgument, "names its database"},
		{"jdbc:mysql://h1:3306,h2:3306/db?password=secret-pw", errs.ErrNotSupported, "several hosts"},
		{"jdbc:mysql://h/db?password=secret-pw&sslMode=sometimes", errs.ErrInvalidArgument, "sslMode"},
		{"mysql+pymysql://u:secret-pw@h/db?ssl_ca=/ca.pem", errs.ErrNotSupported, "ssl_ca"},
	} {
		_, ok, err := mysqlConfig(c.uri, nil)
		if !ok || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "secret-pw") {
			t.Fatalf("%s: %v %v", c.uri, ok, err)
		}
	}
}

func TestMySQLSecretsJoinTheCatalogs(t *testing.T) {
	p := iceberg.Properties{"s3.secret-access-key": "s3-secret-value"}
	m, _, err := mysqlConfig("mysql+pymysql://u:uri%2Fsecret-pw@h/db", p)
	if err != nil {
		t.Fatal(err)
	}
	red := withPasswords(p, newRedactor(p), m.cfg.Passwd, m.rawPasswd)
	got := red.clean("failed with uri/secret-pw, uri%2Fsecret-pw and s3-secret-value")
	for _, secret := range []string{"uri/secret-pw", "uri%2Fsecret-pw", "s3-secret-value"} {
		if strings.Contains(got, secret) {
			t.Fatalf("%s kept: %s", secret, got)
		}
	}
	// A password given as jdbc.password is a secret by its key already; one
	// in the JDBC URL's parameters joins them.
	m, _, err = mysqlConfig("jdbc:mysql://h/db?user=u&password=query-secret-pw", p)
	if err != nil {
		t.Fatal(err)
	}
	red = withPasswords(p, newRedactor(p), m.cfg.Passwd, m.rawPasswd)
	if got := red.clean("query-secret-pw"); got != "***" {
		t.Fatalf("kept: %s", got)
	}
	m, _, err = mysqlConfig("jdbc:mysql://h/db?user=u&password=query%2Bsecret", p)
	if err != nil || m.cfg.Passwd != "query+secret" {
		t.Fatal(m.cfg.Passwd, err)
	}
	red = withPasswords(p, newRedactor(p), m.cfg.Passwd, m.rawPasswd)
	if got := red.clean("query+secret query%2Bsecret"); got != "*** ***" {
		t.Fatalf("kept: %s", got)
	}
	if got := Redact("later: query-secret-pw"); got != "later: ***" {
		t.Fatalf("process-wide redaction kept it: %s", got)
	}
}

func TestMySQLLockNamesFit(t *testing.T) {
	// GET_LOCK names are at most 64 characters; the lock of a long table
	// name still fits, and two tables get different locks.
	name := func(key string) string {
		return mysqlLockName(key)
	}
	a, b := name("cat\x00ns\x00"+strings.Repeat("t", 500)), name("cat\x00ns\x00u")
	if len(a) > 64 || len(b) > 64 || a == b {
		t.Fatalf("lock names %q %q", a, b)
	}
}
