// Package stage stages and publishes one commit of a table: the commit
// every write path shares. Committer is where a commit goes (the catalog,
// the table, the branch Target with its write-audit-publish staging);
// Staging builds a snapshot with iceberg-go's producers against a stand-in
// catalog that keeps the updates, so the caller commits them itself
// (atomic create/replace, its own retries); Publish commits them and
// cleans up after a commit that certainly failed.
//
// It does not decide what a commit holds: planning and writing data files
// is core/write, row-level changes are core/rowlevel, ref operations
// (branches, tags, cherry-pick, WAP publish) are core/refs, and the retry
// loop is core/commit.
package stage

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// SummaryWapID is the snapshot summary key of a write-audit-publish
// staged snapshot's id (Java's SnapshotSummary.STAGED_WAP_ID_PROP).
const SummaryWapID = "wap.id"

// Committer is where one operation commits: the catalog, the table and the
// branch target.
type Committer struct {
	Cat    *catalog.Catalog
	ID     request.Identifier
	Ident  table.Identifier
	Target Target
	// landedID is the snapshot of the last Publish whose commit landed
	// although the catalog answered with a failure (0: none); the table
	// Publish returned then may hold later commits above it.
	landedID int64
}

// Target is the branch a write commits to, and how.
type Target struct {
	// Branch is the branch written ("" is main).
	Branch string
	// Explicit: the branch came from the identifier (db.t.branch_x).
	Explicit bool
	// FromMain: the branch may not exist yet and then starts at main's
	// head; the commit creates it (a WAP branch, as in Java).
	FromMain bool
	// Stage: the snapshot is added but no branch moves (wap.id).
	Stage bool
	WapID string
}

// RefOf finds the ref name (branch or tag) of m.
func RefOf(m table.Metadata, name string) (table.SnapshotRef, bool) {
	for n, r := range m.Refs() {
		if n == name {
			return r, true
		}
	}
	return table.SnapshotRef{}, false
}

// BranchName is the branch the write commits to.
func (c *Committer) BranchName() string {
	if c.Target.Branch == "" {
		return table.MainBranch
	}
	return c.Target.Branch
}

// Head is the target branch's head in m; main's head for a WAP branch
// that the commit will create.
func (c *Committer) Head(m table.Metadata) *table.Snapshot {
	if sn := m.SnapshotByName(c.BranchName()); sn != nil || !c.Target.FromMain {
		return sn
	}
	if _, ok := RefOf(m, c.BranchName()); ok {
		return nil
	}
	return m.SnapshotByName(table.MainBranch)
}

// Committed is the snapshot the write made in t: the target
// branch's head, or for a staged write its newest snapshot with its wap.id.
func (c *Committer) Committed(t *table.Table) *table.Snapshot {
	m := t.Metadata()
	if c.landedID != 0 {
		if sn := m.SnapshotByID(c.landedID); sn != nil {
			return sn
		}
	}
	if !c.Target.Stage {
		return m.SnapshotByName(c.BranchName())
	}
	snaps := m.Snapshots()
	for i := len(snaps) - 1; i >= 0; i-- {
		if sn := &snaps[i]; sn.Summary != nil && sn.Summary.Properties[SummaryWapID] == c.Target.WapID {
			return sn
		}
	}
	return nil
}

// unref turns a snapshot commit into a staged one (write-audit-publish):
// the snapshot is added with wap.id in its summary and no ref moves.
func unref(updates []table.Update, wapID string) []table.Update {
	out := make([]table.Update, 0, len(updates))
	for _, u := range updates {
		if u.Action() != table.UpdateSetSnapshotRef {
			out = append(out, u)
		}
	}
	return EditSummary(out, func(sum *table.Summary) { sum.Properties[SummaryWapID] = wapID })
}

// EditSummary applies edit to the summary of the snapshot in updates.
func EditSummary(updates []table.Update, edit func(*table.Summary)) []table.Update {
	out := make([]table.Update, len(updates))
	copy(out, updates)
	for i, u := range out {
		sn, ok := catalog.AddedSnapshot(u)
		if !ok || sn.Summary == nil {
			continue
		}
		if sn.Summary.Properties == nil {
			sn.Summary.Properties = iceberg.Properties{}
		}
		edit(sn.Summary)
		out[i] = table.NewAddSnapshotUpdate(sn)
	}
	return out
}
