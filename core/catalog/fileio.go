package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"github.com/apache/iceberg-go/table"
	// S3 (s3://, s3a://, s3n://) FileIO; GCS and Azure are behind the
	// pyiceberg_gcs and pyiceberg_azure build tags (clouds_*.go).
	ices3 "github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/apache/iceberg-go/utils"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/paths"
)

// catalogOnly are catalog properties that must not reach a FileIO: the
// REST credentials would otherwise be offered to object stores (iceberg-go's
// S3 FileIO sends a "token" property as a bearer token).
var catalogOnly = map[string]bool{"credential": true, "token": true, "type": true, "uri": true}

// normalizeProps maps PyIceberg's FileIO property names onto iceberg-go's:
// s3.path-style-access=true is s3.force-virtual-addressing=false; the GCS
// and Azure names are mapped by normalizeGCS and normalizeADLS.
func normalizeProps(p map[string]string) error {
	if v, ok := p["s3.path-style-access"]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%w: s3.path-style-access=%q is not a boolean", errs.ErrInvalidArgument, v)
		}
		if _, set := p["s3.force-virtual-addressing"]; !set {
			p["s3.force-virtual-addressing"] = strconv.FormatBool(!b)
		}
	}
	normalizeGCS(p)
	normalizeADLS(p)
	return nil
}

// normalizeGCS makes gcs.service.host mean what it means to PyIceberg and
// Java (a host, "http://127.0.0.1:4443"): iceberg-go hands it to the Go
// client as the JSON API's base URL, which needs the /storage/v1/ path. A
// value with a path is taken as that base URL already.
func normalizeGCS(p map[string]string) {
	for _, k := range []string{"gcs.service.host", "gcs.endpoint"} {
		v := p[k]
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			continue
		}
		u.Path = "/storage/v1/"
		p[k] = u.String()
	}
}

// normalizeADLS maps PyIceberg's Azure property names onto iceberg-go's
// (an iceberg-go name already set wins):
//   - adls.account-name and adls.account-key: the shared key
//     (adls.auth.shared-key.account.name / .key);
//   - adls.connection-string: adls.connection-string.<account>, the account
//     read from the string (AccountName, else the BlobEndpoint's);
//   - adls.blob-storage-authority and adls.blob-storage-scheme: the Blob
//     service's domain and protocol (adls.endpoint, adls.protocol); for
//     127.0.0.1 and localhost the account is the URL's first path segment,
//     as in PyArrow and Azurite.
func normalizeADLS(p map[string]string) {
	setDefault := func(k, v string) {
		if _, ok := p[k]; !ok && v != "" {
			p[k] = v
		}
	}
	if name, key := p["adls.account-name"], p["adls.account-key"]; name != "" && key != "" {
		setDefault("adls.auth.shared-key.account.name", name)
		setDefault("adls.auth.shared-key.account.key", key)
	}
	if cs := p["adls.connection-string"]; cs != "" {
		if account := connectionStringAccount(cs); account != "" {
			setDefault("adls.connection-string."+account, cs)
		}
	}
	setDefault("adls.endpoint", p["adls.blob-storage-authority"])
	setDefault("adls.protocol", p["adls.blob-storage-scheme"])
}

// connectionStringAccount is the storage account an Azure connection string
// is for: its AccountName, else the BlobEndpoint's (the host's first label,
// or for an emulator at 127.0.0.1 / localhost the first path segment).
func connectionStringAccount(cs string) string {
	var endpoint string
	for _, part := range strings.Split(cs, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch strings.ToLower(k) {
		case "accountname":
			return v
		case "blobendpoint":
			endpoint = v
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return ""
	}
	if h := u.Hostname(); h == "127.0.0.1" || h == "localhost" {
		seg, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
		return seg
	}
	label, _, _ := strings.Cut(u.Hostname(), ".")
	return label
}

// FileIOProps are the properties a table's FileIO is opened with: the
// catalog's (without its own credentials and headers), then the table's.
func FileIOProps(catalogProps, tableProps map[string]string) map[string]string {
	out := make(map[string]string, len(catalogProps)+len(tableProps))
	for k, v := range catalogProps {
		if !catalogOnly[k] && !strings.HasPrefix(k, "header.") {
			out[k] = v
		}
	}
	maps.Copy(out, tableProps)
	_ = normalizeProps(out)
	return out
}

// WriteFS opens a writable FileIO for location with the catalog's and the
// table's properties. Errors are typed (errs.ErrIO, errs.ErrNotSupported)
// and carry no secret.
func (c *Catalog) WriteFS(ctx context.Context, tableProps map[string]string, location string) (icebergio.WriteFileIO, error) {
	props := FileIOProps(c.Props, tableProps)
	fs, err := OpenFS(withS3Retries(ctx, props, location), props, location)
	if err != nil {
		if errors.Is(err, icebergio.ErrIOSchemeNotFound) {
			return nil, NotBuiltError(location)
		}
		return nil, newRedactor(props).wrap("opening "+location, errs.ErrIO, err)
	}
	wfs, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("%w: %s is read-only", errs.ErrIO, location)
	}
	return &guardedFS{WriteFileIO: wfs, ctx: ctx, red: newRedactor(props)}, nil
}

