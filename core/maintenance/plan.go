// Package maintenance runs table maintenance as Spark's procedures do:
// expire_snapshots (Iceberg Java's RemoveSnapshots with the reachable-file
// cleanup of its Spark action) and remove_orphan_files (Spark's
// DeleteOrphanFilesSparkAction). Every decision that depends on the time
// takes "now" from its caller: the process passes the wall clock, tests a
// fixed instant.
package maintenance

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Table properties of snapshot retention and garbage collection (Java's
// TableProperties), with Java's defaults.
const (
	PropMaxSnapshotAgeMs   = "history.expire.max-snapshot-age-ms"
	PropMinSnapshotsToKeep = "history.expire.min-snapshots-to-keep"
	PropMaxRefAgeMs        = "history.expire.max-ref-age-ms"
	PropGCEnabled          = "gc.enabled"

	DefaultMaxSnapshotAgeMs   = int64(5 * 24 * 60 * 60 * 1000)
	DefaultMinSnapshotsToKeep = 1
	DefaultMaxRefAgeMs        = int64(math.MaxInt64)
)

// Policy is what an expiry is asked to do.
type Policy struct {
	// NowMs is the current time in epoch milliseconds: ages of refs and of
	// snapshots with a ref's max-snapshot-age-ms are measured from it.
	NowMs int64
	// OlderThanMs expires the snapshots older than it (default: NowMs minus
	// history.expire.max-snapshot-age-ms).
	OlderThanMs *int64
	// RetainLast keeps at least this many ancestors of every branch
	// (default: history.expire.min-snapshots-to-keep); at least 1.
	RetainLast *int
	// SnapshotIDs are expired in addition; none may be the snapshot of a
	// retained branch or tag.
	SnapshotIDs []int64
}

// Plan is what an expiry removes from the table metadata.
type Plan struct {
	// RemoveRefs are the branches and tags older than their max-ref-age-ms.
	RemoveRefs []string
	// RemoveSnapshots are the expired snapshots, in ascending order.
	RemoveSnapshots []int64
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool { return len(p.RemoveRefs) == 0 && len(p.RemoveSnapshots) == 0 }

func propInt64(props map[string]string, key string, def int64) (int64, error) {
	v, ok := props[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: table property %s=%q is not an integer", errs.ErrInvalidArgument, key, v)
	}
	return n, nil
}

// CheckGC fails when the table's gc.enabled is false, as Java does before
// deleting any file of it.
func CheckGC(props map[string]string, what string) error {
	v, ok := props[PropGCEnabled]
	if !ok {
		return nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%w: table property %s=%q is not a boolean", errs.ErrInvalidArgument, PropGCEnabled, v)
	}
	if !on {
		return fmt.Errorf("%w: Cannot %s: GC is disabled (deleting files may corrupt other tables)", errs.ErrValidation, what)
	}
	return nil
}

// PlanExpiry decides, as Java's RemoveSnapshots, which refs and snapshots
// of m an expiry removes:
//   - main is always kept; another branch or tag is removed when its
//     snapshot is older than its max-ref-age-ms (default the table's
//     history.expire.max-ref-age-ms, itself unbounded by default);
//   - the snapshot of every kept branch and tag is kept;
//   - on every kept branch, ancestors are kept while fewer than its
//     min-snapshots-to-keep are kept or while they are not older than its
//     cutoff (now minus its max-snapshot-age-ms, else older_than);
//   - a snapshot no kept branch or tag reaches is kept unless it is older
//     than older_than;
//   - every other snapshot, and each one named in SnapshotIDs, is expired.
func PlanExpiry(m table.Metadata, p Policy) (Plan, error) {
	props := m.Properties()
	if err := CheckGC(props, "expire snapshots"); err != nil {
		return Plan{}, err
	}
	maxSnapAge, err := propInt64(props, PropMaxSnapshotAgeMs, DefaultMaxSnapshotAgeMs)
	if err != nil {
		return Plan{}, err
	}
	minKeep64, err := propInt64(props, PropMinSnapshotsToKeep, DefaultMinSnapshotsToKeep)
	if err != nil {
		return Plan{}, err
	}
	maxRefAge, err := propInt64(props, PropMaxRefAgeMs, DefaultMaxRefAgeMs)
	if err != nil {
		return Plan{}, err
	}
	olderThan := p.NowMs - maxSnapAge
	if p.OlderThanMs != nil {
		olderThan = *p.OlderThanMs
	}
	minKeep := int(min(max(minKeep64, math.MinInt32), math.MaxInt32))
	if p.RetainLast != nil {
		if *p.RetainLast < 1 {
			return Plan{}, fmt.Errorf("%w: Number of snapshots to retain must be at least 1, cannot be: %d", errs.ErrInvalidArgument, *p.RetainLast)
		}
		minKeep = *p.RetainLast
	}
	for _, id := range p.SnapshotIDs {
		if m.SnapshotByID(id) == nil {
			return Plan{}, fmt.Errorf("%w: Cannot expire snapshot %d: the table has no such snapshot", errs.ErrInvalidArgument, id)
		}
	}
	snaps := m.Snapshots()
	if len(snaps) == 0 {
		return Plan{}, nil
	}
	lookup := func(id int64) *table.Snapshot { return m.SnapshotByID(id) }

	var plan Plan
	retained := map[string]table.SnapshotRef{}
	for name, ref := range m.Refs() {
		if name == table.MainBranch {
			retained[name] = ref
			continue
		}
		sn := m.SnapshotByID(ref.SnapshotID)
		limit := maxRefAge
		if ref.MaxRefAgeMs != nil {
			limit = *ref.MaxRefAgeMs
		}
		if sn != nil && p.NowMs-sn.TimestampMs <= limit {
			retained[name] = ref
			continue
		}
		plan.RemoveRefs = append(plan.RemoveRefs, name)
	}
	slices.Sort(plan.RemoveRefs)

	keep := map[int64]bool{}
	refsOf := map[int64][]string{}
	for name, ref := range retained {
		keep[ref.SnapshotID] = true
		refsOf[ref.SnapshotID] = append(refsOf[ref.SnapshotID], name)
	}
	for _, id := range p.SnapshotIDs {
		if names := refsOf[id]; names != nil {
			slices.Sort(names)
			return Plan{}, fmt.Errorf("%w: Cannot expire %d. Still referenced by refs: %v", errs.ErrInvalidArgument, id, names)
		}
	}
	reached := map[int64]bool{}
	for _, ref := range retained {
		if ref.SnapshotRefType != table.BranchRef {
			reached[ref.SnapshotID] = true
			continue
		}
		cutoff := olderThan
		if ref.MaxSnapshotAgeMs != nil {
			cutoff = p.NowMs - *ref.MaxSnapshotAgeMs
		}
		n := minKeep
		if ref.MinSnapshotsToKeep != nil {
			n = *ref.MinSnapshotsToKeep
		}
		kept, walking := 0, true
		for _, anc := range table.AncestorsOf(ref.SnapshotID, lookup) {
			reached[anc.SnapshotID] = true
			if walking && (kept < n || anc.TimestampMs >= cutoff) {
				keep[anc.SnapshotID] = true
				kept++
			} else {
				walking = false
			}
		}
	}
	for _, sn := range snaps {
		if !reached[sn.SnapshotID] && sn.TimestampMs >= olderThan {
			keep[sn.SnapshotID] = true
		}
	}
	named := map[int64]bool{}
	for _, id := range p.SnapshotIDs {
		named[id] = true
	}
	for _, sn := range snaps {
		if !keep[sn.SnapshotID] || named[sn.SnapshotID] {
			plan.RemoveSnapshots = append(plan.RemoveSnapshots, sn.SnapshotID)
		}
	}
	slices.Sort(plan.RemoveSnapshots)
	return plan, nil
}
