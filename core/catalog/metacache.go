package catalog

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Table metadata parsed once per metadata file.
//
// A table's metadata JSON grows with its snapshots, and parsing it is most of
// what a small commit costs once a table has a history: W4's 200th append of
// 1,000 rows parsed about 250 KB of JSON three times (the operation's load,
// its reload of the head before committing, and the SQL catalog's own load
// inside CommitTable). Metadata files are never rewritten (each commit
// writes a new one under a fresh name), so a location names one content for
// good: a SQLite catalog's LoadTable reads the table's current location (one
// indexed row) and reuses the metadata parsed or committed at that location
// by this catalog (the newest one of each table). Another writer's commit
// moves the location, which misses and is loaded and parsed as before.
// iceberg-go's metadata builders copy what they change
// (MetadataBuilderFromBase clones every list), so one parsed metadata can be
// the base of any number of operations.

// metaCacheSize is how many tables a catalog keeps the head metadata of
// (only the newest location of each: older ones are stale).
const metaCacheSize = 16

// metaCache holds, by table, the newest metadata file location this
// catalog loaded or committed and the metadata parsed from it.
type metaCache struct {
	mu      sync.Mutex
	byTable map[string]cachedHead
	order   []string // tables, least recently put first
}

type cachedHead struct {
	loc string
	md  table.Metadata
}

func newMetaCache() *metaCache { return &metaCache{byTable: map[string]cachedHead{}} }

func tableKey(ident table.Identifier) string { return strings.Join(ident, "\x00") }

// get is the metadata of ident parsed at loc; nil when the cache has
// another location (or none) for it.
func (c *metaCache) get(ident table.Identifier, loc string) table.Metadata {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.byTable[tableKey(ident)]; ok && h.loc == loc {
		return h.md
	}
	return nil
}

// put records md as the metadata of ident at loc.
func (c *metaCache) put(ident table.Identifier, loc string, md table.Metadata) {
	if loc == "" || md == nil {
		return
	}
	k := tableKey(ident)
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := slices.Index(c.order, k); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	} else if len(c.order) == metaCacheSize {
		delete(c.byTable, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
	}
	c.byTable[k] = cachedHead{loc: loc, md: md}
	c.order = append(c.order, k)
}

// sqlHead finds a table's current metadata location in a SQLite catalog's
// iceberg_tables, as iceberg-go's SQL catalog keys it; ok is false when the
// fast path does not apply (namespaces iceberg-go stores encoded, a missing
// row, any error), and the caller loads the table the ordinary way.
type sqlHead struct {
	db      *sql.DB
	catalog string
	props   iceberg.Properties
	// numbered: the driver takes $1, $2 placeholders (PostgreSQL), not ?.
	numbered bool
}

func (h *sqlHead) location(ctx context.Context, ident table.Identifier) (string, bool) {
	if h == nil || len(ident) < 2 {
		return "", false
	}
	ns := ident[:len(ident)-1]
	for _, part := range ns {
		// iceberg-go stores such namespaces JSON-encoded (namespaceToString).
		if strings.Contains(part, ".") || strings.Contains(part, "__iceberg_namespace_v1__:") {
			return "", false
		}
	}
	var loc sql.NullString
	q := "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"
	if h.numbered {
		q = "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3"
	}
	err := h.db.QueryRowContext(ctx, q, h.catalog, strings.Join(ns, "."), ident[len(ident)-1]).Scan(&loc)
	if err != nil || !loc.Valid || loc.String == "" {
		return "", false
	}
	return loc.String, true
}

// cachedTable is the table ident with the metadata this catalog already
// parsed at its current location; nil when there is none.
func (c *typedCatalog) cachedTable(ctx context.Context, ident table.Identifier) *table.Table {
	if c.meta == nil {
		return nil
	}
	loc, ok := c.head.location(ctx, ident)
	if !ok {
		return nil
	}
	md := c.meta.get(ident, loc)
	if md == nil {
		return nil
	}
	return table.New(ident, md, loc, FSFunc(c.head.props, loc), c)
}
