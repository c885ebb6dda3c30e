package maintenance

import (
	"context"
	"strconv"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
)

// PurgeResult is what DROP TABLE ... PURGE did.
type PurgeResult struct {
	Table   string `json:"table"`
	Dropped bool   `json:"dropped"`
	// DeletedFilesCount counts the table's files deleted after the drop;
	// FailedDeletes are those that could not be (they stay, unreferenced).
	DeletedFilesCount int64    `json:"deleted_files_count"`
	FailedDeletes     []string `json:"failed_deletes"`
}

// PurgeTable drops the table and then deletes its files, as Java's
// CatalogUtil.dropTableData: every snapshot's data and delete files and
// manifests (only when gc.enabled, default true), manifest lists,
// statistics files and every metadata file of its log. The files are read
// before the drop and deleted after it, so a failure before the drop
// leaves the table whole and a failure after it leaves only unreferenced
// files.
func PurgeTable(ctx context.Context, tg Target) (*PurgeResult, error) {
	t, err := tg.load(ctx)
	if err != nil {
		return nil, err
	}
	fsys, err := t.FS(ctx)
	if err != nil {
		return nil, err
	}
	m := t.Metadata()
	files, err := Reachable(ctx, fsys, m, nil)
	if err != nil {
		return nil, err
	}
	if gc, perr := strconv.ParseBool(m.Properties().Get("gc.enabled", "true")); perr == nil && !gc {
		for p, k := range files {
			if k != ManifestList && k != StatisticsFile {
				delete(files, p)
			}
		}
	}
	if loc := t.MetadataLocation(); loc != "" {
		files[loc] = MetadataFile
	}
	for e := range m.PreviousFiles() {
		files[e.MetadataFile] = MetadataFile
	}
	wfs, err := tg.Cat.WriteFS(ctx, m.Properties(), m.Location())
	if err != nil {
		return nil, err
	}
	if err := tg.Cat.DropTable(ctx, tg.Ident); err != nil {
		return nil, catalog.MapErr(err, tg.ID)
	}
	deleted, failed := deleteFiles(context.WithoutCancel(ctx), wfs, files)
	return &PurgeResult{Table: tg.ID.String(), Dropped: true, DeletedFilesCount: int64(len(deleted)), FailedDeletes: failed}, nil
}
