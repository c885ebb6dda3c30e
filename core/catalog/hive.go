package catalog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hive"
	"github.com/apache/thrift/lib/go/thrift"
	"github.com/beltran/gohive/hive_metastore"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The Hive Metastore catalog is iceberg-go's (catalog/hive): tables are
// metastore tables of type ICEBERG whose metadata_location parameter points
// at the current metadata file, and a commit holds an exclusive metastore
// table lock around reading that pointer and moving it, as Iceberg Java's
// HiveCatalog does, so Java, PyIceberg and this library queue on the same
// lock. We give it our own Thrift client (hiveClient): one connection used
// by one call at a time, with timeouts, re-dialled after a failure, and
// whose failures carry errs kinds. It reads tables with get_table_req, which
// Hive 4's metastore serves and get_table, which iceberg-go's client uses,
// it no longer does.

const (
	// hiveLockTimeout is the Java catalog's property bounding how long a
	// commit waits for the table lock (milliseconds; Java's default 3 min).
	hiveLockTimeout        = "iceberg.hive.lock-timeout-ms"
	defaultHiveLockTimeout = 3 * time.Minute
	// hiveConnectTimeout bounds dialling the metastore; hiveCallTimeout a
	// call's reads and writes on the socket.
	hiveConnectTimeout = 30 * time.Second
	hiveCallTimeout    = 5 * time.Minute
)

// hiveSettings are what opening a Hive catalog reads from its properties.
type hiveSettings struct {
	addrs []string // host:port of each metastore, tried in order
	props iceberg.Properties
}

// hiveSettingsOf reads uri (thrift://host:port, several separated by
// commas as PyIceberg and Java take them) and translates the lock
// settings: iceberg-go bounds the lock wait by a number of checks, Java by
// iceberg.hive.lock-timeout-ms, so unless lock-check-retries is given the
// number of checks is the one whose backoff fills the timeout.
func hiveSettingsOf(p iceberg.Properties) (hiveSettings, error) {
	var s hiveSettings
	uri := strings.TrimSpace(p["uri"])
	if uri == "" {
		return s, fmt.Errorf("%w: type hive needs uri = thrift://host:port", errs.ErrInvalidArgument)
	}
	for _, one := range strings.Split(uri, ",") {
		one = strings.TrimSpace(one)
		u, err := url.Parse(one)
		if err != nil || u.Scheme != "thrift" || u.Hostname() == "" || u.Path != "" && u.Path != "/" {
			return s, fmt.Errorf("%w: uri %q is not thrift://host:port", errs.ErrInvalidArgument, one)
		}
		port := u.Port()
		if port == "" {
			port = "9083"
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return s, fmt.Errorf("%w: uri %q: bad port", errs.ErrInvalidArgument, one)
		}
		s.addrs = append(s.addrs, net.JoinHostPort(u.Hostname(), port))
	}
	for _, k := range []string{"hive.kerberos-authentication", "hive.metastore.sasl.enabled"} {
		if v, _ := strconv.ParseBool(p[k]); v {
			return s, fmt.Errorf("%w: %s: this library connects to metastores without SASL/Kerberos only", errs.ErrNotSupported, k)
		}
	}
	s.props = iceberg.Properties{}
	for k, v := range p {
		s.props[k] = v
	}
	if _, ok := p[hive.LockCheckRetries]; !ok {
		timeout := defaultHiveLockTimeout
		if v, ok := p[hiveLockTimeout]; ok {
			ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || ms <= 0 {
				return s, fmt.Errorf("%w: %s = %q: expected milliseconds", errs.ErrInvalidArgument, hiveLockTimeout, v)
			}
			timeout = time.Duration(ms) * time.Millisecond
		}
		o := hive.NewHiveOptions()
		o.ApplyProperties(p)
		s.props[hive.LockCheckRetries] = strconv.Itoa(lockChecks(timeout, o.LockMinWaitTime, o.LockMaxWaitTime))
	}
	return s, nil
}

