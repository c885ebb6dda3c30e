package maintenance

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

const day = int64(24 * 60 * 60 * 1000)

// snap is one synthetic snapshot: id, parent (0: none), timestamp.
type snap struct {
	id, parent, ts int64
}

// ref is one synthetic branch or tag with its retention settings.
type ref struct {
	name, kind string
	id         int64
	minKeep    *int
	maxSnapAge *int64
	maxRefAge  *int64
}

// metadata builds format v2 table metadata with snaps and refs (main's
// head is the current snapshot).
func metadata(t testing.TB, props map[string]string, snaps []snap, refs []ref) table.Metadata {
	t.Helper()
	var sl []map[string]any
	for _, s := range snaps {
		m := map[string]any{
			"snapshot-id": s.id, "sequence-number": s.id, "timestamp-ms": s.ts,
			"manifest-list": fmt.Sprintf("/t/metadata/snap-%d.avro", s.id),
			"summary":       map[string]string{"operation": "append"}, "schema-id": 0,
		}
		if s.parent != 0 {
			m["parent-snapshot-id"] = s.parent
		}
		sl = append(sl, m)
	}
	rm := map[string]any{}
	var current any = -1
	for _, r := range refs {
		m := map[string]any{"snapshot-id": r.id, "type": r.kind}
		if r.minKeep != nil {
			m["min-snapshots-to-keep"] = *r.minKeep
		}
		if r.maxSnapAge != nil {
			m["max-snapshot-age-ms"] = *r.maxSnapAge
		}
		if r.maxRefAge != nil {
			m["max-ref-age-ms"] = *r.maxRefAge
		}
		rm[r.name] = m
		if r.name == "main" {
			current = r.id
		}
	}
	if props == nil {
		props = map[string]string{}
	}
	doc := map[string]any{
		"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "/t",
		"last-sequence-number": 1000, "last-updated-ms": 1, "last-column-id": 1,
		"current-schema-id": 0,
		"schemas":           []any{map[string]any{"type": "struct", "schema-id": 0, "fields": []any{map[string]any{"id": 1, "name": "x", "required": false, "type": "long"}}}},
		"default-spec-id":   0, "partition-specs": []any{map[string]any{"spec-id": 0, "fields": []any{}}},
		"last-partition-id": 999, "default-sort-order-id": 0, "sort-orders": []any{map[string]any{"order-id": 0, "fields": []any{}}},
		"properties": props, "current-snapshot-id": current, "snapshots": sl, "refs": rm,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	m, err := table.ParseMetadataBytes(b)
	if err != nil {
		t.Fatalf("metadata: %v\n%s", err, b)
	}
	return m
}

func ptr[T any](v T) *T { return &v }

// chain: 1 <- 2 <- 3 <- 4 on main, a day apart; 5 is a branch off 2; 6 a
// snapshot no ref reaches (a staged write) off 4.
func chain() []snap {
	return []snap{{1, 0, 1 * day}, {2, 1, 2 * day}, {3, 2, 3 * day}, {4, 3, 4 * day}, {5, 2, 5 * day}, {6, 4, 6 * day}}
}

func TestPlanExpiry(t *testing.T) {
	now := 10 * day
	for _, c := range []struct {
		name   string
		props  map[string]string
		refs   []ref
		pol    Policy
		remove []int64
		refsRm []string
	}{
		{
			name: "default age keeps the 5 days before now, retain 1", refs: []ref{{name: "main", kind: "branch", id: 4}},
			pol: Policy{NowMs: now}, remove: []int64{1, 2, 3}, // 5 is exactly 5 days old, 6 younger: kept
		},
		{
			name: "older_than everything: only heads and tags stay", refs: []ref{{name: "main", kind: "branch", id: 4}, {name: "t", kind: "tag", id: 1}, {name: "b", kind: "branch", id: 5}},
			pol: Policy{NowMs: now, OlderThanMs: ptr(now)}, remove: []int64{2, 3, 6},
		},
		{
			name: "retain_last 3 on every branch", refs: []ref{{name: "main", kind: "branch", id: 4}, {name: "b", kind: "branch", id: 5}},
			pol: Policy{NowMs: now, OlderThanMs: ptr(now), RetainLast: ptr(3)}, remove: []int64{6},
		},
		{
			name: "table min-snapshots-to-keep", props: map[string]string{PropMinSnapshotsToKeep: "2"}, refs: []ref{{name: "main", kind: "branch", id: 4}},
			pol: Policy{NowMs: now, OlderThanMs: ptr(now)}, remove: []int64{1, 2, 5, 6},
		},
		{
			name: "table max-snapshot-age-ms", props: map[string]string{PropMaxSnapshotAgeMs: fmt.Sprint(7*day + 1)}, refs: []ref{{name: "main", kind: "branch", id: 4}},
			pol: Policy{NowMs: now}, remove: []int64{1, 2},
		},
		{
			name: "branch's own min-snapshots-to-keep and age win", refs: []ref{{name: "main", kind: "branch", id: 4, minKeep: ptr(4)}, {name: "b", kind: "branch", id: 5, maxSnapAge: ptr(9 * day)}},
			pol: Policy{NowMs: now, OlderThanMs: ptr(now)}, remove: []int64{6}, // b keeps 5, 2, 1 (not older than now-9d=1d)
		},
		{
			name: "ref older than max-ref-age-ms is removed, main never", props: map[string]string{PropMaxRefAgeMs: fmt.Sprint(3 * day)},
			refs: []ref{{name: "main", kind: "branch", id: 1}, {name: "old", kind: "tag", id: 2}, {name: "young", kind: "branch", id: 5, maxRefAge: ptr(6 * day)}},
			pol:  Policy{NowMs: now, OlderThanMs: ptr(now)}, remove: []int64{2, 3, 4, 6}, refsRm: []string{"old"},
		},
		{
			name: "snapshot_ids expire within the retained window", refs: []ref{{name: "main", kind: "branch", id: 4}},
			pol: Policy{NowMs: now, OlderThanMs: ptr(int64(0)), SnapshotIDs: []int64{2}}, remove: []int64{2},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanExpiry(metadata(t, c.props, chain(), c.refs), c.pol)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.RemoveSnapshots, c.remove) || !slices.Equal(p.RemoveRefs, c.refsRm) {
				t.Fatalf("plan %+v, want snapshots %v refs %v", p, c.remove, c.refsRm)
			}
		})
	}
}

