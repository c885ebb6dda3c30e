package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	awshttp "github.com/aws/smithy-go/transport/http"
)

// s3FS is iceberg-go's S3 FileIO (gocloud's S3 driver) with every object
// key exactly as its location spells it. gocloud rewrites some keys before
// sending them: "../" becomes "..__0x2f__" and a control character
// "__0x1f__". A partition value ending in ".." escapes to a folder name
// ending in "..", so its data file's key has a "../" and would be stored
// under another key than the location recorded for it, where Spark and
// PyIceberg do not find it (and a file Spark wrote there would not be
// found either). Those keys are read, written and removed here with the S3
// client itself; every other key goes through gocloud as before.
type s3FS struct {
	*blobfs.FileIO
	ctx    context.Context
	client *s3.Client
	bucket string
}

func isS3Scheme(scheme string) bool {
	switch scheme {
	case "s3", "s3a", "s3n":
		return true
	}
	return false
}

// literalS3 wraps fs, opened for location, in an s3FS when it is an S3
// FileIO; any other FileIO is returned as it is.
func literalS3(ctx context.Context, fs icebergio.IO, location string) icebergio.IO {
	bfs, ok := fs.(*blobfs.FileIO)
	if !ok {
		return fs
	}
	scheme, rest, ok := strings.Cut(location, "://")
	if !ok || !isS3Scheme(scheme) {
		return fs
	}
	bucket, _, _ := strings.Cut(rest, "/")
	var client *s3.Client
	if bucket == "" || !bfs.As(&client) {
		return fs
	}
	return &s3FS{FileIO: bfs, ctx: ctx, client: client, bucket: bucket}
}

// rawKey is the object key of location name when gocloud would send
// another key for it; "" when gocloud can be used (or name is not an
// object of this bucket, which gocloud reports).
func (s *s3FS) rawKey(name string) string {
	scheme, rest, ok := strings.Cut(name, "://")
	if !ok || !isS3Scheme(scheme) {
		return ""
	}
	bucket, key, ok := strings.Cut(rest, "/")
	if !ok || bucket != s.bucket || !gocloudRewrites(key) {
		return ""
	}
	return key
}

// gocloudRewrites reports whether gocloud's S3 driver sends key as
// something else (its escapeKey: control characters, and a "/" after
// "..").
func gocloudRewrites(key string) bool {
	if strings.Contains(key, "../") {
		return true
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 {
			return true
		}
	}
	return false
}