// lockChecks is the number of lock checks whose waits (min, growing 1.5
// times up to max, as iceberg-go and Java space them) add up to timeout;
// at least one.
func lockChecks(timeout, minWait, maxWait time.Duration) int {
	n := 0
	total := time.Duration(0)
	wait := minWait
	for total < timeout {
		total += wait
		n++
		wait = min(time.Duration(float64(wait)*1.5), maxWait)
		if wait <= 0 {
			break
		}
	}
	return max(n, 1)
}

// openHive opens a Hive Metastore catalog: uri thrift://host:port and a
// warehouse for the databases it creates.
func openHive(ctx context.Context, name string, p iceberg.Properties, red *redactor) (*Catalog, error) {
	s, err := hiveSettingsOf(p)
	if err != nil {
		return nil, fmt.Errorf("catalog %q: %w", name, err)
	}
	if wh := p["warehouse"]; wh != "" {
		if err := mkdirLocal(wh); err != nil {
			return nil, err
		}
	}
	cl := &hiveClient{addrs: s.addrs}
	cl.mu.Lock()
	err = cl.connect()
	cl.mu.Unlock()
	if err != nil {
		return nil, red.wrap(fmt.Sprintf("opening Hive catalog %q", name), nil, err)
	}
	c := hive.NewCatalogWithClient(cl, s.props)
	tc := &typedCatalog{Catalog: c, red: red, props: p, lostAnswer: lostHiveAnswer}
	return &Catalog{Catalog: tc, Name: name, Props: p, close: c.Close}, nil
}

// lostHiveAnswer reports whether a commit's error may hide a table change
// the metastore made: the connection broke during alter_table or
// create_table (hiveClient marks that errs.ErrCommitStateUnknown). The
// commit is then settled by reading the table again (commitcheck.go).
func lostHiveAnswer(err error) bool {
	return errors.Is(err, errs.ErrCommitStateUnknown)
}

// hiveClient is a Thrift connection to a metastore (binary protocol,
// buffered transport, no SASL: the metastore's defaults) implementing
// iceberg-go's hive.HiveClient. Calls take turns on the connection; one
// whose connection failed closes it, and the next call dials again.
// Failures of the connection are errs.ErrIO, except a table write whose
// request may have reached the metastore: errs.ErrCommitStateUnknown.
type hiveClient struct {
	addrs []string
	mu    sync.Mutex
	trans thrift.TTransport
	cl    *hive_metastore.ThriftHiveMetastoreClient
}

var _ hive.HiveClient = (*hiveClient)(nil)

// connect dials the metastores in turn until one answers (mu held).
func (h *hiveClient) connect() error {
	cfg := &thrift.TConfiguration{ConnectTimeout: hiveConnectTimeout, SocketTimeout: hiveCallTimeout}
	var errList []error
	for _, addr := range h.addrs {
		sock := thrift.NewTSocketConf(addr, cfg)
		if err := sock.Open(); err != nil {
			errList = append(errList, err)
			continue
		}
		trans := thrift.NewTBufferedTransport(sock, 8192)
		pf := thrift.NewTBinaryProtocolFactoryConf(cfg)
		h.trans = trans
		h.cl = hive_metastore.NewThriftHiveMetastoreClient(thrift.NewTStandardClient(pf.GetProtocol(trans), pf.GetProtocol(trans)))
		return nil
	}
	return fmt.Errorf("%w: cannot connect to the Hive Metastore at %s: %w", errs.ErrIO, strings.Join(h.addrs, ", "), errors.Join(errList...))
}

// call runs f on the connection. write says f changes a table: its
// failure on an open connection leaves the change unknown.
func (h *hiveClient) call(ctx context.Context, write bool, f func(*hive_metastore.ThriftHiveMetastoreClient) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", errs.ErrCancelled, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cl == nil {
		if err := h.connect(); err != nil {
			return err
		}
	}
	err := f(h.cl)
	if err == nil || !isThriftTransportErr(err) {
		return err
	}
	h.trans.Close()
	h.trans, h.cl = nil, nil
	if write {
		return fmt.Errorf("%w: the metastore connection failed during a table change: %w", errs.ErrCommitStateUnknown, err)
	}
	return fmt.Errorf("%w: the metastore connection failed: %w", errs.ErrIO, err)
}