func TestPlanExpiryRejects(t *testing.T) {
	m := metadata(t, nil, chain(), []ref{{name: "main", kind: "branch", id: 4}, {name: "t", kind: "tag", id: 2}})
	for _, c := range []struct {
		pol  Policy
		kind error
		text string
	}{
		{Policy{RetainLast: ptr(0)}, errs.ErrInvalidArgument, "at least 1"},
		{Policy{SnapshotIDs: []int64{99}}, errs.ErrInvalidArgument, "no such snapshot"},
		{Policy{SnapshotIDs: []int64{2}}, errs.ErrInvalidArgument, "Still referenced by refs: [t]"},
		{Policy{SnapshotIDs: []int64{4}}, errs.ErrInvalidArgument, "Still referenced by refs: [main]"},
	} {
		if _, err := PlanExpiry(m, c.pol); !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%+v: got %v, want %v with %q", c.pol, err, c.kind, c.text)
		}
	}
	off := metadata(t, map[string]string{PropGCEnabled: "false"}, chain(), []ref{{name: "main", kind: "branch", id: 4}})
	if _, err := PlanExpiry(off, Policy{}); !errors.Is(err, errs.ErrValidation) {
		t.Errorf("gc.enabled=false: got %v", err)
	}
}

// TestPlanExpiryInvariants checks random histories: no kept ref's
// snapshot is ever expired, every retained branch keeps at least
// min(retain_last, its ancestry) snapshots, and a snapshot younger than
// older_than is never expired unless named.
func TestPlanExpiryInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		n := 1 + rng.IntN(12)
		var snaps []snap
		for i := int64(1); i <= int64(n); i++ {
			var parent int64
			if i > 1 && rng.IntN(5) > 0 {
				parent = 1 + rng.Int64N(i-1)
			}
			snaps = append(snaps, snap{i, parent, i * day})
		}
		refs := []ref{{name: "main", kind: "branch", id: int64(n)}}
		for k := range rng.IntN(3) {
			kind := []string{"branch", "tag"}[rng.IntN(2)]
			refs = append(refs, ref{name: fmt.Sprintf("r%d", k), kind: kind, id: 1 + rng.Int64N(int64(n))})
		}
		m := metadata(t, nil, snaps, refs)
		older := rng.Int64N(int64(n+2)) * day
		keepN := 1 + rng.IntN(3)
		p, err := PlanExpiry(m, Policy{NowMs: int64(n+1) * day, OlderThanMs: &older, RetainLast: &keepN})
		if err != nil {
			t.Fatal(err)
		}
		gone := map[int64]bool{}
		for _, id := range p.RemoveSnapshots {
			gone[id] = true
		}
		for _, r := range refs {
			if gone[r.id] {
				t.Fatalf("iter %d: snapshot %d of ref %s expired (%+v)", iter, r.id, r.name, p)
			}
			if r.kind != "branch" {
				continue
			}
			anc := table.AncestorsOf(r.id, func(id int64) *table.Snapshot { return m.SnapshotByID(id) })
			for i, a := range anc {
				if i < keepN && gone[a.SnapshotID] {
					t.Fatalf("iter %d: branch %s lost its ancestor %d within retain_last %d", iter, r.name, a.SnapshotID, keepN)
				}
			}
		}
		for _, s := range snaps {
			if s.ts >= older && gone[s.id] {
				t.Fatalf("iter %d: snapshot %d (ts %d) expired though not older than %d", iter, s.id, s.ts, older)
			}
		}
	}
}
