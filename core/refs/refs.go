// Package refs holds branches, tags and write-audit-publish: resolving the
// branch_<name> / tag_<name> suffix of an identifier to a table and a
// snapshot (ResolveRef, LoadRef; scans use it too), the rules of which
// operations may target a ref (CheckUse), the write target a WAP session
// redirects to (ResolveTarget), and the ref operations themselves
// (create/remove branch and tag, fast-forward, cherry-pick, publish).
//
// It does not hold the write path (core/write) or the commit staging it
// shares with the writes (core/stage: Committer, Target, Staging).
package refs

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
)

// Snapshot summary keys of write-audit-publish (Java's SnapshotSummary).
const (
	summaryPublishedWapID = "published-wap-id"
	summarySourceSnapshot = "source-snapshot-id"
)

// Selector is the branch_<name> or tag_<name> last part of an identifier.
type Selector struct {
	Kind string // "branch" or "tag"; "" for none
	Name string
}

// ResolveRef splits a trailing branch_<name> / tag_<name> off id when it
// names a ref of an existing table. As in Spark, a table literally named
// so wins.
func ResolveRef(ctx context.Context, cat *catalog.Catalog, id request.Identifier) (request.Identifier, Selector, error) {
	var sel Selector
	switch {
	case len(id.Namespace) < 2:
		return id, sel, nil
	case strings.HasPrefix(id.Name, "branch_") && len(id.Name) > len("branch_"):
		sel = Selector{"branch", strings.TrimPrefix(id.Name, "branch_")}
	case strings.HasPrefix(id.Name, "tag_") && len(id.Name) > len("tag_"):
		sel = Selector{"tag", strings.TrimPrefix(id.Name, "tag_")}
	default:
		return id, sel, nil
	}
	if ok, err := cat.CheckTableExists(ctx, catalog.TableIdent(id)); err == nil && ok {
		return id, Selector{}, nil
	}
	n := len(id.Namespace)
	base := request.Identifier{Catalog: id.Catalog, Namespace: id.Namespace[:n-1], Name: id.Namespace[n-1]}
	return base, sel, nil
}

// CheckUse rejects operations that cannot run on a branch or tag
// identifier; creating through one is an error unless no table answers
// to the base name (then the identifier is taken literally).
func CheckUse(ctx context.Context, cat *catalog.Catalog, op string, lit, base request.Identifier, sel Selector) (request.Identifier, Selector, error) {
	if sel.Kind == "" {
		return lit, sel, nil
	}
	switch op {
	case request.OpCreate, request.OpReplace, request.OpCreateOrReplace, request.OpCreateTable:
		if ok, err := cat.CheckTableExists(ctx, catalog.TableIdent(base)); err == nil && !ok {
			return lit, Selector{}, nil
		}
		return lit, sel, fmt.Errorf("%w: %s cannot target %s %q of table %s: it writes the whole table", errs.ErrInvalidArgument, op, sel.Kind, sel.Name, base)
	case request.OpSnapshots, request.OpTableInfo, request.OpScan, request.OpLastCommittedBatch:
		return base, sel, nil
	}
	if sel.Kind == "tag" && (request.IsWrite(op) || request.IsRowLevel(op)) {
		return base, sel, fmt.Errorf("%w: cannot write to tag %q of table %s: tags are read-only", errs.ErrValidation, sel.Name, base)
	}
	if !request.IsWrite(op) && !request.IsRowLevel(op) {
		return base, sel, fmt.Errorf("%w: operation %s takes a table identifier, not %s %q", errs.ErrInvalidArgument, op, sel.Kind, sel.Name)
	}
	return base, sel, nil
}

