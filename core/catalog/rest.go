package catalog

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// restProps are the catalog properties openREST turns into options itself;
// every other property reaches iceberg-go's REST catalog (and the FileIO of
// its tables) unchanged, header.<Name> included.
var restProps = map[string]bool{
	"type": true, "uri": true, "warehouse": true, "prefix": true, "credential": true, "token": true,
	"oauth2-server-uri": true, "scope": true, "audience": true, "resource": true,
}

// openREST opens an Iceberg REST catalog with PyIceberg's property names.
func openREST(ctx context.Context, name string, p iceberg.Properties, red *redactor) (*Catalog, error) {
	uri := strings.TrimSuffix(p["uri"], "/")
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: catalog %q: uri %q is not an http(s) URL", errs.ErrInvalidArgument, name, red.clean(uri))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: catalog %q: put credentials in the credential or token property, not in the uri", errs.ErrInvalidArgument, name)
	}
	opts := []rest.Option{rest.WithTransportFactory(newTransport)}
	if v := p["credential"]; v != "" {
		opts = append(opts, rest.WithCredential(v))
	}
	if v := p["token"]; v != "" {
		opts = append(opts, rest.WithOAuthToken(v))
	}
	if v := p["warehouse"]; v != "" {
		opts = append(opts, rest.WithWarehouseLocation(v))
	}
	if v := strings.Trim(p["prefix"], "/"); v != "" {
		opts = append(opts, rest.WithPrefix(v))
	}
	if v := p["scope"]; v != "" {
		opts = append(opts, rest.WithScope(v))
	}
	if v := p["audience"]; v != "" {
		opts = append(opts, rest.WithAudience(v))
	}
	if v := p["resource"]; v != "" {
		opts = append(opts, rest.WithResource(v))
	}
	if v := p["oauth2-server-uri"]; v != "" {
		au, err := url.Parse(v)
		if err != nil || au.Scheme == "" || au.Host == "" {
			return nil, fmt.Errorf("%w: catalog %q: oauth2-server-uri %q is not a URL", errs.ErrInvalidArgument, name, red.clean(v))
		}
		opts = append(opts, rest.WithAuthURI(au))
	}
	headers := map[string]string{}
	extra := iceberg.Properties{}
	for k, v := range p {
		if h, ok := strings.CutPrefix(k, "header."); ok {
			headers[h] = v
		} else if !restProps[k] {
			extra[k] = v
		}
	}
	if len(headers) > 0 {
		opts = append(opts, rest.WithHeaders(headers))
	}
	opts = append(opts, rest.WithAdditionalProps(extra))
	rc, err := rest.NewCatalog(ctx, name, uri, opts...)
	if err != nil {
		return nil, red.wrap(fmt.Sprintf("opening REST catalog %q at %s", name, uri), classifyREST(err, false), err)
	}
	c := &restCatalog{Catalog: rc, red: red, props: p}
	// The REST client keeps its credentials; nothing downstream (FileIO
	// properties, table defaults) needs them.
	pub := maps.Clone(p)
	delete(pub, "credential")
	delete(pub, "token")
	return &Catalog{Catalog: c, Name: name, Props: pub, close: rc.Close}, nil
}

// newTransport bounds connecting and waiting for response headers, so a
// dead or hung server fails the call instead of blocking it forever.
func newTransport(tc *tls.Config) (http.RoundTripper, func()) {
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		TLSClientConfig:       tc,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
	}
	return &probeTransport{base: &compatTransport{base: t}}, t.CloseIdleConnections
}

// restCatalog is iceberg-go's REST catalog with errors typed by errs kinds
// and scrubbed of secrets, and a create-by-commit turned into a staged
// create.
type restCatalog struct {
	*rest.Catalog
	red   *redactor
	props iceberg.Properties
}

func (r *restCatalog) fail(what string, commit bool, err error) error {
	if err == nil {
		return nil
	}
	return r.red.wrap(what, classifyREST(err, commit), err)
}

// CommitTable commits updates to ident. A commit that requires the table
// not to exist (CTAS) becomes a staged create: the server plans the table
// (stage-create=true) and one commit with assert-create publishes it with
// its first snapshot, so no reader ever sees it empty.
func (r *restCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if hasAssertCreate(reqs) {
		return r.stagedCreate(ctx, ident, updates)
	}
	updates = r.lastAddedRefs(ctx, ident, reqs, updates)
	md, loc, err := r.Catalog.CommitTable(ctx, ident, reqs, updates)
	return md, loc, r.fail(fmt.Sprintf("committing to table %s", strings.Join(ident, ".")), true, err)
}

