package catalog

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hive"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestHiveSettings(t *testing.T) {
	for _, c := range []struct {
		props   iceberg.Properties
		addrs   []string
		retries string
	}{
		// Java's default lock timeout (3 min) with its default check waits (50 ms growing 1.5 times to 5 s).
		{iceberg.Properties{"uri": "thrift://h:9083"}, []string{"h:9083"}, "46"},
		{iceberg.Properties{"uri": "thrift://h"}, []string{"h:9083"}, "46"},
		{iceberg.Properties{"uri": "thrift://a:1, thrift://[::1]:2"}, []string{"a:1", "[::1]:2"}, "46"},
		{iceberg.Properties{"uri": "thrift://h:1", "iceberg.hive.lock-timeout-ms": "1000"}, []string{"h:1"}, "6"},
		{iceberg.Properties{"uri": "thrift://h:1", "iceberg.hive.lock-timeout-ms": "1000", "iceberg.hive.lock-check-max-wait-ms": "100"}, []string{"h:1"}, "11"},
		{iceberg.Properties{"uri": "thrift://h:1", "lock-check-retries": "3", "iceberg.hive.lock-timeout-ms": "1000"}, []string{"h:1"}, "3"},
	} {
		s, err := hiveSettingsOf(c.props)
		if err != nil {
			t.Fatalf("%v: %v", c.props, err)
		}
		if strings.Join(s.addrs, ",") != strings.Join(c.addrs, ",") || s.props[hive.LockCheckRetries] != c.retries {
			t.Errorf("%v: addrs %v retries %q, want %v %q", c.props, s.addrs, s.props[hive.LockCheckRetries], c.addrs, c.retries)
		}
		// iceberg-go reads the count we set.
		o := hive.NewHiveOptions()
		o.ApplyProperties(s.props)
		if strconv.Itoa(o.LockRetries) != c.retries {
			t.Errorf("%v: iceberg-go reads %d lock checks, want %s", c.props, o.LockRetries, c.retries)
		}
	}
	for _, c := range []struct {
		props iceberg.Properties
		kind  error
		says  string
	}{
		{iceberg.Properties{}, errs.ErrInvalidArgument, "needs uri"},
		{iceberg.Properties{"uri": "http://h:9083"}, errs.ErrInvalidArgument, "not thrift://host:port"},
		{iceberg.Properties{"uri": "thrift://h:99999"}, errs.ErrInvalidArgument, "bad port"},
		{iceberg.Properties{"uri": "thrift://h:1/db"}, errs.ErrInvalidArgument, "not thrift://host:port"},
		{iceberg.Properties{"uri": "thrift://h:1", "iceberg.hive.lock-timeout-ms": "soon"}, errs.ErrInvalidArgument, "lock-timeout-ms"},
		{iceberg.Properties{"uri": "thrift://h:1", "hive.kerberos-authentication": "true"}, errs.ErrNotSupported, "Kerberos"},
	} {
		_, err := hiveSettingsOf(c.props)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: %v, want %v saying %q", c.props, err, c.kind, c.says)
		}
	}
}

func TestLockChecksFillTheTimeout(t *testing.T) {
	for _, c := range []struct {
		timeout, minWait, maxWait time.Duration
		want                      int
	}{
		{50 * time.Millisecond, 50 * time.Millisecond, 5 * time.Second, 1},
		{51 * time.Millisecond, 50 * time.Millisecond, 5 * time.Second, 2},  // 50 + 75
		{200 * time.Millisecond, 50 * time.Millisecond, 5 * time.Second, 3}, // 50 + 75 + 112.5
		{time.Second, 100 * time.Millisecond, 100 * time.Millisecond, 10},   // flat
		{0, 50 * time.Millisecond, 5 * time.Second, 1},
	} {
		if got := lockChecks(c.timeout, c.minWait, c.maxWait); got != c.want {
			t.Errorf("lockChecks(%v, %v, %v) = %d, want %d", c.timeout, c.minWait, c.maxWait, got, c.want)
		}
	}
}

// TestHiveUnreachableIsTypedIO: opening a catalog whose metastore does not
// answer fails at once with errs.ErrIO naming the address.
func TestHiveUnreachableIsTypedIO(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = Open(context.Background(), "h", map[string]string{"type": "hive", "uri": "thrift://" + addr, "warehouse": t.TempDir()})
	if !errors.Is(err, errs.ErrIO) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("got %v", err)
	}
	// thrift:// alone names the type.
	_, err = Open(context.Background(), "h", map[string]string{"uri": "thrift://" + addr})
	if !errors.Is(err, errs.ErrIO) {
		t.Fatalf("inferred type: got %v", err)
	}
}