// LoadRef loads the table a read names and the snapshot its branch or tag
// suffix points at (nil: none given).
func LoadRef(ctx context.Context, s *session.Session, name string) (*table.Table, *int64, error) {
	lit, err := s.Identifier(name)
	if err != nil {
		return nil, nil, err
	}
	cat, err := s.Catalog(ctx, lit.Catalog)
	if err != nil {
		return nil, nil, err
	}
	id, sel, err := ResolveRef(ctx, cat, lit)
	if err != nil {
		return nil, nil, err
	}
	t, err := cat.LoadTable(ctx, catalog.TableIdent(id))
	if err != nil {
		return nil, nil, catalog.MapErr(err, id)
	}
	if sel.Kind == "" {
		return t, nil, nil
	}
	ref, ok := stage.RefOf(t.Metadata(), sel.Name)
	switch {
	case !ok && sel.Kind == "branch":
		return nil, nil, fmt.Errorf("%w: Cannot use branch (does not exist): %s", errs.ErrValidation, sel.Name)
	case !ok:
		return nil, nil, fmt.Errorf("%w: Cannot find tag %s of table %s", errs.ErrValidation, sel.Name, id)
	case string(ref.SnapshotRefType) != sel.Kind:
		return nil, nil, fmt.Errorf("%w: ref %q of table %s is a %s, not a %s", errs.ErrValidation, sel.Name, id, ref.SnapshotRefType, sel.Kind)
	}
	snap := ref.SnapshotID
	return t, &snap, nil
}

// ResolveTarget applies write-audit-publish to c's target (the write's), as
// Spark's SparkWriteConf.branch and SparkWrite do: with
// write.wap.enabled=true, wap.branch redirects the write to that branch
// and wap.id stages the snapshot; without it both are ignored. A branch
// named by the identifier must exist.
func ResolveTarget(c *stage.Committer, op string, t *table.Table, wapID, wapBranch string) error {
	tg := &c.Target
	switch op {
	case request.OpCreate, request.OpReplace, request.OpCreateOrReplace:
		return nil
	}
	if on, _ := strconv.ParseBool(t.Metadata().Properties()["write.wap.enabled"]); on {
		if wapID != "" && wapBranch != "" {
			return fmt.Errorf("%w: Cannot set both WAP ID and branch, but got ID [%s] and branch [%s] (session wap.id and wap.branch)", errs.ErrValidation, wapID, wapBranch)
		}
		if wapBranch != "" {
			if tg.Explicit {
				return fmt.Errorf("%w: Cannot write to both branch and WAP branch, but got branch [%s] and WAP branch [%s]", errs.ErrValidation, tg.Branch, wapBranch)
			}
			tg.Branch, tg.FromMain = wapBranch, true
		}
		if wapID != "" {
			tg.Stage, tg.WapID = true, wapID
		}
	}
	if c.BranchName() == table.MainBranch {
		return nil
	}
	ref, ok := stage.RefOf(t.Metadata(), c.BranchName())
	switch {
	case ok && ref.SnapshotRefType != table.BranchRef:
		return fmt.Errorf("%w: cannot write to %q of table %s: it is a %s, not a branch", errs.ErrValidation, c.BranchName(), c.ID, ref.SnapshotRefType)
	case !ok && !tg.FromMain:
		return fmt.Errorf("%w: Cannot use branch (does not exist): %s", errs.ErrValidation, c.BranchName())
	}
	return nil
}

func IsRefOp(op string) bool {
	switch op {
	case request.OpCreateBranch, request.OpCreateTag, request.OpFastForward, request.OpRemoveBranch,
		request.OpRemoveTag, request.OpCherrypick, request.OpPublish, request.OpRefs,
		request.OpRollbackToSnapshot, request.OpRollbackToTimestamp, request.OpSetCurrentSnapshot:
		return true
	}
	return false
}

// Info describes one branch or tag.
type Info struct {
	Type       string `json:"type"`
	SnapshotID int64  `json:"snapshot_id"`
}