func hasAssertCreate(reqs []table.Requirement) bool {
	for _, q := range reqs {
		if q.GetType() == "assert-create" {
			return true
		}
	}
	return false
}

// stagedCreate creates ident from the updates of a create-by-commit.
//
// The stage-create request carries the schema, spec, location and
// properties; the server answers with the planned table without publishing
// it, and one assert-create commit publishes it together with our updates
// (the snapshot included), so no reader ever sees it empty.
//
// The files were written against the ids of our schema and spec, which the
// commit must reproduce. The server assigns fresh field ids to the staged
// schema, equal to ours (both number breadth-first), so our schema is its
// schema 0. Our manifests name the spec id they were written with: 0 is the
// staged spec itself; any other id is reached by staging the unpartitioned
// spec (id 0) and adding ours after it, made default by its id.
//
// iceberg-go's commit of a staged create repeats, from the server's answer,
// the schema, spec, sort order, location and properties, so the commit
// carries our schema, spec and order only where they differ from the
// staged ones. Adding the same schema or spec twice and pointing at "the
// last added" (-1) is read differently by servers: Nessie 0.99 left such a
// table on its unpartitioned spec.
func (r *restCatalog) stagedCreate(ctx context.Context, ident table.Identifier, updates []table.Update) (table.Metadata, string, error) {
	plan, err := planCreate(updates)
	if err != nil {
		return nil, "", err
	}
	what := fmt.Sprintf("creating table %s", strings.Join(ident, "."))
	stagedSpec := plan.spec
	var specUpdates []table.Update
	if plan.snapshot != nil && plan.snapshot.ManifestList != "" {
		id, err := r.manifestSpecID(ctx, plan)
		if err != nil {
			return nil, "", r.fail(what, false, err)
		}
		if id != 0 {
			stagedSpec = iceberg.UnpartitionedSpec
			specUpdates = []table.Update{table.NewAddPartitionSpecUpdate(plan.spec, false), table.NewSetDefaultSpecUpdate(id)}
		}
	}
	staged := append(specUpdates, plan.staged...)
	opts := []icecat.CreateTableOpt{icecat.WithPartitionSpec(stagedSpec), icecat.WithStagedUpdates(staged...)}
	if plan.order != nil {
		opts = append(opts, icecat.WithSortOrder(*plan.order))
	}
	if plan.location != "" {
		opts = append(opts, icecat.WithLocation(plan.location))
	}
	if len(plan.props) > 0 {
		opts = append(opts, icecat.WithProperties(plan.props))
	}
	t, err := r.Catalog.CreateTable(ctx, ident, plan.schema, opts...)
	if err != nil {
		return nil, "", r.fail(what, true, err)
	}
	return t.Metadata(), t.MetadataLocation(), nil
}

// manifestSpecID is the partition spec id the new snapshot's manifests
// were written with.
func (r *restCatalog) manifestSpecID(ctx context.Context, plan createPlan) (int, error) {
	fs, err := OpenFS(ctx, FileIOProps(r.props, plan.props), plan.snapshot.ManifestList)
	if err != nil {
		return 0, err
	}
	manifests, err := plan.snapshot.Manifests(fs)
	if err != nil {
		return 0, err
	}
	if len(manifests) == 0 {
		return 0, nil
	}
	return int(manifests[0].PartitionSpecID()), nil
}

// createPlan is a create-by-commit split into a stage-create request and
// the updates committed after it.
type createPlan struct {
	schema   *iceberg.Schema
	spec     *iceberg.PartitionSpec
	location string
	props    iceberg.Properties
	order    *table.SortOrder // nil: unsorted
	snapshot *table.Snapshot
	staged   []table.Update
}

