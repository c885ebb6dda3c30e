package catalog

import (
	"context"
	"maps"

	"github.com/apache/iceberg-go/table"
)

// dropOldMetadata removes, when the committed table asks for it with
// write.metadata.delete-after-commit.enabled, the metadata files the commit
// dropped from the metadata log (write.metadata.previous-versions-max keeps
// that many): those the previous metadata listed that next no longer does,
// as Java's deleteRemovedMetadataFiles. The previous metadata is the last
// log entry of next, taken from the cache (cached, parsed before this
// commit) or read once. A failure to read or remove is not the commit's:
// the files are left, as Java leaves them (remove_orphan_files finds them).
// REST servers do this themselves.
func (c *typedCatalog) dropOldMetadata(ctx context.Context, next table.Metadata, cached func(loc string) table.Metadata) {
	if !next.Properties().GetBool(table.MetadataDeleteAfterCommitEnabledKey, table.MetadataDeleteAfterCommitEnabledDefault) {
		return
	}
	kept := map[string]bool{}
	baseLoc := ""
	for e := range next.PreviousFiles() {
		kept[e.MetadataFile] = true
		baseLoc = e.MetadataFile
	}
	if baseLoc == "" {
		return
	}
	props := maps.Clone(map[string]string(c.props))
	if props == nil {
		props = map[string]string{}
	}
	maps.Copy(props, next.Properties())
	fs, err := OpenFS(ctx, props, baseLoc)
	if err != nil {
		return
	}
	base := cached(baseLoc)
	if base == nil {
		f, err := fs.Open(baseLoc)
		if err != nil {
			return
		}
		base, err = table.ParseMetadata(f)
		f.Close()
		if err != nil {
			return
		}
	}
	for e := range base.PreviousFiles() {
		if !kept[e.MetadataFile] {
			_ = fs.Remove(e.MetadataFile)
		}
	}
}
