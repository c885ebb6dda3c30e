package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestFileIOPropsDropCatalogCredentials(t *testing.T) {
	got := FileIOProps(
		map[string]string{"type": "rest", "uri": "http://x", "token": "t0k", "credential": "a:b", "header.X-A": "1", "s3.region": "eu", "s3.path-style-access": "true"},
		map[string]string{"s3.region": "us", "write.format.default": "parquet"},
	)
	for _, k := range []string{"type", "uri", "token", "credential", "header.X-A"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s reached the FileIO properties", k)
		}
	}
	if got["s3.region"] != "us" {
		t.Errorf("table properties must win: %v", got)
	}
	if got["s3.force-virtual-addressing"] != "false" {
		t.Errorf("s3.path-style-access=true must mean path-style: %v", got)
	}
}

func TestPathStyleOff(t *testing.T) {
	p := map[string]string{"s3.path-style-access": "false"}
	if err := normalizeProps(p); err != nil || p["s3.force-virtual-addressing"] != "true" {
		t.Fatalf("%v %v", p, err)
	}
}

func TestGCSAndADLSPropertyNames(t *testing.T) {
	p := map[string]string{
		"gcs.service.host":            "http://127.0.0.1:4443",
		"gcs.endpoint":                "https://gcs.example/storage/v1/",
		"adls.account-name":           "acct",
		"adls.account-key":            "a2V5",
		"adls.blob-storage-authority": "127.0.0.1:10000",
		"adls.blob-storage-scheme":    "http",
		"adls.connection-string":      "DefaultEndpointsProtocol=http;AccountName=other;AccountKey=c2VjcmV0;BlobEndpoint=http://127.0.0.1:10000/other;",
	}
	if err := normalizeProps(p); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"gcs.service.host":                  "http://127.0.0.1:4443/storage/v1/",
		"gcs.endpoint":                      "https://gcs.example/storage/v1/",
		"adls.auth.shared-key.account.name": "acct",
		"adls.auth.shared-key.account.key":  "a2V5",
		"adls.endpoint":                     "127.0.0.1:10000",
		"adls.protocol":                     "http",
		"adls.connection-string.other":      p["adls.connection-string"],
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	// iceberg-go's own names win.
	q := map[string]string{"adls.account-name": "a", "adls.account-key": "k", "adls.auth.shared-key.account.name": "b", "adls.endpoint": "x", "adls.blob-storage-authority": "y"}
	_ = normalizeProps(q)
	if q["adls.auth.shared-key.account.name"] != "b" || q["adls.endpoint"] != "x" {
		t.Errorf("%v", q)
	}
	for cs, account := range map[string]string{
		"BlobEndpoint=https://acct2.blob.core.windows.net/;SharedAccessSignature=sv=1&sig=x": "acct2",
		"BlobEndpoint=http://localhost:10000/devstoreaccount1;SharedAccessSignature=sig":     "devstoreaccount1",
		"UseDevelopmentStorage=true": "",
	} {
		if got := connectionStringAccount(cs); got != account {
			t.Errorf("connectionStringAccount(%q) = %q, want %q", cs, got, account)
		}
	}
	r := newRedactor(map[string]string{"adls.connection-string.acct": "AccountName=acct;AccountKey=c2VjcmV0a2V5PT0=;BlobEndpoint=x", "adls.sas-token.acct.dfs.core.windows.net": "sv=1&sig=abc"})
	if got := r.clean("key c2VjcmV0a2V5PT0= sas sv=1&sig=abc"); strings.Contains(got, "c2VjcmV0") || strings.Contains(got, "sig=abc") {
		t.Errorf("not scrubbed: %s", got)
	}
}

func TestNotBuiltErrorNamesTheTag(t *testing.T) {
	for loc, tag := range map[string]string{"gs://b/wh": "pyiceberg_gcs", "abfss://c@a.dfs.core.windows.net/wh": "pyiceberg_azure", "wasb://c@a.blob.core.windows.net/wh": "pyiceberg_azure"} {
		err := NotBuiltError(loc)
		if !errors.Is(err, errs.ErrNotSupported) || !strings.Contains(err.Error(), tag) || !strings.Contains(err.Error(), loc) {
			t.Errorf("%s: %v", loc, err)
		}
	}
}