// planCreate splits updates. The stage-create request carries the schema,
// spec, sort order, location and properties, and its answer the uuid and
// format version, so those updates are dropped, as is the removal of the
// placeholder schema 0 a local create starts from; the snapshot is pointed
// at schema 0, the id our schema has on the server.
func planCreate(updates []table.Update) (createPlan, error) {
	var p createPlan
	fv := ""
	for _, u := range updates {
		var doc struct {
			Schema        json.RawMessage    `json:"schema"`
			Spec          json.RawMessage    `json:"spec"`
			Location      string             `json:"location"`
			Updates       iceberg.Properties `json:"updates"`
			FormatVersion int                `json:"format-version"`
			Snapshot      *table.Snapshot    `json:"snapshot"`
			SortOrder     json.RawMessage    `json:"sort-order"`
		}
		if err := DecodeUpdate(u, &doc); err != nil {
			return p, fmt.Errorf("%w: reading a table update (%s): %v", errs.ErrInvalidArgument, u.Action(), err)
		}
		switch u.Action() {
		case table.UpdateAddSchema:
			if p.schema != nil {
				return p, fmt.Errorf("%w: a table create adds one schema", errs.ErrInvalidArgument)
			}
			p.schema = new(iceberg.Schema)
			if err := json.Unmarshal(doc.Schema, p.schema); err != nil {
				return p, fmt.Errorf("%w: reading the new table's schema: %v", errs.ErrInvalidArgument, err)
			}
		case table.UpdateAddSpec:
			if p.spec != nil {
				return p, fmt.Errorf("%w: a table create adds one partition spec", errs.ErrInvalidArgument)
			}
			p.spec = new(iceberg.PartitionSpec)
			if err := json.Unmarshal(doc.Spec, p.spec); err != nil {
				return p, fmt.Errorf("%w: reading the new table's partition spec: %v", errs.ErrInvalidArgument, err)
			}
		case table.UpdateSetLocation:
			p.location = doc.Location
		case table.UpdateSetProperties:
			if p.props == nil {
				p.props = iceberg.Properties{}
			}
			maps.Copy(p.props, doc.Updates)
		case table.UpdateUpgradeFormatVersion:
			fv = strconv.Itoa(doc.FormatVersion)
		case table.UpdateAddSnapshot:
			if doc.Snapshot != nil {
				zero := 0
				doc.Snapshot.SchemaID = &zero
				p.snapshot = doc.Snapshot
				u = table.NewAddSnapshotUpdate(doc.Snapshot)
			}
			p.staged = append(p.staged, u)
		case table.UpdateAddSortOrder:
			if p.order != nil {
				return p, fmt.Errorf("%w: a table create adds one sort order", errs.ErrInvalidArgument)
			}
			var order table.SortOrder
			if err := json.Unmarshal(doc.SortOrder, &order); err != nil {
				return p, fmt.Errorf("%w: reading the new table's sort order: %v", errs.ErrInvalidArgument, err)
			}
			if !order.IsUnsorted() {
				p.order = &order
			}
		case table.UpdateAssignUUID, table.UpdateRemoveSchemas, table.UpdateSetCurrentSchema,
			table.UpdateSetDefaultSpec, table.UpdateSetDefaultSortOrder:
		default:
			p.staged = append(p.staged, u)
		}
	}
	if p.schema == nil {
		return p, fmt.Errorf("%w: a table create needs a schema", errs.ErrInvalidArgument)
	}
	if p.spec == nil {
		p.spec = iceberg.UnpartitionedSpec
	}
	if fv != "" {
		if p.props == nil {
			p.props = iceberg.Properties{}
		}
		p.props["format-version"] = fv
	}
	return p, nil
}

// LoadTable loads ident.
func (r *restCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	t, err := r.Catalog.LoadTable(ctx, ident)
	return t, r.fail(fmt.Sprintf("loading table %s", strings.Join(ident, ".")), false, err)
}

// CreateTable creates ident.
func (r *restCatalog) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...icecat.CreateTableOpt) (*table.Table, error) {
	t, err := r.Catalog.CreateTable(ctx, ident, sc, opts...)
	return t, r.fail(fmt.Sprintf("creating table %s", strings.Join(ident, ".")), true, err)
}

// DropTable drops ident.
func (r *restCatalog) DropTable(ctx context.Context, ident table.Identifier) error {
	return r.fail(fmt.Sprintf("dropping table %s", strings.Join(ident, ".")), false, r.Catalog.DropTable(ctx, ident))
}

// RenameTable renames from to to.
func (r *restCatalog) RenameTable(ctx context.Context, from, to table.Identifier) (*table.Table, error) {
	t, err := r.Catalog.RenameTable(ctx, from, to)
	return t, r.fail(fmt.Sprintf("renaming table %s", strings.Join(from, ".")), false, err)
}

// CheckTableExists reports whether ident exists.
func (r *restCatalog) CheckTableExists(ctx context.Context, ident table.Identifier) (bool, error) {
	ok, err := r.Catalog.CheckTableExists(ctx, ident)
	return ok, r.fail(fmt.Sprintf("checking table %s", strings.Join(ident, ".")), false, err)
}