// NotBuiltError is the errs.ErrNotSupported error for a location whose
// storage this library was built without, naming the build option that
// adds it.
func NotBuiltError(location string) error {
	scheme, _, _ := strings.Cut(location, "://")
	tag := ""
	switch strings.ToLower(scheme) {
	case "gs":
		tag = "pyiceberg_gcs"
	case "abfs", "abfss", "wasb", "wasbs":
		tag = "pyiceberg_azure"
	}
	if tag == "" {
		return fmt.Errorf("%w: storage for %s is not in this build (local files and S3 are; GCS and Azure are an optional build)", errs.ErrNotSupported, location)
	}
	return fmt.Errorf("%w: storage for %s (%s://) is not in this build: build the library with the %s build tag (PIG_TAGS=\"pyiceberg_gcs pyiceberg_azure\" ./build.sh); the default build has local files and S3 only", errs.ErrNotSupported, location, scheme, tag)
}

// notBuilt is NotBuiltError for the location of err when err is iceberg-go's
// "io scheme not registered" (a table whose storage this build lacks); nil
// for any other error.
func notBuilt(err error) error {
	if err == nil || !errors.Is(err, icebergio.ErrIOSchemeNotFound) {
		return nil
	}
	loc := ""
	if _, rest, ok := strings.Cut(err.Error(), `for path "`); ok {
		loc, _, _ = strings.Cut(rest, `"`)
	}
	return NotBuiltError(loc)
}

// OpenFS opens the FileIO for location with props. Every FileIO it opens
// takes a location for the literal name of a file or object, never
// URL-decoded: a local location (file: or a path) gets the local file
// system (localFS, without parsing location as a URL), S3 gets iceberg-go's
// FileIO with keys kept as spelled (s3FS), another scheme iceberg-go's
// FileIO for it.
func OpenFS(ctx context.Context, props map[string]string, location string) (icebergio.IO, error) {
	if _, local := paths.LocalPath(location); local {
		return localFS{}, nil
	}
	fs, err := icebergio.LoadFS(ctx, props, location)
	if err != nil {
		return nil, err
	}
	return literalS3(ctx, fs, location), nil
}

// literalFS is the FileIO factory fsF of a table at location with every
// FileIO it opens taking locations literally (see OpenFS).
func literalFS(fsF func(context.Context) (icebergio.IO, error), location string) func(context.Context) (icebergio.IO, error) {
	return func(ctx context.Context) (icebergio.IO, error) {
		fs, err := fsF(ctx)
		if err != nil {
			return nil, err
		}
		if _, ok := fs.(icebergio.LocalFS); ok {
			return localFS{}, nil
		}
		return literalS3(ctx, fs, location), nil
	}
}

// LoadTable loads ident. The table reads its files (scans, row-level
// changes) with FileIOs that take locations literally, whichever catalog
// loaded it (REST and SQL catalogs of iceberg-go give it their own).
func (c *Catalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	t, err := c.Catalog.LoadTable(ctx, ident)
	if nb := notBuilt(err); nb != nil {
		return nil, nb
	}
	if err != nil || t == nil {
		return t, err
	}
	return table.New(t.Identifier(), t.Metadata(), t.MetadataLocation(), literalFS(t.FS, t.MetadataLocation()), c), nil
}

// FSFunc is OpenFS as a table's FileIO factory (table.New).
func FSFunc(props map[string]string, location string) func(context.Context) (icebergio.IO, error) {
	return func(ctx context.Context) (icebergio.IO, error) {
		fs, err := OpenFS(ctx, props, location)
		if err != nil {
			return nil, fmt.Errorf("failed to load metadata file at %s: %w", location, err)
		}
		return fs, nil
	}
}

