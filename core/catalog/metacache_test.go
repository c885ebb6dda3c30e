package catalog

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

func openTestSQL(t *testing.T, dir string) *Catalog {
	t.Helper()
	c, err := Open(context.Background(), "local", map[string]string{
		"type": "sql", "uri": "sqlite:///" + filepath.Join(dir, "c.db"), "warehouse": "file://" + filepath.Join(dir, "wh")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func setProp(t *testing.T, c *Catalog, ident table.Identifier, base *table.Table, k, v string) (table.Metadata, string) {
	t.Helper()
	md, loc, err := c.CommitTable(context.Background(), ident,
		[]table.Requirement{table.AssertTableUUID(base.Metadata().TableUUID())},
		[]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{k: v})})
	if err != nil {
		t.Fatal(err)
	}
	return md, loc
}

// A SQLite catalog parses a metadata file once: loading a table whose
// location has not moved returns the metadata already parsed (or the one
// its own commit returned), and a commit by another writer (another
// catalog instance on the same database) is seen at once.
func TestLoadTableReusesMetadataUntilTheLocationMoves(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ours, other := openTestSQL(t, dir), openTestSQL(t, dir)
	ident := table.Identifier{"ns", "t"}
	if err := ours.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "x", Type: iceberg.PrimitiveTypes.Int64})
	if _, err := ours.CreateTable(ctx, ident, sc); err != nil {
		t.Fatal(err)
	}
	load := func(c *Catalog) *table.Table {
		t.Helper()
		tb, err := c.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	first, second := load(ours), load(ours)
	if first.Metadata() != second.Metadata() || first.MetadataLocation() != second.MetadataLocation() {
		t.Fatalf("second load parsed again: %p %p", first.Metadata(), second.Metadata())
	}

	committed, loc := setProp(t, ours, ident, second, "k", "ours")
	after := load(ours)
	if after.Metadata() != committed || after.MetadataLocation() != loc {
		t.Fatalf("load after our commit did not reuse the committed metadata (%s vs %s)", after.MetadataLocation(), loc)
	}

	_, otherLoc := setProp(t, other, ident, load(other), "k", "other")
	seen := load(ours)
	if seen.MetadataLocation() != otherLoc || seen.Properties()["k"] != "other" {
		t.Fatalf("another writer's commit not seen: location %s (want %s), k=%q",
			seen.MetadataLocation(), otherLoc, seen.Properties()["k"])
	}
	if again := load(ours); again.Metadata() != seen.Metadata() {
		t.Fatal("the other writer's metadata was parsed again")
	}

	// Tables in namespaces iceberg-go stores encoded take the ordinary path.
	dotted := table.Identifier{"a.b", "t"}
	if err := ours.CreateNamespace(ctx, table.Identifier{"a.b"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ours.CreateTable(ctx, dotted, sc); err != nil {
		t.Fatal(err)
	}
	if tb, err := ours.LoadTable(ctx, dotted); err != nil || tb.Schema().NumFields() != 1 {
		t.Fatalf("dotted namespace: %v", err)
	}
	if _, err := ours.LoadTable(ctx, table.Identifier{"ns", "missing"}); err == nil {
		t.Fatal("loading a missing table succeeded")
	}
}

func TestMetaCacheKeepsTheNewestHeadOfRecentTables(t *testing.T) {
	c := newMetaCache()
	a := table.Identifier{"ns", "a"}
	c.put(a, "a1", fakeMeta{})
	c.put(a, "a2", fakeMeta{})
	if c.get(a, "a1") != nil || c.get(a, "a2") == nil {
		t.Fatal("a table's older location should be replaced by its newer one")
	}
	for i := range metaCacheSize {
		c.put(table.Identifier{"ns", string(rune('b' + i))}, "x", fakeMeta{})
	}
	if len(c.byTable) != metaCacheSize || len(c.order) != metaCacheSize {
		t.Fatalf("cache holds %d/%d tables", len(c.byTable), len(c.order))
	}
	if c.get(a, "a2") != nil || c.get(table.Identifier{"ns", string(rune('b' + metaCacheSize - 1))}, "x") == nil {
		t.Fatal("the least recently committed table should go first")
	}
}

// fakeMeta stands in for table metadata in cache bookkeeping tests.
type fakeMeta struct{ table.Metadata }
