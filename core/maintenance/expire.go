package maintenance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	icecat "github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// ExpireResult is what expire_snapshots returns: Spark's result columns,
// plus what was removed from the metadata.
type ExpireResult struct {
	Table                           string   `json:"table"`
	DeletedDataFilesCount           int64    `json:"deleted_data_files_count"`
	DeletedPositionDeleteFilesCount int64    `json:"deleted_position_delete_files_count"`
	DeletedEqualityDeleteFilesCount int64    `json:"deleted_equality_delete_files_count"`
	DeletedManifestFilesCount       int64    `json:"deleted_manifest_files_count"`
	DeletedManifestListsCount       int64    `json:"deleted_manifest_lists_count"`
	DeletedStatisticsFilesCount     int64    `json:"deleted_statistics_files_count"`
	ExpiredSnapshotIDs              []int64  `json:"expired_snapshot_ids"`
	RemovedRefs                     []string `json:"removed_refs"`
	RemovedSpecIDs                  []int    `json:"removed_spec_ids"`
	RemovedSchemaIDs                []int    `json:"removed_schema_ids"`
	// FailedDeletes are files that could not be deleted after the commit
	// (they stay, unreachable; remove_orphan_files finds them later).
	FailedDeletes []string `json:"failed_deletes"`
}

// beforeCommit, set only by tests, runs before each commit attempt.
var beforeCommit func()

// Target is the table an operation runs on.
type Target struct {
	Cat   *catalog.Catalog
	ID    request.Identifier
	Ident table.Identifier
	// Conf is the session's settings (the test hooks read theirs there).
	Conf map[string]string
}

func (tg Target) load(ctx context.Context) (*table.Table, error) {
	t, err := tg.Cat.LoadTable(ctx, tg.Ident)
	if err != nil {
		return nil, mapLoadErr(err, tg.ID)
	}
	return t, nil
}

// retryPolicy is the table's commit.retry.* settings with its commit queue.
func (tg Target) retryPolicy(ctx context.Context) (commit.Retry, error) {
	t, err := tg.load(ctx)
	if err != nil {
		return commit.Retry{}, err
	}
	retry, err := commit.RetryFromProperties(t.Metadata().Properties())
	retry.Serialize = tg.Cat.CommitSerializer(tg.Ident)
	return retry, err
}

func mapLoadErr(err error, id request.Identifier) error {
	switch {
	case errors.Is(err, icecat.ErrNoSuchTable):
		return fmt.Errorf("%w: table %s does not exist", errs.ErrNoSuchTable, id)
	case errors.Is(err, icecat.ErrNoSuchNamespace):
		return fmt.Errorf("%w: namespace %s of table %s does not exist", errs.ErrNoSuchNamespace, strings.Join(id.Namespace, "."), id)
	}
	return commit.Classify(err)
}

// ExpireSnapshots expires snapshots of the table as Spark's
// expire_snapshots procedure: PlanExpiry decides on the freshest metadata
// of each commit attempt (a concurrent commit makes the attempt fail on
// its ref assertions and the next one plans again), then, only once the
// commit succeeded, the files the expired snapshots reached and that no
// remaining snapshot reaches (in the committed metadata and in the
// table's metadata read again after it) are deleted.
func ExpireSnapshots(ctx context.Context, tg Target, req *request.Request, now time.Time) (*ExpireResult, error) {
	retry, err := tg.retryPolicy(ctx)
	if err != nil {
		return nil, err
	}
	pol := Policy{NowMs: now.UnixMilli(), OlderThanMs: req.OlderThanMs, RetainLast: req.RetainLast, SnapshotIDs: req.SnapshotIDs}
	res := &ExpireResult{Table: tg.ID.String()}
	var base, committed *table.Table
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		t, err := tg.Cat.LoadTable(ctx, tg.Ident)
		if err != nil {
			return err
		}
		m := t.Metadata()
		plan, err := PlanExpiry(m, pol)
		if err != nil {
			return commit.Final(err)
		}
		reqs := []table.Requirement{table.AssertTableUUID(m.TableUUID())}
		var updates []table.Update
		for name, ref := range m.Refs() {
			id := ref.SnapshotID
			reqs = append(reqs, table.AssertRefSnapshotID(name, &id))
		}
		for _, name := range plan.RemoveRefs {
			updates = append(updates, table.NewRemoveSnapshotRefUpdate(name))
		}
		if len(plan.RemoveSnapshots) > 0 {
			updates = append(updates, table.NewRemoveSnapshotsUpdate(plan.RemoveSnapshots, false))
		}
		res.RemovedSpecIDs, res.RemovedSchemaIDs = nil, nil
		if req.CleanExpiredMetadata {
			specs, schemas, err := unusedMetadata(ctx, t, plan)
			if err != nil {
				return commit.Final(err)
			}
			if len(specs) > 0 {
				reqs = append(reqs, table.AssertDefaultSpecID(m.DefaultPartitionSpec()))
				updates = append(updates, table.NewRemoveSpecUpdate(specs))
			}
			if len(schemas) > 0 {
				reqs = append(reqs, table.AssertCurrentSchemaID(m.CurrentSchema().ID))
				updates = append(updates, table.NewRemoveSchemasUpdate(schemas))
			}
			res.RemovedSpecIDs, res.RemovedSchemaIDs = specs, schemas
		}
		base = t
		res.RemovedRefs = plan.RemoveRefs
		if len(updates) == 0 {
			committed = t
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: %v", errs.ErrCancelled, err)
		}
		if beforeCommit != nil {
			beforeCommit()
		}
		// From here the commit runs to its end: a cancel arriving now must
		// not leave its outcome unknown.
		meta, loc, err := tg.Cat.CommitTable(context.WithoutCancel(ctx), tg.Ident, reqs, updates)
		if err != nil {
			return err
		}
		if meta == nil {
			committed, err = tg.Cat.LoadTable(context.WithoutCancel(ctx), tg.Ident)
			return err
		}
		committed = table.New(tg.Ident, meta, loc, t.FS, tg.Cat)
		return nil
	})
	if err != nil {
		return nil, mapLoadErr(err, tg.ID)
	}
	res.ExpiredSnapshotIDs = expiredIDs(base.Metadata(), committed.Metadata())
	if res.RemovedRefs == nil {
		res.RemovedRefs = []string{}
	}
	if len(res.ExpiredSnapshotIDs) == 0 {
		res.FailedDeletes = []string{}
		return res, nil
	}
	// Files are deleted only now that the commit succeeded, and only when
	// nothing the table reaches after it (read again: another commit may
	// have landed meanwhile) still uses them.
	if err := cleanExpired(ctx, tg, base, committed, res); err != nil {
		return nil, err
	}
	return res, nil
}