// s3Err is err of an S3 call on name as a *fs.PathError, with a missing
// object as fs.ErrNotExist.
func s3Err(op, name string, err error) error {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound {
		err = fs.ErrNotExist
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func (s *s3FS) Open(name string) (icebergio.File, error) {
	key := s.rawKey(name)
	if key == "" {
		return s.FileIO.Open(name)
	}
	info, err := s.stat(name, key)
	if err != nil {
		return nil, err
	}
	return &s3File{s: s, key: key, info: info}, nil
}

func (s *s3FS) Stat(name string) (fs.FileInfo, error) {
	key := s.rawKey(name)
	if key == "" {
		return s.FileIO.Stat(name)
	}
	return s.stat(name, key)
}

func (s *s3FS) stat(name, key string) (s3Info, error) {
	out, err := s.client.HeadObject(s.ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return s3Info{}, s3Err("stat", name, err)
	}
	return s3Info{name: path.Base(key), size: aws.ToInt64(out.ContentLength), mod: aws.ToTime(out.LastModified)}, nil
}

func (s *s3FS) ReadFile(name string) ([]byte, error) {
	key := s.rawKey(name)
	if key == "" {
		return s.FileIO.ReadFile(name)
	}
	out, err := s.client.GetObject(s.ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, s3Err("read", name, err)
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

func (s *s3FS) Remove(name string) error {
	key := s.rawKey(name)
	if key == "" {
		return s.FileIO.Remove(name)
	}
	if _, err := s.client.DeleteObject(s.ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil {
		return s3Err("remove", name, err)
	}
	return nil
}

// DeleteFiles deletes paths (gocloud's batch for the keys it keeps).
func (s *s3FS) DeleteFiles(ctx context.Context, paths []string) ([]string, error) {
	var plain, deleted []string
	var errs []error
	for _, p := range paths {
		key := s.rawKey(p)
		if key == "" {
			plain = append(plain, p)
			continue
		}
		if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil {
			errs = append(errs, s3Err("remove", p, err))
			continue
		}
		deleted = append(deleted, p)
	}
	if len(plain) > 0 {
		done, err := s.FileIO.DeleteFiles(ctx, plain)
		deleted = append(deleted, done...)
		errs = append(errs, err)
	}
	return deleted, errors.Join(errs...)
}

func (s *s3FS) WriteFile(name string, p []byte) error {
	key := s.rawKey(name)
	if key == "" {
		return s.FileIO.WriteFile(name, p)
	}
	if _, err := s.client.PutObject(s.ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: bytes.NewReader(p)}); err != nil {
		return s3Err("write", name, err)
	}
	return nil
}

func (s *s3FS) Create(name string) (icebergio.FileWriter, error) {
	return s.createCtx(s.ctx, name)
}

// createCtx opens name for writing; cancelling ctx before Close aborts the
// upload (guardedFS).
func (s *s3FS) createCtx(ctx context.Context, name string) (icebergio.FileWriter, error) {
	key := s.rawKey(name)
	if key == "" {
		return s.NewWriter(ctx, name, true, nil)
	}
	pr, pw := io.Pipe()
	w := &s3Writer{pw: pw, done: make(chan struct{})}
	tm := transfermanager.New(s.client)
	go func() {
		defer close(w.done)
		_, err := tm.UploadObject(ctx, &transfermanager.UploadObjectInput{Bucket: &s.bucket, Key: &key, Body: pr})
		if err != nil {
			err = s3Err("write", name, err)
		}
		w.err = err
		// A failed upload unblocks the writer; after success it reads EOF.
		pr.CloseWithError(err)
	}()
	return w, nil
}

// s3Writer streams an object to an upload running beside it.
type s3Writer struct {
	pw   *io.PipeWriter
	done chan struct{}
	err  error
}

func (w *s3Writer) Write(p []byte) (int, error) { return w.pw.Write(p) }

func (w *s3Writer) ReadFrom(r io.Reader) (int64, error) { return io.Copy(w.pw, r) }

// Close ends the object and waits for its upload.
func (w *s3Writer) Close() error {
	_ = w.pw.Close()
	<-w.done
	return w.err
}

// s3File reads an object by ranges.
type s3File struct {
	s    *s3FS
	key  string
	info s3Info
	pos  int64
}

func (f *s3File) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *s3File) Close() error               { return nil }

func (f *s3File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("s3: negative offset %d", off)
	}
	if off >= f.info.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), f.info.size-off)
	if n == 0 {
		return 0, nil
	}
	rng := fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	out, err := f.s.client.GetObject(f.s.ctx, &s3.GetObjectInput{Bucket: &f.s.bucket, Key: &f.key, Range: &rng})
	if err != nil {
		return 0, s3Err("read", f.info.name, err)
	}
	defer out.Body.Close()
	got, err := io.ReadFull(out.Body, p[:n])
	if err != nil {
		return got, err
	}
	if got < len(p) {
		return got, io.EOF
	}
	return got, nil
}

func (f *s3File) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.pos)
	f.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *s3File) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.pos
	case io.SeekEnd:
		offset += f.info.size
	default:
		return 0, fmt.Errorf("s3: bad whence %d", whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("s3: negative position %d", offset)
	}
	f.pos = offset
	return offset, nil
}

// s3Info describes an object.
type s3Info struct {
	name string
	size int64
	mod  time.Time
}

func (i s3Info) Name() string       { return i.name }
func (i s3Info) Size() int64        { return i.size }
func (i s3Info) Mode() fs.FileMode  { return fs.ModeIrregular }
func (i s3Info) ModTime() time.Time { return i.mod }
func (i s3Info) IsDir() bool        { return false }
func (i s3Info) Sys() any           { return nil }
