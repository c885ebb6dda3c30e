package stage

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/version"
)

// RetryPolicy is the table's commit.retry.* settings with the catalog's
// per-table commit queue.
func (c *Committer) RetryPolicy(props map[string]string) (commit.Retry, error) {
	r, err := commit.RetryFromProperties(props)
	r.Serialize = c.Cat.CommitSerializer(c.Ident)
	return r, err
}

// captureCatalog stands in for the catalog while iceberg-go's snapshot
// producer runs: it keeps the updates instead of committing them, so the
// core can commit them itself (atomic create/replace, its own retries).
type captureCatalog struct {
	base    table.Metadata
	loc     string
	reqs    []table.Requirement
	updates []table.Update
}

func (c *captureCatalog) LoadTable(context.Context, table.Identifier) (*table.Table, error) {
	return nil, fmt.Errorf("%w: staged table cannot be loaded", errs.ErrCommitConflict)
}

func (c *captureCatalog) CommitTable(_ context.Context, _ table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	c.reqs, c.updates = reqs, updates
	m, err := table.UpdateTableMetadata(c.base, updates, c.loc)
	return m, c.loc, err
}

// Staging is a snapshot being built on base by iceberg-go's producers,
// committed to the stand-in catalog that keeps its updates.
type Staging struct {
	Table *table.Table
	Tx    *table.Transaction
	cc    *captureCatalog
	// Files are the new data files the caller adds (v3: with first row
	// ids for base); Open leaves them to the caller.
	Files []iceberg.DataFile
	// tg is the write's target: a staged (WAP) snapshot moves no branch.
	tg Target
	// pre and preReqs are a schema change, committed first.
	pre     []table.Update
	preReqs []table.Requirement
	// branch is the target branch; own, a snapshot the caller built
	// (Own), committed in place of the transaction's.
	branch string
	own    *table.Snapshot
}

// Open opens a transaction on base (at baseLoc; "" for a table being
// created) on the target branch, for the caller to add a snapshot to; pre
// and preReqs (a schema change already applied to base) are committed
// before the snapshot.
func (c *Committer) Open(base table.Metadata, baseLoc string, pre []table.Update, preReqs []table.Requirement) (*Staging, error) {
	props := maps.Clone(map[string]string(c.Cat.Props))
	maps.Copy(props, base.Properties())
	cc := &captureCatalog{base: base, loc: baseLoc}
	staged := table.New(c.Ident, base, baseLoc, withDecimalScales(catalog.FSFunc(props, base.Location())), cc)
	tx, err := staged.NewTransactionOnBranchWithError(c.BranchName())
	if err != nil {
		return nil, fmt.Errorf("%w: writing to branch %s: %v", errs.ErrValidation, c.BranchName(), err)
	}
	return &Staging{Table: staged, Tx: tx, cc: cc, tg: c.Target, pre: pre, preReqs: preReqs, branch: c.BranchName()}, nil
}

// Own stages sn, a snapshot the caller built and wrote on the target
// branch's head in base, in place of the transaction's: Finish commits it
// as iceberg-go's producers commit theirs (the snapshot added, the branch
// moved to it keeping its retention settings, the branch's head and the
// table's uuid required unchanged).
func (st *Staging) Own(sn *table.Snapshot) {
	st.own = sn
}

func (st *Staging) ownUpdates() ([]table.Requirement, []table.Update) {
	base := st.cc.base
	var maxRefAge, maxSnapAge int64
	var minKeep int
	var head *int64
	if ref, ok := RefOf(base, st.branch); ok {
		id := ref.SnapshotID
		head = &id
		if ref.SnapshotRefType == table.BranchRef {
			if ref.MaxRefAgeMs != nil {
				maxRefAge = *ref.MaxRefAgeMs
			}
			if ref.MaxSnapshotAgeMs != nil {
				maxSnapAge = *ref.MaxSnapshotAgeMs
			}
			if ref.MinSnapshotsToKeep != nil {
				minKeep = *ref.MinSnapshotsToKeep
			}
		}
	}
	return []table.Requirement{table.AssertRefSnapshotID(st.branch, head), table.AssertTableUUID(base.TableUUID())},
		[]table.Update{table.NewAddSnapshotUpdate(st.own), table.NewSetSnapshotRefUpdate(st.branch, st.own.SnapshotID, table.BranchRef, maxRefAge, maxSnapAge, minKeep)}
}

// Finish commits the staged transaction and returns the requirements and
// updates to commit for real, edit (if any) applied to the snapshot's.
func (st *Staging) Finish(ctx context.Context, edit func([]table.Update) []table.Update) ([]table.Requirement, []table.Update, error) {
	if st.own != nil {
		st.cc.reqs, st.cc.updates = st.ownUpdates()
	} else if _, err := st.Tx.Commit(ctx); err != nil {
		return nil, nil, fmt.Errorf("staging the snapshot: %w", err)
	}
	updates := st.cc.updates
	if edit != nil {
		updates = edit(updates)
	}
	if st.tg.Stage {
		updates = unref(updates, st.tg.WapID)
	}
	return append(st.cc.reqs, st.preReqs...), append(st.pre, updates...), nil
}