// ListTables lists the tables of ns.
func (r *restCatalog) ListTables(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error] {
	return func(yield func(table.Identifier, error) bool) {
		for id, err := range r.Catalog.ListTables(ctx, ns) {
			if !yield(id, r.fail(fmt.Sprintf("listing tables of %s", strings.Join(ns, ".")), false, err)) {
				return
			}
		}
	}
}

// ListNamespaces lists the namespaces under parent.
func (r *restCatalog) ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error) {
	out, err := r.Catalog.ListNamespaces(ctx, parent)
	return out, r.fail("listing namespaces", false, err)
}

// CreateNamespace creates ns.
func (r *restCatalog) CreateNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	return r.fail(fmt.Sprintf("creating namespace %s", strings.Join(ns, ".")), false, r.Catalog.CreateNamespace(ctx, ns, props))
}

// DropNamespace drops ns.
func (r *restCatalog) DropNamespace(ctx context.Context, ns table.Identifier) error {
	return r.fail(fmt.Sprintf("dropping namespace %s", strings.Join(ns, ".")), false, r.Catalog.DropNamespace(ctx, ns))
}

// CheckNamespaceExists reports whether ns exists.
func (r *restCatalog) CheckNamespaceExists(ctx context.Context, ns table.Identifier) (bool, error) {
	ok, err := r.Catalog.CheckNamespaceExists(ctx, ns)
	return ok, r.fail(fmt.Sprintf("checking namespace %s", strings.Join(ns, ".")), false, err)
}

// LoadNamespaceProperties returns the properties of ns.
func (r *restCatalog) LoadNamespaceProperties(ctx context.Context, ns table.Identifier) (iceberg.Properties, error) {
	p, err := r.Catalog.LoadNamespaceProperties(ctx, ns)
	return p, r.fail(fmt.Sprintf("loading namespace %s", strings.Join(ns, ".")), false, err)
}

// UpdateNamespaceProperties changes the properties of ns.
func (r *restCatalog) UpdateNamespaceProperties(ctx context.Context, ns table.Identifier, removals []string, updates iceberg.Properties) (icecat.PropertiesUpdateSummary, error) {
	s, err := r.Catalog.UpdateNamespaceProperties(ctx, ns, removals, updates)
	return s, r.fail(fmt.Sprintf("updating namespace %s", strings.Join(ns, ".")), false, err)
}

// classifyREST returns the errs kind of an error from the REST catalog. A
// transport failure of a commit is a commit in an unknown state unless the
// request never left (connection refused, no such host).
func classifyREST(err error, commit bool) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, errs.ErrCancelled):
		return errs.ErrCancelled
	case errors.Is(err, icecat.ErrNoSuchTable):
		return errs.ErrNoSuchTable
	case errors.Is(err, icecat.ErrTableAlreadyExists):
		return errs.ErrTableAlreadyExists
	case errors.Is(err, icecat.ErrNoSuchNamespace):
		return errs.ErrNoSuchNamespace
	case errors.Is(err, table.ErrCommitFailed):
		return errs.ErrCommitConflict
	case errors.Is(err, rest.ErrCommitStateUnknown):
		return errs.ErrCommitStateUnknown
	case errors.Is(err, rest.ErrUnauthorized), errors.Is(err, rest.ErrForbidden), errors.Is(err, rest.ErrOAuthError),
		errors.Is(err, rest.ErrAuthorizationExpired):
		return errs.ErrInvalidArgument
	case errors.Is(err, rest.ErrBadRequest):
		return errs.ErrInvalidArgument
	case errors.Is(err, iceberg.ErrNotImplemented):
		return errs.ErrNotSupported
	case errors.Is(err, rest.ErrServiceUnavailable), errors.Is(err, rest.ErrServerError):
		if commit {
			return errs.ErrCommitStateUnknown
		}
		return errs.ErrIO
	}
	var oe *net.OpError
	var ue *url.Error
	var de *net.DNSError
	if errors.As(err, &oe) || errors.As(err, &ue) || errors.As(err, &de) {
		if commit && !notSent(err) {
			return errs.ErrCommitStateUnknown
		}
		return errs.ErrIO
	}
	if errs.StatusOf(err) != errs.StatusUnknown {
		return nil // already typed
	}
	// Any other REST or decoding failure: the catalog could not be used.
	return errs.ErrIO
}

// notSent reports whether a transport error happened before the request
// reached the server.
func notSent(err error) bool {
	var de *net.DNSError
	if errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &de) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}
