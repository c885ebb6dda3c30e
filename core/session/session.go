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
	// A bare table name is in the default catalog's default-namespace (a
	// Spark catalog property: the namespace short names resolve in).
	if ns := s.cfg.Catalogs[s.cfg.DefaultCatalog]["default-namespace"]; ns != "" && name != "" && !strings.Contains(name, ".") {
		return request.ParseIdentifier(s.cfg.DefaultCatalog+"."+ns+"."+name, known, s.cfg.DefaultCatalog)
	}
	return request.ParseIdentifier(name, known, s.cfg.DefaultCatalog)
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