// Run runs the branch, tag and write-audit-publish operations.
func Run(ctx context.Context, cat *catalog.Catalog, id request.Identifier, req *request.Request) (any, error) {
	ident := catalog.TableIdent(id)
	t, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, catalog.MapErr(err, id)
	}
	if req.Op == request.OpRefs {
		refs := map[string]Info{}
		for name, r := range t.Metadata().Refs() {
			refs[name] = Info{Type: string(r.SnapshotRefType), SnapshotID: r.SnapshotID}
		}
		return map[string]any{"table": id.String(), "refs": refs}, nil
	}
	c := &committer{Committer: stage.Committer{Cat: cat, ID: id, Ident: ident}}
	retry, err := c.RetryPolicy(t.Metadata().Properties())
	if err != nil {
		return nil, err
	}
	var out any
	err = commit.Do(ctx, retry, func(ctx context.Context) error {
		t, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return err
		}
		m := t.Metadata()
		reqs, updates, err := c.planRefOp(ctx, t, req)
		if err != nil {
			return err
		}
		if len(updates) == 0 {
			out = c.refResult(t, req)
			return nil
		}
		committed, err := c.Publish(ctx, m.Properties(), m.Location(), reqs, updates, nil)
		if err != nil {
			return err
		}
		out = c.refResult(committed, req)
		return nil
	})
	if err != nil {
		return nil, catalog.MapErr(err, id)
	}
	return out, nil
}

// refResult describes a finished ref operation.
func (c *committer) refResult(t *table.Table, req *request.Request) any {
	m := t.Metadata()
	switch req.Op {
	case request.OpCherrypick, request.OpPublish:
		res := &report.Result{Table: c.ID.String()}
		if sn := m.SnapshotByName(table.MainBranch); sn != nil {
			sid := sn.SnapshotID
			res.SnapshotID = &sid
			res.Operation, res.Summary = report.SnapshotSummary(sn)
		}
		return res
	case request.OpRemoveBranch, request.OpRemoveTag:
		return map[string]any{"table": c.ID.String(), "ref": req.Ref, "removed": true}
	case request.OpRollbackToSnapshot, request.OpRollbackToTimestamp, request.OpSetCurrentSnapshot:
		// Spark's procedures' result columns.
		out := map[string]any{"table": c.ID.String(), "previous_snapshot_id": c.previous, "current_snapshot_id": nil}
		if sn := m.SnapshotByName(table.MainBranch); sn != nil {
			out["current_snapshot_id"] = sn.SnapshotID
		}
		return out
	}
	out := map[string]any{"table": c.ID.String(), "ref": req.Ref}
	if r, ok := stage.RefOf(m, req.Ref); ok {
		out["type"], out["snapshot_id"] = string(r.SnapshotRefType), r.SnapshotID
	}
	return out
}

