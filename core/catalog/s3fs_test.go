package catalog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
)

// fakeS3 is an in-memory S3 (path-style, one bucket) that records the key
// of every request, as the server received it.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	keys    []string
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	_ = bucket
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, key)
	switch r.Method {
	case http.MethodPut:
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
			body = unchunk(body)
		}
		f.objects[key] = body
		w.WriteHeader(http.StatusOK)
	case http.MethodHead, http.MethodGet:
		b, ok := f.objects[key]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if rng := r.Header.Get("Range"); rng != "" {
			var lo, hi int
			fmt.Sscanf(rng, "bytes=%d-%d", &lo, &hi)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", lo, hi, len(b)))
			b = b[lo : hi+1]
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			w.WriteHeader(http.StatusPartialContent)
		} else {
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		}
		if r.Method == http.MethodGet {
			_, _ = w.Write(b)
		}
	case http.MethodDelete:
		delete(f.objects, key)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotImplemented)
	}
}

// unchunk decodes an aws-chunked body (hex size;chunk-signature\r\n data\r\n ...).
func unchunk(b []byte) []byte {
	var out []byte
	rd := bufio.NewReader(strings.NewReader(string(b)))
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return out
		}
		size, err := strconv.ParseInt(strings.SplitN(strings.TrimSpace(line), ";", 2)[0], 16, 64)
		if err != nil || size == 0 {
			return out
		}
		chunk := make([]byte, size)
		_, _ = io.ReadFull(rd, chunk)
		out = append(out, chunk...)
		_, _ = rd.ReadString('\n')
	}
}

// A key gocloud would rewrite ("../" after a partition value ending in
// "..", control characters) reaches the server exactly as the location
// spells it, for every operation; other keys too.
func TestS3KeysAreSentAsSpelled(t *testing.T) {
	srv := &fakeS3{objects: map[string][]byte{}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c := s3Catalog(hs.URL)
	wfs, err := c.WriteFS(context.Background(), nil, "s3://b/wh")
	if err != nil {
		t.Fatal(err)
	}
	rfs, err := OpenFS(context.Background(), FileIOProps(c.Props, nil), "s3://b/wh")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"wh/s=x%2F../f.parquet", "wh/s=../g", "wh/a\x01b/f", "wh/s=%C3%A9+x/f.parquet", "wh/s=__0x2f__/f"} {
		loc := "s3://b/" + key
		w, err := wfs.Create(loc)
		if err != nil {
			t.Fatalf("Create(%q): %v", loc, err)
		}
		_, _ = io.WriteString(w, "0123456789")
		if err := w.Close(); err != nil {
			t.Fatalf("Close(%q): %v", loc, err)
		}
		srv.mu.Lock()
		_, stored := srv.objects[key]
		srv.mu.Unlock()
		if !stored {
			t.Fatalf("%q was not stored under its own key; the server has %v", loc, srv.objects)
		}
		if err := wfs.WriteFile(loc+".2", []byte("x")); err != nil {
			t.Fatal(err)
		}
		st, err := rfs.(icebergio.StatIO).Stat(loc)
		if err != nil || st.Size() != 10 {
			t.Fatalf("Stat(%q): %v %v", loc, st, err)
		}
		f, err := rfs.Open(loc)
		if err != nil {
			t.Fatalf("Open(%q): %v", loc, err)
		}
		buf := make([]byte, 4)
		if n, err := f.ReadAt(buf, 3); n != 4 || err != nil || string(buf) != "3456" {
			t.Fatalf("ReadAt(%q): %d %v %q", loc, n, err, buf)
		}
		all, err := io.ReadAll(f)
		if err != nil || string(all) != "0123456789" {
			t.Fatalf("Read(%q): %q %v", loc, all, err)
		}
		f.Close()
		if b, err := rfs.(icebergio.ReadFileIO).ReadFile(loc + ".2"); err != nil || string(b) != "x" {
			t.Fatalf("ReadFile(%q): %q %v", loc, b, err)
		}
		if err := wfs.Remove(loc); err != nil {
			t.Fatalf("Remove(%q): %v", loc, err)
		}
		if done, err := rfs.(icebergio.BulkRemovableIO).DeleteFiles(context.Background(), []string{loc + ".2"}); err != nil || len(done) != 1 {
			t.Fatalf("DeleteFiles(%q): %v %v", loc+".2", done, err)
		}
		if _, err := rfs.(icebergio.StatIO).Stat(loc); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Stat(%q) after Remove: %v", loc, err)
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, k := range srv.keys {
		if strings.Contains(k, "..__0x2f__") || strings.Contains(k, "__0x1__") {
			t.Errorf("a rewritten key reached the server: %q", k)
		}
	}
	if len(srv.objects) != 0 {
		t.Errorf("left behind: %v", slices.Collect(func(yield func(string) bool) {
			for k := range srv.objects {
				if !yield(k) {
					return
				}
			}
		}))
	}
}

func TestGocloudRewrites(t *testing.T) {
	for key, want := range map[string]bool{"a/b": false, "a../b": true, "../b": true, "a/..": false, "a..b/c": false, "a\x1fb": true, "é/x": false} {
		if gocloudRewrites(key) != want {
			t.Errorf("gocloudRewrites(%q) != %v", key, want)
		}
	}
}