// Publish commits reqs and updates and returns the committed table. When
// the commit certainly failed (or ctx ended before it began), the manifest
// lists and new manifests of the updates' snapshots are removed (from the
// table's files, opened with props at location), so a retried or failed
// commit leaves no orphan metadata files behind; the manifests of a
// snapshot kept for a later attempt (kept; nil: none) stay.
func (c *Committer) Publish(ctx context.Context, props map[string]string, location string, reqs []table.Requirement, updates []table.Update, kept func(snapshotID int64) bool) (*table.Table, error) {
	c.landedID = 0
	if err := ctx.Err(); err != nil {
		c.removeStaged(ctx, props, location, updates, kept)
		return nil, fmt.Errorf("%w: %v", errs.ErrCancelled, err)
	}
	// From here the commit runs to its end: a cancel arriving now must not
	// leave its outcome unknown.
	meta, loc, err := c.Cat.CommitTable(context.WithoutCancel(ctx), c.Ident, reqs, updates)
	if err != nil {
		// The catalog may have applied a commit it answered with a failure (an
		// answer lost on the way, a server whose own retry then reports a
		// conflict): when the table now holds this commit's snapshot, it
		// landed, and its files are the table's, not leftovers.
		if t := c.landed(ctx, updates); t != nil {
			return t, nil
		}
		if !errors.Is(err, errs.ErrCommitStateUnknown) {
			c.removeStaged(ctx, props, location, updates, kept)
		}
		return nil, err
	}
	if meta == nil {
		return c.Cat.LoadTable(context.WithoutCancel(ctx), c.Ident)
	}
	// The commit answers with the new metadata: no second read (which
	// parses the whole, growing, metadata file again).
	fsF := func(ctx context.Context) (icebergio.IO, error) {
		return c.Cat.WriteFS(ctx, meta.Properties(), meta.Location())
	}
	return table.New(c.Ident, meta, loc, fsF, c.Cat), nil
}

// landed returns the table when it holds a snapshot that updates add (by
// id: ids are random per staged snapshot); nil when it does not, when
// updates add none, or when the table cannot be loaded.
func (c *Committer) landed(ctx context.Context, updates []table.Update) *table.Table {
	var ids []int64
	for _, u := range updates {
		if sn, ok := catalog.AddedSnapshot(u); ok {
			ids = append(ids, sn.SnapshotID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	t, err := c.Cat.LoadTable(context.WithoutCancel(ctx), c.Ident)
	if err != nil {
		return nil
	}
	for _, id := range ids {
		if t.Metadata().SnapshotByID(id) == nil {
			return nil
		}
	}
	c.landedID = ids[len(ids)-1]
	return t
}

// removeStaged deletes the manifest list and the new manifests of the
// snapshots in updates, which did not get committed.
func (c *Committer) removeStaged(ctx context.Context, props map[string]string, location string, updates []table.Update, kept func(int64) bool) {
	fs, err := c.Cat.WriteFS(context.WithoutCancel(ctx), props, location)
	if err != nil {
		return
	}
	for _, u := range updates {
		sn, ok := catalog.AddedSnapshot(u)
		if !ok || sn.ManifestList == "" {
			continue
		}
		// The manifests of a snapshot kept for the next attempt stay.
		if kept == nil || !kept(sn.SnapshotID) {
			if manifests, err := sn.Manifests(fs); err == nil {
				for _, m := range manifests {
					if m.SnapshotID() == sn.SnapshotID {
						_ = fs.Remove(m.FilePath())
					}
				}
			}
		}
		_ = fs.Remove(sn.ManifestList)
	}
}

// StagingErr types a failure of iceberg-go's snapshot producer: writing a
// manifest or manifest list is I/O (the cause kept), anything else a
// validation failure of the snapshot.
func StagingErr(err error) error {
	if catalog.IsStorageError(err) {
		return fmt.Errorf("%w: staging the snapshot: %w", errs.ErrIO, err)
	}
	if errs.StatusOf(err) != errs.StatusUnknown {
		return fmt.Errorf("staging the snapshot: %w", err)
	}
	return fmt.Errorf("%w: staging the snapshot: %v", errs.ErrValidation, err)
}

// SummaryProps are the summary properties every snapshot this project
// commits carries: engine-name and engine-version.
func SummaryProps() iceberg.Properties {
	return iceberg.Properties{"engine-name": version.EngineName, "engine-version": version.Version}
}