func expiredIDs(before, after table.Metadata) []int64 {
	out := []int64{}
	for _, sn := range before.Snapshots() {
		if after.SnapshotByID(sn.SnapshotID) == nil {
			out = append(out, sn.SnapshotID)
		}
	}
	slices.Sort(out)
	return out
}

// unusedMetadata returns the partition specs and schemas that neither the
// table's defaults nor any snapshot the plan keeps use (specs: of the
// manifests of those snapshots; schemas: their schema-id).
func unusedMetadata(ctx context.Context, t *table.Table, plan Plan) ([]int, []int, error) {
	m := t.Metadata()
	fsys, err := t.FS(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errs.ErrIO, err)
	}
	gone := map[int64]bool{}
	for _, id := range plan.RemoveSnapshots {
		gone[id] = true
	}
	specs := map[int]bool{m.DefaultPartitionSpec(): true}
	schemas := map[int]bool{m.CurrentSchema().ID: true}
	for _, sn := range m.Snapshots() {
		if gone[sn.SnapshotID] {
			continue
		}
		if sn.SchemaID != nil {
			schemas[*sn.SchemaID] = true
		}
		mfs, err := sn.Manifests(fsys)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: reading the manifest list of snapshot %d: %v", errs.ErrIO, sn.SnapshotID, err)
		}
		for _, mf := range mfs {
			specs[int(mf.PartitionSpecID())] = true
		}
	}
	var rmSpecs, rmSchemas []int
	for _, sp := range m.PartitionSpecs() {
		if !specs[sp.ID()] {
			rmSpecs = append(rmSpecs, sp.ID())
		}
	}
	for _, sc := range m.Schemas() {
		if !schemas[sc.ID] {
			rmSchemas = append(rmSchemas, sc.ID)
		}
	}
	slices.Sort(rmSpecs)
	slices.Sort(rmSchemas)
	return rmSpecs, rmSchemas, nil
}

// cleanExpired deletes the files the snapshots expired from base reached
// and that no snapshot of committed, nor of the table as it is now, does.
func cleanExpired(ctx context.Context, tg Target, base, committed *table.Table, res *ExpireResult) error {
	fsys, err := base.FS(ctx)
	if err != nil {
		return fmt.Errorf("%w: %v", errs.ErrIO, err)
	}
	expired := map[int64]bool{}
	for _, id := range res.ExpiredSnapshotIDs {
		expired[id] = true
	}
	candidates, err := Reachable(ctx, fsys, base.Metadata(), func(id int64) bool { return expired[id] })
	if err != nil {
		return err
	}
	valid, err := Reachable(ctx, fsys, committed.Metadata(), nil)
	if err != nil {
		return err
	}
	if now, err := tg.Cat.LoadTable(ctx, tg.Ident); err == nil {
		later, err := Reachable(ctx, fsys, now.Metadata(), nil)
		if err != nil {
			return err
		}
		for p, k := range later {
			valid[p] = k
		}
	}
	del := Files{}
	for p, k := range candidates {
		if _, ok := valid[p]; !ok {
			del[p] = k
		}
	}
	wfs, err := tg.Cat.WriteFS(ctx, base.Metadata().Properties(), base.Location())
	if err != nil {
		return err
	}
	deleted, failed := deleteFiles(ctx, wfs, del)
	res.FailedDeletes = failed
	counts := map[Kind]*int64{
		DataFile: &res.DeletedDataFilesCount, PositionDeleteFile: &res.DeletedPositionDeleteFilesCount,
		EqualityDeleteFile: &res.DeletedEqualityDeleteFilesCount, ManifestFile: &res.DeletedManifestFilesCount,
		ManifestList: &res.DeletedManifestListsCount, StatisticsFile: &res.DeletedStatisticsFilesCount,
	}
	for _, p := range deleted {
		if c := counts[del[p]]; c != nil {
			*c++
		}
	}
	return nil
}

// deleteFiles removes files, content files first and manifest lists last,
// and returns the ones it deleted and the ones it could not (a file
// already gone counts as neither). A failed delete does not stop the
// others, as in Java.
func deleteFiles(ctx context.Context, wfs icebergio.WriteFileIO, files Files) (deleted, failed []string) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.SortFunc(paths, func(a, b string) int {
		if files[a] != files[b] {
			return int(files[a]) - int(files[b])
		}
		return strings.Compare(a, b)
	})
	failed = []string{}
	for _, p := range paths {
		if ctx.Err() != nil {
			failed = append(failed, p)
			continue
		}
		switch err := wfs.Remove(p); {
		case err == nil:
			deleted = append(deleted, p)
		case errors.Is(err, fs.ErrNotExist):
		default:
			failed = append(failed, p)
		}
	}
	return deleted, failed
}
