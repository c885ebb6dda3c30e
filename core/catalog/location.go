package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// locator is a catalog that can choose the location of a new table.
type locator interface {
	defaultLocation(ctx context.Context, ident table.Identifier) (string, bool, error)
}

// DefaultLocation is the location the catalog gives a new table ident when
// the writer names none. ok is false when the catalog leaves that to the
// client (the warehouse layout of the SQL and directory catalogs, or a REST
// catalog configured with a warehouse path).
func (c *Catalog) DefaultLocation(ctx context.Context, ident table.Identifier) (string, bool, error) {
	if l, ok := c.Catalog.(locator); ok {
		return l.defaultLocation(ctx, ident)
	}
	return "", false, nil
}

// usableWarehouse reports whether wh is a location tables can be put under:
// a URL with a scheme (s3://, file:/...) or an absolute local path. A REST
// catalog's warehouse may instead be the name the server knows it by.
func usableWarehouse(wh string) bool {
	if wh == "" {
		return false
	}
	if filepath.IsAbs(wh) {
		return true
	}
	u, err := url.Parse(wh)
	return err == nil && len(u.Scheme) > 1 && (u.Host != "" || strings.HasPrefix(u.Path, "/"))
}

// defaultLocation asks the server where ident would go: a stage-create
// (which publishes nothing) answers with the planned table's location. A
// client warehouse path, when configured, wins, as it does for every
// other operation of this catalog.
func (r *restCatalog) defaultLocation(ctx context.Context, ident table.Identifier) (string, bool, error) {
	if usableWarehouse(r.props["warehouse"]) {
		return "", false, nil
	}
	what := fmt.Sprintf("asking the catalog for the location of table %s", strings.Join(ident, "."))
	loc, err := r.stageLocation(ctx, ident)
	if errors.Is(err, icecat.ErrNoSuchNamespace) {
		// The create that follows makes the namespace anyway; the server
		// plans tables only in namespaces that exist.
		ns := icecat.NamespaceFromIdent(ident)
		if cerr := r.Catalog.CreateNamespace(ctx, ns, nil); cerr != nil && !errors.Is(cerr, icecat.ErrNamespaceAlreadyExists) {
			return "", false, r.fail(what, false, cerr)
		}
		loc, err = r.stageLocation(ctx, ident)
	}
	if err != nil {
		return "", false, r.fail(what, false, err)
	}
	if loc == "" {
		return "", false, fmt.Errorf("%w: %s: the server planned no location", errs.ErrIO, what)
	}
	return strings.TrimSuffix(loc, "/"), true, nil
}

// stageLocation sends a stage-create for ident and returns the location of
// the planned table. iceberg-go always follows a stage-create with the
// commit that publishes it; the probe in the context makes the transport
// keep the stage-create's answer and refuse that commit before it is sent.
func (r *restCatalog) stageLocation(ctx context.Context, ident table.Identifier) (string, error) {
	p := &locationProbe{}
	pctx := context.WithValue(ctx, probeKey{}, p)
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "probe", Type: iceberg.PrimitiveTypes.Int32})
	// The staged update only makes iceberg-go stage; it is never sent.
	_, err := r.Catalog.CreateTable(pctx, ident, sc, icecat.WithStagedUpdates(table.NewSetPropertiesUpdate(iceberg.Properties{"probe": "true"})))
	body := p.answer()
	if body == nil {
		if err == nil {
			err = errors.New("the server answered no stage-create")
		}
		return "", err
	}
	var doc struct {
		Metadata struct {
			Location string `json:"location"`
		} `json:"metadata"`
	}
	if jerr := json.Unmarshal(body, &doc); jerr != nil {
		return "", fmt.Errorf("reading the stage-create answer: %w", jerr)
	}
	return doc.Metadata.Location, nil
}

type probeKey struct{}

// errProbed stops the commit of a location probe's staged table.
var errProbed = errors.New("location probe: publishing the staged table is not sent")

// locationProbe holds the answer to a location probe's stage-create.
type locationProbe struct {
	mu   sync.Mutex
	body []byte
}

func (p *locationProbe) answer() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.body
}

// probeTransport passes requests through, except for those of a location
// probe (see stageLocation).
type probeTransport struct{ base http.RoundTripper }

// maxStageAnswer bounds the stage-create answer a probe keeps in memory.
const maxStageAnswer = 16 << 20

func (t *probeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p, _ := req.Context().Value(probeKey{}).(*locationProbe)
	if p == nil || req.Method != http.MethodPost {
		return t.base.RoundTrip(req)
	}
	path := strings.TrimSuffix(req.URL.Path, "/")
	switch {
	case p.answer() != nil && strings.Contains(path, "/tables/"):
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, errProbed
	case strings.HasSuffix(path, "/tables"):
		rsp, err := t.base.RoundTrip(req)
		if err != nil || rsp.StatusCode != http.StatusOK {
			return rsp, err
		}
		body, err := io.ReadAll(io.LimitReader(rsp.Body, maxStageAnswer))
		_ = rsp.Body.Close()
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		p.body = body
		p.mu.Unlock()
		rsp.Body = io.NopCloser(bytes.NewReader(body))
		rsp.ContentLength = int64(len(body))
		return rsp, nil
	}
	return t.base.RoundTrip(req)
}