// planRefOp returns the requirements and updates of one ref operation on
// t. Argument errors follow Java's SnapshotManager (IllegalArgumentException
// -> invalid argument, ValidationException -> validation).
func (c *committer) planRefOp(ctx context.Context, t *table.Table, req *request.Request) ([]table.Requirement, []table.Update, error) {
	m := t.Metadata()
	name := req.Ref
	ref, exists := stage.RefOf(m, name)
	cur := func(n string) *int64 {
		if r, ok := stage.RefOf(m, n); ok {
			id := r.SnapshotID
			return &id
		}
		return nil
	}
	switch req.Op {
	case request.OpCreateBranch, request.OpCreateTag:
		kind := table.BranchRef
		if req.Op == request.OpCreateTag {
			kind = table.TagRef
		}
		switch {
		case exists && req.IfNotExists:
			return nil, nil, nil
		case exists && (req.Mode == "" || req.Mode == request.ModeCreate):
			return nil, nil, fmt.Errorf("%w: Ref %s already exists in table %s", errs.ErrInvalidArgument, name, c.ID)
		case exists && ref.SnapshotRefType != kind:
			return nil, nil, fmt.Errorf("%w: Ref %s is a %s, not a %s", errs.ErrInvalidArgument, name, ref.SnapshotRefType, kind)
		case !exists && req.Mode == request.ModeReplace:
			return nil, nil, fmt.Errorf("%w: %s does not exist: %s (table %s)", errs.ErrInvalidArgument, kindTitle(kind), name, c.ID)
		}
		var snap int64
		if req.SnapshotID != nil {
			if m.SnapshotByID(*req.SnapshotID) == nil {
				return nil, nil, fmt.Errorf("%w: cannot create %s %s: table %s has no snapshot %d", errs.ErrInvalidArgument, kind, name, c.ID, *req.SnapshotID)
			}
			snap = *req.SnapshotID
		} else if sn := m.SnapshotByName(table.MainBranch); sn != nil {
			snap = sn.SnapshotID
		} else {
			return nil, nil, fmt.Errorf("%w: cannot create %s %s: table %s has no snapshot yet (give snapshot_id)", errs.ErrInvalidArgument, kind, name, c.ID)
		}
		// A replaced ref keeps its retention unless the request sets it
		// (Java's replaceBranch/replaceTag, then Spark's set* calls).
		var maxRefAge, maxSnapAge int64
		var minKeep int
		if exists {
			maxRefAge, maxSnapAge, minKeep = deref64(ref.MaxRefAgeMs), deref64(ref.MaxSnapshotAgeMs), derefInt(ref.MinSnapshotsToKeep)
		}
		if rt := req.Retention; rt != nil {
			maxRefAge = cmp.Or(deref64(rt.MaxRefAgeMs), maxRefAge)
			maxSnapAge = cmp.Or(deref64(rt.MaxSnapshotAgeMs), maxSnapAge)
			minKeep = cmp.Or(derefInt(rt.MinSnapshotsToKeep), minKeep)
		}
		return []table.Requirement{table.AssertRefSnapshotID(name, cur(name))},
			[]table.Update{table.NewSetSnapshotRefUpdate(name, snap, kind, maxRefAge, maxSnapAge, minKeep)}, nil

	case request.OpRemoveBranch, request.OpRemoveTag:
		kind := table.BranchRef
		if req.Op == request.OpRemoveTag {
			kind = table.TagRef
		}
		switch {
		case kind == table.BranchRef && name == table.MainBranch:
			return nil, nil, fmt.Errorf("%w: Cannot remove main branch", errs.ErrInvalidArgument)
		case !exists && req.IfExists:
			return nil, nil, nil
		case !exists:
			return nil, nil, fmt.Errorf("%w: %s does not exist: %s (table %s)", errs.ErrInvalidArgument, kindTitle(kind), name, c.ID)
		case ref.SnapshotRefType != kind:
			return nil, nil, fmt.Errorf("%w: Ref %s is a %s, not a %s", errs.ErrInvalidArgument, name, ref.SnapshotRefType, kind)
		}
		return []table.Requirement{table.AssertRefSnapshotID(name, cur(name))},
			[]table.Update{table.NewRemoveSnapshotRefUpdate(name)}, nil

	case request.OpFastForward:
		to, ok := stage.RefOf(m, req.To)
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("%w: Ref does not exist: %s (table %s)", errs.ErrInvalidArgument, req.To, c.ID)
		case exists && ref.SnapshotRefType != table.BranchRef:
			return nil, nil, fmt.Errorf("%w: Ref %s is a tag not a branch", errs.ErrInvalidArgument, name)
		case exists && ref.SnapshotID == to.SnapshotID:
			return nil, nil, nil
		case exists && !isAncestor(m, to.SnapshotID, ref.SnapshotID):
			return nil, nil, fmt.Errorf("%w: Cannot fast-forward: %s is not an ancestor of %s", errs.ErrInvalidArgument, name, req.To)
		}
		// A missing branch is created at to's snapshot (Java's fastForwardBranch).
		return []table.Requirement{table.AssertRefSnapshotID(name, cur(name)), table.AssertRefSnapshotID(req.To, cur(req.To))},
			[]table.Update{setBranch(m, t.MetadataLocation(), name, to.SnapshotID)}, nil

	case request.OpPublish:
		// Spark's publish_changes: the staged snapshot with this wap.id.
		var found *table.Snapshot
		for _, sn := range m.Snapshots() {
			if sn.Summary != nil && sn.Summary.Properties[stage.SummaryWapID] == req.WapID {
				found = &sn
				break
			}
		}
		if found == nil {
			return nil, nil, fmt.Errorf("%w: Cannot apply unknown WAP ID '%s' (table %s)", errs.ErrValidation, req.WapID, c.ID)
		}
		return c.cherrypick(ctx, t, found.SnapshotID)

	case request.OpCherrypick:
		return c.cherrypick(ctx, t, *req.SnapshotID)

	case request.OpRollbackToSnapshot, request.OpRollbackToTimestamp, request.OpSetCurrentSnapshot:
		return c.rollback(t, req)
	}
	return nil, nil, fmt.Errorf("%w: %s is not a ref operation", errs.ErrInvalidArgument, req.Op)
}

