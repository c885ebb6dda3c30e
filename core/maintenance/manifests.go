package maintenance

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
	"github.com/pyiceberg-go/pyiceberg-go/core/testhooks"
)

// RewriteManifestsResult is what rewrite_manifests returns: Spark's result
// columns, and the snapshot committed (nil when nothing was rewritten).
type RewriteManifestsResult struct {
	Table                   string `json:"table"`
	RewrittenManifestsCount int    `json:"rewritten_manifests_count"`
	AddedManifestsCount     int    `json:"added_manifests_count"`
	SnapshotID              *int64 `json:"snapshot_id"`
}

// RewriteManifests rewrites the data manifests of main's head that belong
// to one partition spec (req.SpecID, default the current spec) into
// manifests of commit.manifest.target-size-bytes, as Spark's
// rewrite_manifests procedure: metadata only, committed as a "replace"
// snapshot; nothing happens when the spec has no manifest, or one that
// needs no splitting (Java's rule). Delete manifests and manifests of
// other specs stay. Each commit attempt plans afresh on the table as it is
// then, so a concurrent append is kept, not lost.
func RewriteManifests(ctx context.Context, tg Target, req *request.Request) (*RewriteManifestsResult, error) {
	retry, err := tg.retryPolicy(ctx)
	if err != nil {
		return nil, err
	}
	c := &stage.Committer{Cat: tg.Cat, ID: tg.ID, Ident: tg.Ident}
	res := &RewriteManifestsResult{Table: tg.ID.String()}
	attempt := 0
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		*res = RewriteManifestsResult{Table: tg.ID.String()}
		t, err := tg.Cat.LoadTable(ctx, tg.Ident)
		if err != nil {
			return err
		}
		m := t.Metadata()
		specID := m.DefaultPartitionSpec()
		if req.SpecID != nil {
			if m.PartitionSpecByID(*req.SpecID) == nil {
				// Java's RewriteManifestsSparkAction.specId.
				return commit.Final(fmt.Errorf("%w: Invalid spec id %d", errs.ErrInvalidArgument, *req.SpecID))
			}
			specID = *req.SpecID
		}
		rewrite, err := needsRewrite(ctx, t, specID)
		if err != nil || !rewrite {
			return err
		}
		st, err := c.Open(m, t.MetadataLocation(), nil, nil)
		if err != nil {
			return commit.Final(err)
		}
		r, err := st.Tx.RewriteManifests(ctx, table.WithRewriteSpecID(specID))
		if err != nil {
			return stage.StagingErr(err)
		}
		if r.IsNoOp() {
			return nil
		}
		reqs, updates, err := st.Finish(ctx, nil)
		if err != nil {
			return stage.StagingErr(err)
		}
		// In builds with the test hooks, the first attempt pauses here
		// (planned and staged, not committed) for a test's concurrent commit.
		if attempt++; attempt == 1 && testhooks.Enabled {
			testhooks.CommitDelay(tg.Conf)
		}
		committed, err := c.Publish(ctx, m.Properties(), m.Location(), reqs, updates, nil)
		if err != nil {
			return err
		}
		if head := c.Committed(committed); head != nil {
			id := head.SnapshotID
			res.SnapshotID = &id
		}
		res.RewrittenManifestsCount, res.AddedManifestsCount = len(r.RewrittenManifests), len(r.AddedManifests)
		return nil
	})
	if err != nil {
		return nil, mapLoadErr(err, tg.ID)
	}
	return res, nil
}

// needsRewrite is Java's rule: the data manifests of spec specID in main's
// head are rewritten unless there are none, or one that fits one manifest
// of the target size.
func needsRewrite(ctx context.Context, t *table.Table, specID int) (bool, error) {
	head := t.Metadata().CurrentSnapshot()
	if head == nil {
		return false, nil
	}
	fs, err := t.FS(ctx)
	if err != nil {
		return false, fmt.Errorf("%w: opening the table's files: %v", errs.ErrIO, err)
	}
	all, err := head.Manifests(fs)
	if err != nil {
		return false, fmt.Errorf("%w: reading the manifest list: %v", errs.ErrIO, err)
	}
	var n int
	var size int64
	for _, mf := range all {
		if mf.ManifestContent() == iceberg.ManifestContentData && int(mf.PartitionSpecID()) == specID {
			n++
			size += mf.Length()
		}
	}
	target := int64(t.Metadata().Properties().GetInt(table.ManifestTargetSizeBytesKey, table.ManifestTargetSizeBytesDefault))
	if target <= 0 {
		target = table.ManifestTargetSizeBytesDefault
	}
	return n > 1 || (n == 1 && size > target), nil
}