// isThriftTransportErr reports whether err broke the connection (rather
// than being an exception the metastore answered with).
func isThriftTransportErr(err error) bool {
	var te thrift.TTransportException
	var pe thrift.TProtocolException
	var ne net.Error
	return errors.As(err, &te) || errors.As(err, &pe) || errors.As(err, &ne) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (h *hiveClient) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.trans == nil {
		return nil
	}
	err := h.trans.Close()
	h.trans, h.cl = nil, nil
	return err
}

func (h *hiveClient) GetDatabase(ctx context.Context, name string) (db *hive_metastore.Database, err error) {
	err = h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error {
		db, err = c.GetDatabase(ctx, name)
		return err
	})
	return db, err
}

func (h *hiveClient) CreateDatabase(ctx context.Context, db *hive_metastore.Database) error {
	return h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error { return c.CreateDatabase(ctx, db) })
}

func (h *hiveClient) AlterDatabase(ctx context.Context, name string, db *hive_metastore.Database) error {
	return h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error { return c.AlterDatabase(ctx, name, db) })
}

func (h *hiveClient) DropDatabase(ctx context.Context, name string, deleteData, cascade bool) error {
	return h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error {
		return c.DropDatabase(ctx, name, deleteData, cascade)
	})
}

func (h *hiveClient) GetAllDatabases(ctx context.Context) (out []string, err error) {
	err = h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error {
		out, err = c.GetAllDatabases(ctx)
		return err
	})
	return out, err
}

func (h *hiveClient) GetTable(ctx context.Context, db, tbl string) (t *hive_metastore.Table, err error) {
	// get_table_req, not get_table: Hive 4 removed get_table (and every
	// metastore since Hive 2.1 serves get_table_req).
	req := hive_metastore.NewGetTableRequest()
	req.DbName, req.TblName = db, tbl
	err = h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error {
		r, err := c.GetTableReq(ctx, req)
		if err == nil {
			t = r.GetTable()
		}
		return err
	})
	return t, err
}

func (h *hiveClient) CreateTable(ctx context.Context, t *hive_metastore.Table) error {
	return h.call(ctx, true, func(c *hive_metastore.ThriftHiveMetastoreClient) error { return c.CreateTable(ctx, t) })
}

func (h *hiveClient) AlterTable(ctx context.Context, db, tbl string, t *hive_metastore.Table) error {
	return h.call(ctx, true, func(c *hive_metastore.ThriftHiveMetastoreClient) error { return c.AlterTable(ctx, db, tbl, t) })
}

func (h *hiveClient) DropTable(ctx context.Context, db, tbl string, deleteData bool) error {
	return h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error {
		return c.DropTable(ctx, db, tbl, deleteData)
	})
}

func (h *hiveClient) GetTables(ctx context.Context, db, pattern string) (out []string, err error) {
	err = h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error {
		out, err = c.GetTables(ctx, db, pattern)
		return err
	})
	return out, err
}

func (h *hiveClient) Lock(ctx context.Context, req *hive_metastore.LockRequest) (r *hive_metastore.LockResponse, err error) {
	// The metastore records who holds a lock (Java sends its user and host).
	if req.User == "" {
		req.User = "pyiceberg-go"
	}
	if req.Hostname == "" {
		req.Hostname, _ = os.Hostname()
	}
	err = h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error {
		r, err = c.Lock(ctx, req)
		return err
	})
	return r, err
}

func (h *hiveClient) CheckLock(ctx context.Context, id int64) (r *hive_metastore.LockResponse, err error) {
	err = h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error {
		r, err = c.CheckLock(ctx, &hive_metastore.CheckLockRequest{Lockid: id})
		return err
	})
	return r, err
}

func (h *hiveClient) Unlock(ctx context.Context, id int64) error {
	return h.call(ctx, false, func(c *hive_metastore.ThriftHiveMetastoreClient) error {
		return c.Unlock(ctx, &hive_metastore.UnlockRequest{Lockid: id})
	})
}