func kindTitle(k table.RefType) string {
	if k == table.TagRef {
		return "Tag"
	}
	return "Branch"
}

func setBranch(m table.Metadata, loc, name string, snap int64) table.Update {
	if b, err := table.MetadataBuilderFromBase(m, loc); err == nil {
		// Keep the branch's retention settings.
		return b.NewRetainingSnapshotRefUpdate(name, snap, table.BranchRef)
	}
	return table.NewSetSnapshotRefUpdate(name, snap, table.BranchRef, 0, 0, 0)
}

// isAncestor reports whether snapshot anc is of (or an ancestor of) snap.
func isAncestor(m table.Metadata, snap, anc int64) bool {
	for sn := m.SnapshotByID(snap); sn != nil; {
		if sn.SnapshotID == anc {
			return true
		}
		if sn.ParentSnapshotID == nil {
			return false
		}
		sn = m.SnapshotByID(*sn.ParentSnapshotID)
	}
	return false
}

// cherrypick applies snapshot id onto main as Java's CherryPickOperation
// does: a snapshot whose parent is main's head is fast-forwarded to; any
// other append is re-committed as a new snapshot with its added files,
// naming its source (source-snapshot-id, published-wap-id); other
// operations must be fast-forwards. A WAP id is published once.
func (c *committer) cherrypick(ctx context.Context, t *table.Table, id int64) ([]table.Requirement, []table.Update, error) {
	m := t.Metadata()
	sn := m.SnapshotByID(id)
	if sn == nil {
		return nil, nil, fmt.Errorf("%w: Cannot cherry-pick unknown snapshot ID: %d (table %s)", errs.ErrValidation, id, c.ID)
	}
	main := m.SnapshotByName(table.MainBranch)
	var props iceberg.Properties
	if sn.Summary != nil {
		props = sn.Summary.Properties
	}
	wapID := props[stage.SummaryWapID]
	for cur := main; cur != nil; {
		if cur.Summary != nil {
			p := cur.Summary.Properties
			if wapID != "" && (p[stage.SummaryWapID] == wapID || p[summaryPublishedWapID] == wapID) {
				return nil, nil, fmt.Errorf("%w: Duplicate request to cherry pick wap id that was published already: %s", errs.ErrValidation, wapID)
			}
			if p[summarySourceSnapshot] == strconv.FormatInt(id, 10) {
				return nil, nil, fmt.Errorf("%w: Duplicate request to cherry pick snapshot %d: already picked as snapshot %d", errs.ErrValidation, id, cur.SnapshotID)
			}
		}
		if cur.ParentSnapshotID == nil {
			break
		}
		cur = m.SnapshotByID(*cur.ParentSnapshotID)
	}
	var mainID *int64
	if main != nil {
		mainID = &main.SnapshotID
		if isAncestor(m, main.SnapshotID, id) {
			return nil, nil, fmt.Errorf("%w: Cannot cherry-pick snapshot %d: already an ancestor of main", errs.ErrValidation, id)
		}
	}
	reqs := []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, mainID)}
	fastForward := (main == nil && sn.ParentSnapshotID == nil) || (main != nil && sn.ParentSnapshotID != nil && *sn.ParentSnapshotID == main.SnapshotID)
	if fastForward {
		return reqs, []table.Update{setBranch(m, t.MetadataLocation(), table.MainBranch, id)}, nil
	}
	if sn.Summary == nil || sn.Summary.Operation != table.OpAppend {
		op := "unknown"
		if sn.Summary != nil {
			op = string(sn.Summary.Operation)
		}
		return nil, nil, fmt.Errorf("%w: Cannot cherry-pick snapshot %d (%s): not an append and not a fast-forward of main", errs.ErrValidation, id, op)
	}
	files, err := addedDataFiles(ctx, t, sn)
	if err != nil {
		return nil, nil, err
	}
	summary := stage.SummaryProps()
	summary[summarySourceSnapshot] = strconv.FormatInt(id, 10)
	if wapID != "" {
		summary[summaryPublishedWapID] = wapID
	}
	// The committer of a ref operation targets main.
	st, err := c.Open(m, t.MetadataLocation(), nil, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := st.Tx.AddDataFiles(ctx, files, summary, table.WithoutAutoNameMapping()); err != nil {
		return nil, nil, fmt.Errorf("%w: cherry-picking snapshot %d: %v", errs.ErrValidation, id, err)
	}
	stagedReqs, updates, err := st.Finish(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("cherry-picking snapshot %d: %w", id, err)
	}
	return append(stagedReqs, reqs...), updates, nil
}

