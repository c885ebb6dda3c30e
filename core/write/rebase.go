package write

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/stage"
)

// stagedAppend is what an append's first attempt staged. When the commit
// loses a race, the retry moves the same snapshot onto the new head by
// writing only a new manifest list (and the catalog's metadata): the
// manifests of the new files are kept, as Java's fast append keeps them
// across retries.
type stagedAppend struct {
	updates []table.Update         // the first attempt's updates
	reqs    []table.Requirement    // and requirements
	snap    table.Snapshot         // the snapshot as last staged
	parent  *table.Snapshot        // the head it was staged on (nil: none)
	ours    []iceberg.ManifestFile // the manifests it added
	rebuilt int                    // manifest lists written by retries
}

// keptSnapshot reports whether id is the snapshot of an append kept for
// its next attempt, whose manifests a failed commit must not remove.
func (w *Writer) keptSnapshot(id int64) bool {
	return w.staged != nil && w.staged.snap.SnapshotID == id
}

// rebasable reports whether an append's staged snapshot can be moved onto
// another head by a new manifest list alone: a plain append to an existing
// branch of a v1/v2 table (v3 files carry row ids assigned from the base;
// a schema change or a staged or new branch is staged afresh).
func (w *Writer) rebasable(p *Plan, base table.Metadata) bool {
	return base.Version() <= 2 && p.Evolution == nil && !w.Target.Stage && base.SnapshotByName(w.BranchName()) != nil
}

// keepStaged remembers the snapshot in updates (staged on base) for later
// attempts.
func (w *Writer) keepStaged(ctx context.Context, p *Plan, base table.Metadata, reqs []table.Requirement, updates []table.Update) {
	for _, u := range updates {
		sn, ok := catalog.AddedSnapshot(u)
		if !ok {
			continue
		}
		fs, err := w.FileIO(ctx, p)
		if err != nil {
			return
		}
		all, err := sn.Manifests(fs)
		if err != nil {
			return
		}
		st := &stagedAppend{updates: updates, reqs: reqs, snap: *sn, parent: w.Head(base)}
		for _, m := range all {
			if m.SnapshotID() != sn.SnapshotID {
				continue
			}
			// A manifest merged from the parent's (commit.manifest-merge.enabled)
			// carries existing entries: moved onto a newer head beside that
			// head's own manifests, it would list the parent's files twice.
			// Such an append is staged afresh on every attempt.
			if m.ExistingDataFiles() != 0 || m.DeletedDataFiles() != 0 {
				return
			}
			st.ours = append(st.ours, m)
		}
		w.staged = st
		return
	}
}

// rebaseAppend moves the staged snapshot onto base's head of the target
// branch: the new files' manifests as they are, the head's manifests, a
// new sequence number and the summary's totals carried over from the new
// parent.
func (w *Writer) rebaseAppend(ctx context.Context, p *Plan, base table.Metadata) ([]table.Requirement, []table.Update, error) {
	st := w.staged
	fs, err := w.FileIO(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	parent := w.Head(base)
	seq := base.LastSequenceNumber() + 1
	manifests := make([]iceberg.ManifestFile, 0, len(st.ours))
	for _, m := range st.ours {
		manifests = append(manifests, iceberg.NewManifestFile(m.Version(), m.FilePath(), m.Length(), m.PartitionSpecID(), m.SnapshotID()).
			SequenceNum(seq, seq).Content(m.ManifestContent()).
			AddedFiles(m.AddedDataFiles()).ExistingFiles(m.ExistingDataFiles()).DeletedFiles(m.DeletedDataFiles()).
			AddedRows(m.AddedRows()).ExistingRows(m.ExistingRows()).DeletedRows(m.DeletedRows()).
			Partitions(m.Partitions()).KeyMetadata(m.KeyMetadata()).Build())
	}
	var parentID *int64
	if parent != nil {
		id := parent.SnapshotID
		parentID = &id
		inherited, err := parent.Manifests(fs)
		if err != nil {
			return nil, nil, stage.StagingErr(fmt.Errorf("reading the new head's manifest list: %w", err))
		}
		manifests = append(manifests, inherited...)
	}
	st.rebuilt++
	// Beside the first list (a location is a string, not a path: no
	// path.Join, which would fold the scheme's "//").
	dir := st.snap.ManifestList[:strings.LastIndex(st.snap.ManifestList, "/")]
	list := fmt.Sprintf("%s/snap-%d-%d-%s.avro", dir, st.snap.SnapshotID, st.rebuilt, uuid.New())
	out, err := fs.Create(list)
	if err != nil {
		return nil, nil, stage.StagingErr(err)
	}
	err = iceberg.WriteManifestList(base.Version(), out, st.snap.SnapshotID, parentID, &seq, 0, manifests)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = fs.Remove(list)
		return nil, nil, stage.StagingErr(fmt.Errorf("writing the manifest list: %w", err))
	}

	sn := st.snap
	sn.ParentSnapshotID = parentID
	sn.SequenceNumber = seq
	sn.ManifestList = list
	sn.TimestampMs = max(time.Now().UnixMilli(), base.LastUpdatedMillis())
	if sn.Summary != nil {
		sum := *sn.Summary
		sum.Properties = rebaseTotals(sn.Summary.Properties, summaryOfSnapshot(st.parent), summaryOfSnapshot(parent))
		sn.Summary = &sum
	}
	st.parent, st.snap = parent, sn
	updates := make([]table.Update, len(st.updates))
	for i, u := range st.updates {
		updates[i] = u
		if u.Action() == table.UpdateAddSnapshot {
			updates[i] = table.NewAddSnapshotUpdate(&sn)
		}
	}
	// The branch must still be where this attempt found it.
	reqs := make([]table.Requirement, len(st.reqs))
	for i, r := range st.reqs {
		reqs[i] = r
		if r.GetType() == assertRefType {
			reqs[i] = table.AssertRefSnapshotID(w.BranchName(), parentID)
		}
	}
	return reqs, updates, nil
}

var assertRefType = table.AssertRefSnapshotID(table.MainBranch, nil).GetType()

func summaryOfSnapshot(s *table.Snapshot) iceberg.Properties {
	if s == nil || s.Summary == nil {
		return nil
	}
	return s.Summary.Properties
}

// totalKeys are the summary's running totals, which follow the parent.
var totalKeys = []string{"total-records", "total-files-size", "total-data-files", "total-delete-files", "total-position-deletes", "total-equality-deletes"}

// rebaseTotals returns props with each total moved from the old parent's
// value to the new parent's (an append's own contribution kept).
func rebaseTotals(props, oldParent, newParent iceberg.Properties) iceberg.Properties {
	out := make(iceberg.Properties, len(props))
	for k, v := range props {
		out[k] = v
	}
	num := func(p iceberg.Properties, k string) int64 {
		n, _ := strconv.ParseInt(p[k], 10, 64)
		return n
	}
	for _, k := range totalKeys {
		if _, ok := props[k]; !ok {
			continue
		}
		out[k] = strconv.FormatInt(num(props, k)-num(oldParent, k)+num(newParent, k), 10)
	}
	return out
}