// guardedFS is a write FileIO that stops uploading after its first failed
// upload: the write it serves fails as a whole, and each later upload would
// only spend its own round of client retries (a minute or more for a few
// hundred partition files against a failing store) before failing the same
// way. An object store writer still open when that happens is aborted at
// its Close instead of uploaded. Reads and removes (the cleanup) always go
// through.
type guardedFS struct {
	icebergio.WriteFileIO
	ctx  context.Context
	red  *redactor
	mu   sync.Mutex
	fail error
}

func (g *guardedFS) trip(err error) {
	if err == nil || errors.Is(err, io.EOF) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail == nil {
		g.fail = err
	}
}

func (g *guardedFS) failed(name string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail == nil {
		return nil
	}
	return g.red.wrap("not writing "+name+": an earlier upload of this write failed", errs.ErrIO, g.fail)
}

// Create opens name for writing unless an upload already failed.
func (g *guardedFS) Create(name string) (icebergio.FileWriter, error) {
	if err := g.failed(name); err != nil {
		return nil, err
	}
	var create func(context.Context, string) (icebergio.FileWriter, error)
	switch fs := g.WriteFileIO.(type) {
	case *s3FS:
		create = fs.createCtx
	case *blobfs.FileIO:
		create = func(ctx context.Context, name string) (icebergio.FileWriter, error) {
			return fs.NewWriter(ctx, name, true, nil)
		}
	}
	if create != nil {
		// An object store upload whose context is cancelled before Close
		// is aborted.
		ctx, cancel := context.WithCancel(g.ctx)
		w, err := create(ctx, name)
		if err != nil {
			cancel()
			g.trip(err)
			return nil, err
		}
		return &guardedWriter{FileWriter: w, g: g, name: name, cancel: cancel}, nil
	}
	w, err := g.WriteFileIO.Create(name)
	if err != nil {
		g.trip(err)
		return nil, err
	}
	return &guardedWriter{FileWriter: w, g: g, name: name}, nil
}

// WriteFile writes name unless an upload already failed.
func (g *guardedFS) WriteFile(name string, p []byte) error {
	if err := g.failed(name); err != nil {
		return err
	}
	err := g.WriteFileIO.WriteFile(name, p)
	g.trip(err)
	return err
}

// guardedWriter reports its upload's failure to its guardedFS.
type guardedWriter struct {
	icebergio.FileWriter
	g      *guardedFS
	name   string
	cancel context.CancelFunc // aborts an object store upload; nil otherwise
}

func (w *guardedWriter) Write(p []byte) (int, error) {
	n, err := w.FileWriter.Write(p)
	w.g.trip(err)
	return n, err
}

func (w *guardedWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := w.FileWriter.ReadFrom(r)
	w.g.trip(err)
	return n, err
}

// Close finishes the upload, or aborts it when another upload of the same
// write already failed.
func (w *guardedWriter) Close() error {
	if w.cancel != nil {
		defer w.cancel()
		if failed := w.g.failed(w.name); failed != nil {
			w.cancel()
			_ = w.FileWriter.Close()
			return failed
		}
	}
	err := w.FileWriter.Close()
	w.g.trip(err)
	return err
}

// withS3Retries gives an S3 location's client the SDK's standard retries
// (3 attempts, backed off) except for a refused connection: nothing listens
// at the endpoint, so waiting and retrying every upload and every cleanup
// of a write would only turn a wrong or stopped endpoint into a long stall.
func withS3Retries(ctx context.Context, props map[string]string, location string) context.Context {
	scheme, _, _ := strings.Cut(location, "://")
	if !isS3Scheme(scheme) || utils.GetAwsConfig(ctx) != nil {
		return ctx
	}
	cfg, err := ices3.ParseAWSConfig(ctx, props)
	if err != nil {
		return ctx // LoadFS reports it
	}
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(refusedIsFinal)}, o.Retryables...)
		})
	}
	return utils.WithAwsConfig(ctx, cfg)
}

// refusedIsFinal marks a refused connection as not worth retrying; other
// errors are left to the SDK's own checks.
func refusedIsFinal(err error) aws.Ternary {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return aws.FalseTernary
	}
	return aws.UnknownTernary
}
