package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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
