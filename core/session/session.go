// Package session holds what lives across operations: the resolved
// configuration and the catalogs it opened.
package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/testhooks"
)

// Session is safe for concurrent use.
type Session struct {
	cfg  *config.Resolved
	mu   sync.Mutex
	cats map[string]*catalog.Catalog
	// cur is the current catalog and namespace (Spark's USE); the zero
	// value means the configured default catalog and its default-namespace.
	cur current
}

type current struct {
	catalog   string
	namespace string // dotted; "" for the catalog's default-namespace
}

// Open resolves the configuration; catalogs open on first use. The test
// hooks' session keys (test.*) are an error unless the hooks are built in
// (core/testhooks).
func Open(s config.Session) (*Session, error) {
	cfg, err := config.Resolve(s)
	if err != nil {
		return nil, err
	}
	if err := testhooks.CheckConf(cfg.Conf); err != nil {
		return nil, err
	}
	return &Session{cfg: cfg, cats: map[string]*catalog.Catalog{}}, nil
}

// Conf returns a copy of the session configuration.
func (s *Session) Conf() map[string]string { return maps.Clone(s.cfg.Conf) }

// Identifier parses a table identifier against the configured catalogs.
func (s *Session) Identifier(name string) (request.Identifier, error) {
	known := map[string]bool{}
	for n := range s.cfg.Catalogs {
		known[n] = true
	}
	cat, ns := s.Current()
	// A bare table name is in the current namespace: USE's, else the
	// catalog's default-namespace (a Spark catalog property).
	if name != "" && !strings.Contains(name, ".") {
		if ns == "" {
			return request.Identifier{}, fmt.Errorf("%w: table name %q needs a namespace: the session has no current one (USE a namespace, set the catalog's default-namespace, or write namespace.table)", errs.ErrInvalidArgument, name)
		}
		return request.ParseIdentifier(cat+"."+ns+"."+name, known, cat)
	}
	return request.ParseIdentifier(name, known, cat)
}

// Current returns the current catalog and namespace (dotted; "" if none).
func (s *Session) Current() (string, string) {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur.catalog == "" {
		cur.catalog = s.cfg.DefaultCatalog
	}
	if cur.namespace == "" {
		cur.namespace = s.cfg.Catalogs[cur.catalog]["default-namespace"]
	}
	return cur.catalog, cur.namespace
}

// Use makes catalog (a configured one) and namespace ("": the catalog's
// default-namespace) current.
func (s *Session) Use(catalog, namespace string) error {
	if _, ok := s.cfg.Catalogs[catalog]; !ok {
		return fmt.Errorf("%w: no catalog named %q is configured", errs.ErrInvalidArgument, catalog)
	}
	s.mu.Lock()
	s.cur = current{catalog: catalog, namespace: namespace}
	s.mu.Unlock()
	return nil
}

// IsCatalog reports whether name is a configured catalog.
func (s *Session) IsCatalog(name string) bool {
	_, ok := s.cfg.Catalogs[strings.ToLower(name)]
	return ok
}

// Catalog opens (once) and returns catalog name.
func (s *Session) Catalog(ctx context.Context, name string) (*catalog.Catalog, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.cats[name]; ok {
		return c, nil
	}
	props, ok := s.cfg.Catalogs[name]
	if !ok {
		return nil, fmt.Errorf("%w: no catalog named %q is configured", errs.ErrInvalidArgument, name)
	}
	c, err := catalog.Open(ctx, name, props)
	if err != nil {
		return nil, err
	}
	s.cats[name] = c
	return c, nil
}

// Close closes every catalog the session opened.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all error
	for n, c := range s.cats {
		all = errors.Join(all, c.Close())
		delete(s.cats, n)
	}
	return all
}