func TestWriteFSLocalAndUnknownScheme(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(context.Background(), "l", map[string]string{"type": "sql", "uri": "sqlite:///" + filepath.Join(dir, "c.db"), "warehouse": dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fs, err := c.WriteFS(context.Background(), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile(filepath.Join(dir, "x.txt"), []byte("hi")); err != nil {
		t.Fatal(err)
	}
	_, err = c.WriteFS(context.Background(), nil, "gs://bucket/x")
	if !errors.Is(err, errs.ErrNotSupported) || !strings.Contains(err.Error(), "pyiceberg_gcs") {
		t.Fatalf("gs:// in the default build: %v", err)
	}
}

func TestRedactorScrubsEveryFormOfASecret(t *testing.T) {
	r := newRedactor(map[string]string{
		"credential": "client-id:client-secret-value", "s3.secret-access-key": "SECRETKEY", "adls.account-key": "azkey",
		"s3.region": "us-east-1", "token": "x",
	})
	cause := fmt.Errorf("%w: got client-secret-value and client-id and SECRETKEY and azkey in us-east-1 x", errs.ErrIO)
	err := r.wrap("doing", errs.ErrInvalidArgument, cause)
	msg := err.Error()
	for _, s := range []string{"client-secret-value", "client-id", "SECRETKEY", "azkey"} {
		if strings.Contains(msg, s) {
			t.Errorf("%q not scrubbed: %s", s, msg)
		}
	}
	if !strings.Contains(msg, "us-east-1") {
		t.Errorf("a non-secret was scrubbed: %s", msg)
	}
	if !errors.Is(err, errs.ErrInvalidArgument) || !errors.Is(err, errs.ErrIO) {
		t.Errorf("the error chain is lost: %v", err)
	}
	if got := RedactError(fmt.Errorf("boom SECRETKEY: %w", errs.ErrIO)); strings.Contains(got.Error(), "SECRETKEY") || !errors.Is(got, errs.ErrIO) {
		t.Errorf("RedactError: %v", got)
	}
}

// s3Catalog is a catalog whose S3 endpoint is endpoint.
func s3Catalog(endpoint string) *Catalog {
	return &Catalog{Props: map[string]string{
		"s3.endpoint": endpoint, "s3.access-key-id": "AKTEST", "s3.secret-access-key": "sk-test-secret",
		"s3.region": "us-east-1", "s3.path-style-access": "true",
	}}
}

func putFile(t *testing.T, c *Catalog, path string) error {
	t.Helper()
	fs, err := c.WriteFS(context.Background(), nil, "s3://b/wh")
	if err != nil {
		t.Fatal(err)
	}
	w, err := fs.Create(path)
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte("hello")); err != nil {
		return err
	}
	return w.Close()
}

func TestS3RefusedConnectionIsNotRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	err = putFile(t, s3Catalog("http://"+addr), "s3://b/wh/x.parquet")
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("got %v, want a refused connection", err)
	}
	if strings.Contains(err.Error(), "maximum number of attempts") {
		t.Errorf("a refused connection was retried: %v", err)
	}
}

func TestS3ServerErrorsAreStillRetried(t *testing.T) {
	var mu sync.Mutex
	puts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodPut {
			mu.Lock()
			puts++
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`<Error><Code>InternalError</Code><Message>boom</Message></Error>`))
	}))
	defer srv.Close()
	err := putFile(t, s3Catalog(srv.URL), "s3://b/wh/x.parquet")
	if err == nil || !strings.Contains(err.Error(), "InternalError") {
		t.Fatalf("got %v, want the server's error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if puts != 3 {
		t.Errorf("%d PUT attempts, want the SDK's 3", puts)
	}
}

func TestUploadsStopAfterTheFirstFailure(t *testing.T) {
	var mu sync.Mutex
	methods := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		methods[r.Method]++
		mu.Unlock()
		if r.Method == http.MethodPut {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`<Error><Code>SlowDown</Code><Message>slow</Message></Error>`))
			return
		}
		w.WriteHeader(http.StatusNoContent) // HEAD and DELETE: the cleanup works
	}))
	defer srv.Close()
	c := s3Catalog(srv.URL)
	fs, err := c.WriteFS(context.Background(), nil, "s3://b/wh")
	if err != nil {
		t.Fatal(err)
	}
	w, err := fs.Create("s3://b/wh/a.parquet")
	if err != nil {
		t.Fatal(err)
	}
	open, err := fs.Create("s3://b/wh/open.parquet") // open while the first one fails
	if err != nil {
		t.Fatal(err)
	}
	_, _ = open.Write([]byte("o"))
	_, _ = w.Write([]byte("a"))
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "SlowDown") {
		t.Fatalf("first upload: %v", err)
	}
	mu.Lock()
	first := methods[http.MethodPut]
	mu.Unlock()
	if first < 2 {
		t.Fatalf("the first upload was not retried (%d PUTs)", first)
	}
	if err := open.Close(); !errors.Is(err, errs.ErrIO) || !strings.Contains(err.Error(), "open.parquet") {
		t.Fatalf("an open writer must be aborted with the first failure: %v", err)
	}
	_, err = fs.Create("s3://b/wh/b.parquet")
	if !errors.Is(err, errs.ErrIO) || !strings.Contains(err.Error(), "SlowDown") || !strings.Contains(err.Error(), "b.parquet") {
		t.Fatalf("second upload: got %v, want an i/o error naming the file and the first failure", err)
	}
	if err := fs.WriteFile("s3://b/wh/c.parquet", []byte("c")); !errors.Is(err, errs.ErrIO) {
		t.Fatalf("WriteFile after a failure: %v", err)
	}
	if err := fs.Remove("s3://b/wh/a.parquet"); err != nil {
		t.Fatalf("the cleanup must still work: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if methods[http.MethodPut] != first {
		t.Errorf("%d more PUTs after the first failure", methods[http.MethodPut]-first)
	}
	if methods[http.MethodDelete] != 1 {
		t.Errorf("%d DELETEs, want 1", methods[http.MethodDelete])
	}
	// A new FileIO (the next write) starts afresh.
	fs2, err := c.WriteFS(context.Background(), nil, "s3://b/wh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs2.Create("s3://b/wh/d.parquet"); err != nil {
		t.Errorf("a new FileIO inherited the failure: %v", err)
	}
}
