package stream

import (
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// chain is a stand-in for a branch's ancestry: snapshots 1..n, each the
// parent of the next, with the given summaries.
type chain map[int64]*table.Snapshot

func newChain(props ...map[string]string) (chain, *table.Snapshot) {
	c := chain{}
	var head *table.Snapshot
	for i, p := range props {
		sn := &table.Snapshot{SnapshotID: int64(i + 1), Summary: &table.Summary{Operation: table.OpAppend, Properties: iceberg.Properties(p)}}
		if head != nil {
			parent := head.SnapshotID
			sn.ParentSnapshotID = &parent
		}
		c[sn.SnapshotID] = sn
		head = sn
	}
	return c, head
}

func (c chain) walk(head *table.Snapshot, query string) (*Committed, error) {
	return last(func(id int64) *table.Snapshot { return c[id] }, head, query)
}

func TestLastIsTheNewestSnapshotOfTheQuery(t *testing.T) {
	c, head := newChain(
		Batch{"q", 0}.Props(), Batch{"q", 1}.Props(), Batch{"other", 9}.Props(), map[string]string{"x": "y"},
	)
	got, err := c.walk(head, "q")
	if err != nil || got == nil || got.BatchID != 1 || got.SnapshotID != 2 {
		t.Fatalf("last of q: %+v, %v", got, err)
	}
	if got, err := c.walk(head, "none"); got != nil || err != nil {
		t.Fatalf("unknown query: %+v, %v", got, err)
	}
	if got, err := c.walk(nil, "q"); got != nil || err != nil {
		t.Fatalf("empty branch: %+v, %v", got, err)
	}
}

func TestCheckSkipsAtOrBelowTheLastBatch(t *testing.T) {
	c, head := newChain(Batch{"q", 5}.Props())
	for id, skip := range map[int64]bool{0: true, 5: true, 6: false, 100: false} {
		err := check(func(id int64) *table.Snapshot { return c[id] }, head, Batch{"q", id})
		a, ok := Skipped(err)
		if ok != skip || (ok && a.Last.BatchID != 5) || (!ok && err != nil) {
			t.Errorf("batch %d: %v", id, err)
		}
	}
}

func TestAMalformedEpochIsAnError(t *testing.T) {
	c, head := newChain(map[string]string{QueryIDKey: "q", EpochIDKey: "x"})
	_, err := c.walk(head, "q")
	if _, skipped := Skipped(err); err == nil || skipped || !errors.Is(err, errs.ErrValidation) {
		t.Fatalf("malformed epoch: %v", err)
	}
}
