package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"

	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// typedCatalog is a SQL or directory catalog whose storage errors are typed
// errs.ErrIO and scrubbed of secrets. Other errors keep their message (the
// commit loop reads "requirement failed" in it) with secrets removed.
type typedCatalog struct {
	icecat.Catalog
	red *redactor
	// head and meta, for SQLite catalogs, reuse parsed metadata (metacache.go).
	head *sqlHead
	meta *metaCache
	// props are the catalog's properties (opening files).
	props iceberg.Properties
	// commitLock is the file whose byte-range locks queue this catalog's
	// committers per table (SQLite catalogs; empty for others).
	commitLock string
	// advisory queues committers per table with PostgreSQL advisory locks
	// (PostgreSQL catalogs; nil for others).
	advisory *sql.DB
	// lostAnswer, when set, says a commit error may hide a commit the
	// server did (commitcheck.go): the commit is then settled by reading
	// the table again, or reported as of unknown state.
	lostAnswer func(err error) bool
	// classify, when set, gives the errs kind of a failure (nil: none);
	// commit says whether the failed call was a commit. Without it, storage
	// errors are errs.ErrIO and others keep no kind.
	classify func(err error, commit bool) error
}

func (c *typedCatalog) fail(what string, err error) error {
	return c.failing(what, false, err)
}

// failing is fail for a call that commits (commit true) or not.
func (c *typedCatalog) failing(what string, commit bool, err error) error {
	if err == nil {
		return nil
	}
	var kind error
	switch {
	case c.classify != nil:
		kind = c.classify(err, commit)
	case isStorageErr(err):
		kind = errs.ErrIO
	}
	return c.red.wrap(what, kind, err)
}

// IsStorageError reports whether err, untyped, came from reading or writing
// files (local or object storage): core/stage uses it to type a failure of
// iceberg-go's snapshot producer (a manifest that could not be written) as
// errs.ErrIO rather than a validation failure.
func IsStorageError(err error) bool { return isStorageErr(err) }

// isStorageErr reports whether err came from reading or writing files
// (local or object storage) rather than from the catalog's own checks.
func isStorageErr(err error) bool {
	if errs.StatusOf(err) != errs.StatusUnknown {
		return false
	}
	var pe *fs.PathError
	var oe *net.OpError
	if errors.As(err, &pe) || errors.As(err, &oe) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "operation error S3") || strings.Contains(msg, "blob (key") ||
		strings.Contains(msg, "failed to load metadata file")
}

// LoadTable loads ident.
func (c *typedCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	if t := c.cachedTable(ctx, ident); t != nil {
		return t, nil
	}
	t, err := c.Catalog.LoadTable(ctx, ident)
	if err == nil && c.meta != nil {
		c.meta.put(ident, t.MetadataLocation(), t.Metadata())
	}
	return t, c.fail(fmt.Sprintf("loading table %s", strings.Join(ident, ".")), err)
}

// CommitTable commits updates to ident; a failed metadata write means the
// commit did not happen (the catalog's pointer moves only after it).
func (c *typedCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	updates = detachedSnapshots(updates)
	md, loc, err := c.Catalog.CommitTable(ctx, ident, reqs, updates)
	if err != nil && c.lostAnswer != nil && c.lostAnswer(err) {
		md, loc, err = c.settleCommit(ctx, ident, updates, err)
		if err != nil {
			return nil, "", err
		}
	}
	if err == nil && md != nil {
		c.dropOldMetadata(ctx, md, func(loc string) table.Metadata {
			if c.meta == nil {
				return nil
			}
			return c.meta.get(ident, loc)
		})
	}
	if err == nil && c.meta != nil {
		c.meta.put(ident, loc, md)
	}
	return md, loc, c.failing(fmt.Sprintf("committing to table %s", strings.Join(ident, ".")), true, err)
}

// CreateTable creates ident.
func (c *typedCatalog) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...icecat.CreateTableOpt) (*table.Table, error) {
	t, err := c.Catalog.CreateTable(ctx, ident, sc, opts...)
	return t, c.failing(fmt.Sprintf("creating table %s", strings.Join(ident, ".")), true, err)
}

// DropTable drops ident.
func (c *typedCatalog) DropTable(ctx context.Context, ident table.Identifier) error {
	return c.fail(fmt.Sprintf("dropping table %s", strings.Join(ident, ".")), c.Catalog.DropTable(ctx, ident))
}