// addedDataFiles lists the data files snapshot sn added (at least one:
// a cherry-pick of nothing is refused).
func addedDataFiles(ctx context.Context, t *table.Table, sn *table.Snapshot) ([]iceberg.DataFile, error) {
	fs, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: opening the table's files: %v", errs.ErrIO, err)
	}
	out, err := AddedDataFiles(fs, sn)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: snapshot %d added no data files to cherry-pick", errs.ErrValidation, sn.SnapshotID)
	}
	return out, nil
}

// AddedDataFiles lists the data files snapshot sn added: the ADDED
// entries of the data manifests sn wrote, in manifest-list order.
func AddedDataFiles(fs iceio.IO, sn *table.Snapshot) ([]iceberg.DataFile, error) {
	manifests, err := sn.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the manifest list of snapshot %d: %v", errs.ErrIO, sn.SnapshotID, err)
	}
	var out []iceberg.DataFile
	for _, mf := range manifests {
		if mf.SnapshotID() != sn.SnapshotID || mf.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		for e, err := range mf.Entries(fs, true) {
			if err != nil {
				return nil, fmt.Errorf("%w: reading manifest %s: %v", errs.ErrIO, mf.FilePath(), err)
			}
			if e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == sn.SnapshotID {
				out = append(out, e.DataFile())
			}
		}
	}
	return out, nil
}

// Ancestors are snapshot from and its ancestors still in m, newest first
// (none when from is nil).
func Ancestors(m table.Metadata, from *table.Snapshot) []*table.Snapshot {
	var out []*table.Snapshot
	for sn := from; sn != nil; {
		out = append(out, sn)
		if sn.ParentSnapshotID == nil {
			break
		}
		sn = m.SnapshotByID(*sn.ParentSnapshotID)
	}
	return out
}

// committer runs one ref operation: its commits go to main (cherry-pick,
// publish) or set refs directly.
type committer struct {
	stage.Committer
	// previous is main's snapshot before a rollback (nil: none).
	previous *int64
}

func deref64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
